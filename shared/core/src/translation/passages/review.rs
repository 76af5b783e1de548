//! The book's review desk: every passage that needs a look, the lowest confidence first. A
//! passage needs one when the model's text was flagged by the checks, is of low confidence
//! (under [`LOW_CONFIDENCE`] of 100), was changed by a later pass (the review or the polish),
//! or has an open proposal (a re-translation pending, or ready and not yet accepted). Once it
//! holds the owner's text (an edit, the model's text kept, a re-translation accepted) with no
//! proposal open, it is done.
//!
//! Read from what is already stored: the chapters' quality records (flags without the owner's
//! passages, each block's confidence, how many blocks the later passes changed), the book's
//! passage items (one query), its proposals (one query, and the texts of those ready), and a
//! chapter's stored translation only where the records do not say enough: which blocks a later
//! pass changed (a chapter whose later passes changed any), and what the model's text of an
//! owner's passage was flagged for (a chapter with owner's passages). Only the page's passages
//! are read whole.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use booktr_formats::manuscript::Chapter as SourceChapter;
use booktr_translate::pipeline::Quality;
use booktr_translate::protocol::Pass;
use futures::{stream, StreamExt, TryStreamExt};
use tracing::instrument;

use super::error::PassageError;
use super::model::{Flag, Passage};
use super::proposals::ProposalStatus;
use super::record::PassageRecord;
use super::service::Records;
use crate::books::record::ChapterRecord;
use crate::books::{store, Book};
use crate::fault::{DataError, Fault};
use crate::ports::Query;
use crate::translation::{StoredChapter, Translations};

/// Under this confidence (of 100) a passage is of low confidence: the pipeline's own bar for
/// the blocks its later passes look at.
pub const LOW_CONFIDENCE: u8 = 70;
/// Passages on a page of the review unless the caller asks for fewer or more.
pub const REVIEW_PAGE: usize = 20;
/// The most passages on a page of the review.
pub const MAX_REVIEW_PAGE: usize = 50;
/// Stored translations read at once.
const READ_AT_ONCE: usize = 8;

/// Why a passage needs a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Look {
    /// The checks flagged the model's text.
    Flagged,
    /// The model's text is of confidence under [`LOW_CONFIDENCE`].
    LowConfidence,
    /// The review or the polish changed the model's text.
    Changed,
    /// A re-translation of it is pending, or ready and not accepted.
    Proposal,
}

impl Look {
    pub const ALL: [Look; 4] = [
        Look::Flagged,
        Look::LowConfidence,
        Look::Changed,
        Look::Proposal,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Look::Flagged => "flagged",
            Look::LowConfidence => "lowConfidence",
            Look::Changed => "changed",
            Look::Proposal => "proposal",
        }
    }

    pub fn parse(name: &str) -> Option<Look> {
        Look::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// Which passages, by what the owner has done with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReviewStatus {
    /// Still to look at: the model's text, or a proposal open.
    #[default]
    Open,
    /// The owner's text now (edited, kept, accepted), with no proposal open.
    Done,
    All,
}

impl ReviewStatus {
    pub fn name(self) -> &'static str {
        match self {
            ReviewStatus::Open => "open",
            ReviewStatus::Done => "done",
            ReviewStatus::All => "all",
        }
    }

    pub fn parse(name: &str) -> Option<ReviewStatus> {
        [ReviewStatus::Open, ReviewStatus::Done, ReviewStatus::All]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// What the review lists.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewFilter {
    /// One reason only; every reason when None.
    pub look: Option<Look>,
    /// One chapter only; the whole book when None.
    pub chapter: Option<u32>,
    pub status: ReviewStatus,
}

/// A passage that needs a look.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRow {
    /// The passage as it is now (its source, text, flags, origin, version).
    pub passage: Passage,
    /// The model's text's confidence, whoever's text the passage holds now (None for a
    /// translation made before confidence was recorded).
    pub confidence: Option<u8>,
    /// Why it needs a look, in [`Look`]'s order.
    pub looks: Vec<Look>,
    /// It holds the owner's text, with no proposal open.
    pub done: bool,
    /// The newest open proposal for it.
    pub proposal: Option<OpenProposal>,
}

