//! The port conformance suites against the embedded adapters (and both clocks).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use booktr_local::{LocalBlobs, LocalSecrets, SqliteQueue, SqliteTable};
use booktr_ports::conformance::queue::QueueHarness;
use booktr_ports::conformance::Fixture;
use booktr_ports::{Blobs, Clock, ManualClock, Queue, Secrets, SystemClock, Table};
use tempfile::TempDir;

async fn sqlite_table() -> Fixture<dyn Table> {
    let dir = TempDir::new().unwrap();
    let table = SqliteTable::open(&dir.path().join("table.db")).unwrap();
    Fixture {
        port: Arc::new(table),
        keep_alive: Box::new(dir),
    }
}

async fn local_blobs() -> Fixture<dyn Blobs> {
    let dir = TempDir::new().unwrap();
    let blobs = LocalBlobs::open(&dir.path().join("blobs")).unwrap();
    Fixture {
        port: Arc::new(blobs),
        keep_alive: Box::new(dir),
    }
}

async fn local_secrets() -> Fixture<dyn Secrets> {
    let dir = TempDir::new().unwrap();
    let secrets = LocalSecrets::open(&dir.path().join("secrets.key")).unwrap();
    Fixture {
        port: Arc::new(secrets),
        keep_alive: Box::new(dir),
    }
}

async fn system_clock() -> Fixture<dyn Clock> {
    Fixture {
        port: Arc::new(SystemClock),
        keep_alive: Box::new(()),
    }
}

async fn manual_clock() -> Fixture<dyn Clock> {
    let clock = ManualClock::new(chrono::Utc::now());
    Fixture {
        port: Arc::new(clock),
        keep_alive: Box::new(()),
    }
}

struct SqliteQueueHarness {
    dir: TempDir,
    clock: Arc<ManualClock>,
    queue: Arc<SqliteQueue>,
}

async fn sqlite_queue() -> SqliteQueueHarness {
    let dir = TempDir::new().unwrap();
    let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
    let queue = Arc::new(SqliteQueue::open(&dir.path().join("queue.db"), clock.clone()).unwrap());
    SqliteQueueHarness { dir, clock, queue }
}

#[async_trait]
impl QueueHarness for SqliteQueueHarness {
    fn queue(&self) -> Arc<dyn Queue> {
        self.queue.clone()
    }

    async fn pass(&self, by: Duration) {
        self.clock.advance(chrono::Duration::from_std(by).unwrap());
    }

    async fn restart(&mut self) {
        let clock: Arc<dyn Clock> = self.clock.clone();
        self.queue = Arc::new(SqliteQueue::open(&self.dir.path().join("queue.db"), clock).unwrap());
    }
}

mod table {
    use super::*;
    booktr_ports::table_conformance!(sqlite_table);
}

mod queue {
    use super::*;
    booktr_ports::queue_conformance!(sqlite_queue);
}

mod blobs {
    use super::*;
    booktr_ports::blobs_conformance!(local_blobs);
}

mod secrets {
    use super::*;
    booktr_ports::secrets_conformance!(local_secrets);
}

mod system_clock {
    use super::*;
    booktr_ports::clock_conformance!(system_clock);
}

mod manual_clock {
    use super::*;
    booktr_ports::clock_conformance!(manual_clock);
}
