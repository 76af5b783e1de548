//! Terms from edits: an edit that renames a term of the book (its glossary's, or its term
//! list's) suggests renaming it everywhere; a preview lists every passage the new rendering
//! would change; applying it changes the passages the owner names, each through the same
//! versioned change as an edit, and puts the term in the book's glossary so that later runs
//! translate it so: only when at least one of them takes it, so that an apply that changes
//! nothing leaves the glossary as it was too.
//!
//! The book's terms are its glossary's entries (the glossary its last run used, or the one an
//! apply made for it) and, for the sources the glossary does not fix, its run's term list. A
//! passage holds a term when its source has the term (whole words, ignoring case, as the
//! glossary is matched) and its text has the rendering (see `term_text`).

use std::collections::BTreeMap;

use booktr_formats::manuscript::Chapter as SourceChapter;
use booktr_formats::markup;
use booktr_translate::glossary::{contains_term, GlossaryEntry};
use tracing::{info, instrument};

use super::checked::{check_characters, check_edit};
use super::error::PassageError;
use super::model::{Passage, PassageAt, MAX_PAGE};
use super::record::PassageRecord;
use super::service::{OwnersText, Records};
use super::term_text::{self, TermChange, MAX_RENDERING};
use crate::books::record::BookChange;
use crate::books::{store, Book};
use crate::glossaries::{EntryInput, Glossary, GlossaryError};
use crate::ports::Condition;
use crate::translation::{StoredChapter, Translations};

/// Chapters one preview reads at most: each is its source, its model's text and its passage
/// items, so a book of hundreds of chapters is previewed over several requests.
pub const PREVIEW_CHAPTERS: usize = 20;

/// A term's new rendering as a preview or an apply names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermRequest {
    /// The term in the source language.
    pub source: String,
    /// The rendering the passages hold now.
    pub from: String,
    /// The rendering they are to hold.
    pub to: String,
}

impl TermRequest {
    /// The three texts trimmed: each non-empty and at most [`MAX_RENDERING`] characters, `to`
    /// not `from`, and `to` with only characters a book can hold (those XML 1.0 allows, and a
    /// bidirectional control only when the term's source has it: `check_characters`).
    pub fn new(source: &str, from: &str, to: &str) -> Result<TermRequest, PassageError> {
        let field = |name: &str, value: &str| -> Result<String, PassageError> {
            let value = value.trim();
            if value.is_empty() || value.chars().count() > MAX_RENDERING {
                return Err(PassageError::Invalid(format!(
                    "{name}: 1 to {MAX_RENDERING} characters"
                )));
            }
            Ok(value.to_string())
        };
        let request = TermRequest {
            source: field("source", source)?,
            from: field("from", from)?,
            to: field("to", to)?,
        };
        if request.from == request.to {
            return Err(PassageError::Invalid("to: the same as from".into()));
        }
        check_characters("to", &request.source, &request.to)?;
        Ok(request)
    }
}

/// A passage a term change would change (a preview) or changed (an apply's skipped ones are
/// [`TermSkipped`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TermPassage {
    pub chapter: u32,
    pub index: u32,
    /// The version a change of it names.
    pub version: u64,
    /// Its text now.
    pub text: String,
    /// Its text with the new rendering.
    pub after: String,
}

/// A page of a term change's preview.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TermPreview {
    /// The passages holding the model's text that the change would change.
    pub passages: Vec<TermPassage>,
    /// The passages holding the owner's text that hold the term: changed only when an apply
    /// names them.
    pub edited: Vec<TermPassage>,
    /// Where the next page starts; None once the whole book is read.
    pub next: Option<PassageAt>,
}

/// What an apply did.
#[derive(Debug)]
pub struct TermApplied {
    /// The passages changed, as they are now.
    pub applied: Vec<Passage>,
    /// The passages left as they were, and why.
    pub skipped: Vec<TermSkipped>,
    /// The glossary that holds the term now; None when no passage took it, and the glossary
    /// was left as it was.
    pub glossary: Option<TermsGlossary>,
}

/// A passage an apply left as it was.
#[derive(Debug)]
pub struct TermSkipped {
    pub chapter: u32,
    pub index: u32,
    pub reason: Skip,
}

