use crate::ports::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// The quota cannot cover the request; the message names the quota and the reset date.
    #[error("{0}")]
    Exceeded(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(UsageError);
