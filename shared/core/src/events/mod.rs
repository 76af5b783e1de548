//! Events: what the service tells a user when one of their books completes or fails. One
//! [`Occurrence`] fans out to an in-app notification, a signed webhook delivery per subscribed
//! webhook (sent by a worker of the `webhooks` queue, retried after 1, 5 and 30 minutes) and an
//! email, each as the user's settings ask.
//!
//! Layout (docs/operations.md's data layout repeats it):
//!
//! | item | pk | sk |
//! |---|---|---|
//! | webhook | `USER#<userId>` | `WEBHOOK#<id>` |
//! | delivery | `WEBHOOK#<webhookId>` | `DELIVERY#<id>` |
//! | notification | `USER#<userId>` | `NOTIFICATION#<id>` |
//! | notification settings | `USER#<userId>` | `SETTINGS#NOTIFICATIONS` |
//! | emitted marker | `USER#<userId>` | `EVENT#<sha256 of the occurrence key>` |
//!
//! Webhooks live in their owner's partition, so another user's webhook id is simply not found.
//! Ids are UUID v7, so a descending query lists newest first. The emitted marker makes
//! [`Events::emit`] idempotent: it is written in the same transaction as the notification and
//! the deliveries, on the condition that it does not exist yet.

pub mod notifications;
pub(crate) mod record;
mod webhooks;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tracing::{info, warn};

pub use notifications::{NotificationPage, NotificationSettingsPatch};
pub use webhooks::{sign, TestResult, MAX_WEBHOOKS, RETRY_SCHEDULE, TIMEOUT};

use crate::email::Postman;
use crate::fault::{DataError, Fault};
use crate::ids::{new_id, sha256_hex};
use crate::items::time_text;
use crate::ports::Ports;
use crate::ports::{Condition, StoreError, WriteOp};

/// The event names a webhook subscribes to (the spec's Events section).
pub const BOOK_COMPLETED: &str = "book.completed";
pub const TRANSLATION_ERROR: &str = "translation.error";
pub const EVENT_NAMES: [&str; 2] = [BOOK_COMPLETED, TRANSLATION_ERROR];

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// The book's file is ready; `download_path` is the download endpoint's path
    /// (`/api/download/<id>?format=epub`), `flagged` what the checks flagged in it.
    BookCompleted {
        download_path: String,
        flagged: Flagged,
    },
    /// Translating (or generating the file of) the book failed.
    TranslationError { error: String, chapter_index: u32 },
}

impl EventKind {
    /// The webhook event name.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::BookCompleted { .. } => BOOK_COMPLETED,
            EventKind::TranslationError { .. } => TRANSLATION_ERROR,
        }
    }
}

/// Blocks of a book whose translation could not be trusted (they keep their source text), as
/// the translation's checks reported them: nothing for a clean book.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flagged {
    /// Flagged blocks (0: a clean book).
    pub flagged_blocks: u32,
    /// Per kind (`untranslated`, `wrongLanguage` ...).
    pub flagged: BTreeMap<String, u32>,
    /// For people, e.g. "2 blocks flagged (2 untranslated); they keep their source text."
    #[serde(skip)]
    pub sentence: Option<String>,
}

/// One thing that happened to one book, to tell its owner about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// Idempotency key, e.g. `book.completed:<bookId>:<run>:<format>`: a second emit with the
    /// same key (a redelivered job) changes nothing.
    pub key: String,
    pub user_id: String,
    pub book_id: String,
    pub title: String,
    /// The book's status, as the API shows it.
    pub status: String,
    pub kind: EventKind,
}

/// The spec's Webhook. The secret is never part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    pub id: String,
    pub url: String,
    pub events: Vec<String>,
    pub is_active: bool,
    pub created_at: DateTime<Utc>,
}

/// A webhook just created, with the secret deliveries are signed with (shown this once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedWebhook {
    pub webhook: Webhook,
    pub secret: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Recorded, not tried yet.
    Pending,
    /// Tried and failed; another attempt is scheduled (`nextAttemptAt`).
    Retrying,
    Delivered,
    /// Every attempt failed; no more are made.
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "PENDING",
            DeliveryStatus::Retrying => "RETRYING",
            DeliveryStatus::Delivered => "DELIVERED",
            DeliveryStatus::Failed => "FAILED",
        }
    }

    fn parse(raw: &str) -> Option<Self> {
        match raw {
            "PENDING" => Some(DeliveryStatus::Pending),
            "RETRYING" => Some(DeliveryStatus::Retrying),
            "DELIVERED" => Some(DeliveryStatus::Delivered),
            "FAILED" => Some(DeliveryStatus::Failed),
            _ => None,
        }
    }

    fn is_final(self) -> bool {
        matches!(self, DeliveryStatus::Delivered | DeliveryStatus::Failed)
    }
}

