//! Glossaries: a user's term lists, applied in every pass of a translation.
//!
//! Layout: one item per glossary, `GLOSSARY#<id>` / `GLOSSARY`, entries inside it (at most
//! [`MAX_ENTRIES`], which keeps the item well under DynamoDB's 400 KB), listed per user through
//! `gsi1`: `USER#<id>#GLOSSARIES` / `<createdAt>#<id>`.

pub mod csv;
mod error;
mod model;
mod record;
mod service;

pub use error::GlossaryError;
pub use model::{Entry, EntryInput, Glossary, MAX_ENTRIES};
pub use service::Glossaries;
