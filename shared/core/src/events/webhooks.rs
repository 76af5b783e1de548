//! Webhooks: registration, the signed deliveries and their retry schedule.

use bytes::Bytes;
use serde::Serialize;
use tracing::{info, warn};

use super::model::{to_json, Attempt, DeliveryMessage, Payload};
use super::record::{
    self, delivery_from, delivery_item, delivery_pk, delivery_sk, user_pk, webhook_from,
    webhook_sk, StoredWebhook,
};
use super::{
    sign, CreatedWebhook, Delivery, DeliveryOutcome, DeliveryStatus, Events, EventsError,
    TestResult, Webhook, EVENT_NAMES, MAX_WEBHOOKS, RETRY_SCHEDULE, TIMEOUT,
};
use crate::fault::DataError;
use crate::ids::{new_id, random_alphanumeric};
use crate::items::time_text;
use crate::ports::{Condition, HttpOutError, Outgoing, Query, QueueName, StoreError};

/// The history listing shows this many deliveries, newest first.
const HISTORY_LIMIT: usize = 100;

const MAX_URL: usize = 2048;
const SECRET_PREFIX: &str = "whsec_";
const TEST_EVENT: &str = "test";

impl Events {
    /// The user's webhooks, oldest first.
    pub async fn webhooks(&self, user_id: &str) -> Result<Vec<Webhook>, DataError> {
        let query = Query::partition(user_pk(user_id)).prefix(record::WEBHOOK_PREFIX);
        let items = self.ports.table.query(query).await?;
        items.iter().map(|i| Ok(webhook_from(i)?.webhook)).collect()
    }

    /// Registers a webhook. `url` must be an `https` URL with a host (`http` too while the
    /// outbound guard is off, for local receivers); `events` a non-empty list of event names.
    /// Whether the destination is a public address is checked on every delivery, not here: a
    /// name can be re-pointed after registration.
    pub async fn create_webhook(
        &self,
        user_id: &str,
        url: &str,
        events: &[String],
    ) -> Result<CreatedWebhook, EventsError> {
        let url = self.valid_url(url)?;
        let events = valid_events(events)?;
        if self.webhooks(user_id).await?.len() >= MAX_WEBHOOKS {
            return Err(EventsError::Invalid(format!(
                "at most {MAX_WEBHOOKS} webhooks per user; delete one first"
            )));
        }
        let webhook = Webhook {
            id: new_id(),
            url,
            events,
            is_active: true,
            created_at: self.ports.clock.now(),
        };
        let secret = format!("{SECRET_PREFIX}{}", random_alphanumeric(32));
        let item =
            record::webhook_item(user_pk(user_id), webhook_sk(&webhook.id), &webhook, &secret);
        self.ports.table.put(item, Condition::NotExists).await?;
        info!(webhook_id = %webhook.id, events = ?webhook.events, "webhook created");
        Ok(CreatedWebhook { webhook, secret })
    }

