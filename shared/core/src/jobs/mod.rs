//! Background jobs: what is queued, and how a worker processes it. The same handler runs in the
//! local worker loop (`runner`) and, later, in the SQS-triggered Lambda.

mod extract;
mod handler;
pub mod runner;

use serde::{Deserialize, Serialize};

pub use handler::{JobHandler, Outcome};

use crate::ports::{Outgoing, Queue, QueueName, StoreError};

/// A unit of background work. Serialized as the queue message body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Job {
    /// Read the uploaded file into chapters.
    #[serde(rename_all = "camelCase")]
    Extract { book_id: String },
}

impl Job {
    /// The job's name in logs and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Job::Extract { .. } => "extract",
        }
    }

    pub fn book_id(&self) -> &str {
        match self {
            Job::Extract { book_id } => book_id,
        }
    }

    /// Identifies the job for the queue's deduplication: queuing the same job twice within the
    /// window (a retried request) queues it once.
    pub fn dedup_id(&self) -> String {
        match self {
            Job::Extract { book_id } => format!("extract-{book_id}"),
        }
    }

    /// Sends the job to the jobs queue, in its book's message group so a book's jobs run in order.
    pub async fn enqueue(&self, queue: &dyn Queue) -> Result<String, StoreError> {
        let body = serde_json::to_string(self).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let message = Outgoing {
            group: self.book_id().to_string(),
            dedup_id: self.dedup_id(),
            body,
        };
        queue.send(QueueName::Jobs, message).await
    }
}
