//! What the account holder may take away and how they leave: account export and deletion.
//! This room reads every other domain through its public services and the item layouts those
//! publish, so a new kind of per-user data must be added here (the export and the purge) too.

mod deletion;
mod error;
mod export;
mod model;
mod record;
mod service;

pub use error::PrivacyError;
pub use model::{AccountExport, Deleted, DELETE_CONFIRMATION};
pub use service::{Domains, Privacy};
