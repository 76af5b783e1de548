//! Each queue's [`Worker`], and the in-process worker loop of `booktr serve` (worker-queue mode):
//! receives jobs from the queue port and hands them to the [`JobHandler`]. On AWS, the SQS event
//! source does the receiving instead (`process_delivered`), one Lambda per worker.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tracing::{error, warn};

use super::context::JobHandler;
use super::handler::Outcome;
use crate::events::DeliveryOutcome;
use crate::fault::DataError;
use crate::job::Job;
use crate::ports::{Queue, QueueName, Received};

/// How a worker polls.
#[derive(Debug, Clone, Copy)]
pub struct RunnerConfig {
    /// Messages taken per receive.
    pub batch: usize,
    /// How long a received job stays hidden from other workers; it is redelivered after this if
    /// the worker dies. Longer than any one job takes.
    pub visibility: Duration,
    /// The pause when the queue is empty.
    pub idle_wait: Duration,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            // One message at a time: a FIFO receive hands out several messages of one book, and
            // every message received counts a receive, so with larger batches one failing (or
            // crash-interrupted) chapter would push the innocent chapters behind it towards the
            // dead-letter queue.
            batch: 1,
            visibility: Duration::from_secs(15 * 60),
            idle_wait: Duration::from_millis(200),
        }
    }
}

/// The delay before a failed job is tried again: 2, 4, 8 ... seconds, at most a minute.
fn retry_delay(receive_count: u32) -> Duration {
    Duration::from_secs(2u64.saturating_pow(receive_count.min(6)).min(60))
}

/// Receives one batch from `queue` and processes it in order; returns how many messages were
/// received. After a failure, the rest of that message's group in the batch is put back
/// untouched, so a book's jobs never overtake each other.
pub async fn run_once(
    queue: &dyn Queue,
    handler: &JobHandler,
    from: QueueName,
    config: &RunnerConfig,
) -> Result<usize, DataError> {
    let batch = queue.receive(from, config.batch, config.visibility).await?;
    let mut failed_groups: Vec<String> = Vec::new();
    for message in &batch {
        if failed_groups.contains(&message.group) {
            queue
                .release(from, &message.receipt, Duration::ZERO)
                .await?;
            continue;
        }
        let outcome = Worker::of(from).handle(handler, message).await;
        match retry_in(&outcome, message) {
            None => queue.ack(from, &message.receipt).await?,
            Some(delay) => {
                queue.release(from, &message.receipt, delay).await?;
                failed_groups.push(message.group.clone());
            }
        }
    }
    Ok(batch.len())
}

/// Processes messages an event source delivered (the SQS trigger of a Lambda), in order, and
/// returns the ids of those to report as failed (`ReportBatchItemFailures`); the event source
/// deletes the others. A failed message is made visible again after its retry delay. On the
/// FIFO queues the first failure fails every later message too, so no book's jobs overtake
/// each other; webhook deliveries are independent.
pub async fn process_delivered(
    queue: &dyn Queue,
    handler: &JobHandler,
    worker: Worker,
    messages: &[Received],
) -> Result<Vec<String>, DataError> {
    let from = worker.queue;
    let ordered = from != QueueName::Webhooks;
    let mut failed = Vec::new();
    for message in messages {
        if ordered && !failed.is_empty() {
            failed.push(message.id.clone());
            continue;
        }
        let outcome = worker.handle(handler, message).await;
        if let Some(delay) = retry_in(&outcome, message) {
            queue.release(from, &message.receipt, delay).await?;
            failed.push(message.id.clone());
        }
    }
    Ok(failed)
}

/// None when the message is done; else how long until it is tried again.
fn retry_in(outcome: &Outcome, message: &Received) -> Option<Duration> {
    match outcome {
        Outcome::Done => None,
        Outcome::Retry(reason) => {
            warn!(message_id = %message.id, receive_count = message.receive_count, %reason, "job will be retried");
            Some(retry_delay(message.receive_count))
        }
        Outcome::RetryAfter(delay) => Some(*delay),
    }
}

/// One queue's worker: the queue it takes messages from and what it does with each. A Lambda
/// binary names its own constant and never matches on the queue, so its bootstrap links that
/// work alone: the jobs worker carries no renderer, the render worker no book extraction or
/// model client, the webhook and dead-letter workers none of them.
#[derive(Clone, Copy)]
pub struct Worker {
    pub queue: QueueName,
    handle: Handle,
}

type Handle =
    for<'a> fn(&'a JobHandler, &'a Received) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

