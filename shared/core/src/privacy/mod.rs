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
    #[error(transparent)]
    Store(#[from] crate::ports::StoreError),
}

#[derive(Clone)]
pub struct Privacy {
    ports: Ports,
    accounts: Accounts,
    books: Books,
    glossaries: Glossaries,
    events: Events,
    community: Community,
    usage: Usage,
}

impl Privacy {
    /// `accounts`: the process's own (a clone), so that closing an account here also ends
    /// what it remembers of the account's keys.
    pub fn new(ports: Ports, accounts: Accounts, usage: Usage) -> Self {
        Privacy {
            accounts,
            books: Books::new(ports.clone(), usage.clone()),
            glossaries: Glossaries::new(ports.clone()),
            events: Events::new(ports.clone()),
            community: Community::new(ports.clone()),
            usage,
            ports,
        }
    }
}
