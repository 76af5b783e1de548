//! Notifications and their settings; webhooks, their deliveries and their test.

use booktr_core::events as domain;
use chrono::{DateTime, Utc};

use super::flagged::with_flagged_hint;
use super::{wire, wire_enum, Mirror};

wire! {
    /// The spec's Webhook. The secret is never part of it.
    #[serde(rename_all = "camelCase")]
    pub struct Webhook from domain::Webhook {
        pub id: String,
        pub url: String,
        pub events: Vec<String>,
        pub is_active: bool,
        pub created_at: DateTime<Utc>,
    }
}

wire_enum! {
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum DeliveryStatus from domain::DeliveryStatus { Pending, Retrying, Delivered, Failed }
}

wire! {
    /// One entry of a webhook's delivery history (the spec leaves its fields open).
    #[serde(rename_all = "camelCase")]
    pub struct Delivery from domain::Delivery {
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
}

wire! {
    /// What `POST /api/webhooks/{id}` answers: whether the test event was accepted (2xx), the
    /// receiver's status (0 when there was none: refused, unreachable, timed out) and its answer
    /// (or why there was none).
    #[serde(rename_all = "camelCase")]
    pub struct TestResult from domain::TestResult {
        pub success: bool,
        pub status_code: u16,
        pub response: String,
    }
}

wire_enum! {
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum NotificationType from domain::NotificationType {
        BookCompleted,
        TranslationError,
        SystemAnnouncement,
        CommentReply,
        PostReaction,
        WeeklyDigest,
    }
}

/// The spec's Notification.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Notification {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: NotificationType,
    pub title: String,
    pub message: String,
    pub link: Option<String>,
    pub read: bool,
    pub created_at: DateTime<Utc>,
}

/// As [`wire!`] would, and the completion's report of flagged blocks says where they are listed.
impl Mirror<domain::Notification> for Notification {
    fn mirror(from: domain::Notification) -> Self {
        let domain::Notification {
            id,
            kind,
            title,
            message,
            link,
            read,
            created_at,
        } = from;
        let message = match kind {
            domain::NotificationType::BookCompleted => with_flagged_hint(message),
            _ => message,
        };
        Notification {
            id,
            kind: Mirror::mirror(kind),
            title,
            message,
            link,
            read,
            created_at,
        }
    }
}

wire! {
    /// The spec's NotificationSettings. Absent settings are [`Default`]: in-app and the two book
    /// emails on, digest, newsletter and push off.
    #[serde(rename_all = "camelCase")]
    pub struct NotificationSettings from domain::NotificationSettings {
        pub email_book_completed: bool,
        pub email_translation_error: bool,
        pub email_weekly_digest: bool,
        pub email_newsletter: bool,
        pub push_enabled: bool,
        pub in_app_enabled: bool,
    }
}

wire! {
    /// A change to the notification settings: the fields given are set, the others kept.
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct NotificationSettingsPatch into domain::NotificationSettingsPatch {
        pub email_book_completed: Option<bool>,
        pub email_translation_error: Option<bool>,
        pub email_weekly_digest: Option<bool>,
        pub email_newsletter: Option<bool>,
        pub push_enabled: Option<bool>,
        pub in_app_enabled: Option<bool>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notification(kind: domain::NotificationType, message: &str) -> domain::Notification {
        domain::Notification {
            id: "n1".into(),
            kind,
            title: "Translation completed".into(),
            message: message.into(),
            link: None,
            read: false,
            created_at: DateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_completions_flagged_blocks_say_where_they_are_listed() {
        let flagged = "\"T\" has been translated and is ready to download. 1 block flagged \
                       (1 untranslated); it keeps its source text.";
        let shown: Notification = Mirror::mirror(notification(
            domain::NotificationType::BookCompleted,
            flagged,
        ));
        assert_eq!(
            shown.message,
            format!("{flagged} GET /api/translate/status lists them by chapter.")
        );
        let clean = "\"T\" has been translated and is ready to download.";
        let shown: Notification =
            Mirror::mirror(notification(domain::NotificationType::BookCompleted, clean));
        assert_eq!(shown.message, clean);
        let other = "an announcement; it keeps its source text.";
        let shown: Notification = Mirror::mirror(notification(
            domain::NotificationType::SystemAnnouncement,
            other,
        ));
        assert_eq!(shown.message, other);
    }
}

#[cfg(test)]
mod spelling {
    use super::*;

    /// The API spells the states as the store does (`as_str`), which the pages and the
    /// webhooks' consumers see too.
    #[test]
    fn delivery_and_notification_states_use_the_stores_spelling() {
        use domain::DeliveryStatus as D;
        for status in [D::Pending, D::Retrying, D::Delivered, D::Failed] {
            let shown: DeliveryStatus = Mirror::mirror(status);
            assert_eq!(serde_json::to_value(shown).unwrap(), status.as_str());
        }
        use domain::NotificationType as N;
        for kind in [
            N::BookCompleted,
            N::TranslationError,
            N::SystemAnnouncement,
            N::CommentReply,
            N::PostReaction,
            N::WeeklyDigest,
        ] {
            let shown: NotificationType = Mirror::mirror(kind);
            assert_eq!(serde_json::to_value(shown).unwrap(), kind.as_str());
        }
    }
}
