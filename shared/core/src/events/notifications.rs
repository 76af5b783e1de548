//! In-app notifications and the notification settings.

use tracing::info;

use super::record::{self, user_pk, SETTINGS_SK};
use super::{
    Events, Notification, NotificationPage, NotificationSettings, NotificationSettingsPatch,
    NotificationType,
};
use crate::fault::DataError;
use crate::ids::new_id;
use crate::ports::{Condition, Query, StoreError};

impl Events {
    /// Tells `user_id` in-app (if their settings allow) that someone replied to their comment
    /// on the post `post_title` at `link`.
    pub async fn notify_comment_reply(
        &self,
        user_id: &str,
        post_title: &str,
        link: String,
    ) -> Result<(), DataError> {
        if !self.notification_settings(user_id).await?.in_app_enabled {
            return Ok(());
        }
        let notification = Notification {
            id: new_id(),
            kind: NotificationType::CommentReply,
            title: "New reply".to_string(),
            message: format!("Someone replied to your comment on \"{post_title}\"."),
            link: Some(link),
            read: false,
            created_at: self.ports.clock.now(),
        };
        self.add_notification(user_id, notification).await
    }

    /// Stores a notification for `user_id` (whose settings the caller has checked).
    pub(crate) async fn add_notification(
        &self,
        user_id: &str,
        notification: Notification,
    ) -> Result<(), DataError> {
        self.ports
            .table
            .put(
                record::user_notification_item(user_id, &notification),
                Condition::NotExists,
            )
            .await
            .map_err(DataError::from)
    }

    /// Every notification of the user, newest first.
    pub async fn all_notifications(&self, user_id: &str) -> Result<Vec<Notification>, DataError> {
        let query = Query::partition(user_pk(user_id))
            .prefix(record::NOTIFICATION_PREFIX)
            .descending();
        let items = self.ports.table.query(query).await?;
        items
            .iter()
            .map(|item| Ok(record::notification_from(item)?))
            .collect()
    }

    /// Page `page` (from 1) of `limit` notifications, newest first; only unread ones when
    /// `unread_only`. The partition is read whole to count the total: notifications are small
    /// and a user's list stays short.
    pub async fn notifications(
        &self,
        user_id: &str,
        page: usize,
        limit: usize,
        unread_only: bool,
    ) -> Result<NotificationPage, DataError> {
        let matching: Vec<Notification> = self
            .all_notifications(user_id)
            .await?
            .into_iter()
            .filter(|n| !unread_only || !n.read)
            .collect();
        let total = matching.len();
        let skip = page.saturating_sub(1).saturating_mul(limit);
        let notifications = matching.into_iter().skip(skip).take(limit).collect();
        Ok(NotificationPage {
            notifications,
            total,
        })
    }

    pub async fn unread_count(&self, user_id: &str) -> Result<usize, DataError> {
        Ok(self
            .all_notifications(user_id)
            .await?
            .iter()
            .filter(|n| !n.read)
            .count())
    }

