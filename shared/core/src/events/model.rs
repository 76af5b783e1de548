//! What events speak: the occurrences, webhooks, deliveries, notifications and their settings,
//! and the messages a delivery carries.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::fault::{DataError, Fault};
use crate::ids::new_id;

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

    pub(super) fn parse(raw: &str) -> Option<Self> {
        match raw {
            "PENDING" => Some(DeliveryStatus::Pending),
            "RETRYING" => Some(DeliveryStatus::Retrying),
            "DELIVERED" => Some(DeliveryStatus::Delivered),
            "FAILED" => Some(DeliveryStatus::Failed),
            _ => None,
        }
    }

    pub(super) fn is_final(self) -> bool {
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

    pub(super) fn parse(raw: &str) -> Option<Self> {
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

/// A queued delivery: who owns it, so the worker finds the webhook in its owner's partition.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct DeliveryMessage {
    pub(super) user_id: String,
    pub(super) webhook_id: String,
    pub(super) delivery_id: String,
}

#[derive(Serialize)]
pub(super) struct Payload<'a, D: Serialize> {
    pub(super) event: &'a str,
    pub(super) timestamp: String,
    pub(super) data: D,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CompletedData<'a> {
    pub(super) book_id: &'a str,
    pub(super) title: &'a str,
    pub(super) status: &'a str,
    pub(super) download_url: &'a str,
    /// Beyond the spec: whether the book is clean or has flagged blocks, per kind.
    pub(super) quality: &'a Flagged,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ErrorData<'a> {
    pub(super) book_id: &'a str,
    pub(super) title: &'a str,
    pub(super) error: &'a str,
    pub(super) chapter_index: u32,
}

pub(super) fn to_json<T: Serialize>(value: &T) -> Result<String, DataError> {
    Ok(serde_json::to_string(value).map_err(Fault::encoding("an event"))?)
}

/// One page of a user's notifications, newest first, and how many there are in all (of the
/// filtered kind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotificationPage {
    pub notifications: Vec<Notification>,
    pub total: usize,
}

/// A change to the notification settings: the fields given are set, the others kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NotificationSettingsPatch {
    pub email_book_completed: Option<bool>,
    pub email_translation_error: Option<bool>,
    pub email_weekly_digest: Option<bool>,
    pub email_newsletter: Option<bool>,
    pub push_enabled: Option<bool>,
    pub in_app_enabled: Option<bool>,
}

/// The notification of `occurrence`, linking to the book's page of the web app on `site` (the
/// service's public URL), which offers its downloads, or its error and the way to resume; a
/// completion with flagged blocks links to the book's review, where they are listed.
pub(super) fn for_occurrence(
    occurrence: &Occurrence,
    now: DateTime<Utc>,
    site: &str,
) -> Notification {
    let book = format!("{site}/dashboard/books/{}", occurrence.book_id);
    let link = match &occurrence.kind {
        EventKind::BookCompleted { flagged, .. } if flagged.sentence.is_some() => {
            format!("{book}/review")
        }
        _ => book,
    };
    let (kind, title, message) = match &occurrence.kind {
        EventKind::BookCompleted { flagged, .. } => (
            NotificationType::BookCompleted,
            "Translation completed".to_string(),
            match &flagged.sentence {
                Some(sentence) => format!(
                    "\"{}\" has been translated and is ready to download. {sentence}",
                    occurrence.title
                ),
                None => format!(
                    "\"{}\" has been translated and is ready to download.",
                    occurrence.title
                ),
            },
        ),
        EventKind::TranslationError {
            error,
            chapter_index,
        } => (
            NotificationType::TranslationError,
            "Translation error".to_string(),
            format!(
                "Translating \"{}\" failed (chapter {chapter_index}): {error}",
                occurrence.title
            ),
        ),
    };
    Notification {
        id: new_id(),
        kind,
        title,
        message,
        link: Some(link),
        read: false,
        created_at: now,
    }
}

/// Webhooks one user may have at once: enough for a few integrations, few enough that one event
/// stays one small transaction.
pub const MAX_WEBHOOKS: usize = 20;

/// How long a receiver has to answer one delivery.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The waits before the 1st, 2nd and 3rd retry (the spec's). A delivery is tried once and then
/// once after each; when the last fails it is FAILED.
pub const RETRY_SCHEDULE: [Duration; 3] = [
    Duration::from_secs(60),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
];

/// The `X-Webhook-Signature` value: hex HMAC-SHA256 of the exact body with the secret.
pub fn sign(secret: &str, body: &[u8]) -> String {
    match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(mut mac) => {
            mac.update(body);
            hex::encode(mac.finalize().into_bytes())
        }
        // HMAC accepts keys of every length, so this is never reached.
        Err(_) => String::new(),
    }
}

/// What `POST /api/webhooks/{id}` answers: whether the test event was accepted (2xx), the
/// receiver's status (0 when there was none: refused, unreachable, timed out) and its answer
/// (or why there was none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestResult {
    pub success: bool,
    pub status_code: u16,
    pub response: String,
}

/// One attempt's result, as the history records it.
pub(super) struct Attempt {
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub response: String,
}

impl Attempt {
    pub(super) fn succeeded(&self) -> bool {
        self.status_code.is_some_and(|s| (200..300).contains(&s))
    }
}
