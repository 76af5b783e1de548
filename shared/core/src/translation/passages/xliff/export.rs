//! The export: the book's translated chapters (or one of them) as an XLIFF 1.2 file.

use booktr_formats::xliff::{self, Document, File, State, Unit};
use booktr_translate::protocol::Pass;
use tracing::{info, instrument};

use super::super::error::PassageError;
use super::super::model::{Origin, Passage};
use super::super::review::LOW_CONFIDENCE;
use super::error::XliffError;
use super::unit_id::UnitId;
use crate::books::Book;
use crate::translation::download::file_stem;
use crate::translation::Translations;

/// An XLIFF file for download.
#[derive(Debug, Clone)]
pub struct XliffExport {
    /// `Moby-Dick.en-es.xlf`, `Moby-Dick.chapter-3.en-es.xlf`.
    pub file_name: String,
    pub xml: String,
    /// The units written.
    pub units: usize,
}

impl Translations {
    /// The caller's book as XLIFF 1.2: every chapter translated under the book's translation
    /// (or only `chapter`, which must be), one unit per passage with its text now.
    #[instrument(skip(self))]
    pub async fn export_xliff(
        &self,
        user_id: &str,
        book_id: &str,
        chapter: Option<u32>,
    ) -> Result<XliffExport, XliffError> {
        let book = self
            .books
            .get(user_id, book_id)
            .await
            .map_err(PassageError::from)?;
        let numbers = match chapter {
            Some(number) => vec![number],
            None => (1..=book.chapter_count.unwrap_or(0)).collect(),
        };
        let mut files = Vec::new();
        for number in numbers {
            match self.chapter_file(&book, number).await? {
                Some(file) => files.push(file),
                None if chapter.is_some() => {
                    return Err(PassageError::Invalid(format!(
                        "chapter {number} is not translated yet; export it once it is"
                    ))
                    .into())
                }
                None => {}
            }
        }
        if files.is_empty() {
            return Err(PassageError::Invalid(
                "the book has no translated chapter to export yet".into(),
            )
            .into());
        }
        let units = files.iter().map(|f| f.units.len()).sum();
        let document = Document {
            source_lang: book.original_lang.clone(),
            target_lang: book.target_lang.clone(),
            files,
        };
        let part = chapter.map(|n| format!(".chapter-{n}")).unwrap_or_default();
        let file_name = format!(
            "{}{part}.{}-{}.xlf",
            file_stem(&book.title),
            book.original_lang,
            book.target_lang
        );
        info!(units, "the book exported as XLIFF");
        Ok(XliffExport {
            file_name,
            xml: xliff::write(&document),
            units,
        })
    }

    /// Chapter `number` as a file of units; None when it is not translated under the book's
    /// translation. NotFound when the book has no such chapter.
    async fn chapter_file(&self, book: &Book, number: u32) -> Result<Option<File>, XliffError> {
        let source = self.source_of(&book.id, number).await?;
        let Some(stored) = self.model_text(book, number).await? else {
            return Ok(None);
        };
        let records = self.passage_records(book, number).await?;
        let mut units = Vec::with_capacity(source.blocks.len());
        for index in 0..source.blocks.len() {
            let record = records.get(&(index as u32));
            let passage = self
                .passage(
                    &book.id,
                    number,
                    index,
                    &source.blocks,
                    Some(&stored),
                    record,
                )
                .await?;
            if let Some(unit) = unit(&passage, &book.target_lang) {
                units.push(unit);
            }
        }
        let title = source
            .title
            .as_deref()
            .map(|t| format!("Chapter {number}: {t}"))
            .unwrap_or_else(|| format!("Chapter {number}"));
        Ok(Some(File {
            original: original(&book.id, number),
            notes: vec![title],
            units,
        }))
    }
}

/// A `<file>`'s `original`: `booktr/<book>/chapter-<n>`, so that an import knows a file of
/// another book's.
fn original(book_id: &str, number: u32) -> String {
    format!("booktr/{book_id}/chapter-{number}")
}

/// The book a file's `original` names, when it is one of ours.
pub(super) fn book_of(original: &str) -> Option<&str> {
    original.strip_prefix("booktr/")?.split('/').next()
}

