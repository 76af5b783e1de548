//! Queuing a job.

use super::model::Job;
use crate::fault::{DataError, Fault};
use crate::ports::{Outgoing, Queue, QueueName};

impl Job {
    /// The queue the job runs from: a generate job from the render queue, whose worker alone
    /// carries the renderers (on AWS the jobs worker's Lambda has no room for them); every
    /// other job from the jobs queue.
    pub fn queue(&self) -> QueueName {
        match self {
            Job::Generate { .. } => QueueName::Render,
            Job::Extract { .. }
            | Job::Terms { .. }
            | Job::Chapters { .. }
            | Job::Retranslate { .. }
            | Job::PurgeAccount { .. }
            | Job::WeeklyDigest { .. } => QueueName::Jobs,
        }
    }

    /// Sends the job to [its queue](Job::queue), in its book's message group so a book's jobs
    /// run in order.
    pub async fn enqueue(&self, queue: &dyn Queue) -> Result<String, DataError> {
        let body = serde_json::to_string(self).map_err(Fault::encoding("a job"))?;
        let message = Outgoing {
            group: self.group(),
            dedup_id: self.dedup_id(),
            body,
        };
        queue
            .send(self.queue(), message)
            .await
            .map_err(DataError::from)
    }
}
