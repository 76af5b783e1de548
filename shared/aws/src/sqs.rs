//! The queue port on SQS: the jobs and render queues are FIFO (message group = book, explicit
//! deduplication ids), each with a redrive policy of 4 receives to the one FIFO dead-letter queue
//! they share; webhook deliveries go to
//! a standard queue whose retries are visibility changes (SQS delays stop at 15 minutes, the
//! retry schedule goes to 30).

use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use aws_sdk_sqs::Client;
use booktr_ports::{Outgoing, Queue, QueueName, QueueStats, Received, StoreError};
use tracing::debug;

use crate::dynamo::aws_error_text;

/// The queue URLs, one per [`QueueName`].
#[derive(Debug, Clone)]
pub struct QueueUrls {
    pub jobs: String,
    pub jobs_dead_letter: String,
    pub render: String,
    pub webhooks: String,
}

impl QueueUrls {
    fn of(&self, queue: QueueName) -> &str {
        match queue {
            QueueName::Jobs => &self.jobs,
            QueueName::JobsDeadLetter => &self.jobs_dead_letter,
            QueueName::Render => &self.render,
            QueueName::Webhooks => &self.webhooks,
        }
    }
}

pub struct SqsQueue {
    client: Client,
    urls: QueueUrls,
    /// How long a receive waits for messages (SQS long polling); short in tests.
    wait: Duration,
}

impl SqsQueue {
    pub fn new(client: Client, urls: QueueUrls, wait: Duration) -> Self {
        SqsQueue { client, urls, wait }
    }

    /// Creates the four queues under `prefix` as `template.yaml` declares them (for the emulator
    /// and development; production queues come from the SAM stack).
    pub async fn create(client: &Client, prefix: &str) -> Result<QueueUrls, StoreError> {
        let create = |name: String, fifo: bool, redrive: Option<String>| {
            let client = client.clone();
            async move {
                let mut request = client.create_queue().queue_name(name);
                if fifo {
                    request = request.attributes(QueueAttributeName::FifoQueue, "true");
                }
                if let Some(redrive) = redrive {
                    request = request.attributes(QueueAttributeName::RedrivePolicy, redrive);
                }
                let output = request.send().await.map_err(unavailable)?;
                output
                    .queue_url
                    .ok_or_else(|| StoreError::Unavailable("SQS returned no queue URL".into()))
            }
        };
        let dead_letter = create(format!("{prefix}-jobs-dlq.fifo"), true, None).await?;
        let arn = client
            .get_queue_attributes()
            .queue_url(&dead_letter)
            .attribute_names(QueueAttributeName::QueueArn)
            .send()
            .await
            .map_err(unavailable)?
            .attributes
            .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
            .ok_or_else(|| StoreError::Unavailable("SQS returned no queue ARN".into()))?;
        let redrive = format!(
            "{{\"deadLetterTargetArn\":\"{arn}\",\"maxReceiveCount\":\"{}\"}}",
            booktr_ports::queue::MAX_RECEIVES
        );
        let jobs = create(format!("{prefix}-jobs.fifo"), true, Some(redrive.clone())).await?;
        let render = create(format!("{prefix}-render.fifo"), true, Some(redrive)).await?;
        let webhooks = create(format!("{prefix}-webhooks"), false, None).await?;
        Ok(QueueUrls {
            jobs,
            jobs_dead_letter: dead_letter,
            render,
            webhooks,
        })
    }

    fn is_fifo(queue: QueueName) -> bool {
        !matches!(queue, QueueName::Webhooks)
    }

    async fn count(&self, url: &str) -> Result<(u64, u64), StoreError> {
        let attributes = self
            .client
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
            .send()
            .await
            .map_err(unavailable)?
            .attributes
            .unwrap_or_default();
        let number = |name: &QueueAttributeName| {
            attributes
                .get(name)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        Ok((
            number(&QueueAttributeName::ApproximateNumberOfMessages),
            number(&QueueAttributeName::ApproximateNumberOfMessagesNotVisible),
        ))
    }
}

#[async_trait]
impl Queue for SqsQueue {
    async fn send(&self, queue: QueueName, message: Outgoing) -> Result<String, StoreError> {
        let mut request = self
            .client
            .send_message()
            .queue_url(self.urls.of(queue))
            .message_body(message.body);
        if Self::is_fifo(queue) {
            request = request
                .message_group_id(message.group)
                .message_deduplication_id(dedup_id(&message.dedup_id));
        }
        let output = request.send().await.map_err(unavailable)?;
        Ok(output.message_id.unwrap_or_default())
    }

