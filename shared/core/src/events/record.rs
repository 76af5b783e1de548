//! The events' items, and the one module that names their attributes:
//!
//! - a notification (`USER#<id>` / `NOTIFICATION#<id>`): `id`, `type`, `title`, `message`,
//!   `link`, `read`, `createdAt`;
//! - the notification settings (`USER#<id>` / `SETTINGS`): the settings' own fields, and
//!   `gsi1pk` / `gsi1sk` (`DIGEST_SUBSCRIBERS` / `<userId>`) while the weekly digest is on;
//! - a webhook (`USER#<id>` / `WEBHOOK#<id>`): `id`, `url`, `events`, `isActive`, `secret`,
//!   `createdAt`;
//! - a delivery (`WEBHOOK#<webhookId>` / `DELIVERY#<id>`): `id`, `webhookId`, `event`,
//!   `status`, `body`, `attempts`, `createdAt`, and the last attempt's `lastStatusCode`,
//!   `lastError`, `lastAttemptAt`, `nextAttemptAt`;
//! - an emitted occurrence's marker: `key`, `deliveries` (`webhookId` and `deliveryId` of
//!   each delivery it queued), `createdAt`.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::model::Attempt;
use super::{
    Delivery, DeliveryMessage, DeliveryStatus, Notification, NotificationSettings,
    NotificationType, Webhook,
};
use crate::fault::Fault;
use crate::ids::sha256_hex;
use crate::items::{corrupt, parse_time, required_str, required_time, time};
use crate::ports::{Condition, Item, Update};

// The keys.

pub(crate) use crate::items::user_pk;

pub(super) const SETTINGS_SK: &str = "SETTINGS#NOTIFICATIONS";

pub(super) fn emitted_sk(key: &str) -> String {
    // Hashed: the key is caller-made and may be long; the marker only has to be found again.
    format!("EVENT#{}", sha256_hex(key))
}

/// The index partition of the users who receive the weekly digest (`crate::jobs::digest`): their
/// notification-settings item carries it while the setting is on.
pub const DIGEST_SUBSCRIBERS: &str = "DIGEST_SUBSCRIBERS";

pub(super) const NOTIFICATION_PREFIX: &str = "NOTIFICATION#";

/// A notification in the user's partition.
pub(super) fn notification_sk(id: &str) -> String {
    format!("{NOTIFICATION_PREFIX}{id}")
}

pub(crate) const WEBHOOK_PREFIX: &str = "WEBHOOK#";
pub(super) const DELIVERY_PREFIX: &str = "DELIVERY#";

/// A webhook in its owner's partition.
pub(super) fn webhook_sk(id: &str) -> String {
    format!("{WEBHOOK_PREFIX}{id}")
}

/// A webhook's deliveries' partition.
pub(crate) fn delivery_pk(webhook_id: &str) -> String {
    format!("{WEBHOOK_PREFIX}{webhook_id}")
}

pub(super) fn delivery_sk(id: &str) -> String {
    format!("{DELIVERY_PREFIX}{id}")
}

/// The notification's item in the user's partition.
pub(super) fn user_notification_item(user_id: &str, n: &Notification) -> crate::ports::Item {
    notification_item(user_pk(user_id), notification_sk(&n.id), n)
}

pub(super) fn notification_item(pk: String, sk: String, n: &Notification) -> Item {
    Item::new(pk, sk)
        .with("id", n.id.clone())
        .with("type", n.kind.as_str())
        .with("title", n.title.clone())
        .with("message", n.message.clone())
        .with("link", n.link.clone())
        .with("read", n.read)
        .with("createdAt", time(n.created_at))
}

pub(super) fn notification_from(item: &Item) -> Result<Notification, Fault> {
    Ok(Notification {
        id: required_str(item, "id")?.to_string(),
        kind: NotificationType::parse(required_str(item, "type")?)
            .ok_or_else(|| corrupt(item, "type"))?,
        title: required_str(item, "title")?.to_string(),
        message: required_str(item, "message")?.to_string(),
        link: item.str("link").map(str::to_string),
        read: item.bool("read").unwrap_or(false),
        created_at: required_time(item, "createdAt")?,
    })
}