/// Why an apply left a passage as it was.
#[derive(Debug)]
pub enum Skip {
    /// It changed since the version named: the passage now.
    Changed(Box<Passage>),
    /// No such chapter or passage.
    NotFound,
    /// It does not hold the term (its source has not the term, or its text not the rendering).
    NotHeld,
    /// Its text with the new rendering is not one a passage can take.
    Refused(PassageError),
}

/// The book's glossary, as an apply left it.
#[derive(Debug, Clone, PartialEq)]
pub struct TermsGlossary {
    pub id: String,
    pub name: String,
    /// Whether the apply made it (the book had none).
    pub created: bool,
}

impl Translations {
    /// [`Translations::edit_passage`], with the term changes the edit suggests (by the rule of
    /// `term_text`): none when the passage had no text before it.
    #[instrument(skip(self, text))]
    pub async fn edit_passage_suggesting(
        &self,
        user_id: &str,
        book_id: &str,
        at: PassageAt,
        read: u64,
        text: &str,
    ) -> Result<(Passage, Vec<TermChange>), PassageError> {
        let before = self
            .passages(user_id, book_id, at.chapter, at.index as usize, 1)
            .await?
            .passages
            .into_iter()
            .next();
        let passage = self.edit_passage(user_id, book_id, at, read, text).await?;
        // The edit was written at `read`, so the text read at `read` is the one it replaced.
        let Some((source, old)) = before
            .filter(|b| b.version == read)
            .and_then(|b| b.text.map(|t| (b.source, t)))
        else {
            return Ok((passage, Vec::new()));
        };
        let book = self.books.get(user_id, book_id).await?;
        let entries = self.term_entries(&book).await?;
        let changes = term_text::suggestions(&entries, &source, &old, text);
        if !changes.is_empty() {
            info!(
                changes = changes.len(),
                "the edit renames terms of the book"
            );
        }
        Ok((passage, changes))
    }

    /// Up to `limit` passages from `start` on that the term change would change, the owner's
    /// apart, reading at most [`PREVIEW_CHAPTERS`] chapters.
    #[instrument(skip(self, request))]
    pub async fn preview_term(
        &self,
        user_id: &str,
        book_id: &str,
        request: &TermRequest,
        start: PassageAt,
        limit: usize,
    ) -> Result<TermPreview, PassageError> {
        if limit == 0 || limit > MAX_PAGE {
            return Err(PassageError::Invalid(format!(
                "limit: between 1 and {MAX_PAGE}"
            )));
        }
        if start.chapter == 0 {
            return Err(PassageError::Invalid(
                "start.chapter: chapters are numbered from 1".into(),
            ));
        }
        let book = self.books.get(user_id, book_id).await?;
        let chapters = book.chapter_count.unwrap_or(0);
        let mut preview = TermPreview::default();
        let (mut number, mut first) = (start.chapter, start.index as usize);
        let mut read = 0;
        while number <= chapters {
            if read == PREVIEW_CHAPTERS {
                preview.next = Some(at(number, first));
                break;
            }
            read += 1;
            if let Some(source) = self.source_chapter(&book.id, number).await? {
                let stored = self.model_text(&book, number).await?;
                let records = self.passage_records(&book, number).await?;
                for index in first..source.blocks.len() {
                    if preview.passages.len() + preview.edited.len() == limit {
                        preview.next = Some(at(number, index));
                        return Ok(preview);
                    }
                    let chapter = Held {
                        book: &book,
                        number,
                        source: &source,
                        stored: stored.as_ref(),
                        records: &records,
                    };
                    if let Some((found, edited)) = self.holding(&chapter, index, request).await? {
                        if edited {
                            preview.edited.push(found);
                        } else {
                            preview.passages.push(found);
                        }
                    }
                }
            }
            (number, first) = (number + 1, 0);
        }
        Ok(preview)
    }

