//! The book's quality at a glance: its chapters' quality records summed, so that the status,
//! the book's `warnings` and the `book.completed` event tell a clean book from one with
//! flagged blocks, with counts per kind.

use std::collections::BTreeMap;

use booktr_translate::checks::Problem;
use booktr_translate::pipeline::{Changed, Quality};

use serde_json::Value;

use super::service::Translations;
use crate::books::store;
use crate::fault::DataError;
use crate::ports::Query;

/// Beyond the spec: what the checks found in the book's answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QualitySummary {
    /// Blocks whose translation could not be trusted (they keep their source text): 0 for a
    /// clean book.
    pub flagged_blocks: u32,
    /// Flagged blocks per kind (`untranslated`, `wrongLanguage`, `length`, `refusal`, `merged`,
    /// `repeated`, `truncated`, `missing`, `brokenMarks`, `duplicate` (the same translation as
    /// another block's), `numbers`, `names`); a block may count under two.
    pub flagged: BTreeMap<String, u32>,
    /// Flagged blocks by their main flag: each block once, under the first of its kinds in
    /// [`MAIN_ORDER`], so that the counts add up to `flagged_blocks`. What people are told.
    pub main_flags: BTreeMap<String, u32>,
    /// Chapters with at least one flagged block.
    pub chapters_flagged: u32,
    /// Blocks whose first answer failed a check and that a second request repaired.
    pub repaired_blocks: u32,
    /// Lines of the models' answers removed around the blocks (preambles, sign-offs,
    /// reasoning, fences).
    pub removed_lines: u32,
    /// Blocks the review pass and the polish pass changed (each answers with its changes).
    pub changed: Changed,
    /// Changes of the review or the polish that failed a check and were not kept (the block
    /// kept the previous pass's checked text).
    pub changes_not_kept: u32,
    /// Blocks whose confidence is under 50 (of 100): the first a reviewer should read.
    pub low_confidence_blocks: u32,
    /// The model profile the chapters ran with (`hosted` or `small`; the latest chapter's when
    /// a resumed run changed it); None before any chapter ran.
    pub profile: Option<String>,
    /// What the run's fallback model did; None when no chapter sent it anything.
    pub fallback: Option<FallbackSummary>,
    /// Blocks whose text the owner's translation memory supplied (no model was asked).
    pub from_memory: u32,
}

/// Blocks sent to the run's fallback model and those whose text is now its, over the book.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FallbackSummary {
    /// The model (the latest chapter's, when a resumed run changed it).
    pub model: String,
    pub sent: u32,
    pub taken: u32,
}

/// The order in which a flagged block's kinds make its main flag: [`Problem::ALL`]'s, but
/// `untranslated` last, since every block that keeps its source is also flagged so whatever
/// went wrong (a block not returned, or refused, counts as that).
pub const MAIN_ORDER: [Problem; 12] = [
    Problem::Missing,
    Problem::BrokenMarks,
    Problem::WrongLanguage,
    Problem::Length,
    Problem::Refusal,
    Problem::Merged,
    Problem::Repeated,
    Problem::Truncated,
    Problem::Duplicate,
    Problem::Numbers,
    Problem::Names,
    Problem::Untranslated,
];

/// The book warning that reports flagged blocks starts so: a new run replaces it, and the
/// extraction's warnings stay.
pub const WARNING_PREFIX: &str = "Translation: ";

/// How every [`QualitySummary::sentence`] ends.
const SENTENCE_END: &str = " source text.";

