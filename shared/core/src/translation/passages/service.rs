//! The passages' use cases on the translation service: a chapter's or the book's flagged
//! passages a page at a time, the owner's edit, undo and reset, and the chapter as the book
//! reads now; and the writes the other changes (`keep`, `terms`, `proposals`) go through.

use std::collections::{BTreeMap, BTreeSet};

use booktr_formats::manuscript::{Block, Chapter as SourceChapter};
use booktr_translate::pipeline::Quality;
use booktr_translate::protocol::Pass;
use tracing::{info, instrument, warn};

use super::checked::check_edit;
use super::error::PassageError;
use super::model::{
    answer_failed, chapter_record, flags_of, without_edited, Flag, FlaggedPage, Origin, Passage,
    PassageAt, PassagePage, DEFAULT_PAGE, MAX_PAGE,
};
use super::record::{counted, PassageRecord, Provenance, Version, MAX_VERSIONS};
use crate::books::record::{BookChange, ChapterChange, ChapterRecord};
use crate::books::{record as book_record, store, Book};
use crate::fault::{DataError, Fault};
use crate::memory::Origin as MemoryOrigin;
use crate::ports::{Condition, Query, StoreError};
use crate::translation::{StoredChapter, Translations};
use crate::types::BookStatus;

/// The page's bounds from the caller's `offset` and `limit`.
pub fn page(offset: Option<u32>, limit: Option<u32>) -> Result<(usize, usize), PassageError> {
    let limit = limit.map_or(DEFAULT_PAGE, |l| l as usize);
    if limit == 0 || limit > MAX_PAGE {
        return Err(PassageError::Invalid(format!(
            "limit must be between 1 and {MAX_PAGE}"
        )));
    }
    Ok((offset.unwrap_or(0) as usize, limit))
}

/// A change about to be written: the passage's list of changes after it, and the changes it
/// leaves behind (whose texts go once it is written).
struct Change {
    versions: Vec<Version>,
    dropped: Vec<Version>,
}

impl Translations {
    /// Passages `offset..offset + limit` of chapter `chapter` of the caller's book.
    #[instrument(skip(self))]
    pub async fn passages(
        &self,
        user_id: &str,
        book_id: &str,
        chapter: u32,
        offset: usize,
        limit: usize,
    ) -> Result<PassagePage, PassageError> {
        let book = self.books.get(user_id, book_id).await?;
        let source = self.source_of(&book.id, chapter).await?;
        let stored = self.model_text(&book, chapter).await?;
        let records = self.passage_records(&book, chapter).await?;
        let end = offset.saturating_add(limit).min(source.blocks.len());
        let mut passages = Vec::with_capacity(end.saturating_sub(offset));
        for index in offset..end {
            let record = records.get(&(index as u32));
            passages.push(
                self.passage(
                    &book.id,
                    chapter,
                    index,
                    &source.blocks,
                    stored.as_ref(),
                    record,
                )
                .await?,
            );
        }
        Ok(PassagePage {
            chapter,
            total: source.blocks.len() as u32,
            offset: offset as u32,
            passages,
        })
    }

    /// The book's flagged passages, `offset..offset + limit` of them in reading order, from
    /// its chapters' quality records (which the owner's edits clear).
    #[instrument(skip(self))]
    pub async fn flagged_passages(
        &self,
        user_id: &str,
        book_id: &str,
        offset: usize,
        limit: usize,
    ) -> Result<FlaggedPage, PassageError> {
        let book = self.books.get(user_id, book_id).await?;
        let query = Query::partition(store::book_pk(&book.id)).prefix(store::CHAPTER_PREFIX);
        let mut flagged: Vec<(u32, usize)> = Vec::new();
        for item in self.ports.table.query(query).await? {
            let record = ChapterRecord::from_item(&item).map_err(Fault::from)?;
            let Some(quality) = record.quality else {
                continue;
            };
            let Ok(quality) = serde_json::from_value::<Quality>(quality) else {
                continue;
            };
            let number = record.chapter.number;
            flagged.extend(quality.flagged_blocks().into_iter().map(|b| (number, b)));
        }
        let total = flagged.len() as u32;
        let mut passages = Vec::new();
        let mut chapter: Option<(u32, SourceChapter, Option<StoredChapter>, Records)> = None;
        for (number, index) in flagged.into_iter().skip(offset).take(limit) {
            if chapter.as_ref().is_none_or(|c| c.0 != number) {
                let source = self.source_of(&book.id, number).await?;
                let stored = self.model_text(&book, number).await?;
                let records = self.passage_records(&book, number).await?;
                chapter = Some((number, source, stored, records));
            }
            let Some((_, source, stored, records)) = &chapter else {
                continue;
            };
            if index >= source.blocks.len() {
                continue;
            }
            let record = records.get(&(index as u32));
            passages.push(
                self.passage(
                    &book.id,
                    number,
                    index,
                    &source.blocks,
                    stored.as_ref(),
                    record,
                )
                .await?,
            );
        }
        Ok(FlaggedPage {
            total,
            offset: offset as u32,
            passages,
        })
    }

