use crate::ports::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum GlossaryError {
    #[error("{0}")]
    Invalid(String),
    #[error("glossary not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(GlossaryError);
