//! The events service: [`Events::emit`] and the emails; the notifications and the webhooks
//! are its other parts (`notifications.rs`, `webhooks.rs`).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use tracing::{info, warn};

use super::model::{for_occurrence, to_json, CompletedData, DeliveryMessage, ErrorData, Payload};
use super::record::{self, emitted_sk, user_pk};
use super::*;
use crate::email::Postman;
use crate::fault::{DataError, Fault};
use crate::ids::new_id;
use crate::items::time_text;
use crate::ports::Ports;
use crate::ports::{Condition, StoreError, WriteOp};

#[derive(Clone)]
pub struct Events {
    pub(super) ports: Ports,
    pub(super) postman: Postman,
    pub(super) recipients: Arc<dyn Recipients>,
    /// The service's public URL, which links in notifications and emails start with (a link
    /// has to open from a mail client, not only from the site).
    pub(super) site: String,
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
                    record::delivery_pk(&hook.id),
                    record::delivery_sk(&delivery_id),
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
            .then(|| for_occurrence(occurrence, now, &self.site));
        if let Some(n) = &notification {
            ops.push(WriteOp::Put {
                item: record::user_notification_item(&occurrence.user_id, n),
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
                    &record::delivery_pk(webhook_id),
                    &record::delivery_sk(delivery_id),
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