    async fn receive(
        &self,
        queue: QueueName,
        max: usize,
        visibility: Duration,
    ) -> Result<Vec<Received>, StoreError> {
        let output = self
            .client
            .receive_message()
            .queue_url(self.urls.of(queue))
            .max_number_of_messages(max.clamp(1, 10) as i32)
            .visibility_timeout(visibility.as_secs().max(1) as i32)
            .wait_time_seconds(self.wait.as_secs().min(20) as i32)
            .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
            .message_system_attribute_names(MessageSystemAttributeName::MessageGroupId)
            .send()
            .await
            .map_err(unavailable)?;
        let messages = output.messages.unwrap_or_default();
        Ok(messages
            .into_iter()
            .map(|m| {
                let attributes = m.attributes.unwrap_or_default();
                let receive_count = attributes
                    .get(&MessageSystemAttributeName::ApproximateReceiveCount)
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(1);
                let group = attributes
                    .get(&MessageSystemAttributeName::MessageGroupId)
                    .cloned()
                    .unwrap_or_default();
                Received {
                    id: m.message_id.unwrap_or_default(),
                    receipt: m.receipt_handle.unwrap_or_default(),
                    group,
                    body: m.body.unwrap_or_default(),
                    receive_count,
                }
            })
            .collect())
    }

    async fn ack(&self, queue: QueueName, receipt: &str) -> Result<(), StoreError> {
        let result = self
            .client
            .delete_message()
            .queue_url(self.urls.of(queue))
            .receipt_handle(receipt)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) if stale_receipt(e.code()) => {
                debug!("acknowledging an unknown receipt: nothing to do");
                Ok(())
            }
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn release(
        &self,
        queue: QueueName,
        receipt: &str,
        delay: Duration,
    ) -> Result<(), StoreError> {
        let result = self
            .client
            .change_message_visibility()
            .queue_url(self.urls.of(queue))
            .receipt_handle(receipt)
            // SQS's limit is 12 hours.
            .visibility_timeout(delay.as_secs().min(43_200) as i32)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) if stale_receipt(e.code()) => Ok(()),
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn stats(&self, queue: QueueName) -> Result<QueueStats, StoreError> {
        let (waiting, in_flight) = self.count(self.urls.of(queue)).await?;
        let dead = match queue.dead_letter() {
            Some(dead_letter) => {
                let (waiting, in_flight) = self.count(self.urls.of(dead_letter)).await?;
                waiting + in_flight
            }
            None => 0,
        };
        Ok(QueueStats {
            waiting,
            in_flight,
            // SQS does not count deleted messages.
            completed: None,
            dead,
            oldest_due: None,
        })
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.count(&self.urls.jobs).await.map(|_| ())
    }
}

/// SQS deduplication ids are at most 128 characters of `[A-Za-z0-9!-/:-@[-`{-~]`; ours are
/// ASCII ids, hashed when too long.
fn dedup_id(id: &str) -> String {
    if id.len() <= 128 && id.chars().all(|c| c.is_ascii_graphic()) {
        id.to_string()
    } else {
        booktr_ports::ids::sha256_hex(id)
    }
}

/// A receipt that no longer names an in-flight message (already deleted, or expired).
fn stale_receipt(code: Option<&str>) -> bool {
    matches!(
        code,
        Some("ReceiptHandleIsInvalid")
            | Some("InvalidParameterValue")
            | Some("AWS.SimpleQueueService.NonExistentMessage")
            | Some("MessageNotInflight")
    )
}

fn unavailable(e: impl std::error::Error) -> StoreError {
    StoreError::Unavailable(format!("SQS: {}", aws_error_text(&e)))
}
