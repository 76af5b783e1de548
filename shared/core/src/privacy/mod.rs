//! What the account holder may take away and how they leave: account export and deletion.
//! This room reads every other domain through its public services and the item layouts those
//! publish, so a new kind of per-user data must be added here (the export and the purge) too.

mod deletion;
mod export;

pub use deletion::{Deleted, DELETE_CONFIRMATION};

pub use export::AccountExport;

use crate::accounts::Accounts;
use crate::books::Books;
use crate::community::Community;
use crate::events::Events;
use crate::glossaries::Glossaries;
use crate::ports::Ports;
use crate::usage::Usage;

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

#[derive(Clone)]
pub struct Privacy {
    ports: Ports,
    domains: Domains,
}

/// What an account's export gathers and its deletion removes: every domain that holds a
/// user's data. `accounts` is the process's own (a clone), so that closing an account here
/// also ends what it remembers of the account's keys.
#[derive(Clone)]
pub struct Domains {
    pub accounts: Accounts,
    pub books: Books,
    pub glossaries: Glossaries,
    pub events: Events,
    pub community: Community,
    pub developer: crate::developer::Developer,
    pub usage: Usage,
}

impl Privacy {
    pub fn new(ports: Ports, domains: Domains) -> Self {
        Privacy { ports, domains }
    }
}