/// One entry of a webhook's delivery history (the spec leaves its fields open).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: String,
    /// `book.completed`, `translation.error` or `test`.
    pub event: String,
    pub status: DeliveryStatus,
    pub attempts: u32,
    pub last_status_code: Option<u16>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub last_attempt_at: Option<DateTime<Utc>>,
    pub next_attempt_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationType {
    BookCompleted,
    TranslationError,
    SystemAnnouncement,
    CommentReply,
    PostReaction,
    WeeklyDigest,
}

impl NotificationType {
    pub fn as_str(self) -> &'static str {
        match self {
            NotificationType::BookCompleted => "BOOK_COMPLETED",
            NotificationType::TranslationError => "TRANSLATION_ERROR",
            NotificationType::SystemAnnouncement => "SYSTEM_ANNOUNCEMENT",
            NotificationType::CommentReply => "COMMENT_REPLY",
            NotificationType::PostReaction => "POST_REACTION",
            NotificationType::WeeklyDigest => "WEEKLY_DIGEST",
        }
    }

    fn parse(raw: &str) -> Option<Self> {
        [
            NotificationType::BookCompleted,
            NotificationType::TranslationError,
            NotificationType::SystemAnnouncement,
            NotificationType::CommentReply,
            NotificationType::PostReaction,
            NotificationType::WeeklyDigest,
        ]
        .into_iter()
        .find(|t| t.as_str() == raw)
    }
}

/// The spec's Notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    pub id: String,
    pub kind: NotificationType,
    pub title: String,
    pub message: String,
    pub link: Option<String>,
    pub read: bool,
    pub created_at: DateTime<Utc>,
}

/// The spec's NotificationSettings. Absent settings are [`Default`]: in-app and the two book
/// emails on, digest, newsletter and push off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationSettings {
    pub email_book_completed: bool,
    pub email_translation_error: bool,
    pub email_weekly_digest: bool,
    pub email_newsletter: bool,
    pub push_enabled: bool,
    pub in_app_enabled: bool,
}

impl Default for NotificationSettings {
    fn default() -> Self {
        NotificationSettings {
            email_book_completed: true,
            email_translation_error: true,
            email_weekly_digest: false,
            email_newsletter: false,
            push_enabled: false,
            in_app_enabled: true,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    /// The request is invalid; the message says why (a 400).
    #[error("{0}")]
    Invalid(String),
    #[error("webhook not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(EventsError);

/// What a worker should do with a webhook-queue message after [`Events::deliver`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// Delivered, failed for good, or nothing (left) to deliver: acknowledge.
    Done,
    /// Try again after this long (the retry schedule).
    RetryAfter(Duration),
    /// The store failed before the attempt could be recorded: redeliver with the job backoff.
    Retry,
}

/// Where a user's emails go: the one thing events need of the accounts domain, answered by
/// the wiring with the accounts service.
#[async_trait::async_trait]
pub trait Recipients: Send + Sync {
    /// The user's email address, None once the account is closed.
    async fn email_of(&self, user_id: &str) -> Result<Option<String>, DataError>;
}

#[derive(Clone)]
pub struct Events {
    ports: Ports,
    postman: Postman,
    recipients: Arc<dyn Recipients>,
    /// The service's public URL, which links in notifications and emails start with (a link
    /// has to open from a mail client, not only from the site).
    site: String,
}

pub(crate) fn user_pk(user_id: &str) -> String {
    format!("USER#{user_id}")
}

const SETTINGS_SK: &str = "SETTINGS#NOTIFICATIONS";

fn emitted_sk(key: &str) -> String {
    // Hashed: the key is caller-made and may be long; the marker only has to be found again.
    format!("EVENT#{}", sha256_hex(key))
}

/// A queued delivery: who owns it, so the worker finds the webhook in its owner's partition.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeliveryMessage {
    user_id: String,
    webhook_id: String,
    delivery_id: String,
}

#[derive(Serialize)]
struct Payload<'a, D: Serialize> {
    event: &'a str,
    timestamp: String,
    data: D,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompletedData<'a> {
    book_id: &'a str,
    title: &'a str,
    status: &'a str,
    download_url: &'a str,
    /// Beyond the spec: whether the book is clean or has flagged blocks, per kind.
    quality: &'a Flagged,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorData<'a> {
    book_id: &'a str,
    title: &'a str,
    error: &'a str,
    chapter_index: u32,
}

fn to_json<T: Serialize>(value: &T) -> Result<String, DataError> {
    Ok(serde_json::to_string(value).map_err(Fault::encoding("an event"))?)
}

impl Events {
    pub fn new(
        ports: Ports,
        postman: Postman,
        recipients: Arc<dyn Recipients>,
        site: &str,
    ) -> Self {
        Events {
            ports,
            postman,
            recipients,
            site: site.trim_end_matches('/').to_string(),
        }
    }

