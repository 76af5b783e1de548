//! The domain of the book translation service: newtypes, entities, state machines, use cases and
//! the ports (traits) every adapter implements. Nothing here knows about AWS, SQLite or HTTP.

pub mod accounts;
pub mod books;
pub mod community;
pub mod config;
pub mod developer;
pub mod email;
pub mod events;
pub mod fault;
pub mod glossaries;
pub mod health;
pub mod items;
pub mod job;
pub mod jobs;
pub mod limits;
pub mod memory;
pub mod metrics;
pub mod preferences;
pub mod privacy;
pub mod services;
pub mod translation;
pub mod types;
pub mod usage;

pub use booktr_ports as ports;
pub use booktr_ports::{ids, Ports};
pub use services::Services;
