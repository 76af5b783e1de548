use crate::ports::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    /// The request is invalid; the message says why (a 400).
    #[error("{0}")]
    Invalid(String),
    #[error("webhook not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(EventsError);