    /// Replaces the passage's text with the owner's, from version `read`. The text must be
    /// inline markup with the source's marks (the check every model answer passes).
    #[instrument(skip(self, text))]
    pub async fn edit_passage(
        &self,
        user_id: &str,
        book_id: &str,
        at: PassageAt,
        read: u64,
        text: &str,
    ) -> Result<Passage, PassageError> {
        let book = self.books.get(user_id, book_id).await?;
        let source = self.source_of(&book.id, at.chapter).await?;
        let block = source
            .blocks
            .get(at.index as usize)
            .ok_or_else(|| not_found(at))?;
        check_edit(&block.text, text)?;
        let record = self.passage_record(&book, at).await?;
        if record.version != read {
            return Err(self.stale(&book, at, &source, read).await?);
        }
        let owners = OwnersText {
            text,
            by: user_id,
            from: None,
        };
        self.write_owners_text(&book, at, &source, &record, owners)
            .await
    }

    /// Gives the passage the owner's text (theirs, a re-translation they accepted, the model's
    /// they kept) over `record`, which the caller read at the version it names.
    pub(super) async fn write_owners_text(
        &self,
        book: &Book,
        at: PassageAt,
        source: &SourceChapter,
        record: &PassageRecord,
        owners: OwnersText<'_>,
    ) -> Result<Passage, PassageError> {
        self.put_owners_text(book, at, source, record, owners)
            .await?;
        self.passage_changed(book, at.chapter).await?;
        Ok(self.current(book, at, source).await?)
    }

    /// [`Translations::write_owners_text`] without what follows from it (see
    /// [`Translations::passage_changed`]), for a caller that changes several passages of a
    /// chapter and follows up once.
    pub(super) async fn put_owners_text(
        &self,
        book: &Book,
        at: PassageAt,
        source: &SourceChapter,
        record: &PassageRecord,
        owners: OwnersText<'_>,
    ) -> Result<(), PassageError> {
        // The text first, under a name no other change uses: a change that loses the race
        // below never overwrites the winner's text.
        let name = format!("v{}-{}", record.version + 1, crate::ids::random_hex(4));
        let key =
            store::passage_text_key(&book.id, &book.target_lang, at.chapter, at.index, &name)?;
        self.ports
            .blobs
            .put(&key, bytes::Bytes::copy_from_slice(owners.text.as_bytes()))
            .await?;
        let origin = match owners.from {
            Some(Provenance::Retranslated { .. }) => MemoryOrigin::Proposal,
            Some(Provenance::Kept) | None => MemoryOrigin::Edit,
        };
        let mut versions = record.versions.clone();
        versions.push(Version {
            text: Some(name),
            at: self.ports.clock.now(),
            by: owners.by.to_string(),
            from: owners.from,
            bytes: Some(owners.text.len() as u64),
        });
        let dropped = versions
            .drain(..versions.len().saturating_sub(MAX_VERSIONS))
            .collect();
        let change = Change { versions, dropped };
        match self.write_change(book, at, source, record, change).await {
            Err(e @ PassageError::Stale { .. }) => {
                self.remove_text(&book.id, at, &key).await;
                Err(e)
            }
            Ok(()) => {
                // What the owner accepted is remembered for their other books.
                if let Some(block) = source.blocks.get(at.index as usize) {
                    self.remember_owners_text(book, &block.text, owners.text, origin)
                        .await;
                }
                Ok(())
            }
            answer => answer,
        }
    }

