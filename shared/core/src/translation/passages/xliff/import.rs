//! The import: each unit of an XLIFF file whose target the translator changed becomes the
//! owner's edit of its passage, through the edit's check and its versioned write; the answer
//! says what became of every unit.
//!
//! A unit is, in this order: unknown (not an id of ours, another book's file, no such
//! passage); unchanged (no target, the target exported, or the text the passage already
//! holds, so that importing a file twice changes nothing the second time); a conflict (the
//! passage changed in booktr since the export: its version or its text is not the one the id
//! names); refused (codes that are not the source's marks, or a text an edit could not be);
//! or changed. The chapters' records follow once per chapter changed, and the book's files
//! are removed once at the end, so the next download makes them again with every change, as
//! after an edit in the editor.

use std::collections::BTreeMap;

use booktr_formats::manuscript::Chapter as SourceChapter;
use booktr_formats::xliff::{self, ReadLimits, ReadUnit, Target};
use tracing::{info, instrument};

use super::super::checked::check_edit;
use super::super::error::PassageError;
use super::super::model::PassageAt;
use super::super::record::PassageRecord;
use super::super::service::{OwnersText, Records};
use super::error::XliffError;
use super::export::book_of;
use super::unit_id::{fingerprint, UnitId};
use crate::books::Book;
use crate::translation::{StoredChapter, Translations};

/// The largest file an import reads: a long novel's export is a few megabytes.
pub const MAX_XLIFF_BYTES: usize = 16 * 1024 * 1024;
/// The most units a file may hold.
pub const MAX_UNITS: usize = 100_000;
/// How deep a file's elements may nest (an export's nest six deep, and a passage's marks a few
/// more).
pub const MAX_DEPTH: usize = 64;
/// The most passages one import changes: each is a few writes, and an import is one request.
/// The units past it are refused (`Refusal::ChangeLimit`); the same file imported again
/// changes them, the ones already changed being unchanged then.
pub const MAX_CHANGES: usize = 500;

/// What became of every unit of a file, in the file's order.
#[derive(Debug)]
pub struct XliffReport {
    pub units: Vec<UnitReport>,
}

/// One unit's outcome.
#[derive(Debug)]
pub struct UnitReport {
    /// The unit's id as the file has it.
    pub id: String,
    /// Its passage, when the id names one.
    pub at: Option<PassageAt>,
    pub outcome: Outcome,
}

#[derive(Debug)]
pub enum Outcome {
    /// The target became the passage's text, at `version`.
    Changed {
        version: u64,
    },
    Unchanged,
    /// The passage changed in booktr since the export; it is at `version` now, and was left
    /// as it is.
    Conflict {
        version: u64,
    },
    Refused(Refusal),
    /// Why the unit names no passage of the book.
    Unknown(String),
}

/// Why a changed target was not written.
#[derive(Debug)]
pub enum Refusal {
    /// Its inline codes are not the source's marks (or not codes booktr reads).
    Codes(String),
    /// The text is not one an edit could write (marks, length, characters, empty).
    Edit(PassageError),
    /// The import changed [`MAX_CHANGES`] passages already.
    ChangeLimit,
}

impl XliffReport {
    /// The units with the outcome `kind` picks.
    pub fn count(&self, kind: fn(&Outcome) -> bool) -> usize {
        self.units.iter().filter(|u| kind(&u.outcome)).count()
    }
}

/// One chapter's units as an import goes through them.
struct ChapterImport<'a> {
    book: &'a Book,
    number: u32,
    source: &'a SourceChapter,
    stored: Option<&'a StoredChapter>,
    records: &'a Records,
}

impl Translations {
    /// Imports `bytes`, an XLIFF file exported from the caller's book (see the module's doc).
    #[instrument(skip(self, bytes), fields(bytes = bytes.len()))]
    pub async fn import_xliff(
        &self,
        user_id: &str,
        book_id: &str,
        bytes: &[u8],
    ) -> Result<XliffReport, XliffError> {
        let book = self
            .books
            .get(user_id, book_id)
            .await
            .map_err(PassageError::from)?;
        let limits = ReadLimits {
            max_bytes: MAX_XLIFF_BYTES,
            max_units: MAX_UNITS,
            max_depth: MAX_DEPTH,
        };
        let units = xliff::read(bytes, limits)?;
        let mut reports = Vec::with_capacity(units.len());
        let mut by_chapter: BTreeMap<u32, Vec<(usize, UnitId)>> = BTreeMap::new();
        for (k, unit) in units.iter().enumerate() {
            let placed = placed(&book, unit);
            reports.push(UnitReport {
                id: unit.id.clone(),
                at: placed.as_ref().ok().map(|id| PassageAt {
                    chapter: id.chapter,
                    index: id.index,
                }),
                outcome: Outcome::Unchanged,
            });
            match placed {
                Ok(id) => by_chapter.entry(id.chapter).or_default().push((k, id)),
                Err(why) => reports[k].outcome = Outcome::Unknown(why),
            }
        }
        let mut budget = MAX_CHANGES;
        let (mut touched, mut failed) = (false, None);
        for (number, named) in by_chapter {
            let places: Vec<usize> = named.iter().map(|(k, _)| *k).collect();
            let outcome = self
                .import_chapter(&book, number, &units, named, &mut reports, &mut budget)
                .await;
            let changed = |&k: &usize| matches!(reports[k].outcome, Outcome::Changed { .. });
            if places.iter().any(changed) {
                // Once for the chapter's changes, written or not all of them.
                self.chapter_changed(&book, number).await?;
                touched = true;
            }
            if let Err(e) = outcome {
                failed = Some(e);
                break;
            }
        }
        if touched {
            self.book_changed(&book).await?;
        }
        if let Some(e) = failed {
            return Err(e);
        }
        let report = XliffReport { units: reports };
        info!(
            units = report.units.len(),
            changed = report.count(|o| matches!(o, Outcome::Changed { .. })),
            conflicts = report.count(|o| matches!(o, Outcome::Conflict { .. })),
            refused = report.count(|o| matches!(o, Outcome::Refused(_))),
            "an XLIFF file imported"
        );
        Ok(report)
    }

