use crate::ports::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The caller's request or file is not one the memory takes (a language code, a page, a
    /// TMX file), with what is wrong.
    #[error("{0}")]
    Invalid(String),
    /// No such entry or pair in the caller's memory.
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(MemoryError);
