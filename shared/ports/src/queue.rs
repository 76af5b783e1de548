//! The job queue port, shaped after SQS FIFO: messages are ordered within a message group (one
//! group per book), a received message is hidden for a visibility timeout and comes back if it is
//! not acknowledged, and after [`MAX_RECEIVES`] receives it moves to the queue's dead-letter queue.

use std::time::Duration;

use async_trait::async_trait;

use crate::error::StoreError;

/// A message is delivered at most this many times (the first try and 3 retries); the next
/// receive moves it to the dead-letter queue. SQS: `maxReceiveCount: 4` in the redrive policy.
pub const MAX_RECEIVES: u32 = 4;

/// How long a deduplication id suppresses a second send (SQS FIFO's fixed window).
pub const DEDUP_WINDOW: Duration = Duration::from_secs(5 * 60);

/// The queues the service uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueueName {
    /// Book jobs (extract, terms, chapters, re-translations) and account jobs: FIFO, one message
    /// group per book.
    Jobs,
    /// Where `Jobs` and `Render` messages go after [`MAX_RECEIVES`] receives.
    JobsDeadLetter,
    /// Rendering a book's file (generate jobs): FIFO, one message group per book. A queue of its
    /// own so that its worker alone carries the renderers (on AWS, a Lambda of its own).
    Render,
    /// Webhook deliveries: standard-queue semantics (every message its own group, so none waits
    /// for another) and no dead-letter queue: a delivery keeps its own attempt count and retry
    /// schedule (1, 5, 30 minutes) and ends FAILED on its own.
    Webhooks,
}

impl QueueName {
    pub const ALL: [QueueName; 4] = [
        QueueName::Jobs,
        QueueName::JobsDeadLetter,
        QueueName::Render,
        QueueName::Webhooks,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            QueueName::Jobs => "jobs",
            QueueName::JobsDeadLetter => "jobs-dlq",
            QueueName::Render => "render",
            QueueName::Webhooks => "webhooks",
        }
    }

    /// The queue that receives this one's messages after too many receives, if any. The jobs
    /// and render queues share one, whose worker gives up any book job.
    pub fn dead_letter(self) -> Option<QueueName> {
        match self {
            QueueName::Jobs | QueueName::Render => Some(QueueName::JobsDeadLetter),
            QueueName::JobsDeadLetter | QueueName::Webhooks => None,
        }
    }
}

/// A message to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// Messages of one group are delivered in send order, one in flight at a time.
    pub group: String,
    /// A second send with the same id within [`DEDUP_WINDOW`] is accepted but not enqueued.
    pub dedup_id: String,
    pub body: String,
}

/// A message handed to a consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// Stable across deliveries of the same message.
    pub id: String,
    /// Names this delivery; used to acknowledge or release it.
    pub receipt: String,
    pub group: String,
    pub body: String,
    /// 1 on the first delivery.
    pub receive_count: u32,
}

/// Message counts for health and dashboards. Counts the backend cannot know are None.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Visible, waiting for a consumer.
    pub waiting: u64,
    /// Received and not yet acknowledged.
    pub in_flight: u64,
    /// Acknowledged since the queue was created (None where the backend does not count it).
    pub completed: Option<u64>,
    /// Messages in this queue's dead-letter queue.
    pub dead: u64,
    /// How long the waiting message due longest ago has been due (None when nothing waits, or
    /// where the backend does not say: SQS reports it only as the CloudWatch metric
    /// `ApproximateAgeOfOldestMessage`, which the stack's alarm reads directly).
    pub oldest_due: Option<Duration>,
}

#[async_trait]
pub trait Queue: Send + Sync {
    /// Enqueues a message and returns its id. MUST be durable once it returns. MUST NOT enqueue a
    /// second message with a `dedup_id` already sent to this queue within [`DEDUP_WINDOW`]
    /// (it returns the first message's id, or any id, and succeeds).
    async fn send(&self, queue: QueueName, message: Outgoing) -> Result<String, StoreError>;

    /// Receives up to `max` visible messages and hides each for `visibility`. MUST respect group
    /// order: a message is only delivered when every earlier message of its group has been
    /// acknowledged, and never while another message of its group is in flight. A message
    /// received [`MAX_RECEIVES`] times and not acknowledged MUST NOT be delivered again: it is
    /// moved to the dead-letter queue when next due (its receive count MAY carry over, as on
    /// SQS, or start again). Returns an empty list when nothing is due (it MAY wait briefly
    /// first, as SQS long polling does).
    async fn receive(
        &self,
        queue: QueueName,
        max: usize,
        visibility: Duration,
    ) -> Result<Vec<Received>, StoreError>;

    /// Deletes the delivered message for good. Acknowledging an unknown or already acknowledged
    /// receipt MUST succeed and change nothing.
    async fn ack(&self, queue: QueueName, receipt: &str) -> Result<(), StoreError>;

    /// Makes the delivered message visible again after `delay` (zero: now) instead of at the end
    /// of its visibility timeout. Its receive count is kept. Unknown receipts MUST succeed.
    async fn release(
        &self,
        queue: QueueName,
        receipt: &str,
        delay: Duration,
    ) -> Result<(), StoreError>;

    /// Current counts. MAY be approximate on backends that only report estimates (SQS).
    async fn stats(&self, queue: QueueName) -> Result<QueueStats, StoreError>;

    /// A cheap round trip to the backend, for health checks.
    async fn ping(&self) -> Result<(), StoreError>;
}
