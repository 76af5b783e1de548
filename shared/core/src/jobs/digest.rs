//! The weekly digest: every user who turned `emailWeeklyDigest` on gets, once a week, an email
//! about their past week (Monday to Monday, UTC): the books that finished, the books that failed,
//! and the replies to their comments. A week with none of these sends nothing. With in-app
//! notifications on, the same summary also arrives as a WEEKLY_DIGEST notification.
//!
//! From Monday 08:00 UTC, [`Digests::queue_due`] queues one `WeeklyDigest` job per subscriber
//! for the week that ended (called hourly by `booktr serve`, by an EventBridge schedule on AWS;
//! calling it again that week does nothing). Each job sends one user's digest once: a marker
//! item per user and week is written after the send, so a retried job does not send twice.
//!
//! Subscribers are found through the index: their notification-settings item carries
//! `gsi1pk = DIGEST_SUBSCRIBERS` while the setting is on. Replies are counted from the week's
//! COMMENT_REPLY notifications, so a user with in-app notifications off sees none.

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc};
use tracing::{info, warn};

use super::error::JobError;
use crate::accounts::Accounts;
use crate::books::Books;
use crate::email::Postman;
use crate::events::record::digest as digest_record;
use crate::events::record::DIGEST_SUBSCRIBERS;
use crate::events::{Events, Notification, NotificationType};
use crate::fault::DataError;
use crate::ids::new_id;
use crate::job::Job;
use crate::ports::Ports;
use crate::ports::{Condition, Index, MailError, Query, StoreError};
use crate::types::BookStatus;

/// When, on the Monday after a week, its digests go out.
const SEND_HOUR: u32 = 8;

/// One week, Monday 00:00 UTC to the next Monday, named by its ISO week (`2026-W47`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Week {
    pub start: DateTime<Utc>,
    pub label: String,
}

impl Week {
    fn starting(start: NaiveDate) -> Week {
        let iso = start.iso_week();
        Week {
            start: Utc.from_utc_datetime(&start.and_hms_opt(0, 0, 0).unwrap_or_default()),
            label: format!("{}-W{:02}", iso.year(), iso.week()),
        }
    }

    /// The latest week whose digests are due at `now`.
    pub fn due_at(now: DateTime<Utc>) -> Week {
        let today = now.date_naive();
        let this_monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
        let sent_from = this_monday.and_hms_opt(SEND_HOUR, 0, 0).unwrap_or_default();
        let weeks_back = if now.naive_utc() >= sent_from { 1 } else { 2 };
        Week::starting(this_monday - Duration::weeks(weeks_back))
    }

    /// The week a label names; None for anything else.
    pub fn parse(label: &str) -> Option<Week> {
        let (year, week) = label.split_once("-W")?;
        let monday = NaiveDate::from_isoywd_opt(
            year.parse().ok()?,
            week.parse().ok()?,
            chrono::Weekday::Mon,
        )?;
        Some(Week::starting(monday))
    }

    fn contains(&self, t: DateTime<Utc>) -> bool {
        t >= self.start && t < self.start + Duration::weeks(1)
    }
}

/// What happened to one user in one week.
#[derive(Debug, Default)]
struct Summary {
    finished: Vec<String>,
    failed: Vec<String>,
    replies: usize,
}

impl Summary {
    fn is_empty(&self) -> bool {
        self.finished.is_empty() && self.failed.is_empty() && self.replies == 0
    }

    fn text(&self, week: &Week) -> String {
        let mut text = format!("Your week on booktr ({}):\n\n", week.label);
        let list = |text: &mut String, heading: &str, titles: &[String]| {
            if !titles.is_empty() {
                text.push_str(&format!("{heading} ({}):\n", titles.len()));
                for title in titles {
                    text.push_str(&format!("  - {title}\n"));
                }
                text.push('\n');
            }
        };
        list(&mut text, "Books translated", &self.finished);
        list(&mut text, "Books that failed", &self.failed);
        if self.replies > 0 {
            text.push_str(&format!("Replies to your comments: {}\n\n", self.replies));
        }
        text.push_str(
            "You get this email because the weekly digest is on in your notification settings.\n",
        );
        text
    }

    fn line(&self) -> String {
        format!(
            "{} translated, {} failed, {} replies.",
            self.finished.len(),
            self.failed.len(),
            self.replies
        )
    }
}

/// Queues and sends the weekly digests. Cheap to clone.
#[derive(Clone)]
pub struct Digests {
    ports: Ports,
    events: Events,
    postman: Postman,
    /// Whom to write to, and the books a week finished or failed.
    accounts: Accounts,
    books: Books,
}

/// What the digests work with, each shared with the rest of the process.
pub struct DigestParts {
    pub events: Events,
    pub postman: Postman,
    pub accounts: Accounts,
    pub books: Books,
}

impl Digests {
    pub fn new(ports: Ports, parts: DigestParts) -> Self {
        let DigestParts {
            events,
            postman,
            accounts,
            books,
        } = parts;
        Digests {
            ports,
            events,
            postman,
            accounts,
            books,
        }
    }

