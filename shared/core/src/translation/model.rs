//! The values a translation run keeps and reports: a chapter's stored translation, the book's
//! terms, the chapter window's bounds, and the run's translation key and progress.

use booktr_formats::manuscript::Block;
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::pipeline::Quality;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::books::Chapter;
use crate::types::ChapterStatus;

/// One chapter's finished translation, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredChapter {
    /// The translation key it was made under.
    pub key: String,
    pub title: Option<String>,
    pub blocks: Vec<Block>,
    pub quality: Quality,
    /// Names and terms the review reported using.
    pub terms: Vec<(String, String)>,
}

/// The book's names and terms for one translation key (the term pass's result).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BookTerms {
    pub key: String,
    pub list: booktr_translate::terms::TermList,
}

/// Chapters of a book in flight at once, unless configured otherwise (the whole-book
/// benchmark's figures are in docs/translation.md).
pub const DEFAULT_WINDOW: usize = 128;
/// The widest window, priority included.
pub const MAX_WINDOW: usize = 256;

/// The fingerprint of everything that decides a chapter's translated text.
pub fn translation_key(
    model: &str,
    source: &str,
    target: &str,
    glossary: &[GlossaryEntry],
) -> String {
    let mut hash = Sha256::new();
    for part in [model, source, target] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    for entry in glossary {
        for part in [
            &entry.source,
            &entry.target,
            entry.context.as_deref().unwrap_or(""),
        ] {
            hash.update((part.len() as u64).to_be_bytes());
            hash.update(part.as_bytes());
        }
    }
    hex::encode(hash.finalize())
}

/// The words of the chapters numbered in `numbers`.
pub(super) fn unfinished_words(chapters: &[Chapter], numbers: &[u32]) -> u64 {
    chapters
        .iter()
        .filter(|c| numbers.contains(&c.number))
        .map(|c| c.word_count.unwrap_or(0))
        .sum()
}

/// Progress 0-100 from finished work: each chapter weighs its words, and counts a third for each
/// pass done (a completed chapter counts whole).
pub fn progress_of(chapters: &[Chapter]) -> u8 {
    let weight = |c: &Chapter| c.word_count.unwrap_or(0).max(1);
    let total: u64 = chapters.iter().map(weight).sum();
    if total == 0 {
        return 0;
    }
    let done: u64 = chapters
        .iter()
        .map(|c| {
            let passes = if c.status == ChapterStatus::Completed {
                3
            } else {
                u64::from(c.passes_done.min(3))
            };
            weight(c) * passes
        })
        .sum();
    // Rounded down, so 100 means every chapter is done.
    u8::try_from(done * 100 / (total * 3)).unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chapter(number: u32, words: u64, status: ChapterStatus, passes: u8) -> Chapter {
        Chapter {
            id: format!("b-{number}"),
            number,
            title: None,
            word_count: Some(words),
            status,
            passes_done: passes,
            error: None,
            stored_key: None,
            edits: 0,
        }
    }

    #[test]
    fn progress_weighs_chapters_by_words_and_passes() {
        let chapters = [
            chapter(1, 300, ChapterStatus::Completed, 3),
            chapter(2, 600, ChapterStatus::Translating, 1),
            chapter(3, 100, ChapterStatus::Pending, 0),
        ];
        // (300*3 + 600*1) / (1000*3) = 50%
        assert_eq!(progress_of(&chapters), 50);
        assert_eq!(progress_of(&[]), 0);
        assert_eq!(
            progress_of(&[chapter(1, 0, ChapterStatus::Completed, 3)]),
            100
        );
    }

    #[test]
    fn the_translation_key_changes_with_model_languages_and_glossary() {
        let entry = |t: &str| GlossaryEntry {
            source: "whale".into(),
            target: t.into(),
            context: None,
        };
        let base = translation_key("gpt-4o-mini", "en", "es", &[entry("ballena")]);
        assert_eq!(
            base,
            translation_key("gpt-4o-mini", "en", "es", &[entry("ballena")])
        );
        assert_ne!(
            base,
            translation_key("gpt-4o", "en", "es", &[entry("ballena")])
        );
        assert_ne!(
            base,
            translation_key("gpt-4o-mini", "en", "fr", &[entry("ballena")])
        );
        assert_ne!(
            base,
            translation_key("gpt-4o-mini", "en", "es", &[entry("cachalote")])
        );
        assert_ne!(base, translation_key("gpt-4o-mini", "en", "es", &[]));
    }
}
