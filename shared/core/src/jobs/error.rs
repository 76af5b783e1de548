//! Why a job did not finish, and what the queue does about it.

use crate::developer::DeveloperError;
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
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
    /// A try of a chapter or of the term pass failed on the model (its provider unavailable, or
    /// an answer that could not be used), and was counted on the chapter.
    #[error("{0}")]
    ModelFailed(String),
    /// Something the job reads is not there: a chapter's source text, a translating book's key.
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
    /// What the job was to store could not be encoded (a bug: the same data fails again).
    #[error("encoding what the job stores: {0}")]
    Encoding(#[source] serde_json::Error),
    /// The mail server could not be reached or refused the connection.
    #[error("the mail server: {0}")]
    Mail(String),
}

crate::fault::from_data_error!(JobError);

impl JobError {
    /// True when another try would fail the same way, so the job fails now rather than after
    /// the queue's retries: a renderer that refused the book refuses it again (and each try
    /// costs the memory the budget allows), data that did not encode does not encode later.
    /// Everything else may pass on a later try: a backend or a provider comes back, a missing
    /// blob was a write still on its way.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            JobError::Render(RenderError::Refused { .. }) | JobError::Encoding(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_refused_render_fails_at_once() {
        let refused = JobError::Render(RenderError::Refused {
            edition: "PDF".into(),
            cause: "past the budget".into(),
        });
        assert!(refused.is_final());
        for later in [
            JobError::Store(StoreError::Unavailable("down".into())),
            JobError::ModelFailed("429".into()),
            JobError::Missing("chapter 3 text is missing".into()),
            JobError::Render(RenderError::Missing("the manuscript is missing".into())),
            JobError::Render(RenderError::Stopped("cancelled".into())),
            JobError::Mail("connection refused".into()),
            JobError::Privacy(PrivacyError::StillOpen),
        ] {
            assert!(!later.is_final(), "{later}");
        }
    }
}
