//! Processes one job at a time; what to do with the message afterwards is the caller's business
//! (acknowledge, or leave it for the queue to redeliver).

use tracing::{error, info_span, warn, Instrument};

use super::{extract, Job};
use crate::books::lifecycle::BookEvent;
use crate::books::Books;
use crate::ports::{StoreError, Update};
use crate::Ports;

/// What became of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Finished, or there was nothing (left) to do: acknowledge the message.
    Done,
    /// Failed in a way a later try may not (a backend was unavailable): leave the message to be
    /// redelivered; after the last retry it goes to the dead-letter queue.
    Retry(String),
}

#[derive(Clone)]
pub struct JobHandler {
    pub(crate) ports: Ports,
    pub(crate) books: Books,
}

impl JobHandler {
    pub fn new(ports: Ports) -> Self {
        JobHandler {
            books: Books::new(ports.clone()),
            ports,
        }
    }

    /// Runs a job from the jobs queue. Idempotent: a redelivered job finds its work done or
    /// redoes it with the same result.
    pub async fn process(&self, job: &Job) -> Outcome {
        let span = info_span!("job", kind = job.kind(), book_id = %job.book_id());
        let result = match job {
            Job::Extract { book_id } => extract::run(self, book_id).instrument(span.clone()).await,
        };
        match result {
            Ok(()) => Outcome::Done,
            Err(e) => {
                span.in_scope(|| warn!(error = %e, "job failed; the queue will retry it"));
                self.note_last_error(job, &e).await;
                Outcome::Retry(e.to_string())
            }
        }
    }

    /// Runs a job that exhausted its retries (from the dead-letter queue): marks the book ERROR
    /// with the last failure, so the user sees why.
    pub async fn process_dead_letter(&self, job: &Job) -> Outcome {
        let book_id = job.book_id();
        let last = match self.books.find(book_id).await {
            Ok(Some(book)) => book.error,
            Ok(None) => return Outcome::Done,
            Err(e) => return Outcome::Retry(e.to_string()),
        };
        let reason = format!(
            "extraction failed after {} attempts: {}",
            crate::ports::queue::MAX_RECEIVES,
            last.unwrap_or_else(|| "unknown error".into())
        );
        error!(book_id, %reason, "job dead-lettered");
        match self
            .books
            .transition(
                book_id,
                BookEvent::ExtractionFailed,
                Update::default().set("error", reason),
            )
            .await
        {
            Ok(_) => Outcome::Done,
            Err(e) => Outcome::Retry(e.to_string()),
        }
    }

    /// Keeps the latest failure on the book (status unchanged) for the dead-letter handler.
    async fn note_last_error(&self, job: &Job, e: &StoreError) {
        let update = Update::default().set("error", e.to_string());
        let pk = crate::books::store::book_pk(job.book_id());
        if let Err(err) = self
            .ports
            .table
            .update(
                &pk,
                crate::books::store::BOOK_SK,
                update,
                crate::ports::Condition::Always,
            )
            .await
        {
            warn!(error = %err, "could not record the job's failure on the book");
        }
    }
}