    /// Changes each of `named` (a passage and the version the client read) that still holds
    /// the term to the new rendering, each as the owner's edit, written only while it is at its
    /// version; and puts the term in the book's glossary when one of them takes it.
    ///
    /// The glossary is written before the passages, so that a glossary that cannot take the
    /// term leaves every passage as it was; and only after a look through the passages named
    /// finds one that takes the change, so that an apply that would change nothing writes
    /// nothing. (A passage changed by someone else between that look and its write is skipped
    /// as changed, like any other; the glossary then holds the term all the same, and the
    /// answer says so.)
    #[instrument(skip(self, request, named))]
    pub async fn apply_term(
        &self,
        user_id: &str,
        book_id: &str,
        request: &TermRequest,
        named: &[(PassageAt, u64)],
    ) -> Result<TermApplied, PassageError> {
        if named.is_empty() || named.len() > MAX_PAGE {
            return Err(PassageError::Invalid(format!(
                "passages: 1 to {MAX_PAGE} passages"
            )));
        }
        let mut by_chapter: BTreeMap<u32, BTreeMap<u32, u64>> = BTreeMap::new();
        for (passage, version) in named {
            let chapter = by_chapter.entry(passage.chapter).or_default();
            if chapter.insert(passage.index, *version).is_some() {
                return Err(PassageError::Invalid(format!(
                    "passages: passage {} of chapter {} is named twice",
                    passage.index, passage.chapter
                )));
            }
        }
        let book = self.books.get(user_id, book_id).await?;
        if let Some(skipped) = self.none_take(&book, request, &by_chapter).await? {
            info!(
                skipped = skipped.len(),
                "no passage takes the term's new rendering: nothing written"
            );
            return Ok(TermApplied {
                applied: Vec::new(),
                skipped,
                glossary: None,
            });
        }
        let glossary = Some(self.keep_term(&book, request).await?);
        let mut applied = Vec::new();
        let mut skipped = Vec::new();
        for (number, passages) in by_chapter {
            let Some(source) = self.source_chapter(&book.id, number).await? else {
                skipped.extend(passages.into_keys().map(|index| TermSkipped {
                    chapter: number,
                    index,
                    reason: Skip::NotFound,
                }));
                continue;
            };
            let stored = self.model_text(&book, number).await?;
            let records = self.passage_records(&book, number).await?;
            let chapter = Held {
                book: &book,
                number,
                source: &source,
                stored: stored.as_ref(),
                records: &records,
            };
            let mut changed = Vec::new();
            let outcome = self
                .apply_in(
                    &chapter,
                    request,
                    passages,
                    &mut changed,
                    &mut skipped,
                    true,
                )
                .await;
            if !changed.is_empty() {
                // Once for the chapter's changes, written or not all of them.
                self.passage_changed(&book, number).await?;
                let records = self.passage_records(&book, number).await?;
                for index in changed {
                    let record = records.get(&index);
                    let blocks = &source.blocks;
                    let passage = self
                        .passage(
                            &book.id,
                            number,
                            index as usize,
                            blocks,
                            stored.as_ref(),
                            record,
                        )
                        .await?;
                    applied.push(passage);
                }
            }
            outcome?;
        }
        info!(
            applied = applied.len(),
            skipped = skipped.len(),
            "a term's new rendering applied"
        );
        Ok(TermApplied {
            applied,
            skipped,
            glossary,
        })
    }

    /// None when one of the passages `by_chapter` names would take the term's new rendering
    /// (the look stops there); else why each of them would not, as an apply answers it.
    async fn none_take(
        &self,
        book: &Book,
        request: &TermRequest,
        by_chapter: &BTreeMap<u32, BTreeMap<u32, u64>>,
    ) -> Result<Option<Vec<TermSkipped>>, PassageError> {
        let mut skipped = Vec::new();
        for (&number, passages) in by_chapter {
            let Some(source) = self.source_chapter(&book.id, number).await? else {
                skipped.extend(passages.keys().map(|&index| TermSkipped {
                    chapter: number,
                    index,
                    reason: Skip::NotFound,
                }));
                continue;
            };
            let stored = self.model_text(book, number).await?;
            let records = self.passage_records(book, number).await?;
            let chapter = Held {
                book,
                number,
                source: &source,
                stored: stored.as_ref(),
                records: &records,
            };
            let mut would = Vec::new();
            let passages = passages.clone();
            self.apply_in(&chapter, request, passages, &mut would, &mut skipped, false)
                .await?;
            if !would.is_empty() {
                return Ok(None);
            }
        }
        Ok(Some(skipped))
    }

