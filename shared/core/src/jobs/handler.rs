//! Processes one job at a time; what to do with the message afterwards is the caller's business
//! (acknowledge, or leave it for the queue to redeliver).

use std::future::Future;

use tracing::{error, info, info_span, warn, Instrument, Span};

use super::context::JobHandler;
use super::error::JobError;
use super::{chapter, extract, generate, retranslate, terms};
use crate::books::lifecycle::BookEvent;
use crate::books::record::BookChange;
use crate::books::Book;
use crate::events::{EventKind, Occurrence};
use crate::fault::DataError;
use crate::job::{Edition, Job};

/// What became of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Finished, or there was nothing (left) to do: acknowledge the message.
    Done,
    /// Failed in a way a later try may not (a backend was unavailable): leave the message to be
    /// redelivered; after the last retry it goes to the dead-letter queue.
    Retry(String),
    /// Try again after exactly this long: a schedule of the message's own (webhook deliveries,
    /// 1, 5 and 30 minutes), not the job backoff.
    RetryAfter(std::time::Duration),
}

impl JobHandler {
    /// Runs a job from the jobs queue, received for the `receive_count`th time. Idempotent: a
    /// redelivered job finds its work done or redoes it with the same result.
    pub async fn process(&self, job: &Job, receive_count: u32) -> Outcome {
        let span = job_span(job);
        let work = self.dispatch(job, receive_count, &span);
        self.run(job, &span, work).await
    }

    /// Runs a job from the render queue: renders the book's file. Idempotent as
    /// [`JobHandler::process`] is. A worker links only the entry point of its own queue, so
    /// the jobs worker carries no renderer.
    pub async fn process_render(&self, job: &Job) -> Outcome {
        let span = job_span(job);
        let work = self.dispatch_render(job, &span);
        self.run(job, &span, work).await
    }

    /// Runs `work`, the job itself, between the checks every job gets: dropped when its
    /// book's owner closed their account, given up at once when another try would fail the
    /// same way.
    async fn run(
        &self,
        job: &Job,
        span: &Span,
        work: impl Future<Output = Result<(), JobError>>,
    ) -> Outcome {
        // The book's owner, when the book exists (jobs of a gone book find nothing to do).
        let owner = match self.open_owner(job, span).await {
            Ok(owner) => owner,
            Err(outcome) => return outcome,
        };
        let result = work.await;
        // The owner may have closed their account while this ran, and the purge gone by
        // before what the job wrote: remove the book again and purge again (both idempotent)
        // so nothing stays behind.
        if let (Some(book_id), Some(owner)) = (job.book_id(), owner) {
            if let Some(outcome) = self.purge_if_closed(book_id, &owner, span).await {
                return outcome;
            }
        }
        match result {
            Ok(()) => Outcome::Done,
            Err(e) if e.is_final() => {
                span.in_scope(
                    || warn!(error = %e, "job failed; another try would fail the same way"),
                );
                // Kept for the dead-letter handler, should giving up itself fail until then.
                self.note_last_error(job, &e).await;
                self.give_up_now(job, &e).await
            }
            Err(e) => {
                span.in_scope(|| warn!(error = %e, "job failed; the queue will retry it"));
                self.note_last_error(job, &e).await;
                Outcome::Retry(e.to_string())
            }
        }
    }

