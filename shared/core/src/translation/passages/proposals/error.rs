//! What asking for, accepting or discarding a proposal fails with.

use crate::fault::{DataError, Fault};
use crate::ports::StoreError;
use crate::translation::error::TranslationError;
use crate::translation::passages::error::PassageError;

#[derive(Debug, thiserror::Error)]
pub enum ProposalError {
    /// What a passage's change answers: not found, a bad request, a passage changed since.
    #[error(transparent)]
    Passage(#[from] PassageError),
    /// A model the plan does not allow, the month's quota: as a run's start answers them.
    #[error(transparent)]
    Translation(#[from] TranslationError),
    /// Accepting a proposal that is not ready (pending, failed or discarded): 409.
    #[error("{0}")]
    NotReady(String),
}

impl From<DataError> for ProposalError {
    fn from(e: DataError) -> Self {
        ProposalError::Passage(e.into())
    }
}

impl From<Fault> for ProposalError {
    fn from(e: Fault) -> Self {
        ProposalError::Passage(e.into())
    }
}

impl From<StoreError> for ProposalError {
    fn from(e: StoreError) -> Self {
        ProposalError::Passage(e.into())
    }
}
