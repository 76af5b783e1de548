//! The one error type of the storage ports.

/// The one error type of the storage ports. Adapters translate their SDK or driver errors into it.
/// It says only that the backend failed or refused: what the domain finds wrong with what it
/// reads (a corrupt item, a missing input) is the domain's own error, never one of these.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A write's condition did not hold (DynamoDB's `ConditionalCheckFailed`, a SQLite
    /// constraint the adapter checks itself). The domain turns this into its own conflict errors.
    #[error("condition failed")]
    Conflict,
    /// An update addressed an item that does not exist.
    #[error("item not found")]
    NotFound,
    /// The request was malformed for this store (an invalid key, too many operations).
    #[error("invalid request to the store: {0}")]
    Invalid(String),
    /// The backend failed or could not be reached; retrying later may succeed.
    #[error("storage backend unavailable: {0}")]
    Unavailable(String),
}