    /// Marks the user's notifications among `ids` read; returns how many were unread before.
    /// Unknown ids, and ids of other users' notifications (not in this user's partition), are
    /// ignored.
    pub async fn mark_read(&self, user_id: &str, ids: &[String]) -> Result<usize, DataError> {
        let pk = user_pk(user_id);
        let mut marked = 0;
        let mut seen: Vec<&String> = Vec::new();
        for id in ids {
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            let update = record::marked_read();
            match self
                .ports
                .table
                .update(&pk, &record::notification_sk(id), update, record::unread())
                .await
            {
                Ok(_) => marked += 1,
                Err(StoreError::NotFound | StoreError::Conflict) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if marked > 0 {
            info!(marked, "notifications marked read");
        }
        Ok(marked)
    }

    /// Marks every unread notification of the user read; returns how many.
    pub async fn mark_all_read(&self, user_id: &str) -> Result<usize, DataError> {
        let unread: Vec<String> = self
            .all_notifications(user_id)
            .await?
            .into_iter()
            .filter(|n| !n.read)
            .map(|n| n.id)
            .collect();
        self.mark_read(user_id, &unread).await
    }

    /// The user's settings, the defaults when they never changed them.
    pub async fn notification_settings(
        &self,
        user_id: &str,
    ) -> Result<NotificationSettings, DataError> {
        let item = self.ports.table.get(&user_pk(user_id), SETTINGS_SK).await?;
        let Some(item) = item else {
            return Ok(NotificationSettings::default());
        };
        let defaults = NotificationSettings::default();
        let flag = |name: &str, default: bool| item.bool(name).unwrap_or(default);
        Ok(NotificationSettings {
            email_book_completed: flag("emailBookCompleted", defaults.email_book_completed),
            email_translation_error: flag(
                "emailTranslationError",
                defaults.email_translation_error,
            ),
            email_weekly_digest: flag("emailWeeklyDigest", defaults.email_weekly_digest),
            email_newsletter: flag("emailNewsletter", defaults.email_newsletter),
            push_enabled: flag("pushEnabled", defaults.push_enabled),
            in_app_enabled: flag("inAppEnabled", defaults.in_app_enabled),
        })
    }

    /// Applies the patch and returns the settings as they are now.
    pub async fn update_notification_settings(
        &self,
        user_id: &str,
        patch: NotificationSettingsPatch,
    ) -> Result<NotificationSettings, DataError> {
        let current = self.notification_settings(user_id).await?;
        let settings = NotificationSettings {
            email_book_completed: patch
                .email_book_completed
                .unwrap_or(current.email_book_completed),
            email_translation_error: patch
                .email_translation_error
                .unwrap_or(current.email_translation_error),
            email_weekly_digest: patch
                .email_weekly_digest
                .unwrap_or(current.email_weekly_digest),
            email_newsletter: patch.email_newsletter.unwrap_or(current.email_newsletter),
            push_enabled: patch.push_enabled.unwrap_or(current.push_enabled),
            in_app_enabled: patch.in_app_enabled.unwrap_or(current.in_app_enabled),
        };
        let item = record::settings_item(user_pk(user_id), SETTINGS_SK, user_id, &settings)?;
        // Last write wins: two concurrent patches of different fields may lose one, which a
        // settings page tolerates.
        self.ports.table.put(item, Condition::Always).await?;
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use crate::events::{EventKind, Flagged, Occurrence};

    fn completed(sentence: Option<&str>) -> Occurrence {
        Occurrence {
            key: "book.completed:b1:1:epub".into(),
            user_id: "u1".into(),
            book_id: "b1".into(),
            title: "T".into(),
            status: "COMPLETED".into(),
            kind: EventKind::BookCompleted {
                download_path: "/api/download/b1?format=epub".into(),
                flagged: Flagged {
                    flagged_blocks: u32::from(sentence.is_some()),
                    sentence: sentence.map(str::to_string),
                    ..Flagged::default()
                },
            },
        }
    }

    #[test]
    fn a_completion_with_flagged_blocks_links_to_the_books_review() {
        let site = "https://booktr.example";
        let flagged = super::super::model::for_occurrence(
            &completed(Some(
                "1 block flagged (1 cut off); it keeps its source text.",
            )),
            chrono::DateTime::UNIX_EPOCH,
            site,
        );
        assert_eq!(
            flagged.link.as_deref(),
            Some("https://booktr.example/dashboard/books/b1/review")
        );
        assert!(!flagged.message.contains("/api/"), "{}", flagged.message);
        let clean = super::super::model::for_occurrence(
            &completed(None),
            chrono::DateTime::UNIX_EPOCH,
            site,
        );
        assert_eq!(
            clean.link.as_deref(),
            Some("https://booktr.example/dashboard/books/b1")
        );
    }
}