/// A re-translation of a passage that waits for the owner.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenProposal {
    pub id: String,
    /// Still being translated.
    pub pending: bool,
    /// Asked for this passage alone (not its chapter).
    pub alone: bool,
    pub instruction: Option<String>,
    /// The proposed text, once ready.
    pub proposed: Option<String>,
    /// What the checks found wrong with it.
    pub flags: Vec<Flag>,
    /// The proposed text is the model's last answer, which failed the checks in `flags`.
    pub rejected: bool,
}

/// A page of the review.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewPage {
    /// Passages the filter lists.
    pub total: u32,
    pub offset: u32,
    pub limit: u32,
    /// For each reason, the passages the filter would list with that reason alone.
    pub counts: BTreeMap<Look, u32>,
    /// Passages still open and done, under the filter's reason and chapter.
    pub open: u32,
    pub done: u32,
    /// The book's translated chapters: (number, title).
    pub chapters: Vec<(u32, Option<String>)>,
    pub rows: Vec<ReviewRow>,
}

/// What the book's page says of the review: its open passages flagged and of low confidence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReviewCounts {
    pub flagged: u32,
    pub low_confidence: u32,
}

/// What is known of one chapter before its passages are read.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChapterFacts {
    pub number: u32,
    /// The model's quality record: flags (with or without the owner's passages, which the
    /// owner's text hides either way), confidence, and the later passes' blocks when known.
    pub quality: Quality,
    /// Blocks holding the owner's text.
    pub owners: BTreeSet<usize>,
    /// Open proposals, by block: the newest's id.
    pub proposals: BTreeMap<usize, String>,
}

/// A passage the review may list, before its texts are read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    pub chapter: u32,
    pub index: usize,
    pub confidence: Option<u8>,
    pub looks: BTreeSet<Look>,
    pub done: bool,
    pub proposal: Option<String>,
}

impl Candidate {
    fn matches(
        &self,
        look: Option<Look>,
        chapter: Option<u32>,
        status: Option<ReviewStatus>,
    ) -> bool {
        look.is_none_or(|l| self.looks.contains(&l))
            && chapter.is_none_or(|c| c == self.chapter)
            && match status {
                None | Some(ReviewStatus::All) => true,
                Some(ReviewStatus::Open) => !self.done,
                Some(ReviewStatus::Done) => self.done,
            }
    }
}

/// Every passage of `chapters` that needs (or needed) a look, the lowest confidence first (those
/// without one last), then in reading order.
pub(crate) fn candidates(chapters: &[ChapterFacts]) -> Vec<Candidate> {
    let mut all = Vec::new();
    for facts in chapters {
        let quality = &facts.quality;
        let flagged = quality.flagged_blocks();
        let changed: BTreeSet<usize> = quality
            .last_pass
            .iter()
            .flatten()
            .filter(|(_, pass)| **pass != Pass::Translate)
            .map(|(block, _)| *block)
            .collect();
        let low: BTreeSet<usize> = quality
            .confidence
            .iter()
            .filter(|(_, c)| **c < LOW_CONFIDENCE)
            .map(|(block, _)| *block)
            .collect();
        let blocks: BTreeSet<usize> = flagged
            .iter()
            .chain(&changed)
            .chain(&low)
            .chain(facts.proposals.keys())
            .copied()
            .collect();
        for index in blocks {
            let mut looks = BTreeSet::new();
            for (look, set) in [
                (Look::Flagged, &flagged),
                (Look::LowConfidence, &low),
                (Look::Changed, &changed),
            ] {
                if set.contains(&index) {
                    looks.insert(look);
                }
            }
            let proposal = facts.proposals.get(&index).cloned();
            if proposal.is_some() {
                looks.insert(Look::Proposal);
            }
            all.push(Candidate {
                chapter: facts.number,
                index,
                confidence: quality.confidence.get(&index).copied(),
                looks,
                done: facts.owners.contains(&index) && proposal.is_none(),
                proposal,
            });
        }
    }
    all.sort_by_key(|c| (c.confidence.map_or(u16::MAX, u16::from), c.chapter, c.index));
    all
}