impl Worker {
    /// The book jobs: extraction, terms, chapters, re-translations, account purges, digests. A
    /// generate job found here goes on to the render queue.
    pub const JOBS: Worker = Worker {
        queue: QueueName::Jobs,
        handle: |handler, message| Box::pin(process_job(handler, message)),
    };
    /// Rendering a book's file (generate jobs).
    pub const RENDER: Worker = Worker {
        queue: QueueName::Render,
        handle: |handler, message| Box::pin(process_render(handler, message)),
    };
    /// Jobs that failed every receive: their chapter and book are marked failed.
    pub const DEAD_LETTER: Worker = Worker {
        queue: QueueName::JobsDeadLetter,
        handle: |handler, message| Box::pin(process_dead_letter(handler, message)),
    };
    /// Webhook deliveries, with their own retry schedule.
    pub const WEBHOOKS: Worker = Worker {
        queue: QueueName::Webhooks,
        handle: |handler, message| Box::pin(deliver_webhook(handler, message)),
    };

    /// The worker of `queue`, for the processes that run them all (`booktr serve`, the tests).
    pub fn of(queue: QueueName) -> Worker {
        match queue {
            QueueName::Jobs => Worker::JOBS,
            QueueName::JobsDeadLetter => Worker::DEAD_LETTER,
            QueueName::Render => Worker::RENDER,
            QueueName::Webhooks => Worker::WEBHOOKS,
        }
    }

    async fn handle(self, handler: &JobHandler, message: &Received) -> Outcome {
        (self.handle)(handler, message).await
    }
}

async fn process_job(handler: &JobHandler, message: &Received) -> Outcome {
    match read_job(message) {
        Ok(job) => handler.process(&job, message.receive_count).await,
        Err(outcome) => outcome,
    }
}

async fn process_render(handler: &JobHandler, message: &Received) -> Outcome {
    match read_job(message) {
        Ok(job) => handler.process_render(&job).await,
        Err(outcome) => outcome,
    }
}

async fn process_dead_letter(handler: &JobHandler, message: &Received) -> Outcome {
    match read_job(message) {
        Ok(job) => handler.process_dead_letter(&job).await,
        Err(outcome) => outcome,
    }
}

fn read_job(message: &Received) -> Result<Job, Outcome> {
    serde_json::from_str(&message.body)
        // Not ours to drop silently: retried, it ends in the dead-letter queue for an operator.
        .map_err(|e| Outcome::Retry(format!("unreadable job message: {e}")))
}

/// Not a job: a webhook delivery, with its own retry schedule.
async fn deliver_webhook(handler: &JobHandler, message: &Received) -> Outcome {
    match handler.events.deliver(&message.body).await {
        DeliveryOutcome::Done => Outcome::Done,
        DeliveryOutcome::RetryAfter(delay) => Outcome::RetryAfter(delay),
        DeliveryOutcome::Retry => Outcome::Retry("webhook delivery not recorded".into()),
    }
}

/// Processes every queue until none has anything due; returns the number of messages seen.
/// For tests and the CLI, which want every queued job done before they look.
pub async fn drain(queue: &dyn Queue, handler: &JobHandler) -> Result<usize, DataError> {
    let config = RunnerConfig::default();
    let mut total = 0;
    loop {
        let mut seen = 0;
        for name in QueueName::ALL {
            seen += run_once(queue, handler, name, &config).await?;
        }
        if seen == 0 {
            return Ok(total);
        }
        total += seen;
    }
}

/// Runs a worker until `shutdown` turns true; the job in hand is finished first.
pub async fn run(
    queue: Arc<dyn Queue>,
    handler: JobHandler,
    from: QueueName,
    config: RunnerConfig,
    mut shutdown: watch::Receiver<bool>,
) {
    while !*shutdown.borrow() {
        let wait = match run_once(queue.as_ref(), &handler, from, &config).await {
            Ok(0) => config.idle_wait,
            Ok(_) => continue,
            Err(e) => {
                error!(error = %e, queue = from.as_str(), "worker could not reach the queue");
                config.idle_wait * 10
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = shutdown.changed() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_queue_has_the_worker_that_takes_messages_from_it() {
        for queue in QueueName::ALL {
            assert_eq!(Worker::of(queue).queue, queue);
        }
    }

    #[test]
    fn retries_wait_twice_as_long_each_time_and_at_most_a_minute() {
        let waits: Vec<u64> = (1..=7).map(|n| retry_delay(n).as_secs()).collect();
        assert_eq!(waits, [2, 4, 8, 16, 32, 60, 60]);
    }
}