    fn valid_url(&self, raw: &str) -> Result<String, EventsError> {
        let invalid = |why: &str| EventsError::Invalid(format!("url {why}"));
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(invalid("is required"));
        }
        if raw.len() > MAX_URL {
            return Err(invalid(&format!("is longer than {MAX_URL} characters")));
        }
        let parsed = url::Url::parse(raw).map_err(|_| invalid("is not a valid URL"))?;
        match parsed.scheme() {
            "https" => {}
            "http" if self.ports.http.allows_private() => {}
            "http" => return Err(invalid("must use https")),
            _ => return Err(invalid("must be an http(s) URL")),
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(invalid("must have a host"));
        }
        Ok(parsed.to_string())
    }

    /// Removes the webhook and its delivery history; deliveries still queued are dropped when
    /// their turn comes.
    pub async fn delete_webhook(&self, user_id: &str, id: &str) -> Result<(), EventsError> {
        let table = &self.ports.table;
        match table
            .delete(&user_pk(user_id), &webhook_sk(id), Condition::Exists)
            .await
        {
            Ok(()) => {}
            Err(StoreError::Conflict | StoreError::NotFound) => return Err(EventsError::NotFound),
            Err(e) => return Err(e.into()),
        }
        let deliveries = table
            .query(Query::partition(delivery_pk(id)).prefix(record::DELIVERY_PREFIX))
            .await?;
        for d in &deliveries {
            table.delete(&d.pk, &d.sk, Condition::Always).await?;
        }
        info!(webhook_id = %id, deliveries = deliveries.len(), "webhook deleted");
        Ok(())
    }

    async fn stored_webhook(
        &self,
        user_id: &str,
        id: &str,
    ) -> Result<Option<StoredWebhook>, DataError> {
        let item = self
            .ports
            .table
            .get(&user_pk(user_id), &webhook_sk(id))
            .await?;
        Ok(item.as_ref().map(webhook_from).transpose()?)
    }

    /// The webhook's delivery history, newest first (the latest [`HISTORY_LIMIT`]).
    pub async fn deliveries(
        &self,
        user_id: &str,
        webhook_id: &str,
    ) -> Result<Vec<Delivery>, EventsError> {
        if self.stored_webhook(user_id, webhook_id).await?.is_none() {
            return Err(EventsError::NotFound);
        }
        let query = Query::partition(delivery_pk(webhook_id))
            .prefix(record::DELIVERY_PREFIX)
            .descending()
            .limit(HISTORY_LIMIT);
        let items = self.ports.table.query(query).await?;
        Ok(items.iter().map(delivery_from).collect::<Result<_, _>>()?)
    }

    /// Sends a signed test event to the webhook now and records it in the history (one
    /// attempt, never retried).
    pub async fn test_webhook(&self, user_id: &str, id: &str) -> Result<TestResult, EventsError> {
        let stored = self
            .stored_webhook(user_id, id)
            .await?
            .ok_or(EventsError::NotFound)?;
        let now = self.ports.clock.now();
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct TestData<'a> {
            webhook_id: &'a str,
            message: &'a str,
        }
        let body = to_json(&Payload {
            event: TEST_EVENT,
            timestamp: time_text(now),
            data: TestData {
                webhook_id: id,
                message: "This is a test event from booktr.",
            },
        })?;
        let delivery_id = new_id();
        let item = delivery_item(
            delivery_pk(id),
            delivery_sk(&delivery_id),
            id,
            &delivery_id,
            TEST_EVENT,
            &body,
            now,
        );
        self.ports.table.put(item, Condition::NotExists).await?;
        let attempt = self.attempt(&stored, TEST_EVENT, &delivery_id, &body).await;
        let status = if attempt.succeeded() {
            DeliveryStatus::Delivered
        } else {
            DeliveryStatus::Failed
        };
        let update = record::attempt_recorded(&attempt, 1, status, now, None);
        // The webhook may have been deleted meanwhile, with its history; nothing to record then.
        match self
            .ports
            .table
            .update(
                &delivery_pk(id),
                &delivery_sk(&delivery_id),
                update,
                Condition::Exists,
            )
            .await
        {
            Ok(_) | Err(StoreError::NotFound | StoreError::Conflict) => {}
            Err(e) => return Err(e.into()),
        }
        info!(webhook_id = %id, status_code = ?attempt.status_code, "webhook test event sent");
        Ok(TestResult {
            success: attempt.succeeded(),
            status_code: attempt.status_code.unwrap_or(0),
            response: attempt.error.unwrap_or(attempt.response),
        })
    }

    pub(super) async fn enqueue(&self, message: &DeliveryMessage) -> Result<(), DataError> {
        let body = to_json(message)?;
        let outgoing = Outgoing {
            // One group per delivery: deliveries never wait for each other.
            group: message.delivery_id.clone(),
            dedup_id: message.delivery_id.clone(),
            body,
        };
        self.ports.queue.send(QueueName::Webhooks, outgoing).await?;
        Ok(())
    }

    /// One attempt of a queued delivery (a `webhooks` queue message body): POSTs the stored
    /// body, records the attempt, and says when to try again. Already DELIVERED or FAILED
    /// deliveries, and those whose webhook was deleted, are done.
    pub async fn deliver(&self, message_body: &str) -> DeliveryOutcome {
        let message: DeliveryMessage = match serde_json::from_str(message_body) {
            Ok(m) => m,
            // Retrying cannot make it readable, and this queue has no dead-letter queue.
            Err(e) => {
                warn!(error = %e, "unreadable webhook delivery message dropped");
                return DeliveryOutcome::Done;
            }
        };
        match self.try_deliver(&message).await {
            Ok(outcome) => outcome,
            Err(e) => {
                warn!(delivery_id = %message.delivery_id, error = %e, "webhook delivery will be retried");
                DeliveryOutcome::Retry
            }
        }
    }

    async fn try_deliver(&self, message: &DeliveryMessage) -> Result<DeliveryOutcome, DataError> {
        let (pk, sk) = (
            delivery_pk(&message.webhook_id),
            delivery_sk(&message.delivery_id),
        );
        let Some(item) = self.ports.table.get(&pk, &sk).await? else {
            info!(delivery_id = %message.delivery_id, "delivery gone (webhook deleted): dropped");
            return Ok(DeliveryOutcome::Done);
        };
        let delivery = delivery_from(&item)?;
        if delivery.status.is_final() {
            return Ok(DeliveryOutcome::Done);
        }
        let Some(stored) = self
            .stored_webhook(&message.user_id, &message.webhook_id)
            .await?
        else {
            info!(delivery_id = %message.delivery_id, "webhook deleted: delivery dropped");
            return Ok(DeliveryOutcome::Done);
        };
        let body = record::delivery_body(&item)?;
        let attempt = self
            .attempt(&stored, &delivery.event, &delivery.id, body)
            .await;
        let attempts = delivery.attempts + 1;
        let now = self.ports.clock.now();
        let (status, outcome, next) = if attempt.succeeded() {
            (DeliveryStatus::Delivered, DeliveryOutcome::Done, None)
        } else if let Some(wait) = RETRY_SCHEDULE.get(delivery.attempts as usize) {
            let next = chrono::Duration::from_std(*wait).ok().map(|w| now + w);
            (
                DeliveryStatus::Retrying,
                DeliveryOutcome::RetryAfter(*wait),
                next,
            )
        } else {
            (DeliveryStatus::Failed, DeliveryOutcome::Done, None)
        };
        let update = record::attempt_recorded(&attempt, attempts, status, now, next);
        // Conditional on the attempt count read above: a second worker holding the same message
        // (after a visibility timeout) does not record its attempt over this one.
        let condition = record::attempts_are(delivery.attempts);
        match self.ports.table.update(&pk, &sk, update, condition).await {
            Ok(_) => {}
            Err(StoreError::NotFound) => return Ok(DeliveryOutcome::Done),
            Err(StoreError::Conflict) => {
                warn!(delivery_id = %delivery.id, "delivery attempt recorded by another worker");
                return Ok(DeliveryOutcome::Done);
            }
            Err(e) => return Err(e.into()),
        }
        let log_status = status.as_str();
        crate::metrics::webhook_delivery(match status {
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Retrying => "retrying",
            _ => "failed",
        });
        match status {
            DeliveryStatus::Failed => {
                warn!(delivery_id = %delivery.id, attempts, status = log_status, "webhook delivery failed for good")
            }
            _ => {
                info!(delivery_id = %delivery.id, attempts, status = log_status, status_code = ?attempt.status_code, "webhook delivery attempted")
            }
        }
        Ok(outcome)
    }

    /// POSTs `body` signed with the webhook's secret.
    async fn attempt(
        &self,
        stored: &StoredWebhook,
        event: &str,
        delivery_id: &str,
        body: &str,
    ) -> Attempt {
        let headers = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            (
                "X-Webhook-Signature".to_string(),
                sign(&stored.secret, body.as_bytes()),
            ),
            ("X-Webhook-Event".to_string(), event.to_string()),
            ("X-Webhook-Delivery".to_string(), delivery_id.to_string()),
        ];
        let result = self
            .ports
            .http
            .post(
                &stored.webhook.url,
                &headers,
                Bytes::copy_from_slice(body.as_bytes()),
                TIMEOUT,
            )
            .await;
        match result {
            Ok(answer) => Attempt {
                error: (!(200..300).contains(&answer.status))
                    .then(|| format!("the receiver answered {}", answer.status)),
                status_code: Some(answer.status),
                response: answer.body,
            },
            Err(e) => {
                if let HttpOutError::Blocked(why) = &e {
                    warn!(webhook_id = %stored.webhook.id, %why, "webhook destination refused");
                }
                Attempt {
                    status_code: None,
                    error: Some(e.to_string()),
                    response: String::new(),
                }
            }
        }
    }
}

