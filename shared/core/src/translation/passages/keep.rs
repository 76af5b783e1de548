//! "Keep as is": the owner looks at a passage that needs a look (flagged, of low confidence, or
//! changed by a later pass: see `review`) and finds the model's text good enough. The text
//! becomes the owner's, unchanged (a change like an edit: versioned, undoable, kept through
//! later runs), so its flags go from the passage, the chapter's quality record, the book's
//! warnings and the flagged list, and it leaves the review's open passages.

use tracing::instrument;

use booktr_translate::protocol::Pass;

use super::error::PassageError;
use super::model::{Origin, Passage, PassageAt};
use super::record::Provenance;
use super::review::LOW_CONFIDENCE;
use super::service::OwnersText;
use crate::translation::Translations;

impl Translations {
    /// Keeps the model's text of a passage that needs a look, from version `read`: its flags
    /// cleared, its text as it is.
    #[instrument(skip(self))]
    pub async fn keep_passage(
        &self,
        user_id: &str,
        book_id: &str,
        at: PassageAt,
        read: u64,
    ) -> Result<Passage, PassageError> {
        let (book, source, record) = self.changing(user_id, book_id, at, read).await?;
        let current = self.current(&book, at, &source).await?;
        let Some(text) = current.text.as_deref() else {
            return Err(PassageError::Invalid(format!(
                "chapter {} is not translated yet: there is no text to keep",
                at.chapter
            )));
        };
        if !needs_look(&current) {
            return Err(PassageError::Invalid(format!(
                "passage {} of chapter {} needs no look (not flagged, of confidence {} or more, \
                 not changed by a later pass): there is nothing to keep",
                at.index, at.chapter, LOW_CONFIDENCE
            )));
        }
        let owners = OwnersText {
            text,
            by: user_id,
            from: Some(Provenance::Kept),
        };
        self.write_owners_text(&book, at, &source, &record, owners)
            .await
    }
}

/// Whether the model's text of `passage` needs a look: flagged, of low confidence, or changed by
/// the review or the polish. The owner's text needs none.
fn needs_look(passage: &Passage) -> bool {
    match passage.origin {
        Some(Origin::Model { pass }) => {
            !passage.flags.is_empty()
                || passage.confidence.is_some_and(|c| c < LOW_CONFIDENCE)
                || pass.is_some_and(|p| p != Pass::Translate)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(flagged: bool, confidence: Option<u8>, pass: Option<Pass>) -> Passage {
        Passage {
            chapter: 1,
            index: 0,
            source: "Call me Ishmael.".into(),
            text: Some("Llamadme Ismael.".into()),
            flags: match flagged {
                true => vec![super::super::Flag {
                    kind: "truncated",
                    reason: "cut off".into(),
                }],
                false => Vec::new(),
            },
            origin: Some(Origin::Model { pass }),
            confidence,
            version: 0,
            undoable: 0,
        }
    }

    #[test]
    fn a_passage_is_kept_when_flagged_of_low_confidence_or_changed_by_a_later_pass() {
        assert!(needs_look(&passage(true, Some(0), None)));
        assert!(needs_look(&passage(false, Some(69), Some(Pass::Translate))));
        assert!(needs_look(&passage(false, Some(95), Some(Pass::Polish))));
        assert!(!needs_look(&passage(
            false,
            Some(70),
            Some(Pass::Translate)
        )));
        assert!(!needs_look(&passage(false, None, None)));
        let mut owners = passage(true, None, None);
        owners.origin = Some(Origin::Kept {
            at: chrono::DateTime::UNIX_EPOCH,
            by: "u1".into(),
        });
        assert!(!needs_look(&owners), "the owner's text needs no look");
    }
}