pub(super) fn marked_read() -> Update {
    Update::default().set("read", true)
}

pub(super) fn unread() -> Condition {
    Condition::equals("read", false)
}

/// The settings' item: their fields as attributes.
pub(super) fn settings_item(
    pk: String,
    sk: &str,
    user_id: &str,
    settings: &NotificationSettings,
) -> Result<Item, Fault> {
    let Value::Object(attrs) =
        serde_json::to_value(settings).map_err(Fault::encoding("the notification settings"))?
    else {
        return Err(Fault::Internal(
            "the notification settings encode as no object".into(),
        ));
    };
    let mut item = Item::new(pk, sk);
    item.attrs = attrs;
    if settings.email_weekly_digest {
        // Lists the user among the digest's subscribers (a sparse index).
        item = item
            .with("gsi1pk", DIGEST_SUBSCRIBERS)
            .with("gsi1sk", user_id);
    }
    Ok(item)
}

/// The weekly digest's items: the subscribers' index entries (see [`settings_item`]), the
/// marker of a week queued (`DIGEST` / the week: `queued`), and each user's marker of a digest
/// sent (`sentAt`).
pub(crate) mod digest {
    use chrono::{DateTime, Utc};

    use crate::items::time;
    use crate::ports::Item;

    /// The partition of the weeks whose digests are queued.
    pub const PK: &str = "DIGEST";

    /// A week's marker in [`PK`]: its digests are queued.
    pub fn week_sk(label: &str) -> String {
        format!("WEEK#{label}")
    }

    /// A week's marker in the user's partition: their digest was sent.
    pub fn sent_sk(label: &str) -> String {
        format!("DIGEST#{label}")
    }

    /// The user a digest subscriber's index entry names.
    pub fn subscriber(item: &Item) -> Option<&str> {
        item.str("gsi1sk")
    }

    /// The week's jobs are queued, `queued` of them.
    pub fn week_queued(week_marker: String, queued: usize) -> Item {
        Item::new(PK, week_marker).with("queued", queued as i64)
    }

    /// The user's digest of a week was sent.
    pub fn sent_to(user_pk: String, week_marker: String, now: DateTime<Utc>) -> Item {
        Item::new(user_pk, week_marker).with("sentAt", time(now))
    }
}

pub(super) fn webhook_item(pk: String, sk: String, webhook: &Webhook, secret: &str) -> Item {
    Item::new(pk, sk)
        .with("id", webhook.id.clone())
        .with("url", webhook.url.clone())
        .with("events", webhook.events.clone())
        .with("isActive", webhook.is_active)
        .with("secret", secret)
        .with("createdAt", time(webhook.created_at))
}

/// A webhook and its signing secret, as stored.
pub(super) struct StoredWebhook {
    pub webhook: Webhook,
    pub secret: String,
}

pub(super) fn webhook_from(item: &Item) -> Result<StoredWebhook, Fault> {
    let events = item
        .attrs
        .get("events")
        .and_then(Value::as_array)
        .ok_or_else(|| corrupt(item, "events"))?
        .iter()
        .filter_map(|e| e.as_str().map(str::to_string))
        .collect();
    Ok(StoredWebhook {
        webhook: Webhook {
            id: required_str(item, "id")?.to_string(),
            url: required_str(item, "url")?.to_string(),
            events,
            is_active: item.bool("isActive").unwrap_or(true),
            created_at: required_time(item, "createdAt")?,
        },
        secret: required_str(item, "secret")?.to_string(),
    })
}

