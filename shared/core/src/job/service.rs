//! Queuing a job.

use super::model::Job;
use crate::fault::{DataError, Fault};
use crate::ports::{Outgoing, Queue, QueueName};

impl Job {
    /// Sends the job to the jobs queue, in its book's message group so a book's jobs run in order.
    pub async fn enqueue(&self, queue: &dyn Queue) -> Result<String, DataError> {
        let body = serde_json::to_string(self).map_err(Fault::encoding("a job"))?;
        let message = Outgoing {
            group: self.group(),
            dedup_id: self.dedup_id(),
            body,
        };
        queue
            .send(QueueName::Jobs, message)
            .await
            .map_err(DataError::from)
    }
}