    /// Tells the book's owner: an in-app notification, a delivery per subscribed active
    /// webhook, an email, as their settings ask. Idempotent on `occurrence.key`: a second call
    /// records nothing new (it only re-queues deliveries still pending, in case the first call
    /// stopped between recording and queueing). Emails are sent at most once: a failure is
    /// logged and never fails the emit.
    pub async fn emit(&self, occurrence: &Occurrence) -> Result<(), DataError> {
        let user_pk = user_pk(&occurrence.user_id);
        let marker_sk = emitted_sk(&occurrence.key);
        let settings = self.notification_settings(&occurrence.user_id).await?;
        let event = occurrence.kind.name();
        let hooks: Vec<Webhook> = self
            .webhooks(&occurrence.user_id)
            .await?
            .into_iter()
            .filter(|w| w.is_active && w.events.iter().any(|e| e == event))
            .collect();
        let now = self.ports.clock.now();
        let body = self.payload(occurrence, now)?;

        let mut ops = Vec::new();
        let mut queued = Vec::new();
        for hook in &hooks {
            let delivery_id = new_id();
            ops.push(WriteOp::Put {
                item: record::delivery_item(
                    webhooks::delivery_pk(&hook.id),
                    webhooks::delivery_sk(&delivery_id),
                    &hook.id,
                    &delivery_id,
                    event,
                    &body,
                    now,
                ),
                condition: Condition::NotExists,
            });
            queued.push(DeliveryMessage {
                user_id: occurrence.user_id.clone(),
                webhook_id: hook.id.clone(),
                delivery_id,
            });
        }
        let notification = settings
            .in_app_enabled
            .then(|| notifications::for_occurrence(occurrence, now, &self.site));
        if let Some(n) = &notification {
            ops.push(WriteOp::Put {
                item: notifications::to_item(&occurrence.user_id, n),
                condition: Condition::NotExists,
            });
        }
        ops.push(WriteOp::Put {
            item: record::emitted_item(&user_pk, &marker_sk, &occurrence.key, &queued, now),
            condition: Condition::NotExists,
        });

        match self.ports.table.transact(ops).await {
            Ok(()) => {}
            Err(StoreError::Conflict) => {
                info!(key = %occurrence.key, "event already emitted");
                return self.requeue_pending(occurrence, &user_pk, &marker_sk).await;
            }
            Err(e) => return Err(e.into()),
        }
        for message in &queued {
            self.enqueue(message).await?;
        }
        info!(
            key = %occurrence.key,
            event,
            webhooks = queued.len(),
            in_app = notification.is_some(),
            "event emitted"
        );
        let wants_email = match occurrence.kind {
            EventKind::BookCompleted { .. } => settings.email_book_completed,
            EventKind::TranslationError { .. } => settings.email_translation_error,
        };
        if wants_email {
            self.send_email(occurrence).await;
        }
        Ok(())
    }

    /// The exact bytes every webhook of this occurrence receives.
    fn payload(&self, occurrence: &Occurrence, now: DateTime<Utc>) -> Result<String, DataError> {
        let event = occurrence.kind.name();
        let timestamp = time_text(now);
        match &occurrence.kind {
            EventKind::BookCompleted {
                download_path,
                flagged,
            } => to_json(&Payload {
                event,
                timestamp,
                data: CompletedData {
                    book_id: &occurrence.book_id,
                    title: &occurrence.title,
                    status: &occurrence.status,
                    download_url: download_path,
                    quality: flagged,
                },
            }),
            EventKind::TranslationError {
                error,
                chapter_index,
            } => to_json(&Payload {
                event,
                timestamp,
                data: ErrorData {
                    book_id: &occurrence.book_id,
                    title: &occurrence.title,
                    error,
                    chapter_index: *chapter_index,
                },
            }),
        }
    }

    /// After a repeated emit: sends again the deliveries the first one recorded and that were
    /// not attempted yet. The queue's deduplication and the delivery's status keep this from
    /// delivering twice.
    async fn requeue_pending(
        &self,
        occurrence: &Occurrence,
        user_pk: &str,
        marker_sk: &str,
    ) -> Result<(), DataError> {
        let Some(marker) = self.ports.table.get(user_pk, marker_sk).await? else {
            // The conflict was not the marker's: v7 ids do not collide, so this is unexpected.
            return Err(Fault::Internal(format!(
                "emitting '{}' conflicted without an earlier emit",
                occurrence.key
            ))
            .into());
        };
        for (webhook_id, delivery_id) in record::emitted_deliveries(&marker) {
            let (webhook_id, delivery_id) = (webhook_id.as_str(), delivery_id.as_str());
            let pending = self
                .ports
                .table
                .get(
                    &webhooks::delivery_pk(webhook_id),
                    &webhooks::delivery_sk(delivery_id),
                )
                .await?
                .is_some_and(|d| record::delivery_pending(&d));
            if pending {
                self.enqueue(&DeliveryMessage {
                    user_id: occurrence.user_id.clone(),
                    webhook_id: webhook_id.to_string(),
                    delivery_id: delivery_id.to_string(),
                })
                .await?;
            }
        }
        Ok(())
    }

