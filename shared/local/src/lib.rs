//! Embedded adapters for worker-queue mode: everything in one data directory, no server needed.
//!
//! - [`SqliteTable`]: the `Table` port on SQLite (bundled, WAL).
//! - [`SqliteQueue`]: the `Queue` port, a durable FIFO job queue on SQLite.
//! - [`LocalBlobs`]: the `Blobs` port on local files with atomic writes.
//! - [`LocalSecrets`]: the `Secrets` port, AES-256-GCM under a key file (`secrets.key`).
//! - [`SignedLinks`]: the `Links` port, links and upload forms of this server signed with HMAC.
//! - [`key_file::load_or_create`]: the data directory's key files, made once, owner-only.

mod blobs;
mod db;
pub mod key_file;
mod links;
mod queue;
mod secrets;
mod table;

pub use blobs::LocalBlobs;
pub use db::DataDirLock;
pub use links::SignedLinks;
pub use queue::{Recovered, SqliteQueue, CRASH_RECEIVES};
pub use secrets::LocalSecrets;
pub use table::SqliteTable;