/// The unit of a passage that has a text (None for one without).
fn unit(passage: &Passage, lang: &str) -> Option<Unit> {
    let text = passage.text.as_deref()?;
    let state = match &passage.origin {
        Some(Origin::Model { .. }) | None
            if !passage.flags.is_empty()
                || passage.confidence.is_some_and(|c| c < LOW_CONFIDENCE) =>
        {
            State::NeedsReviewTranslation
        }
        // The translation memory's text is the one a book before this took: translated, not
        // signed off for this book.
        Some(Origin::Model { .. } | Origin::Memory) | None => State::Translated,
        Some(_) => State::SignedOff,
    };
    let mut notes = vec![origin_note(passage.origin.as_ref())];
    notes.extend(
        passage
            .flags
            .iter()
            .map(|flag| format!("Flagged ({}): {}", flag.kind, flag.reason)),
    );
    if let Some(confidence) = passage.confidence {
        notes.push(format!("Confidence: {confidence} of 100"));
    }
    Some(Unit {
        id: UnitId::of(passage, lang, text).to_string(),
        source: passage.source.clone(),
        target: Some(text.to_string()),
        state,
        notes,
    })
}

fn origin_note(origin: Option<&Origin>) -> String {
    let day = |at: &chrono::DateTime<chrono::Utc>| at.format("%Y-%m-%d").to_string();
    match origin {
        None | Some(Origin::Model { pass: None }) => "The model's translation.".into(),
        Some(Origin::Model { pass: Some(pass) }) => format!(
            "The model's translation, as its {} pass left it.",
            pass_name(*pass)
        ),
        Some(Origin::Edited { at, .. }) => format!("The owner's edit of {}.", day(at)),
        Some(Origin::Retranslated { at, model, .. }) => format!(
            "A re-translation by {model} the owner accepted on {}.",
            day(at)
        ),
        Some(Origin::Kept { at, .. }) => {
            format!("The model's translation, kept by the owner on {}.", day(at))
        }
        Some(Origin::Memory) => "From the owner's translation memory: the same source, \
            translated before."
            .into(),
    }
}

fn pass_name(pass: Pass) -> &'static str {
    match pass {
        Pass::Translate => "translate",
        Pass::Review => "review",
        Pass::Polish => "polish",
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::model::Flag;
    use super::*;

    fn passage(origin: Origin, flags: Vec<Flag>, confidence: Option<u8>) -> Passage {
        Passage {
            chapter: 2,
            index: 5,
            source: "Call <i>me</i>.".into(),
            text: Some("Llamadme <i>a mí</i>.".into()),
            flags,
            origin: Some(origin),
            confidence,
            version: 3,
            undoable: 3,
        }
    }

    #[test]
    fn the_state_says_whose_text_it_is_and_whether_it_needs_a_look() {
        let model = Origin::Model {
            pass: Some(Pass::Polish),
        };
        let flag = Flag {
            kind: "untranslated",
            reason: "the model's text was not translated".into(),
        };
        let edited = Origin::Edited {
            at: chrono::DateTime::UNIX_EPOCH,
            by: "u1".into(),
        };
        let state = |p: Passage| unit(&p, "es").map(|u| u.state);
        assert_eq!(
            state(passage(model.clone(), vec![], Some(90))),
            Some(State::Translated)
        );
        assert_eq!(
            state(passage(model.clone(), vec![], Some(LOW_CONFIDENCE - 1))),
            Some(State::NeedsReviewTranslation)
        );
        assert_eq!(
            state(passage(model, vec![flag.clone()], None)),
            Some(State::NeedsReviewTranslation)
        );
        assert_eq!(state(passage(edited, vec![], None)), Some(State::SignedOff));
    }

    #[test]
    fn a_unit_carries_its_id_origin_flags_and_confidence() {
        let flag = Flag {
            kind: "names",
            reason: "a name went missing".into(),
        };
        let origin = Origin::Model {
            pass: Some(Pass::Review),
        };
        let unit = unit(&passage(origin, vec![flag], Some(55)), "es").unwrap();
        assert!(unit.id.starts_with("c2-p5-v3-"), "{}", unit.id);
        assert_eq!(
            unit.notes,
            [
                "The model's translation, as its review pass left it.",
                "Flagged (names): a name went missing",
                "Confidence: 55 of 100"
            ]
        );
        let mut none = passage(Origin::Model { pass: None }, vec![], None);
        none.text = None;
        assert_eq!(super::unit(&none, "es"), None);
        assert_eq!(book_of(&original("b-1", 3)), Some("b-1"));
        assert_eq!(book_of("chapter-3.xhtml"), None);
    }
}