    async fn send_email(&self, occurrence: &Occurrence) {
        let to = match self.recipient(&occurrence.user_id).await {
            Ok(Some(to)) => to,
            Ok(None) => {
                warn!(user_id = %occurrence.user_id, "no email sent: the user no longer exists");
                return;
            }
            Err(e) => {
                warn!(user_id = %occurrence.user_id, error = %e, "no email sent: the user could not be read");
                return;
            }
        };
        let (subject, text) = match &occurrence.kind {
            EventKind::BookCompleted {
                download_path,
                flagged,
            } => (
                format!("\"{}\" is translated", occurrence.title),
                format!(
                    "Your book \"{}\" has finished translating and its file is ready.\n\n{}Open it in booktr: {site}/dashboard/books/{id}\nOr download it with an API key: {site}{download_path}\n",
                    occurrence.title,
                    flagged
                        .sentence
                        .as_ref()
                        .map(|s| format!(
                            "{s} Review them: {site}/dashboard/books/{id}/review\n\n",
                            site = self.site,
                            id = occurrence.book_id
                        ))
                        .unwrap_or_default(),
                    site = self.site,
                    id = occurrence.book_id
                ),
            ),
            EventKind::TranslationError {
                error,
                chapter_index,
            } => (
                format!("Translating \"{}\" failed", occurrence.title),
                format!(
                    "Translating your book \"{}\" failed (chapter {chapter_index}): {error}\n\nResume it from its page, {site}/dashboard/books/{id}, or with POST {site}/api/translate/resume and {{\"bookId\": \"{id}\"}}; the chapters already translated are kept.\n",
                    occurrence.title,
                    site = self.site,
                    id = occurrence.book_id
                ),
            ),
        };
        if let Err(e) = self.postman.send(&to, &subject, &text).await {
            warn!(key = %occurrence.key, error = %e, "notification email not sent");
        }
    }

    async fn recipient(&self, user_id: &str) -> Result<Option<String>, DataError> {
        self.recipients.email_of(user_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_kinds_are_named_as_the_spec_names_them() {
        let done = EventKind::BookCompleted {
            download_path: "/api/download/b?format=epub".into(),
            flagged: Flagged::default(),
        };
        let failed = EventKind::TranslationError {
            error: "x".into(),
            chapter_index: 1,
        };
        assert_eq!(done.name(), "book.completed");
        assert_eq!(failed.name(), "translation.error");
        assert_eq!(EVENT_NAMES, [done.name(), failed.name()]);
    }

    #[test]
    fn a_payload_has_event_timestamp_and_data_in_the_spec_shape() {
        let body = to_json(&Payload {
            event: BOOK_COMPLETED,
            timestamp: "2026-01-01T00:00:00.000Z".into(),
            data: CompletedData {
                book_id: "b1",
                title: "T",
                status: "COMPLETED",
                download_url: "/api/download/b1?format=pdf",
                quality: &Flagged {
                    flagged_blocks: 2,
                    flagged: [("untranslated".to_string(), 2)].into(),
                    sentence: Some("not in the payload".into()),
                },
            },
        })
        .expect("json");
        assert_eq!(
            body,
            r#"{"event":"book.completed","timestamp":"2026-01-01T00:00:00.000Z","data":{"bookId":"b1","title":"T","status":"COMPLETED","downloadUrl":"/api/download/b1?format=pdf","quality":{"flaggedBlocks":2,"flagged":{"untranslated":2}}}}"#
        );
    }

    #[test]
    fn delivery_and_notification_states_read_back_as_they_are_written() {
        for status in [
            DeliveryStatus::Pending,
            DeliveryStatus::Retrying,
            DeliveryStatus::Delivered,
            DeliveryStatus::Failed,
        ] {
            assert_eq!(DeliveryStatus::parse(status.as_str()), Some(status));
        }
        let kind = NotificationType::TranslationError;
        assert_eq!(NotificationType::parse(kind.as_str()), Some(kind));
        assert_eq!(kind.as_str(), "TRANSLATION_ERROR");
    }

    #[test]
    fn the_emitted_marker_is_keyed_by_a_hash_of_the_occurrence_key() {
        let a = emitted_sk("book.completed:b:1:epub");
        assert!(a.starts_with("EVENT#") && a.len() == "EVENT#".len() + 64);
        assert_ne!(a, emitted_sk("book.completed:b:1:pdf"));
    }
}
