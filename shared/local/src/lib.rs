//! Embedded adapters for worker-queue mode: everything in one data directory, no server needed.
//!
//! - [`SqliteTable`]: the `Table` port on SQLite (bundled, WAL).
//! - [`SqliteQueue`]: the `Queue` port, a durable FIFO job queue on SQLite.
//! - [`LocalBlobs`]: the `Blobs` port on local files with atomic writes.

mod blobs;
mod db;
mod queue;
mod table;

pub use blobs::LocalBlobs;
pub use db::DataDirLock;
pub use queue::SqliteQueue;
pub use table::SqliteTable;