/// The page's bounds from the caller's `offset` and `limit`.
pub fn review_page(
    offset: Option<u32>,
    limit: Option<u32>,
) -> Result<(usize, usize), PassageError> {
    let limit = limit.map_or(REVIEW_PAGE, |l| l as usize);
    if limit == 0 || limit > MAX_REVIEW_PAGE {
        return Err(PassageError::Invalid(format!(
            "limit must be between 1 and {MAX_REVIEW_PAGE}"
        )));
    }
    Ok((offset.unwrap_or(0) as usize, limit))
}

/// The chapter items' records, for the chapters translated so far.
struct Translated {
    records: Vec<ChapterRecord>,
}

impl Translations {
    /// The passages of the caller's book that need a look, as `filter` chooses, `offset..offset
    /// + limit` of them, the lowest confidence first.
    #[instrument(skip(self))]
    pub async fn review(
        &self,
        user_id: &str,
        book_id: &str,
        filter: &ReviewFilter,
        offset: usize,
        limit: usize,
    ) -> Result<ReviewPage, PassageError> {
        let book = self.books.get(user_id, book_id).await?;
        let translated = self.translated_chapters(&book).await?;
        let records = self.book_passage_records(&book).await?;
        let proposals = self.open_proposals(&book, &records).await?;
        let chapters: Vec<(u32, Option<String>)> = translated
            .records
            .iter()
            .map(|r| (r.chapter.number, r.chapter.title.clone()))
            .collect();
        let looked_at: Vec<&ChapterRecord> = translated
            .records
            .iter()
            .filter(|r| filter.chapter.is_none_or(|c| c == r.chapter.number))
            .collect();
        // The chapters whose records do not say enough: read their stored translations.
        let mut stored: HashMap<u32, Option<StoredChapter>> = HashMap::new();
        let to_read = chapters_to_read(&looked_at, &records);
        let read: Vec<(u32, Option<StoredChapter>)> = stream::iter(to_read)
            .map(|number| {
                let book = &book;
                async move { Ok::<_, DataError>((number, self.model_text(book, number).await?)) }
            })
            .buffered(READ_AT_ONCE)
            .try_collect()
            .await?;
        stored.extend(read);
        let facts = chapter_facts(&looked_at, &stored, &records, &proposals);
        let all = candidates(&facts);
        let listed: Vec<&Candidate> = all
            .iter()
            .filter(|c| c.matches(filter.look, None, Some(filter.status)))
            .collect();
        let (counts, open, done) = tallies(&all, filter);
        let page = listed.iter().skip(offset).take(limit).copied();
        let rows = self
            .review_rows(&book, page, &records, &proposals, &mut stored)
            .await?;
        Ok(ReviewPage {
            total: listed.len() as u32,
            offset: offset as u32,
            limit: limit as u32,
            counts,
            open,
            done,
            chapters,
            rows,
        })
    }

