//! What the export, the deletion and the purge fail with.

#[derive(Debug, thiserror::Error)]
pub enum PrivacyError {
    #[error("{0}")]
    Invalid(String),
    /// A purge found the account open: its deletion is still under way, or it failed.
    #[error("the account is not closed (yet); nothing is purged")]
    StillOpen,
    #[error(transparent)]
    Store(#[from] crate::ports::StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
    /// A domain gathered into an export answered with its own error; passed on as it is.
    #[error(transparent)]
    Accounts(#[from] crate::accounts::AccountsError),
    #[error(transparent)]
    Events(#[from] crate::events::EventsError),
    #[error(transparent)]
    Glossaries(#[from] crate::glossaries::GlossaryError),
    #[error(transparent)]
    Developer(#[from] crate::developer::DeveloperError),
}

crate::fault::from_data_error!(PrivacyError);