impl QualitySummary {
    /// The sum of chapters' stored quality records (records that do not read are skipped).
    pub fn of<'a>(records: impl IntoIterator<Item = &'a Value>) -> QualitySummary {
        let mut summary = QualitySummary::default();
        for record in records {
            let Ok(quality) = serde_json::from_value::<Quality>(record.clone()) else {
                continue;
            };
            let flagged = quality.flagged_blocks().len() as u32;
            summary.flagged_blocks += flagged;
            summary.chapters_flagged += u32::from(flagged > 0);
            for (kind, n) in quality.flag_counts() {
                *summary.flagged.entry(kind.name().to_string()).or_default() += n as u32;
            }
            for block in quality.flagged_blocks() {
                let main = MAIN_ORDER.into_iter().find(|kind| {
                    quality
                        .flagged
                        .get(kind)
                        .is_some_and(|b| b.contains(&block))
                });
                if let Some(kind) = main {
                    *summary
                        .main_flags
                        .entry(kind.name().to_string())
                        .or_default() += 1;
                }
            }
            summary.repaired_blocks += quality.repaired.total();
            summary.removed_lines += quality.removed.total();
            summary.changed += quality.changed;
            summary.changes_not_kept += quality.kept_previous.len() as u32;
            summary.low_confidence_blocks +=
                quality.confidence.values().filter(|c| **c < 50).count() as u32;
            summary.from_memory += quality.remembered.len() as u32;
            if quality.profile.is_some() {
                summary.profile = quality.profile;
            }
            if let Some(done) = quality.fallback {
                let sum = summary.fallback.get_or_insert_with(Default::default);
                sum.model = done.model;
                sum.sent += done.sent;
                sum.taken += done.taken;
            }
        }
        summary
    }

    /// For people: "12 blocks flagged (8 untranslated, 4 in the wrong language); they keep
    /// their source text.", each block counted once, under its main flag. None for a clean
    /// book.
    pub fn sentence(&self) -> Option<String> {
        if self.flagged_blocks == 0 {
            return None;
        }
        let kinds: Vec<String> = MAIN_ORDER
            .iter()
            .filter_map(|kind| {
                let n = self.main_flags.get(kind.name())?;
                Some(format!("{n} {}", kind.describe()))
            })
            .collect();
        let (blocks, they) = if self.flagged_blocks == 1 {
            ("block", "it keeps its")
        } else {
            ("blocks", "they keep their")
        };
        Some(format!(
            "{} {blocks} flagged ({}); {they}{SENTENCE_END}",
            self.flagged_blocks,
            kinds.join(", ")
        ))
    }

    /// Whether `text` ends with a [`QualitySummary::sentence`] (a book's warning, the message of
    /// its completion), so that whoever shows it can say where the flagged blocks are listed.
    pub fn ends_with_sentence(text: &str) -> bool {
        text.ends_with(SENTENCE_END)
    }

    /// The book's warnings with this run's: the extraction's kept, an earlier run's replaced.
    pub fn warnings(&self, current: &[String]) -> Vec<String> {
        current
            .iter()
            .filter(|w| !w.starts_with(WARNING_PREFIX))
            .cloned()
            .chain(self.sentence().map(|s| format!("{WARNING_PREFIX}{s}")))
            .collect()
    }
}

impl Translations {
    /// The summary of the book's chapters' quality records.
    pub async fn quality_summary(&self, book_id: &str) -> Result<QualitySummary, DataError> {
        let items = self
            .ports
            .table
            .query(Query::partition(store::book_pk(book_id)))
            .await?;
        Ok(QualitySummary::of(
            items
                .iter()
                .filter(|item| item.sk.starts_with(store::CHAPTER_PREFIX))
                .filter_map(crate::books::record::quality_of),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_book_says_nothing_and_a_flagged_one_counts_by_kind() {
        let clean = serde_json::json!({"flagged": {}, "glossaryChecked": 3});
        let flagged = serde_json::json!({"flagged": {"untranslated": [1, 4], "wrongLanguage": [4]},
                                         "repaired": {"halves": 2}, "removed": {"after": 3},
                                         "changed": {"review": 2, "polish": 5},
                                         "keptPrevious": [["review", 3, "names"]],
                                         "fallback": {"model": "gpt-4o", "sent": 3, "taken": 2}});
        let summary = QualitySummary::of([&clean, &flagged, &serde_json::json!("not a record")]);
        assert_eq!(
            summary.fallback,
            Some(FallbackSummary {
                model: "gpt-4o".into(),
                sent: 3,
                taken: 2
            })
        );
        assert_eq!(QualitySummary::of([&clean]).fallback, None);
        assert_eq!(summary.flagged_blocks, 2);
        assert_eq!(summary.chapters_flagged, 1);
        assert_eq!(summary.flagged["untranslated"], 2);
        assert_eq!(summary.flagged["wrongLanguage"], 1);
        // Block 4 is both: it counts once, under the wrong language, which left it
        // untranslated.
        assert_eq!(
            summary.main_flags,
            BTreeMap::from([
                ("untranslated".to_string(), 1),
                ("wrongLanguage".to_string(), 1)
            ])
        );
        assert_eq!((summary.repaired_blocks, summary.removed_lines), (2, 3));
        assert_eq!(
            (
                summary.changed.review,
                summary.changed.polish,
                summary.changes_not_kept
            ),
            (2, 5, 1)
        );
        assert_eq!(
            summary.sentence().unwrap(),
            "2 blocks flagged (1 in the wrong language, 1 untranslated); they keep their source text."
        );
        assert!(QualitySummary::ends_with_sentence(
            &summary.sentence().unwrap()
        ));
        assert!(!QualitySummary::ends_with_sentence(
            "\"T\" has been translated and is ready to download."
        ));
        assert_eq!(QualitySummary::of([&clean]).sentence(), None);
        let warnings = summary.warnings(&[
            "2 images could not be read".into(),
            "Translation: an earlier run's".into(),
        ]);
        assert_eq!(warnings.len(), 2);
        assert!(warnings[1].starts_with("Translation: 2 blocks flagged"));
        assert_eq!(
            QualitySummary::default().warnings(&warnings),
            ["2 images could not be read"]
        );
    }
}