    /// The rows of the page's `candidates`, each passage read whole (the sources and stored
    /// translations of their chapters read once, `stored` holding those read already).
    async fn review_rows<'a>(
        &self,
        book: &Book,
        page: impl Iterator<Item = &'a Candidate>,
        records: &BTreeMap<u32, Records>,
        proposals: &BTreeMap<(u32, u32), OpenProposal>,
        stored: &mut HashMap<u32, Option<StoredChapter>>,
    ) -> Result<Vec<ReviewRow>, PassageError> {
        let mut rows = Vec::new();
        let mut sources: HashMap<u32, SourceChapter> = HashMap::new();
        let empty = Records::new();
        for candidate in page {
            let number = candidate.chapter;
            if let Entry::Vacant(vacant) = sources.entry(number) {
                vacant.insert(self.source_of(&book.id, number).await?);
            }
            if let Entry::Vacant(vacant) = stored.entry(number) {
                vacant.insert(self.model_text(book, number).await?);
            }
            let (Some(source), Some(model)) = (sources.get(&number), stored.get(&number)) else {
                continue;
            };
            if candidate.index >= source.blocks.len() {
                continue;
            }
            let chapter_records = records.get(&number).unwrap_or(&empty);
            let passage = self
                .passage(
                    &book.id,
                    number,
                    candidate.index,
                    &source.blocks,
                    model.as_ref(),
                    chapter_records.get(&(candidate.index as u32)),
                )
                .await?;
            rows.push(ReviewRow {
                passage,
                confidence: candidate.confidence,
                looks: candidate.looks.iter().copied().collect(),
                done: candidate.done,
                proposal: proposals.get(&(number, candidate.index as u32)).cloned(),
            });
        }
        Ok(rows)
    }

    /// The book's open passages flagged and of low confidence, from its chapters' records and
    /// its passage items alone.
    pub async fn review_counts(
        &self,
        user_id: &str,
        book_id: &str,
    ) -> Result<ReviewCounts, PassageError> {
        let book = self.books.get(user_id, book_id).await?;
        let translated = self.translated_chapters(&book).await?;
        let records = self.book_passage_records(&book).await?;
        let mut counts = ReviewCounts::default();
        for record in &translated.records {
            let Some(quality) = quality_of(record) else {
                continue;
            };
            let owners = records.get(&record.chapter.number);
            let owned = |block: usize| {
                owners
                    .and_then(|c| c.get(&(block as u32)))
                    .is_some_and(|p| p.edit().is_some())
            };
            counts.flagged += quality
                .flagged_blocks()
                .into_iter()
                .filter(|b| !owned(*b))
                .count() as u32;
            counts.low_confidence += quality
                .confidence
                .iter()
                .filter(|(b, c)| **c < LOW_CONFIDENCE && !owned(**b))
                .count() as u32;
        }
        Ok(counts)
    }

    /// The book's chapters that have a quality record, in order.
    async fn translated_chapters(&self, book: &Book) -> Result<Translated, DataError> {
        let query = Query::partition(store::book_pk(&book.id)).prefix(store::CHAPTER_PREFIX);
        let mut records = Vec::new();
        for item in self.ports.table.query(query).await? {
            let record = ChapterRecord::from_item(&item).map_err(Fault::from)?;
            if record.quality.is_some() {
                records.push(record);
            }
        }
        records.sort_by_key(|r| r.chapter.number);
        Ok(Translated { records })
    }

    /// Every passage item of the book in its target language, by chapter.
    async fn book_passage_records(&self, book: &Book) -> Result<BTreeMap<u32, Records>, DataError> {
        let prefix = format!("{}{}#", store::PASSAGE_PREFIX, book.target_lang);
        let query = Query::partition(store::book_pk(&book.id)).prefix(&prefix);
        let mut by_chapter: BTreeMap<u32, Records> = BTreeMap::new();
        for item in self.ports.table.query(query).await? {
            let record = PassageRecord::from_item(&item).map_err(Fault::from)?;
            if record.lang == book.target_lang {
                by_chapter
                    .entry(record.chapter)
                    .or_default()
                    .insert(record.block, record);
            }
        }
        Ok(by_chapter)
    }

    /// The proposals waiting for the owner, by passage (the newest for each): pending ones
    /// asked for a passage alone, and the passages of ready ones not yet accepted whose passage
    /// is still at the version the proposal was made from.
    async fn open_proposals(
        &self,
        book: &Book,
        records: &BTreeMap<u32, Records>,
    ) -> Result<BTreeMap<(u32, u32), OpenProposal>, PassageError> {
        let mut proposals = self
            .proposals(&book.user_id, &book.id)
            .await
            .map_err(|e| match e {
                super::proposals::ProposalError::Passage(e) => e,
                other => PassageError::Invalid(other.to_string()),
            })?;
        // Oldest first, so that the newest for a passage is the one kept.
        proposals.reverse();
        let mut open = BTreeMap::new();
        for summary in proposals {
            match summary.status {
                ProposalStatus::Pending => {
                    if let Some(index) = summary.index {
                        open.insert(
                            (summary.chapter, index),
                            OpenProposal {
                                id: summary.id.clone(),
                                pending: true,
                                alone: true,
                                instruction: summary.instruction.clone(),
                                proposed: None,
                                flags: Vec::new(),
                                rejected: false,
                            },
                        );
                    }
                }
                ProposalStatus::Ready => {
                    let Ok(full) = self.proposal(&book.user_id, &book.id, &summary.id).await else {
                        continue;
                    };
                    for p in full.passages.into_iter().filter(|p| !p.accepted) {
                        let version = records
                            .get(&p.chapter)
                            .and_then(|c| c.get(&p.index))
                            .map_or(0, |r| r.version);
                        if version != p.version {
                            continue;
                        }
                        open.insert(
                            (p.chapter, p.index),
                            OpenProposal {
                                id: full.id.clone(),
                                pending: false,
                                alone: full.index.is_some(),
                                instruction: full.instruction.clone(),
                                proposed: Some(p.proposed),
                                flags: p.flags,
                                rejected: p.rejected,
                            },
                        );
                    }
                }
                ProposalStatus::Failed | ProposalStatus::Discarded => {}
            }
        }
        Ok(open)
    }
}

