//! The one place that chooses adapters. Nothing else in the code asks which mode it runs in.

use std::path::Path;
use std::sync::Arc;

use booktr_core::health::QueueMode;
use booktr_core::ports::{Clock, StoreError};
use booktr_core::{Ports, Services};
use booktr_local::{LocalBlobs, SqliteQueue, SqliteTable};

/// The embedded backend of worker-queue mode, all under one data directory:
/// `booktr.db` (table), `queue.db` (jobs), `blobs/` (files).
pub struct Embedded {
    pub services: Services,
    pub ports: Ports,
    /// Kept concrete for its local-only recovery step (`release_in_flight`).
    pub queue: Arc<SqliteQueue>,
}

pub fn embedded(data_dir: &Path, clock: Arc<dyn Clock>) -> Result<Embedded, StoreError> {
    let table = Arc::new(SqliteTable::open(&data_dir.join("booktr.db"))?);
    let queue = Arc::new(SqliteQueue::open(
        &data_dir.join("queue.db"),
        clock.clone(),
    )?);
    let blobs = Arc::new(LocalBlobs::open(&data_dir.join("blobs"))?);
    let ports = Ports {
        table,
        queue: queue.clone(),
        blobs,
        clock,
    };
    let services = Services::new(ports.clone(), QueueMode::WorkerQueue);
    Ok(Embedded {
        services,
        ports,
        queue,
    })
}