    /// Takes back the passage's last change, from version `read`.
    #[instrument(skip(self))]
    pub async fn undo_passage(
        &self,
        user_id: &str,
        book_id: &str,
        at: PassageAt,
        read: u64,
    ) -> Result<Passage, PassageError> {
        let (book, source, record) = self.changing(user_id, book_id, at, read).await?;
        let mut versions = record.versions.clone();
        let Some(last) = versions.pop() else {
            let current = self.current(&book, at, &source).await?;
            return Err(PassageError::NothingToUndo(Box::new(current)));
        };
        let change = Change {
            versions,
            dropped: vec![last],
        };
        self.write(&book, at, &source, &record, change).await
    }

    /// Gives the passage the model's text again, from version `read`; the owner's text stays a
    /// change an undo goes back to. A passage that holds the model's text is left as it is.
    #[instrument(skip(self))]
    pub async fn reset_passage(
        &self,
        user_id: &str,
        book_id: &str,
        at: PassageAt,
        read: u64,
    ) -> Result<Passage, PassageError> {
        let (book, source, record) = self.changing(user_id, book_id, at, read).await?;
        if record.edit().is_none() {
            return Ok(self.current(&book, at, &source).await?);
        }
        let mut versions = record.versions.clone();
        versions.push(Version {
            text: None,
            at: self.ports.clock.now(),
            by: user_id.to_string(),
            from: None,
            bytes: Some(0),
        });
        let dropped = versions
            .drain(..versions.len().saturating_sub(MAX_VERSIONS))
            .collect();
        let change = Change { versions, dropped };
        self.write(&book, at, &source, &record, change).await
    }

    /// Chapter `number`'s translation as the book reads now: the one stored under the book's
    /// translation key with the owner's edits in place and their flags dropped. None when there
    /// is none under the key.
    pub async fn current_chapter(
        &self,
        book: &Book,
        number: u32,
    ) -> Result<Option<StoredChapter>, DataError> {
        let Some(mut stored) = self.model_text(book, number).await? else {
            return Ok(None);
        };
        let records = self.passage_records(book, number).await?;
        let mut edited = BTreeSet::new();
        for record in records.values() {
            let index = record.block as usize;
            let Some(edit) = record.edit() else {
                continue;
            };
            if let Some(block) = stored.blocks.get_mut(index) {
                block.text = self.edit_text(&book.id, record, edit).await?;
                edited.insert(index);
            }
        }
        stored.quality = without_edited(&stored.quality, &edited);
        Ok(Some(stored))
    }

    /// The blocks of chapter `number` that hold the owner's text.
    pub(crate) async fn edited_blocks(
        &self,
        book: &Book,
        number: u32,
    ) -> Result<BTreeSet<usize>, DataError> {
        Ok(self
            .passage_records(book, number)
            .await?
            .values()
            .filter(|r| r.edit().is_some())
            .map(|r| r.block as usize)
            .collect())
    }

    /// What every change reads first: the caller's book, the chapter's source, and the passage
    /// still at version `read` (else `Stale`).
    pub(super) async fn changing(
        &self,
        user_id: &str,
        book_id: &str,
        at: PassageAt,
        read: u64,
    ) -> Result<(Book, SourceChapter, PassageRecord), PassageError> {
        let book = self.books.get(user_id, book_id).await?;
        let source = self.source_of(&book.id, at.chapter).await?;
        if source.blocks.get(at.index as usize).is_none() {
            return Err(not_found(at));
        }
        let record = self.passage_record(&book, at).await?;
        if record.version != read {
            return Err(self.stale(&book, at, &source, read).await?);
        }
        Ok((book, source, record))
    }

    /// Writes `change` over `record` while the passage is still at its version, then what
    /// follows from it: the texts it leaves behind removed, the chapter's quality record and
    /// change count, the book's warnings, and its files made again on the next download.
    async fn write(
        &self,
        book: &Book,
        at: PassageAt,
        source: &SourceChapter,
        record: &PassageRecord,
        change: Change,
    ) -> Result<Passage, PassageError> {
        self.write_change(book, at, source, record, change).await?;
        self.passage_changed(book, at.chapter).await?;
        Ok(self.current(book, at, source).await?)
    }