/// The chapters whose records do not say enough, whose stored translations are read: those a
/// later pass changed, and those with owner's passages.
fn chapters_to_read(looked_at: &[&ChapterRecord], records: &BTreeMap<u32, Records>) -> Vec<u32> {
    looked_at
        .iter()
        .filter_map(|r| {
            let quality = quality_of(r)?;
            let number = r.chapter.number;
            let changed = quality.changed.review + quality.changed.polish > 0;
            let owners = records
                .get(&number)
                .is_some_and(|c| c.values().any(|p| p.edit().is_some()));
            (changed || owners).then_some(number)
        })
        .collect()
}

/// What the review knows of each chapter looked at: its quality (from its stored translation
/// where read), its owner's passages and its open proposals.
fn chapter_facts(
    looked_at: &[&ChapterRecord],
    stored: &HashMap<u32, Option<StoredChapter>>,
    records: &BTreeMap<u32, Records>,
    proposals: &BTreeMap<(u32, u32), OpenProposal>,
) -> Vec<ChapterFacts> {
    looked_at
        .iter()
        .filter_map(|r| {
            let number = r.chapter.number;
            let quality = match stored.get(&number) {
                Some(Some(s)) => s.quality.clone(),
                // Not translated under the book's current translation.
                Some(None) => return None,
                None => quality_of(r)?,
            };
            let owners = records
                .get(&number)
                .map(|c| {
                    c.values()
                        .filter(|p| p.edit().is_some())
                        .map(|p| p.block as usize)
                        .collect()
                })
                .unwrap_or_default();
            Some(ChapterFacts {
                number,
                quality,
                owners,
                proposals: proposals
                    .iter()
                    .filter(|((c, _), _)| *c == number)
                    .map(|((_, i), p)| (*i as usize, p.id.clone()))
                    .collect(),
            })
        })
        .collect()
}

/// The counts of the candidates under `filter`'s status for each reason, and those open and
/// done under its reason.
fn tallies(all: &[Candidate], filter: &ReviewFilter) -> (BTreeMap<Look, u32>, u32, u32) {
    let counts = Look::ALL
        .into_iter()
        .map(|look| {
            let n = all
                .iter()
                .filter(|c| c.matches(Some(look), None, Some(filter.status)))
                .count();
            (look, n as u32)
        })
        .collect();
    let open = all
        .iter()
        .filter(|c| c.matches(filter.look, None, Some(ReviewStatus::Open)))
        .count() as u32;
    let done = all
        .iter()
        .filter(|c| c.matches(filter.look, None, Some(ReviewStatus::Done)))
        .count() as u32;
    (counts, open, done)
}