/// A new delivery, PENDING, keeping the exact body so every attempt signs the same bytes.
#[allow(clippy::too_many_arguments)]
pub(super) fn delivery_item(
    pk: String,
    sk: String,
    webhook_id: &str,
    id: &str,
    event: &str,
    body: &str,
    now: DateTime<Utc>,
) -> Item {
    Item::new(pk, sk)
        .with("id", id)
        .with("webhookId", webhook_id)
        .with("event", event)
        .with("status", DeliveryStatus::Pending.as_str())
        .with("body", body)
        .with("attempts", 0)
        .with("createdAt", time(now))
}

pub(super) fn delivery_from(item: &Item) -> Result<Delivery, Fault> {
    let status = DeliveryStatus::parse(required_str(item, "status")?)
        .ok_or_else(|| corrupt(item, "status"))?;
    let attempts = item
        .i64("attempts")
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| corrupt(item, "attempts"))?;
    Ok(Delivery {
        id: required_str(item, "id")?.to_string(),
        event: required_str(item, "event")?.to_string(),
        status,
        attempts,
        last_status_code: item
            .i64("lastStatusCode")
            .and_then(|n| u16::try_from(n).ok()),
        last_error: item.str("lastError").map(str::to_string),
        created_at: required_time(item, "createdAt")?,
        last_attempt_at: parse_time(item, "lastAttemptAt")?,
        next_attempt_at: parse_time(item, "nextAttemptAt")?,
    })
}

/// The exact body every attempt of the delivery signs.
pub(super) fn delivery_body(item: &Item) -> Result<&str, Fault> {
    required_str(item, "body")
}

pub(super) fn delivery_pending(item: &Item) -> bool {
    item.str("status") == Some(DeliveryStatus::Pending.as_str())
}

pub(super) fn attempt_recorded(
    attempt: &Attempt,
    attempts: u32,
    status: DeliveryStatus,
    now: DateTime<Utc>,
    next: Option<DateTime<Utc>>,
) -> Update {
    let mut update = Update::default()
        .set("status", status.as_str())
        .set("attempts", attempts)
        .set("lastStatusCode", attempt.status_code)
        .set("lastError", attempt.error.clone())
        .set("lastAttemptAt", time(now));
    update = match next {
        Some(at) => update.set("nextAttemptAt", time(at)),
        None => update.remove("nextAttemptAt"),
    };
    update
}

/// No other attempt was recorded since `attempts` were read.
pub(super) fn attempts_are(attempts: u32) -> Condition {
    Condition::equals("attempts", i64::from(attempts))
}

/// The marker of an emitted occurrence, with the deliveries it queued.
pub(super) fn emitted_item(
    pk: &str,
    sk: &str,
    key: &str,
    queued: &[DeliveryMessage],
    now: DateTime<Utc>,
) -> Item {
    let deliveries: Vec<Value> = queued
        .iter()
        .map(|m| serde_json::json!({ "webhookId": m.webhook_id, "deliveryId": m.delivery_id }))
        .collect();
    Item::new(pk, sk)
        .with("key", key)
        .with("deliveries", deliveries)
        .with("createdAt", time(now))
}

/// The (webhook, delivery) ids an emitted occurrence's marker recorded.
pub(super) fn emitted_deliveries(marker: &Item) -> Vec<(String, String)> {
    let recorded = marker
        .attrs
        .get("deliveries")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    recorded
        .iter()
        .filter_map(|entry| {
            let webhook_id = entry.get("webhookId").and_then(Value::as_str)?;
            let delivery_id = entry.get("deliveryId").and_then(Value::as_str)?;
            Some((webhook_id.to_string(), delivery_id.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_final_attempt_clears_the_next_attempt_time() {
        let attempt = Attempt {
            status_code: Some(500),
            error: Some("the receiver answered 500".into()),
            response: String::new(),
        };
        let now = Utc::now();
        let update = attempt_recorded(&attempt, 4, DeliveryStatus::Failed, now, None);
        assert_eq!(update.set.get("status"), Some(&Value::from("FAILED")));
        assert_eq!(update.set.get("attempts"), Some(&Value::from(4)));
        assert!(update.remove.contains(&"nextAttemptAt".to_string()));
    }
}