    /// Writes `change` over `record` while the passage is still at its version, and removes
    /// the texts it leaves behind.
    async fn write_change(
        &self,
        book: &Book,
        at: PassageAt,
        source: &SourceChapter,
        record: &PassageRecord,
        change: Change,
    ) -> Result<(), PassageError> {
        let table = &self.ports.table;
        let written = match record.version {
            0 => match change.versions.as_slice() {
                [first] => {
                    let (item, condition) = PassageRecord::first_item(
                        &book.id,
                        &book.target_lang,
                        at.chapter,
                        at.index,
                        first,
                    );
                    table.put(item, condition).await
                }
                // A caller's bug, not the backend's: the same change fails again.
                _ => {
                    return Err(
                        Fault::Internal("a passage's first change is one change".into()).into(),
                    )
                }
            },
            read => {
                let (update, condition) = PassageRecord::next(read, &change.versions);
                let sk = store::passage_sk(&book.target_lang, at.chapter, at.index);
                table
                    .update(&store::book_pk(&book.id), &sk, update, condition)
                    .await
                    .map(|_| ())
            }
        };
        match written {
            Ok(()) => {}
            Err(StoreError::Conflict) => {
                return Err(self.stale(book, at, source, record.version).await?);
            }
            Err(e) => return Err(e.into()),
        }
        info!(
            chapter = at.chapter,
            index = at.index,
            version = record.version + 1,
            "passage changed"
        );
        self.count_stored_edits(book, &record.versions, &change.versions)
            .await;
        for version in &change.dropped {
            if let Some(name) = &version.text {
                let key = store::passage_text_key(
                    &book.id,
                    &book.target_lang,
                    at.chapter,
                    at.index,
                    name,
                )?;
                self.remove_text(&book.id, at, &key).await;
            }
        }
        Ok(())
    }

    /// Moves the book's count of stored edits (the changes its passages keep, and their texts'
    /// bytes) from what `before` added to it to what `after` adds. Counted after the passage's
    /// write, not with it: a count that fails is logged and the change stands, so the count can
    /// fall short of what is stored, never the other way.
    async fn count_stored_edits(&self, book: &Book, before: &[Version], after: &[Version]) {
        let ((was, was_bytes), (now, now_bytes)) = (counted(before), counted(after));
        if (was, was_bytes) == (now, now_bytes) {
            return;
        }
        let change = BookChange::edits_stored(now - was, now_bytes - was_bytes);
        let pk = store::book_pk(&book.id);
        if let Err(e) = self
            .ports
            .table
            .update(&pk, store::BOOK_SK, change.into_update(), Condition::Exists)
            .await
        {
            warn!(book_id = %book.id, error = %e, "the book's stored edits not counted");
        }
    }

    /// After a change of one of the chapter's passages: the chapter's quality record without
    /// the flags of the owner's passages and its change count (which names the files made from
    /// it), the book's warnings, and the book's files (every edition, the share links' copies,
    /// an earlier translation's) removed, so that the next download makes them again.
    pub(super) async fn passage_changed(&self, book: &Book, number: u32) -> Result<(), DataError> {
        self.chapter_changed(book, number).await?;
        self.book_changed(book).await
    }

