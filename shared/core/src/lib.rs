//! The domain of the book translation service: newtypes, entities, state machines, use cases and
//! the ports (traits) every adapter implements. Nothing here knows about AWS, SQLite or HTTP.

pub mod accounts;
pub mod books;
pub mod community;
pub mod config;
pub mod developer;
pub mod email;
pub mod events;
pub mod glossaries;
pub mod health;
pub mod ids;
pub mod items;
pub mod job;
pub mod jobs;
pub mod limits;
pub mod metrics;
pub mod ports;
pub mod preferences;
pub mod privacy;
pub mod services;
pub mod translation;
pub mod types;
pub mod usage;

#[cfg(feature = "conformance")]
pub mod conformance;

#[cfg(test)]
mod floors;

pub use ports::Ports;
pub use services::Services;
