//! The health check: every backend is asked, timed, and summed up (the API sends it as the
//! spec's Health body).

use std::future::Future;
use std::time::Instant;

use chrono::{DateTime, Utc};

use crate::ports::Ports;
use crate::ports::{QueueName, QueueStats, StoreError};

/// The spec's two processing modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueMode {
    /// AWS: SQS FIFO and Lambda workers.
    ManagedQueue,
    /// One process: the SQLite queue and in-process workers.
    WorkerQueue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Healthy,
    Degraded,
    Unhealthy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatus {
    Up,
    Down,
}

#[derive(Debug, Clone)]
pub struct Check {
    pub status: CheckStatus,
    /// Milliseconds the check took.
    pub latency: u64,
    pub error: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Checks {
    pub database: Check,
    pub broker: Check,
    pub queue: Check,
    /// Beyond the spec: the blob store (S3 or local files).
    pub storage: Check,
}

#[derive(Debug, Clone)]
pub struct QueueCounts {
    pub active: u64,
    pub waiting: u64,
    pub completed: u64,
    pub failed: u64,
}

#[derive(Debug, Clone)]
pub struct Queues {
    /// The jobs queue (the spec's `translate`).
    pub translate: QueueCounts,
    /// Beyond the spec: the render queue (generate jobs). It shares the jobs queue's
    /// dead-letter queue, so its `failed` is the same count.
    pub render: QueueCounts,
}

/// The spec's Health body.
#[derive(Debug, Clone)]
pub struct HealthReport {
    pub status: Status,
    pub timestamp: DateTime<Utc>,
    pub version: &'static str,
    pub uptime: u64,
    pub queue_mode: QueueMode,
    pub checks: Checks,
    pub queues: Option<Queues>,
}

/// A check slower than this marks the service degraded.
const SLOW_CHECK_MS: u64 = 1000;

#[derive(Clone)]
pub struct Health {
    ports: Ports,
    mode: QueueMode,
    started: Instant,
}

impl Health {
    pub fn new(ports: Ports, mode: QueueMode) -> Self {
        Health {
            ports,
            mode,
            started: Instant::now(),
        }
    }

    /// Asks every backend. Unhealthy when the database, broker or storage is down (nothing can
    /// be done); degraded when only the queue statistics fail or a check is slow.
    pub async fn check(&self) -> HealthReport {
        let all_stats = async {
            let jobs = self.ports.queue.stats(QueueName::Jobs).await?;
            let render = self.ports.queue.stats(QueueName::Render).await?;
            let dead_letters = self.ports.queue.stats(QueueName::JobsDeadLetter).await?;
            Ok((jobs, render, dead_letters))
        };
        let (database, broker, storage, (queue, stats)) = tokio::join!(
            timed(self.ports.table.ping()),
            timed(self.ports.queue.ping()),
            timed(self.ports.blobs.ping()),
            timed_value(all_stats),
        );
        let checks = Checks {
            database,
            broker,
            queue,
            storage,
        };
        let essential = [&checks.database, &checks.broker, &checks.storage];
        let all = [
            &checks.database,
            &checks.broker,
            &checks.queue,
            &checks.storage,
        ];
        let status = if essential.iter().any(|c| c.status == CheckStatus::Down) {
            Status::Unhealthy
        } else if all
            .iter()
            .any(|c| c.status == CheckStatus::Down || c.latency > SLOW_CHECK_MS)
        {
            Status::Degraded
        } else {
            Status::Healthy
        };
        let queues = match (self.mode, stats) {
            (QueueMode::WorkerQueue, Some((jobs, render, dead_letters))) => Some(Queues {
                translate: counts(jobs, dead_letters),
                render: counts(render, dead_letters),
            }),
            _ => None,
        };
        HealthReport {
            status,
            timestamp: self.ports.clock.now(),
            version: env!("CARGO_PKG_VERSION"),
            uptime: self.started.elapsed().as_secs(),
            queue_mode: self.mode,
            checks,
            queues,
        }
    }
}

/// The queues' depth and the age of their oldest due job, for the metrics: sampled by the
/// worker-queue server every few seconds (on AWS the SQS metrics say the same).
pub async fn sample_queues(queue: &dyn crate::ports::Queue) {
    for name in QueueName::ALL {
        match queue.stats(name).await {
            Ok(stats) => {
                crate::metrics::queue_sampled(name.as_str(), stats.waiting, stats.oldest_due)
            }
            Err(e) => {
                tracing::warn!(error = %e, queue = name.as_str(), "queue statistics unavailable")
            }
        }
    }
}

/// `failed` counts every job that ran out of retries: those waiting in the dead-letter queue and
/// those its handler has already dealt with (of the jobs and the render queue both, which share
/// it).
fn counts(jobs: QueueStats, dead_letters: QueueStats) -> QueueCounts {
    QueueCounts {
        active: jobs.in_flight,
        waiting: jobs.waiting,
        completed: jobs.completed.unwrap_or(0),
        failed: jobs.dead + dead_letters.completed.unwrap_or(0),
    }
}

async fn timed(fut: impl Future<Output = Result<(), StoreError>>) -> Check {
    timed_value(fut).await.0
}

async fn timed_value<T>(fut: impl Future<Output = Result<T, StoreError>>) -> (Check, Option<T>) {
    let start = Instant::now();
    let result = fut.await;
    let latency = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    match result {
        Ok(value) => (
            Check {
                status: CheckStatus::Up,
                latency,
                error: None,
            },
            Some(value),
        ),
        Err(e) => (
            Check {
                status: CheckStatus::Down,
                latency,
                error: Some(e.to_string()),
            },
            None,
        ),
    }
}