    /// The chapter's part of [`Translations::passage_changed`]: its quality record and change
    /// count, for a caller that changes passages of several chapters and follows up on the
    /// book once ([`Translations::book_changed`]).
    pub(super) async fn chapter_changed(&self, book: &Book, number: u32) -> Result<(), DataError> {
        let table = &self.ports.table;
        let (pk, sk) = (store::book_pk(&book.id), store::chapter_sk(number));
        let key = book.translation_key.clone().unwrap_or_default();
        let quality = self
            .current_chapter(book, number)
            .await?
            .map(|c| chapter_record(&c.quality, &BTreeSet::new()));
        let with_quality = ChapterChange::passage_changed(quality).into_update();
        match table
            .update(&pk, &sk, with_quality, book_record::stored_under(&key))
            .await
        {
            Ok(_) => Ok(()),
            // Not translated under the book's key (yet): its quality record is not this one.
            Err(StoreError::Conflict) => {
                let counted = ChapterChange::passage_changed(None).into_update();
                table.update(&pk, &sk, counted, Condition::Exists).await?;
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The book's part of [`Translations::passage_changed`]: its warnings, and its files
    /// removed so that the next download makes them again.
    pub(super) async fn book_changed(&self, book: &Book) -> Result<(), DataError> {
        let table = &self.ports.table;
        let pk = store::book_pk(&book.id);
        if book.status == BookStatus::Completed {
            let summary = self.quality_summary(&book.id).await?;
            let change = BookChange::flag_warnings(summary.warnings(&book.warnings));
            table
                .update(&pk, store::BOOK_SK, change.into_update(), Condition::Exists)
                .await?;
        }
        let removed = crate::ports::blobs::delete_prefix(
            self.ports.blobs.as_ref(),
            &store::outputs_prefix(&book.id),
        )
        .await?;
        info!(files = removed, "the book's files will be made again");
        Ok(())
    }

    /// The passage as it is now, for an answer.
    pub(super) async fn current(
        &self,
        book: &Book,
        at: PassageAt,
        source: &SourceChapter,
    ) -> Result<Passage, DataError> {
        let stored = self.model_text(book, at.chapter).await?;
        let record = self.passage_record(book, at).await?;
        self.passage(
            &book.id,
            at.chapter,
            at.index as usize,
            &source.blocks,
            stored.as_ref(),
            Some(&record),
        )
        .await
    }

    async fn stale(
        &self,
        book: &Book,
        at: PassageAt,
        source: &SourceChapter,
        read: u64,
    ) -> Result<PassageError, DataError> {
        let current = self.current(book, at, source).await?;
        Ok(PassageError::Stale {
            read,
            current: Box::new(current),
        })
    }

    pub(super) async fn passage(
        &self,
        book_id: &str,
        chapter: u32,
        index: usize,
        blocks: &[Block],
        stored: Option<&StoredChapter>,
        record: Option<&PassageRecord>,
    ) -> Result<Passage, DataError> {
        let source = blocks
            .get(index)
            .map(|b| b.text.clone())
            .unwrap_or_default();
        let (text, flags, origin) = match (record.and_then(|r| r.edit().map(|e| (r, e))), stored) {
            (Some((record, edit)), _) => (
                Some(self.edit_text(book_id, record, edit).await?),
                Vec::new(),
                Some(owners_origin(edit)),
            ),
            (None, Some(stored)) if stored.quality.remembered.contains(&index) => (
                stored.blocks.get(index).map(|b| b.text.clone()),
                Vec::new(),
                Some(Origin::Memory),
            ),
            (None, Some(stored)) => {
                let pass = stored
                    .quality
                    .last_pass
                    .as_ref()
                    .map(|passes| passes.get(&index).copied().unwrap_or(Pass::Translate));
                (
                    stored.blocks.get(index).map(|b| b.text.clone()),
                    flags_of(&stored.quality, index),
                    Some(Origin::Model { pass }),
                )
            }
            (None, None) => (None, Vec::new(), None),
        };
        let confidence = match (&origin, stored) {
            (Some(Origin::Model { .. }), Some(stored)) => {
                stored.quality.confidence.get(&index).copied()
            }
            _ => None,
        };
        Ok(Passage {
            chapter,
            index: index as u32,
            source,
            text,
            flags,
            origin,
            confidence,
            version: record.map_or(0, |r| r.version),
            undoable: record.map_or(0, |r| r.versions.len() as u32),
        })
    }

    pub(super) async fn source_of(
        &self,
        book_id: &str,
        number: u32,
    ) -> Result<SourceChapter, PassageError> {
        self.source_chapter(book_id, number)
            .await?
            .ok_or_else(|| PassageError::NotFound(format!("chapter {number}")))
    }

    /// The model's text of the chapter under the book's translation key, if it has one.
    pub(super) async fn model_text(
        &self,
        book: &Book,
        number: u32,
    ) -> Result<Option<StoredChapter>, DataError> {
        let key = book.translation_key.as_deref().unwrap_or_default();
        Ok(self
            .stored_chapter(&book.id, number)
            .await?
            .filter(|s| s.key == key))
    }

    /// The chapter's passage items in the book's target language.
    pub(super) async fn passage_records(
        &self,
        book: &Book,
        number: u32,
    ) -> Result<Records, DataError> {
        let query = Query::partition(store::book_pk(&book.id))
            .prefix(store::chapter_passages_prefix(&book.target_lang, number));
        let mut records = BTreeMap::new();
        for item in self.ports.table.query(query).await? {
            let record = PassageRecord::from_item(&item).map_err(Fault::from)?;
            records.insert(record.block, record);
        }
        Ok(records)
    }

    /// The passage's item in the book's target language (version 0 when it has none).
    pub(super) async fn passage_record(
        &self,
        book: &Book,
        at: PassageAt,
    ) -> Result<PassageRecord, DataError> {
        let lang = &book.target_lang;
        let sk = store::passage_sk(lang, at.chapter, at.index);
        match self.ports.table.get(&store::book_pk(&book.id), &sk).await? {
            Some(item) => Ok(PassageRecord::from_item(&item).map_err(Fault::from)?),
            None => Ok(PassageRecord::untouched(lang, at.chapter, at.index)),
        }
    }

    pub(super) async fn edit_text(
        &self,
        book_id: &str,
        record: &PassageRecord,
        edit: &Version,
    ) -> Result<String, DataError> {
        let name = edit.text.as_deref().unwrap_or_default();
        let key =
            store::passage_text_key(book_id, &record.lang, record.chapter, record.block, name)?;
        let bytes = self
            .ports
            .blobs
            .get(&key)
            .await?
            .ok_or_else(|| Fault::Corrupt {
                what: key.to_string(),
                detail: "the text of a passage's edit is missing".into(),
            })?;
        String::from_utf8(bytes.to_vec()).map_err(|e| {
            Fault::Corrupt {
                what: key.to_string(),
                detail: e.to_string(),
            }
            .into()
        })
    }

    /// Removes the text of a change no longer kept; one left behind is only unused (and goes
    /// with the book).
    async fn remove_text(&self, book_id: &str, at: PassageAt, key: &crate::ports::BlobKey) {
        if let Err(e) = self.ports.blobs.delete(key).await {
            warn!(book_id, chapter = at.chapter, index = at.index, error = %e, "could not remove a passage's text");
        }
    }
}

/// A chapter's passage items, by block.
pub(super) type Records = BTreeMap<u32, PassageRecord>;

/// The owner's text about to be written, and where it came from.
pub(super) struct OwnersText<'a> {
    pub(super) text: &'a str,
    /// The user who made the change.
    pub(super) by: &'a str,
    /// None for the owner's own edit.
    pub(super) from: Option<Provenance>,
}

/// Where the owner's text of `edit` came from.
pub(super) fn owners_origin(edit: &Version) -> Origin {
    let (at, by) = (edit.at, edit.by.clone());
    match &edit.from {
        None => Origin::Edited { at, by },
        Some(Provenance::Kept) => Origin::Kept { at, by },
        Some(Provenance::Retranslated {
            model,
            pass,
            instruction,
            proposal,
            accepted_with,
        }) => Origin::Retranslated {
            at,
            by,
            model: model.clone(),
            pass: *pass,
            instruction: instruction.clone(),
            proposal: proposal.clone(),
            accepted_with: accepted_with
                .iter()
                .map(|problem| Flag {
                    kind: problem.name(),
                    reason: answer_failed(*problem).to_string(),
                })
                .collect(),
        },
    }
}

pub(super) fn not_found(at: PassageAt) -> PassageError {
    PassageError::NotFound(format!("passage {} of chapter {}", at.index, at.chapter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_between_one_and_the_most_passages() {
        assert_eq!(page(None, None).unwrap(), (0, DEFAULT_PAGE));
        assert_eq!(page(Some(10), Some(5)).unwrap(), (10, 5));
        assert!(matches!(page(None, Some(0)), Err(PassageError::Invalid(_))));
        assert!(matches!(
            page(None, Some(MAX_PAGE as u32 + 1)),
            Err(PassageError::Invalid(_))
        ));
    }
}
