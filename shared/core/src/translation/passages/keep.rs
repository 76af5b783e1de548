//! "Keep as is": the owner looks at a flagged passage and finds the model's text good enough.
//! The text becomes the owner's, unchanged (a change like an edit: versioned, undoable, kept
//! through later runs), so its flags go from the passage, the chapter's quality record, the
//! book's warnings and the flagged list.

use tracing::instrument;

use super::record::Provenance;
use super::{OwnersText, Passage, PassageAt, PassageError};
use crate::translation::Translations;

impl Translations {
    /// Keeps the model's text of a flagged passage, from version `read`: its flags cleared,
    /// its text as it is.
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
        if current.flags.is_empty() {
            return Err(PassageError::Invalid(format!(
                "passage {} of chapter {} is not flagged: there is nothing to clear",
                at.index, at.chapter
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