    /// Applies the term to the chapter's `passages` (index -> version read): the changed ones
    /// into `changed`, the others into `skipped`. With `write` false it only looks: the first
    /// passage that would take the change goes into `changed`, and the look ends there.
    async fn apply_in(
        &self,
        chapter: &Held<'_>,
        request: &TermRequest,
        passages: BTreeMap<u32, u64>,
        changed: &mut Vec<u32>,
        skipped: &mut Vec<TermSkipped>,
        write: bool,
    ) -> Result<(), PassageError> {
        let Held { book, number, .. } = *chapter;
        for (index, read) in passages {
            let at = at(number, index as usize);
            let skip = |reason| TermSkipped {
                chapter: number,
                index,
                reason,
            };
            let Some(block) = chapter.source.blocks.get(index as usize) else {
                skipped.push(skip(Skip::NotFound));
                continue;
            };
            let record = chapter.record(index);
            if record.version != read {
                let now = self.current(book, at, chapter.source).await?;
                skipped.push(skip(Skip::Changed(Box::new(now))));
                continue;
            }
            let Some((found, _)) = self.holding(chapter, index as usize, request).await? else {
                skipped.push(skip(Skip::NotHeld));
                continue;
            };
            if let Err(refused) = check_edit(&block.text, &found.after) {
                skipped.push(skip(Skip::Refused(refused)));
                continue;
            }
            if !write {
                changed.push(index);
                return Ok(());
            }
            let owners = OwnersText {
                text: &found.after,
                by: &book.user_id,
                from: None,
            };
            match self
                .put_owners_text(book, at, chapter.source, &record, owners)
                .await
            {
                Ok(()) => changed.push(index),
                Err(PassageError::Stale { current, .. }) => {
                    skipped.push(skip(Skip::Changed(current)));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Passage `index` of the chapter with the term applied, and whether it holds the owner's
    /// text; None when it does not hold the term.
    async fn holding(
        &self,
        chapter: &Held<'_>,
        index: usize,
        request: &TermRequest,
    ) -> Result<Option<(TermPassage, bool)>, PassageError> {
        let Some(block) = chapter.source.blocks.get(index) else {
            return Ok(None);
        };
        if !contains_term(&markup::plain_text(&block.text), &request.source) {
            return Ok(None);
        }
        let record = chapter.record(index as u32);
        let text = match record.edit() {
            Some(edit) => Some(self.edit_text(&chapter.book.id, &record, edit).await?),
            None => chapter
                .stored
                .and_then(|s| s.blocks.get(index))
                .map(|b| b.text.clone()),
        };
        let Some(text) = text else {
            return Ok(None);
        };
        let Some(after) = term_text::replace(&text, &request.from, &request.to) else {
            return Ok(None);
        };
        let found = TermPassage {
            chapter: chapter.number,
            index: index as u32,
            version: record.version,
            text,
            after,
        };
        Ok(Some((found, record.edit().is_some())))
    }

    /// The book's terms: its glossary's entries, then its term list's for the sources the
    /// glossary does not fix.
    async fn term_entries(&self, book: &Book) -> Result<Vec<GlossaryEntry>, PassageError> {
        let glossary: Vec<GlossaryEntry> = self
            .book_glossary(book)
            .await?
            .map(|g| {
                g.entries
                    .into_iter()
                    .map(|e| GlossaryEntry {
                        source: e.source,
                        target: e.target,
                        context: e.context,
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(match self.book_terms(book).await? {
            Some(list) => list.with_glossary(&glossary),
            None => glossary,
        })
    }

    /// The glossary the book's runs use, if it has one still there.
    async fn book_glossary(&self, book: &Book) -> Result<Option<Glossary>, PassageError> {
        let Some(id) = &book.glossary_id else {
            return Ok(None);
        };
        match self.glossaries.get(&book.user_id, id).await {
            Ok(glossary) => Ok(Some(glossary)),
            Err(GlossaryError::NotFound) => Ok(None),
            Err(e) => Err(glossary_failed(e)),
        }
    }

    /// Puts the term in the book's glossary: the entry for its source given the new rendering,
    /// or a new entry; a book without a glossary gets one of its own, which its later runs use.
    async fn keep_term(
        &self,
        book: &Book,
        request: &TermRequest,
    ) -> Result<TermsGlossary, PassageError> {
        let owner = &book.user_id;
        if let Some(glossary) = self.book_glossary(book).await? {
            let glossary = self
                .glossaries
                .set_entry(owner, &glossary.id, &request.source, &request.to)
                .await
                .map_err(glossary_failed)?;
            return Ok(TermsGlossary {
                id: glossary.id,
                name: glossary.name,
                created: false,
            });
        }
        let title: String = book.title.chars().take(180).collect();
        let entry = EntryInput {
            source: Some(request.source.clone()),
            target: Some(request.to.clone()),
            ..EntryInput::default()
        };
        let glossary = self
            .glossaries
            .create(
                owner,
                &format!("{}: terms", title.trim()),
                Some("The terms of a book, as its owner's edits renamed them.".into()),
                vec![entry],
            )
            .await
            .map_err(glossary_failed)?;
        let (pk, change) = (store::book_pk(&book.id), BookChange::glossary(&glossary.id));
        self.ports
            .table
            .update(&pk, store::BOOK_SK, change.into_update(), Condition::Exists)
            .await?;
        info!(glossary_id = %glossary.id, "the book has a glossary of its own");
        Ok(TermsGlossary {
            id: glossary.id,
            name: glossary.name,
            created: true,
        })
    }
}

/// A chapter as a preview or an apply reads it once for its passages.
struct Held<'a> {
    book: &'a Book,
    number: u32,
    source: &'a SourceChapter,
    stored: Option<&'a StoredChapter>,
    records: &'a Records,
}

impl Held<'_> {
    /// The passage's item (version 0 when it has none).
    fn record(&self, index: u32) -> PassageRecord {
        self.records
            .get(&index)
            .cloned()
            .unwrap_or_else(|| PassageRecord::untouched(&self.book.target_lang, self.number, index))
    }
}

fn at(chapter: u32, index: usize) -> PassageAt {
    PassageAt {
        chapter,
        index: index as u32,
    }
}

fn glossary_failed(e: GlossaryError) -> PassageError {
    match e {
        GlossaryError::Invalid(m) => PassageError::Invalid(format!("the book's glossary: {m}")),
        GlossaryError::NotFound => PassageError::NotFound("the book's glossary".into()),
        GlossaryError::Store(s) => PassageError::Store(s),
        GlossaryError::Fault(f) => PassageError::Fault(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_request_is_three_trimmed_texts_with_a_new_rendering() {
        let ok = TermRequest::new(" whale ", "ballena", " cachalote").unwrap();
        assert_eq!(
            (ok.source.as_str(), ok.from.as_str(), ok.to.as_str()),
            ("whale", "ballena", "cachalote")
        );
        for (source, from, to) in [
            ("", "ballena", "cachalote"),
            ("whale", " ", "cachalote"),
            ("whale", "ballena", "ballena"),
        ] {
            assert!(matches!(
                TermRequest::new(source, from, to),
                Err(PassageError::Invalid(_))
            ));
        }
        let long = "x".repeat(MAX_RENDERING + 1);
        assert!(TermRequest::new("whale", "ballena", &long).is_err());
    }

    #[test]
    fn a_rendering_with_a_character_a_book_cannot_hold_is_refused_by_place() {
        let error = TermRequest::new("whale", "ballena", "cacha\u{B}lote").unwrap_err();
        assert_eq!(
            error.to_string(),
            "to: character 5 is U+000B, which XML 1.0 does not allow, so the book's files could \
             not be read"
        );
        assert!(matches!(
            TermRequest::new("whale", "ballena", "\u{202E}etolahcac"),
            Err(PassageError::Characters(_))
        ));
        assert!(TermRequest::new("\u{2067}whale", "ballena", "\u{2067}cachalote").is_ok());
    }
}
