//! The owner's translation memory in a book's runs (`crate::memory`): what a chapter, a quote
//! and the term pass take from it, and what a stored chapter and an owner's accepted text give
//! back. A book whose runs do not use it (`memory: false` on its start) neither takes nor gives:
//! the switch says the book has nothing to do with the owner's memory.

use std::collections::BTreeSet;

use booktr_formats::manuscript::Block;
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::memory::Remembered;
use booktr_translate::pipeline::ChapterOutput;
use tracing::warn;

use super::service::Translations;
use crate::books::Book;
use crate::fault::DataError;
use crate::memory::{Lookup, Origin, Pair, Passage};

impl Translations {
    /// What the owner's memory holds for `blocks` of `book` (see `Memory::lookup`), checked
    /// against the run's `glossary`; nothing when the book's runs do not use the memory.
    pub async fn remembered(
        &self,
        book: &Book,
        blocks: &[Block],
        glossary: &[GlossaryEntry],
        lookup: Lookup,
    ) -> Result<Remembered, DataError> {
        if !book.memory {
            return Ok(Remembered::default());
        }
        self.memory
            .lookup(
                &book.user_id,
                &pair_of(book),
                &book.id,
                blocks,
                glossary,
                lookup,
            )
            .await
    }

    /// Gives the owner's memory a chapter's translation as the run stores it: every block the
    /// model translated and the checks passed (not those flagged, nor those the memory
    /// supplied, nor those the owner's text stands over: theirs was remembered when they
    /// accepted it).
    pub(crate) async fn remember_chapter(
        &self,
        book: &Book,
        source: &[Block],
        output: &ChapterOutput,
        edited: &BTreeSet<usize>,
    ) -> Result<(), DataError> {
        if !book.memory {
            return Ok(());
        }
        let flagged = output.quality.flagged_blocks();
        let passages = source
            .iter()
            .zip(&output.blocks)
            .enumerate()
            .filter(|(i, _)| {
                !flagged.contains(i)
                    && !edited.contains(i)
                    && !output.quality.remembered.contains(i)
            })
            .map(|(_, (source, translated))| Passage {
                source: source.text.clone(),
                target: translated.text.clone(),
                origin: Origin::Model,
                book_id: Some(book.id.clone()),
            })
            .collect();
        self.memory
            .record(&book.user_id, &pair_of(book), passages)
            .await?;
        Ok(())
    }

    /// Gives the owner's memory a passage's text the owner accepted (their edit, a
    /// re-translation, the model's kept). The passage is theirs whatever the memory does: a
    /// failure is logged, not answered. A book deleted meanwhile takes the entry with it (the
    /// deletion's last sweep may have run before it was written).
    pub(super) async fn remember_owners_text(
        &self,
        book: &Book,
        source: &str,
        text: &str,
        origin: Origin,
    ) {
        if !book.memory {
            return;
        }
        let passage = Passage {
            source: source.to_string(),
            target: text.to_string(),
            origin,
            book_id: Some(book.id.clone()),
        };
        let recorded = self
            .memory
            .record(&book.user_id, &pair_of(book), vec![passage])
            .await;
        let deleted_meanwhile = async {
            if self.books.find(&book.id).await?.is_none() {
                self.books.remove_everything(&book.id).await?;
            }
            Ok::<_, DataError>(())
        };
        if let Err(e) = recorded {
            warn!(book_id = %book.id, error = %e, "the owner's text was not remembered");
        } else if let Err(e) = deleted_meanwhile.await {
            warn!(book_id = %book.id, error = %e, "a deleted book's memory entry was not forgotten");
        }
    }
}

/// The book's language pair.
fn pair_of(book: &Book) -> Pair {
    Pair::of(&book.original_lang, &book.target_lang)
}