/// A chapter record's quality record, read.
fn quality_of(record: &ChapterRecord) -> Option<Quality> {
    serde_json::from_value(record.quality.clone()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use booktr_translate::checks::Problem;

    fn facts(number: u32) -> ChapterFacts {
        let mut quality = Quality::default();
        // Blocks 0-5: 1 flagged (confidence 0), 2 of confidence 65, 3 changed by the review
        // (confidence 90), 4 fine, 5 of confidence 40 but the owner's text now.
        quality.flagged.insert(Problem::Truncated, vec![1]);
        quality.confidence =
            BTreeMap::from([(0, 100), (1, 0), (2, 65), (3, 90), (4, 100), (5, 40)]);
        quality.last_pass = Some(BTreeMap::from([(3, Pass::Review), (4, Pass::Translate)]));
        ChapterFacts {
            number,
            quality,
            owners: BTreeSet::from([5]),
            proposals: BTreeMap::new(),
        }
    }

    fn at(list: &[Candidate]) -> Vec<(u32, usize)> {
        list.iter().map(|c| (c.chapter, c.index)).collect()
    }

    #[test]
    fn the_passages_that_need_a_look_come_lowest_confidence_first_each_with_its_reasons() {
        let mut second = facts(2);
        second.quality.confidence.insert(2, 10);
        let all = candidates(&[facts(1), second]);
        assert_eq!(
            at(&all),
            vec![
                (1, 1),
                (2, 1),
                (2, 2),
                (1, 5),
                (2, 5),
                (1, 2),
                (1, 3),
                (2, 3)
            ]
        );
        let flagged = &all[0];
        assert_eq!(
            flagged.looks,
            BTreeSet::from([Look::Flagged, Look::LowConfidence])
        );
        assert_eq!((flagged.confidence, flagged.done), (Some(0), false));
        let changed = all.iter().find(|c| (c.chapter, c.index) == (1, 3)).unwrap();
        assert_eq!(changed.looks, BTreeSet::from([Look::Changed]));
        let owners = all.iter().find(|c| (c.chapter, c.index) == (1, 5)).unwrap();
        assert!(owners.done, "the owner's text is done");
        // The filters: a reason, a chapter, open or done.
        let open: Vec<&Candidate> = all
            .iter()
            .filter(|c| c.matches(None, None, Some(ReviewStatus::Open)))
            .collect();
        assert_eq!(open.len(), 6);
        let low_in_two: Vec<(u32, usize)> = all
            .iter()
            .filter(|c| c.matches(Some(Look::LowConfidence), Some(2), Some(ReviewStatus::Open)))
            .map(|c| (c.chapter, c.index))
            .collect();
        assert_eq!(low_in_two, vec![(2, 1), (2, 2)]);
        assert!(all
            .iter()
            .filter(|c| c.matches(None, None, Some(ReviewStatus::Done)))
            .all(|c| c.index == 5));
    }

    #[test]
    fn a_proposal_open_on_a_passage_lists_it_even_when_it_is_the_owners_or_needed_no_look() {
        let mut chapter = facts(1);
        chapter.proposals.insert(5, "p1".into());
        chapter.proposals.insert(4, "p2".into());
        let all = candidates(&[chapter]);
        let owners = all.iter().find(|c| c.index == 5).unwrap();
        assert!(!owners.done, "open again while its proposal waits");
        assert!(owners.looks.contains(&Look::Proposal));
        let fine = all.iter().find(|c| c.index == 4).unwrap();
        assert_eq!(fine.looks, BTreeSet::from([Look::Proposal]));
        assert_eq!(fine.proposal.as_deref(), Some("p2"));
    }

    #[test]
    fn a_passage_without_a_confidence_comes_last_and_a_page_is_bounded() {
        let mut chapter = facts(1);
        chapter.quality.confidence.remove(&1);
        let all = candidates(&[chapter]);
        assert_eq!(all.last().map(|c| c.index), Some(1));
        assert_eq!(review_page(None, None).unwrap(), (0, REVIEW_PAGE));
        assert!(review_page(None, Some(MAX_REVIEW_PAGE as u32 + 1)).is_err());
        assert!(review_page(Some(3), Some(0)).is_err());
        assert_eq!(Look::parse("lowConfidence"), Some(Look::LowConfidence));
        assert_eq!(ReviewStatus::parse("done"), Some(ReviewStatus::Done));
        assert_eq!(Look::parse("everything"), None);
    }
}