    /// The owner of the job's book while their account is open (None for a job of no book or
    /// of a gone one); the job's outcome instead when the owner closed their account (the book
    /// is removed) or reading failed.
    async fn open_owner(&self, job: &Job, span: &Span) -> Result<Option<String>, Outcome> {
        let Some(book_id) = job.book_id() else {
            return Ok(None);
        };
        match self.owner(book_id).await {
            Ok(None) => Ok(None),
            Ok(Some((_, false))) => {
                span.in_scope(|| info!("dropped: the book's owner closed their account"));
                // The purge removes it too, unless it listed the books before this one
                // showed in the index (eventually consistent on DynamoDB).
                Err(match self.books.remove_everything(book_id).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => after(e),
                })
            }
            Ok(Some((user_id, true))) => Ok(Some(user_id)),
            Err(e) => Err(after(e)),
        }
    }

    /// Runs a job of the jobs queue itself, in `span`.
    async fn dispatch(&self, job: &Job, receive_count: u32, span: &Span) -> Result<(), JobError> {
        match job {
            Job::Extract { book_id } => extract::run(self, book_id).instrument(span.clone()).await,
            Job::Terms {
                book_id,
                run,
                chapters,
            } => {
                terms::run(self, book_id, *run, chapters.as_deref())
                    .instrument(span.clone())
                    .await
            }
            Job::Chapters {
                book_id,
                numbers,
                run,
                passes,
            } => {
                let window = chapter::Window {
                    book_id,
                    numbers,
                    run: *run,
                    passes: *passes,
                };
                chapter::run_window(self, &window, receive_count)
                    .instrument(span.clone())
                    .await
            }
            // Queued here before rendering had a queue of its own (a deploy in between).
            Job::Generate { .. } => self.forward(job).instrument(span.clone()).await,
            Job::Retranslate {
                book_id,
                proposal_id,
            } => {
                retranslate::run(self, book_id, proposal_id)
                    .instrument(span.clone())
                    .await
            }
            Job::PurgeAccount { user_id } => self
                .privacy
                .purge(user_id)
                .instrument(span.clone())
                .await
                .map_err(JobError::from),
            Job::WeeklyDigest { user_id, week } => {
                self.digests
                    .send(user_id, week)
                    .instrument(span.clone())
                    .await
            }
        }
    }

    /// Runs a job of the render queue itself, in `span`: only a generate job belongs there.
    async fn dispatch_render(&self, job: &Job, span: &Span) -> Result<(), JobError> {
        match job {
            Job::Generate {
                book_id,
                format,
                layout,
                requested,
            } => {
                generate::run(self, book_id, Edition::new(*format, *layout), *requested)
                    .instrument(span.clone())
                    .await
            }
            _ => self.forward(job).instrument(span.clone()).await,
        }
    }

    /// Sends a job that arrived on a queue not its own on to [its queue](Job::queue).
    async fn forward(&self, job: &Job) -> Result<(), JobError> {
        job.enqueue(self.ports.queue.as_ref()).await?;
        info!(to = job.queue().as_str(), "job forwarded to its own queue");
        Ok(())
    }

    /// When `owner` closed their account while the job ran: the book removed and the account
    /// purged again, and the job's outcome; None while the account is open.
    async fn purge_if_closed(&self, book_id: &str, owner: &str, span: &Span) -> Option<Outcome> {
        match self.privacy.account_is_open(owner).await {
            Ok(true) => None,
            Ok(false) => {
                span.in_scope(|| info!("the owner closed their account meanwhile; purging"));
                let purged = async {
                    self.books.remove_everything(book_id).await?;
                    self.privacy.purge(owner).await.map_err(JobError::from)
                };
                Some(match purged.await {
                    Ok(()) => Outcome::Done,
                    Err(e) => after(e),
                })
            }
            Err(e) => Some(after(e)),
        }
    }

    /// A job whose failure no retry can mend ([`JobError::is_final`]): handled as the
    /// dead-letter queue would handle it after the retries, without spending them.
    async fn give_up_now(&self, job: &Job, e: &JobError) -> Outcome {
        let Some(book_id) = job.book_id() else {
            error!(kind = job.kind(), error = %e, "job dropped");
            return Outcome::Done;
        };
        match self.books.find(book_id).await {
            Ok(Some(book)) => {
                self.give_up(job, &book, format!("{} failed: {e}", doing(job)))
                    .await
            }
            Ok(None) => Outcome::Done,
            Err(e) => after(e),
        }
    }

    /// Runs a job that exhausted its retries (from the dead-letter queue): marks the book (and
    /// a chapter, for a chapter job) ERROR with the last failure, so the user sees why, and tells
    /// them.
    pub async fn process_dead_letter(&self, job: &Job) -> Outcome {
        let Some(book_id) = job.book_id() else {
            return self.purge_dead_lettered(job).await;
        };
        let book = match self.books.find(book_id).await {
            Ok(Some(book)) => book,
            Ok(None) => return Outcome::Done,
            Err(e) => return after(e),
        };
        let reason = match &book.error {
            Some(error) => format!(
                "{} failed after {} attempts: {error}",
                doing(job),
                crate::ports::queue::MAX_RECEIVES,
            ),
            // No failure recorded: every try ended with its worker (killed, out of memory or
            // out of time) before it could say why.
            None => format!(
                "{} was given up: it stopped the service each time it was tried (out of memory \
                 or out of time); the book may need more than the service allows for one book",
                doing(job)
            ),
        };
        error!(book_id, %reason, "job dead-lettered");
        self.give_up(job, &book, reason).await
    }

    /// Marks the book (and a chapter, for a chapter job) ERROR with `reason`, so the user sees
    /// why, and tells them.
    async fn give_up(&self, job: &Job, book: &Book, reason: String) -> Outcome {
        let book_id = &book.id;
        let result = match job {
            Job::Extract { .. } => self
                .books
                .fail_extraction(book_id, reason)
                .await
                .map(|_| ()),
            // A job of a run that has moved on failed for nobody: the new run has its own.
            Job::Terms { .. } | Job::Chapters { .. } if job_run(job) != Some(book.run) => Ok(()),
            // Without its term list a run still translates (each chapter then chooses).
            Job::Terms { .. } => terms::give_up(self, book).await,
            Job::Chapters { numbers, .. } => {
                chapter::fail_unfinished(self, book, numbers, &reason).await
            }
            Job::Generate { .. } => self.fail_generation(book, reason).await,
            // The proposal fails; the book is as it was.
            Job::Retranslate { proposal_id, .. } => {
                self.translations
                    .fail_proposal(book_id, proposal_id, &reason, None, Default::default(), 0)
                    .await
            }
            Job::PurgeAccount { .. } | Job::WeeklyDigest { .. } => Ok(()),
        };
        match result {
            Ok(()) => Outcome::Done,
            Err(e) => after(e),
        }
    }

    /// A file that cannot be rendered: the book goes to ERROR; its translation is kept (resume
    /// or a partial download still reach it).
    async fn fail_generation(&self, book: &Book, reason: String) -> Result<(), DataError> {
        let update = BookChange::error(&reason);
        let Some(failed) = self
            .books
            .transition(&book.id, BookEvent::GenerationFailed, update)
            .await?
        else {
            return Ok(());
        };
        let occurrence = Occurrence {
            key: format!("translation.error:{}:{}:generate", book.id, book.run),
            user_id: failed.user_id.clone(),
            book_id: failed.id.clone(),
            title: failed.title.clone(),
            status: failed.status.as_str().to_string(),
            kind: EventKind::TranslationError {
                error: reason,
                chapter_index: 0,
            },
        };
        self.events.emit(&occurrence).await
    }

    /// Whether the book exists but its owner does not: a closed account, whose jobs are
    /// dropped (the purge removes the book soon after).
    /// An account purge that kept failing: nothing to do if the account never closed (its
    /// deletion failed after queuing the purge); otherwise the dead-letter alarm calls an
    /// operator to re-drive it once the cause is fixed.
    async fn purge_dead_lettered(&self, job: &Job) -> Outcome {
        let Job::PurgeAccount { user_id } = job else {
            warn!(kind = job.kind(), "job dead-lettered and dropped");
            return Outcome::Done;
        };
        match self.privacy.account_is_open(user_id).await {
            Ok(true) => {
                info!(user_id, "purge dropped: the account was never closed");
                Outcome::Done
            }
            Ok(false) => {
                error!(
                    user_id,
                    "account purge dead-lettered; re-drive it once the cause is fixed"
                );
                Outcome::Done
            }
            Err(e) => after(e),
        }
    }

    /// The book's owner and whether their account is open; None when the book is gone.
    async fn owner(&self, book_id: &str) -> Result<Option<(String, bool)>, DataError> {
        let Some(book) = self.books.find(book_id).await? else {
            return Ok(None);
        };
        let open = self.privacy.account_is_open(&book.user_id).await?;
        Ok(Some((book.user_id, open)))
    }

    /// Keeps the latest failure on the book (status unchanged) for the dead-letter handler.
    async fn note_last_error(&self, job: &Job, e: &JobError) {
        let Some(book_id) = job.book_id() else {
            return;
        };
        if let Err(err) = self.books.note_error(book_id, &e.to_string()).await {
            warn!(error = %err, "could not record the job's failure on the book");
        }
    }
}

