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

/// The embedded queue's own recovery step at a start (`booktr serve`): what the dead process
/// had in hand runs again, unless it was in hand at three deaths.
mod recovery {
    use super::*;
    use booktr_local::{Recovered, CRASH_RECEIVES};
    use booktr_ports::{Outgoing, QueueName};

    const HOUR: Duration = Duration::from_secs(3600);

    async fn queue_with_one_job(dir: &TempDir) -> SqliteQueue {
        let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
        let queue = SqliteQueue::open(&dir.path().join("queue.db"), clock).unwrap();
        let job = Outgoing {
            group: "book".into(),
            dedup_id: "extract".into(),
            body: "the job".into(),
        };
        queue.send(QueueName::Jobs, job).await.unwrap();
        queue
    }

    #[tokio::test]
    async fn a_job_in_hand_at_a_death_runs_again_at_the_next_start() {
        let dir = TempDir::new().unwrap();
        let queue = queue_with_one_job(&dir).await;
        queue.receive(QueueName::Jobs, 1, HOUR).await.unwrap();

        let recovered = queue.release_in_flight().await.unwrap();

        assert_eq!(
            recovered,
            Recovered {
                released: 1,
                dead_lettered: 0
            }
        );
        let again = queue.receive(QueueName::Jobs, 1, HOUR).await.unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].receive_count, 2);
    }

    #[tokio::test]
    async fn a_job_in_hand_at_three_deaths_is_dead_lettered_at_the_fourth_start() {
        let dir = TempDir::new().unwrap();
        let queue = queue_with_one_job(&dir).await;
        for start in 1..CRASH_RECEIVES {
            queue.receive(QueueName::Jobs, 1, HOUR).await.unwrap();
            let recovered = queue.release_in_flight().await.unwrap();
            assert_eq!(recovered.dead_lettered, 0, "start {}", start + 1);
        }
        queue.receive(QueueName::Jobs, 1, HOUR).await.unwrap();

        let recovered = queue.release_in_flight().await.unwrap();

        assert_eq!(
            recovered,
            Recovered {
                released: 0,
                dead_lettered: 1
            }
        );
        assert!(queue
            .receive(QueueName::Jobs, 1, HOUR)
            .await
            .unwrap()
            .is_empty());
        let dead = queue
            .receive(QueueName::JobsDeadLetter, 1, HOUR)
            .await
            .unwrap();
        assert_eq!(dead.len(), 1);
        assert_eq!(dead[0].body, "the job");
    }
}
