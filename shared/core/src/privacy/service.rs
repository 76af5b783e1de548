//! The privacy service and the domains it reads: the export is `export.rs`, the deletion and
//! the purge `deletion.rs`.

use crate::accounts::Accounts;
use crate::books::Books;
use crate::community::Community;
use crate::events::Events;
use crate::glossaries::Glossaries;
use crate::ports::Ports;
use crate::usage::Usage;

#[derive(Clone)]
pub struct Privacy {
    pub(super) ports: Ports,
    pub(super) domains: Domains,
}

/// What an account's export gathers and its deletion removes: every domain that holds a
/// user's data. `accounts` is the process's own (a clone), so that closing an account here
/// also ends what it remembers of the account's keys.
#[derive(Clone)]
pub struct Domains {
    pub accounts: Accounts,
    pub books: Books,
    pub glossaries: Glossaries,
    pub memory: crate::memory::Memory,
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