fn valid_events(events: &[String]) -> Result<Vec<String>, EventsError> {
    if events.is_empty() {
        return Err(EventsError::Invalid(format!(
            "events must name at least one of {}",
            EVENT_NAMES.join(", ")
        )));
    }
    let mut out: Vec<String> = Vec::new();
    for event in events {
        if !EVENT_NAMES.contains(&event.as_str()) {
            return Err(EventsError::Invalid(format!(
                "unknown event '{event}'; expected {}",
                EVENT_NAMES.join(", ")
            )));
        }
        if !out.contains(event) {
            out.push(event.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hex_hmac_sha256_of_the_body() {
        // The well-known HMAC-SHA256 example ("key", the quick brown fox).
        assert_eq!(
            sign("key", b"The quick brown fox jumps over the lazy dog"),
            "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
        );
    }

    #[test]
    fn retries_wait_1_5_and_30_minutes() {
        let minutes: Vec<u64> = RETRY_SCHEDULE.iter().map(|d| d.as_secs() / 60).collect();
        assert_eq!(minutes, [1, 5, 30]);
    }

    #[test]
    fn events_must_be_known_and_are_kept_once_each() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            valid_events(&names(&[
                "translation.error",
                "book.completed",
                "translation.error"
            ]))
            .expect("valid"),
            names(&["translation.error", "book.completed"])
        );
        assert!(valid_events(&[]).is_err());
        assert!(valid_events(&names(&["book.completed", "book.deleted"])).is_err());
    }

    #[test]
    fn an_attempt_succeeds_only_on_a_2xx_answer() {
        let attempt = |status_code| Attempt {
            status_code,
            error: None,
            response: String::new(),
        };
        assert!(attempt(Some(200)).succeeded());
        assert!(attempt(Some(299)).succeeded());
        assert!(!attempt(Some(301)).succeeded());
        assert!(!attempt(Some(500)).succeeded());
        assert!(!attempt(None).succeeded());
    }
}
