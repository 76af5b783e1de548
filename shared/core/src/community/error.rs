//! What the community fails with.

use crate::ports::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CommunityError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(CommunityError);