    /// The units `named` of chapter `number` (each by its place in `units`), their outcomes
    /// into `reports`, each change spending one of `budget`.
    async fn import_chapter(
        &self,
        book: &Book,
        number: u32,
        units: &[ReadUnit],
        named: Vec<(usize, UnitId)>,
        reports: &mut [UnitReport],
        budget: &mut usize,
    ) -> Result<(), XliffError> {
        let Some(source) = self.source_chapter(&book.id, number).await? else {
            for (k, _) in named {
                reports[k].outcome = Outcome::Unknown(format!("the book has no chapter {number}"));
            }
            return Ok(());
        };
        let stored = self.model_text(book, number).await?;
        let records = self.passage_records(book, number).await?;
        let chapter = ChapterImport {
            book,
            number,
            source: &source,
            stored: stored.as_ref(),
            records: &records,
        };
        for (k, id) in named {
            reports[k].outcome = self.import_unit(&chapter, &units[k], &id, budget).await?;
        }
        Ok(())
    }

    async fn import_unit(
        &self,
        chapter: &ChapterImport<'_>,
        unit: &ReadUnit,
        id: &UnitId,
        budget: &mut usize,
    ) -> Result<Outcome, XliffError> {
        let ChapterImport { book, number, .. } = *chapter;
        let Some(block) = chapter.source.blocks.get(id.index as usize) else {
            return Ok(Outcome::Unknown(format!(
                "chapter {number} has no passage {}",
                id.index
            )));
        };
        let content = match &unit.target {
            Target::Missing => return Ok(Outcome::Unchanged),
            Target::Unreadable(why) => return Ok(Outcome::Refused(Refusal::Codes(why.clone()))),
            Target::Content(content) => content,
        };
        let text = match xliff::from_inline(&block.text, content) {
            Ok(text) => text,
            Err(e) => return Ok(Outcome::Refused(Refusal::Codes(e.to_string()))),
        };
        let lang = &book.target_lang;
        let theirs = fingerprint(lang, &text);
        if theirs == id.fingerprint {
            return Ok(Outcome::Unchanged);
        }
        let record = chapter
            .records
            .get(&id.index)
            .cloned()
            .unwrap_or_else(|| PassageRecord::untouched(lang, number, id.index));
        let blocks = &chapter.source.blocks;
        let index = id.index as usize;
        let current = self
            .passage(
                &book.id,
                number,
                index,
                blocks,
                chapter.stored,
                Some(&record),
            )
            .await?;
        let now = current.text.as_deref().map(|t| fingerprint(lang, t));
        if now.as_deref() == Some(theirs.as_str()) {
            return Ok(Outcome::Unchanged);
        }
        if current.version != id.version || now.as_deref() != Some(id.fingerprint.as_str()) {
            return Ok(Outcome::Conflict {
                version: current.version,
            });
        }
        if let Err(refused) = check_edit(&block.text, &text) {
            return Ok(Outcome::Refused(Refusal::Edit(refused)));
        }
        if *budget == 0 {
            return Ok(Outcome::Refused(Refusal::ChangeLimit));
        }
        let at = PassageAt {
            chapter: number,
            index: id.index,
        };
        let owners = OwnersText {
            text: &text,
            // The caller, whose book it is (`Books::get` found it theirs).
            by: &book.user_id,
            from: None,
        };
        match self
            .put_owners_text(book, at, chapter.source, &record, owners)
            .await
        {
            Ok(()) => {
                *budget -= 1;
                Ok(Outcome::Changed {
                    version: record.version + 1,
                })
            }
            Err(PassageError::Stale { current, .. }) => Ok(Outcome::Conflict {
                version: current.version,
            }),
            Err(e) => Err(e.into()),
        }
    }
}

/// The passage a unit names, or why it names none of the book's.
fn placed(book: &Book, unit: &ReadUnit) -> Result<UnitId, String> {
    if let Some(other) = unit.original.as_deref().and_then(book_of) {
        if other != book.id {
            return Err(format!("its file was exported from another book ({other})"));
        }
    }
    UnitId::parse(&unit.id).ok_or_else(|| {
        "its id is not one booktr gave (c<chapter>-p<passage>-v<version>-<fingerprint>)".into()
    })
}