/// The span a job runs in: its kind and its book.
fn job_span(job: &Job) -> Span {
    info_span!(
        "job",
        kind = job.kind(),
        book_id = job.book_id().unwrap_or_default()
    )
}

/// What becomes of a message whose handling failed on `e` outside the job itself (reading the
/// book or its owner, giving the job up): tried again when the backend may come back; dropped,
/// and logged for an operator, when another try finds the same fault (a corrupt book item),
/// since neither the job nor giving it up gets past it.
fn after(e: impl Into<JobError>) -> Outcome {
    let e = e.into();
    if e.is_final() {
        error!(error = %e, "job dropped: another try would fail the same way");
        Outcome::Done
    } else {
        Outcome::Retry(e.to_string())
    }
}

/// What `job` was doing, for the reason a book shows when the job is given up.
fn doing(job: &Job) -> &'static str {
    match job {
        Job::Extract { .. } => "extraction",
        Job::Terms { .. } => "finding the book's terms",
        Job::Chapters { .. } => "translation",
        Job::Generate { .. } => "generating the file",
        Job::Retranslate { .. } => "translating the passages again",
        Job::PurgeAccount { .. } => "purging the account",
        Job::WeeklyDigest { .. } => "sending the weekly digest",
    }
}

/// The run a translation job belongs to.
fn job_run(job: &Job) -> Option<u32> {
    match job {
        Job::Terms { run, .. } | Job::Chapters { run, .. } => Some(*run),
        _ => None,
    }
}