    /// Queues the digests of the latest week that is due, unless that was done already; returns
    /// how many were queued.
    pub async fn queue_due(&self) -> Result<usize, DataError> {
        let week = Week::due_at(self.ports.clock.now());
        let marker = digest_record::week_sk(&week.label);
        if self
            .ports
            .table
            .get(digest_record::PK, &marker)
            .await?
            .is_some()
        {
            return Ok(0);
        }
        let subscribers = self
            .ports
            .table
            .query_index(Index::Gsi1, Query::partition(DIGEST_SUBSCRIBERS))
            .await?;
        let mut queued = 0;
        for subscriber in &subscribers {
            let Some(user_id) = digest_record::subscriber(subscriber) else {
                continue;
            };
            let job = Job::WeeklyDigest {
                user_id: user_id.to_string(),
                week: week.label.clone(),
            };
            job.enqueue(self.ports.queue.as_ref()).await?;
            queued += 1;
        }
        // Written last: a run that stopped halfway is redone (each job sends at most once).
        let item = digest_record::week_queued(marker, queued);
        match self.ports.table.put(item, Condition::NotExists).await {
            Ok(()) | Err(StoreError::Conflict) => {}
            Err(e) => return Err(e.into()),
        }
        info!(week = %week.label, queued, "weekly digests queued");
        Ok(queued)
    }

    /// Sends `user_id` the digest of `week` (a `WeeklyDigest` job), once.
    pub async fn send(&self, user_id: &str, week: &str) -> Result<(), JobError> {
        let Some(week) = Week::parse(week) else {
            warn!(week, "digest job for an unreadable week dropped");
            return Ok(());
        };
        let user_pk = crate::items::user_pk(user_id);
        let marker = digest_record::sent_sk(&week.label);
        if self.ports.table.get(&user_pk, &marker).await?.is_some() {
            return Ok(());
        }
        let settings = self.events.notification_settings(user_id).await?;
        let Some(user) = self.accounts.find(user_id).await? else {
            return Ok(());
        };
        if !settings.email_weekly_digest {
            return Ok(());
        }
        let email = user.email.to_string();
        let summary = self.summary(user_id, &week).await?;
        if summary.is_empty() {
            info!(user_id, week = %week.label, "no digest: a quiet week");
        } else {
            let subject = format!("Your week on booktr: {}", summary.line());
            match self
                .postman
                .send(&email, &subject, &summary.text(&week))
                .await
            {
                Ok(()) => {}
                Err(MailError::Transport(e)) => return Err(JobError::Mail(e)),
                Err(e) => warn!(user_id, error = %e, "digest email not sent"),
            }
            if settings.in_app_enabled {
                self.events
                    .add_notification(
                        user_id,
                        Notification {
                            id: new_id(),
                            kind: NotificationType::WeeklyDigest,
                            title: format!("Your week ({})", week.label),
                            message: summary.line(),
                            link: Some("/dashboard".into()),
                            read: false,
                            created_at: self.ports.clock.now(),
                        },
                    )
                    .await?;
            }
        }
        let sent = digest_record::sent_to(user_pk, marker, self.ports.clock.now());
        Ok(self.ports.table.put(sent, Condition::Always).await?)
    }

    async fn summary(&self, user_id: &str, week: &Week) -> Result<Summary, DataError> {
        let mut summary = Summary::default();
        // Oldest first, as the week went.
        for book in self.books.all_of(user_id).await?.into_iter().rev() {
            match book.status {
                BookStatus::Completed if book.completed_at.is_some_and(|t| week.contains(t)) => {
                    summary.finished.push(book.title)
                }
                BookStatus::Error if week.contains(book.updated_at) => {
                    summary.failed.push(book.title)
                }
                _ => {}
            }
        }
        summary.replies = self
            .events
            .all_notifications(user_id)
            .await?
            .iter()
            .filter(|n| n.kind == NotificationType::CommentReply && week.contains(n.created_at))
            .count();
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn a_weeks_digest_is_due_from_the_next_monday_at_eight() {
        // Monday 23 November 2026 begins ISO week 48.
        assert_eq!(Week::due_at(at("2026-11-23T08:00:00Z")).label, "2026-W47");
        assert_eq!(Week::due_at(at("2026-11-23T07:59:59Z")).label, "2026-W46");
        assert_eq!(Week::due_at(at("2026-11-29T23:00:00Z")).label, "2026-W47");
        let week = Week::due_at(at("2026-11-25T12:00:00Z"));
        assert_eq!(week.start, at("2026-11-16T00:00:00Z"));
        assert!(week.contains(at("2026-11-22T23:59:59Z")));
        assert!(!week.contains(at("2026-11-23T00:00:00Z")));
    }

    #[test]
    fn labels_read_back_across_the_year_end() {
        let week = Week::due_at(at("2027-01-04T09:00:00Z"));
        assert_eq!(week.label, "2026-W53");
        assert_eq!(Week::parse(&week.label), Some(week));
        assert_eq!(Week::parse("2026-W54"), None);
        assert_eq!(Week::parse("yesterday"), None);
    }
}
