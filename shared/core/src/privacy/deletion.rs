//! `DELETE /api/user/delete`: the account closes at once, its data is purged by a job.
//!
//! The request removes the profile and the email claim in one transaction: from then on every
//! key and session of the user answers 401 (authentication reads the profile), their share
//! links 404 (the share page checks the owner), their queued jobs are dropped as they come up
//! (jobs check the owner), and the email may sign up again. A `PurgeAccount` job then removes
//! everything else, however large the account: books with their chapters, files and share
//! links, files of unconfirmed direct uploads, glossaries, the translation memory, keys,
//! sessions, webhooks and their
//! deliveries, notifications, settings,
//! preferences, provider keys, usage and rate-limit counters. The job is idempotent; a marker
//! item (`PURGE#<userId>`) records the unfinished purge and is its last deletion.

use tracing::{info, instrument};

use super::error::PrivacyError;
use super::model::{Deleted, DELETE_CONFIRMATION};
use super::record;
use super::service::Privacy;
use crate::accounts::User;
use crate::fault::DataError;
use crate::job::Job;
use crate::ports::{blobs, Condition, Query, StoreError, WriteOp};

impl Privacy {
    #[instrument(skip(self, user, confirmation, reason), fields(user_id = %user.id))]
    pub async fn delete_account(
        &self,
        user: &User,
        confirmation: &str,
        reason: Option<&str>,
    ) -> Result<Deleted, PrivacyError> {
        if confirmation != DELETE_CONFIRMATION {
            return Err(PrivacyError::Invalid(format!(
                "confirmation must be exactly '{DELETE_CONFIRMATION}'"
            )));
        }
        // The purge is queued first: queued after the account closed, a queue failure would
        // leave a closed account nobody can ask to purge again. Queued first, it waits for the
        // account to close (see `purge`), and a deletion that fails leaves a job that finds
        // the account open and does nothing.
        let job = Job::PurgeAccount {
            user_id: user.id.clone(),
        };
        job.enqueue(self.ports.queue.as_ref()).await?;
        let now = self.ports.clock.now();
        let marker = record::purge_marker(&user.id, now);
        let mut ops = self.domains.accounts.closing(user);
        ops.push(WriteOp::Put {
            item: marker,
            condition: Condition::Always,
        });
        match self.ports.table.transact(ops).await {
            Ok(()) => {}
            // The email claim already belongs to someone else (a deletion raced a sign-up
            // after an earlier deletion): close the profile alone.
            Err(StoreError::Conflict) => {
                self.domains.accounts.close_profile(&user.id).await?;
            }
            Err(e) => return Err(e.into()),
        }
        self.domains.accounts.forget_user(&user.id);
        // The reason is kept in the log only: nothing of the account may stay in the store.
        info!(
            reason = reason.unwrap_or(""),
            "account closed; its data is being purged"
        );
        Ok(Deleted {
            success: true,
            message: "your account is closed and all its data is being removed permanently".into(),
            deleted_at: now,
        })
    }

    /// Removes everything the closed account held. Safe to run any number of times. Fails
    /// (to be retried) while the account is still open: its deletion is under way, or failed
    /// and then the job ends in the dead-letter queue, which lets it go.
    #[instrument(skip(self))]
    pub async fn purge(&self, user_id: &str) -> Result<(), PrivacyError> {
        if self.account_is_open(user_id).await? {
            return Err(PrivacyError::StillOpen);
        }
        let table = &self.ports.table;
        // Comments first: their pointers live in the user's partition, removed below.
        let mut removed = self.domains.community.remove_comments_of(user_id).await?;
        removed += self.domains.community.remove_posts_of(user_id).await?;
        for book in self.domains.books.all_of(user_id).await? {
            self.domains.books.remove_everything(&book.id).await?;
            removed += 1;
        }
        // Files sent for direct uploads never confirmed (their records are in the user's
        // partition, below).
        removed += blobs::delete_prefix(
            self.ports.blobs.as_ref(),
            &crate::books::uploads_prefix(user_id),
        )
        .await?;
        removed += self.domains.glossaries.remove_all_of(user_id).await?;
        removed += self.domains.memory.remove_all_of(user_id).await?;
        removed += self.domains.accounts.remove_credentials_of(user_id).await?;
        // The user's own partition (preferences, settings, notifications, webhooks, event
        // markers, usage, provider keys) and each webhook's delivery history.
        let own = table
            .query(Query::partition(crate::items::user_pk(user_id)))
            .await?;
        for item in &own {
            if let Some(webhook_id) = item.sk.strip_prefix(crate::events::record::WEBHOOK_PREFIX) {
                let deliveries = table
                    .query(Query::partition(crate::events::record::delivery_pk(
                        webhook_id,
                    )))
                    .await?;
                for d in deliveries {
                    table.delete(&d.pk, &d.sk, Condition::Always).await?;
                }
            }
            table.delete(&item.pk, &item.sk, Condition::Always).await?;
            removed += 1;
        }
        let counters = table
            .query(Query::partition(crate::limits::record::user_rate_pk(
                user_id,
            )))
            .await?;
        for item in counters {
            table.delete(&item.pk, &item.sk, Condition::Always).await?;
        }
        table
            .delete(
                &record::marker_pk(user_id),
                record::MARKER_SK,
                Condition::Always,
            )
            .await?;
        info!(removed, "account purged");
        Ok(())
    }
}

impl Privacy {
    /// Whether the user's profile still exists.
    pub async fn account_is_open(&self, user_id: &str) -> Result<bool, DataError> {
        Ok(self.domains.accounts.find(user_id).await?.is_some())
    }
}
