//! Why a job did not finish, and what the queue does about it.

use crate::accounts::AccountsError;
use crate::developer::DeveloperError;
use crate::events::EventsError;
use crate::fault::Fault;
use crate::glossaries::GlossaryError;
use crate::ports::StoreError;
use crate::privacy::PrivacyError;
use crate::translation::RenderError;

/// A job's failure. [`JobError::is_final`] tells the handler whether to leave the message for
/// the queue's next try or to fail the job at once.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A backend failed or could not be reached.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the job found wrong with the data it read or wrote, or with its process (a corrupt
    /// item, data that does not encode, a closed semaphore).
    #[error(transparent)]
    Fault(#[from] Fault),
    /// A try of a chapter or of the term pass failed on the model (its provider unavailable, or
    /// an answer that could not be used), and was counted on the chapter.
    #[error("{0}")]
    ModelFailed(String),
    /// Something the job reads is not there although the book says it is: a chapter's source
    /// text, a translating book's key, the chapters of a book to render.
    #[error("{0}")]
    Missing(String),
    /// The book's file could not be rendered.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// An account purge could not (yet) be done.
    #[error(transparent)]
    Privacy(#[from] PrivacyError),
    /// The owner's developer settings could not be read.
    #[error(transparent)]
    Developer(#[from] DeveloperError),
    /// The mail server could not be reached or refused the connection.
    #[error("the mail server: {0}")]
    Mail(String),
}

crate::fault::from_data_error!(JobError);

impl JobError {
    /// True when another try would fail the same way, so the job fails now rather than after
    /// the queue's retries: a renderer that refused the book refuses it again (and each try
    /// costs the memory the budget allows), a corrupt item is as corrupt on the next read, data
    /// that did not encode does not encode later, and what the book says is stored but is not
    /// (its writers store it before they move the book on) does not appear. Everything else may
    /// pass on a later try: a backend or a provider comes back, a new run took the chapters a
    /// render was reading, a purge waits for the account to close.
    pub fn is_final(&self) -> bool {
        match self {
            JobError::Fault(_) | JobError::Missing(_) => true,
            JobError::Render(e) => matches!(e, RenderError::Refused { .. } | RenderError::Fault(_)),
            JobError::Developer(e) => matches!(e, DeveloperError::Fault(_)),
            JobError::Privacy(e) => privacy_fault(e),
            JobError::Store(_) | JobError::ModelFailed(_) | JobError::Mail(_) => false,
        }
    }
}

/// Whether a purge or an export failed on a fault, its own or a domain's it gathers from.
fn privacy_fault(e: &PrivacyError) -> bool {
    match e {
        PrivacyError::Fault(_)
        | PrivacyError::Accounts(AccountsError::Fault(_))
        | PrivacyError::Events(EventsError::Fault(_))
        | PrivacyError::Glossaries(GlossaryError::Fault(_))
        | PrivacyError::Developer(DeveloperError::Fault(_)) => true,
        PrivacyError::Invalid(_)
        | PrivacyError::StillOpen
        | PrivacyError::Store(_)
        | PrivacyError::Accounts(_)
        | PrivacyError::Events(_)
        | PrivacyError::Glossaries(_)
        | PrivacyError::Developer(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::DataError;

    fn corrupt() -> Fault {
        Fault::Corrupt {
            what: "item BOOK#1/META".into(),
            detail: "a missing or invalid 'status'".into(),
        }
    }

    #[test]
    fn what_another_try_finds_the_same_fails_at_once() {
        let refused = JobError::Render(RenderError::Refused {
            edition: "PDF".into(),
            cause: "past the budget".into(),
        });
        for now in [
            refused,
            JobError::Fault(corrupt()),
            JobError::from(DataError::Fault(Fault::Internal(
                "a closed semaphore".into(),
            ))),
            JobError::Missing("chapter 3 text is missing".into()),
            JobError::Render(RenderError::Fault(corrupt())),
            JobError::Developer(DeveloperError::Fault(corrupt())),
            JobError::Privacy(PrivacyError::Accounts(AccountsError::Fault(corrupt()))),
        ] {
            assert!(now.is_final(), "{now}");
        }
    }

    #[test]
    fn a_backend_that_is_down_is_tried_again() {
        for later in [
            JobError::Store(StoreError::Unavailable("down".into())),
            JobError::from(DataError::Store(StoreError::Unavailable("down".into()))),
            JobError::ModelFailed("429".into()),
            JobError::Render(RenderError::Missing("the manuscript is missing".into())),
            JobError::Render(RenderError::Stopped("cancelled".into())),
            JobError::Mail("connection refused".into()),
            JobError::Privacy(PrivacyError::StillOpen),
            JobError::Privacy(PrivacyError::Accounts(AccountsError::Store(
                StoreError::Unavailable("down".into()),
            ))),
        ] {
            assert!(!later.is_final(), "{later}");
        }
    }
}
