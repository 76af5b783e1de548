//! One chunk of one pass: its requests down the repair ladder, each answer read and every
//! block checked against its source and its neighbours.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use booktr_formats::markup;
use tracing::{debug, warn};

use crate::adequacy::{self};
use crate::checks::{is_refusal_or_remark, Problem};
use crate::glossary::matching;
use crate::ladder::{Repaired, Rung};
use crate::model::{ChatError, ChatRequest};
use crate::neighbours::{self, Neighbour, Side};
use crate::protocol::{simple_request, Pass, Unit};
use crate::reading::{clean_characters, read_answer, read_plain_answer, Removed};
use crate::retry::complete_with_retries;

use super::checkpoint::*;
use super::quality::*;
use super::segments::*;
use super::work::*;

/// The result of one chunk of one pass.
#[derive(Default)]
pub(super) struct ChunkDone {
    pub(super) texts: HashMap<usize, String>,
    /// Blocks that failed every rung, and why (the last rung's reason).
    pub(super) failed: HashMap<usize, Problem>,
    /// For the blocks that failed, the last answer given for them and what it failed.
    pub(super) rejected: HashMap<usize, (String, Problem)>,
    pub(super) usage: PassUsage,
    pub(super) retries: u32,
    pub(super) repaired: Repaired,
    /// The rung each repaired block passed on.
    pub(super) repaired_on: HashMap<usize, Rung>,
    /// Blocks a later pass answered back as they were sent.
    pub(super) echoed: u32,
    pub(super) removed: Removed,
    pub(super) terms: Vec<(String, String)>,
}

/// As much of the texts before a chunk (`newest_first`) as `budget` tokens hold, oldest first:
/// whole texts, and the end of the newest alone when it is longer.
pub(super) fn window_of<'t>(
    newest_first: impl Iterator<Item = &'t String>,
    budget: u64,
) -> Vec<String> {
    let mut earlier = Vec::new();
    let mut used = 0;
    for text in newest_first {
        let tokens = crate::model::estimate_tokens(text);
        if used + tokens > budget {
            if earlier.is_empty() {
                earlier.push(tail(text, budget));
            }
            break;
        }
        used += tokens;
        earlier.push(text.clone());
    }
    earlier.reverse();
    earlier
}

/// The end of `text`, about `tokens` long, from a word's start.
pub(super) fn tail(text: &str, tokens: u64) -> String {
    let keep = (tokens as usize).saturating_mul(4);
    let mut start = text.len().saturating_sub(keep);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let rest = &text[start..];
    match rest.find(' ') {
        Some(at) if start > 0 => rest[at + 1..].to_string(),
        _ => rest.to_string(),
    }
}

/// A chunk's results taken into the pass's state; returns the segments that passed (the
/// first pass) or changed (the later ones).
pub(super) fn absorb(state: &mut Checkpoint, pass: Pass, done: ChunkDone) -> Vec<usize> {
    let mut passed = Vec::with_capacity(done.texts.len());
    for (id, text) in done.texts {
        state.texts[id] = text;
        passed.push(id);
    }
    for (id, problem) in done.failed {
        if pass == Pass::Translate {
            state.failures.insert((id, problem));
        } else {
            state.kept.push((pass, id, problem));
        }
    }
    if pass == Pass::Translate {
        state.rejected.extend(done.rejected);
    }
    let quality = &mut state.quality;
    *quality.usage_mut(pass) += done.usage;
    quality.retries += done.retries;
    quality.repaired += done.repaired;
    quality.removed += done.removed;
    state.repaired_on.extend(done.repaired_on);
    state.terms.extend(done.terms);
    passed
}

/// One chunk of one pass.
pub(super) struct Chunk<'c> {
    pub(super) work: &'c PassWork<'c>,
    pub(super) pass: Pass,
    /// The glossary terms the previous pass left out, for the FIX section.
    pub(super) violations: &'c [(usize, String, String)],
    /// The translation just before the chunk (the first pass's window).
    pub(super) earlier: Vec<String>,
    /// The chapter's texts as the chunk went out, for comparing answers with their neighbours.
    pub(super) current: Current<'c>,
}

/// The chapter's segment texts when a chunk went out, and which of them are translations (the
/// others still hold their source).
#[derive(Clone, Copy)]
pub(super) struct Current<'c> {
    pub(super) texts: &'c [String],
    pub(super) translated: &'c BTreeSet<usize>,
}

/// How one request's blocks came out: their passing texts and why the others failed.
#[derive(Default)]
pub(super) struct Asked {
    pub(super) passed: HashMap<usize, String>,
    pub(super) failed: HashMap<usize, Problem>,
    /// The answers of the failed blocks that had one.
    pub(super) rejected: HashMap<usize, String>,
    pub(super) usage: PassUsage,
    pub(super) removed: Removed,
    pub(super) terms: Vec<(String, String)>,
}

/// How many times the last rung (one block, the simplest prompt) is asked before a block is
/// flagged.
pub(super) const SIMPLE_TRIES: usize = 2;

impl Chunk<'_> {
    /// Asks for the chunk's blocks on `start` (the pass's first useful rung), then for the
    /// failed ones on the rungs below, until every block passed or the last rung failed it.
    /// Blocks that pass on a later rung than `start` count as repaired, and all that pass
    /// when `again` (blocks asked for again after the chapter was judged whole).
    pub(super) async fn run(
        self,
        start: Rung,
        units: Vec<Unit>,
        again: bool,
    ) -> Result<ChunkDone, ChatError> {
        let ladder = self.work.input.ladder;
        let mut done = ChunkDone::default();
        let mut pending = units;
        let mut rung = Some(start);
        let mut first = !again;
        let mut simple_tries = 0;
        while let Some(current) = rung {
            if pending.is_empty() {
                break;
            }
            let groups: Vec<Vec<Unit>> = match current {
                Rung::Chunk => vec![pending.clone()],
                Rung::Halves => {
                    let half = pending.len().div_ceil(2);
                    pending.chunks(half).map(<[Unit]>::to_vec).collect()
                }
                Rung::Singles | Rung::Simple => pending.iter().map(|u| vec![u.clone()]).collect(),
            };
            let alone: BTreeSet<usize> = groups
                .iter()
                .filter(|group| group.len() == 1)
                .map(|group| group[0].id)
                .collect();
            let known = &done.texts;
            let results = futures::future::join_all(
                groups
                    .into_iter()
                    .map(|group| self.ask(current, group, known)),
            )
            .await;
            let asked = pending.len() as u32;
            let mut still = Vec::new();
            let mut outcomes = Asked::default();
            for result in results {
                let result = result?;
                outcomes.passed.extend(result.passed);
                outcomes.failed.extend(result.failed);
                outcomes.rejected.extend(result.rejected);
                outcomes.usage += result.usage;
                outcomes.removed += result.removed;
                outcomes.terms.extend(result.terms);
            }
            ladder.record(current, asked, outcomes.passed.len() as u32);
            if !first {
                done.repaired.add(current, outcomes.passed.len() as u32);
                done.repaired_on
                    .extend(outcomes.passed.keys().map(|&id| (id, current)));
            }
            done.usage += outcomes.usage;
            done.removed += outcomes.removed;
            done.terms.extend(outcomes.terms);
            done.texts.extend(outcomes.passed);
            for unit in pending {
                if let Some(problem) = outcomes.failed.get(&unit.id) {
                    done.failed.insert(unit.id, *problem);
                    // The last answer given is kept; a rung that gave none keeps the one before.
                    if let Some(answer) = outcomes.rejected.remove(&unit.id) {
                        done.rejected.insert(unit.id, (answer, *problem));
                    }
                    still.push(unit);
                } else {
                    done.failed.remove(&unit.id);
                    done.rejected.remove(&unit.id);
                }
            }
            // The last rung is tried twice: a model that samples (as real ones do) often gets
            // right on a second try a block it got wrong once.
            simple_tries += usize::from(current == Rung::Simple);
            let asked_alone = still.iter().all(|unit| alone.contains(&unit.id));
            rung = current
                .next(still.len(), asked_alone)
                .or((current == Rung::Simple && simple_tries < SIMPLE_TRIES)
                    .then_some(Rung::Simple));
            if !still.is_empty() && rung.is_some() {
                done.retries += still.len() as u32;
                warn!(
                    pass = self.pass.task(),
                    blocks = still.len(),
                    rung = current.name(),
                    problems = ?still.iter().filter_map(|u| done.failed.get(&u.id)).collect::<BTreeSet<_>>(),
                    "answers rejected; asking again for those blocks"
                );
            }
            pending = still;
            first = false;
        }
        Ok(done)
    }

    /// One request of the review or the polish for the chunk's blocks: the changed blocks of
    /// its answer that pass every check, and why the others did not.
    pub(super) async fn edit(self, units: Vec<Unit>) -> Result<ChunkDone, ChatError> {
        let work = self.work;
        let text: String = units
            .iter()
            .map(|u| u.source.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let ids: BTreeSet<usize> = units.iter().map(|u| u.id).collect();
        let request = chunk_request(
            work.input,
            self.pass,
            &units,
            &text,
            self.violations,
            &ids,
            (work.config.window, &[], &[]),
        );
        let response =
            complete_with_retries(work.model, request, work.config.max_model_retries).await?;
        let order: Vec<usize> = units.iter().map(|u| u.id).collect();
        let answer = read_answer(&response.text, Some(&order));
        let mut done = ChunkDone {
            usage: PassUsage {
                input_tokens: response.input_tokens,
                output_tokens: response.output_tokens,
                requests: 1,
            },
            removed: answer.removed,
            terms: answer.terms,
            ..ChunkDone::default()
        };
        let (mut blocks, reasons) = (answer.blocks, answer.reasons);
        clean_terms(&mut done.terms);
        if blocks.is_empty() && is_refusal_or_remark(&sources(&units), &response.text) {
            for unit in &units {
                done.failed.insert(unit.id, Problem::Refusal);
            }
            return Ok(done);
        }
        // An answer stopped at its token limit ends in a cut block: the last one it has.
        if response.truncated {
            if let Some(id) = units
                .iter()
                .rev()
                .map(|u| u.id)
                .find(|id| blocks.contains_key(id))
            {
                blocks.remove(&id);
                done.failed.insert(id, Problem::Truncated);
            }
        }
        for (at, unit) in units.iter().enumerate() {
            let Some(answer) = blocks.get(&unit.id) else {
                continue;
            };
            let answer =
                markup::with_kept_text(&unit.source, &clean_characters(&unit.source, answer));
            let draft = unit.draft.as_deref().unwrap_or(&unit.source);
            if answer.trim() == draft.trim() {
                done.echoed += 1;
                continue;
            }
            let verdict = self.judge(unit, &answer).and_then(|()| {
                if self.carries_neighbour(&units, at, &answer, &blocks, &HashMap::new()) {
                    Err(Problem::Merged)
                } else {
                    Ok(())
                }
            });
            match verdict {
                Ok(()) => {
                    debug!(
                        pass = self.pass.task(),
                        block = unit.id,
                        why = reasons.get(&unit.id).map_or("", String::as_str),
                        "block changed"
                    );
                    done.texts.insert(unit.id, answer);
                }
                Err(problem) => {
                    done.failed.insert(unit.id, problem);
                }
            }
        }
        Ok(done)
    }

    /// Every check of one block's answer that needs only the block: `checks`, and the book's
    /// names. Preformatted text may stay as it is.
    pub(super) fn judge(&self, unit: &Unit, answer: &str) -> Result<(), Problem> {
        let work = self.work;
        match work.checks.check(&unit.source, Some(answer)) {
            Err(Problem::Untranslated) if may_stay(work.input, &work.segments[unit.id]) => {}
            Err(problem) => return Err(problem),
            Ok(()) => {}
        }
        let (source, answer) = (
            markup::translatable_text(&unit.source),
            markup::translatable_text(answer),
        );
        if adequacy::names_match(&work.names, &source, &answer) {
            Ok(())
        } else {
            Err(Problem::Names)
        }
    }

    /// One request on `rung` for `units`, its answer read and every block checked; `known`
    /// holds the texts of the chunk's blocks that passed on an earlier rung.
    pub(super) async fn ask(
        &self,
        rung: Rung,
        units: Vec<Unit>,
        known: &HashMap<usize, String>,
    ) -> Result<Asked, ChatError> {
        let work = self.work;
        let request = self.request(rung, &units)?;
        let response =
            complete_with_retries(work.model, request, work.config.max_model_retries).await?;
        let mut asked = Asked {
            usage: PassUsage {
                input_tokens: response.input_tokens,
                output_tokens: response.output_tokens,
                requests: 1,
            },
            ..Asked::default()
        };
        // Whether the answer ends in a block not asked for (the model went on with blocks of
        // its own): then what its token limit cut was none of the request's.
        let mut ends_in_extra = false;
        let mut blocks: BTreeMap<usize, String> = if rung == Rung::Simple {
            let (text, removed) = read_plain_answer(&response.text);
            asked.removed = removed;
            text.map(|t| (units[0].id, t)).into_iter().collect()
        } else {
            let order: Vec<usize> = units.iter().map(|u| u.id).collect();
            let answer = read_answer(&response.text, Some(&order));
            ends_in_extra = answer.ends_in.is_some_and(|id| !order.contains(&id));
            asked.removed = answer.removed;
            asked.terms = answer.terms;
            clean_terms(&mut asked.terms);
            answer.blocks
        };
        // A refusal in place of the whole answer is one, not blocks gone missing.
        if blocks.is_empty() && is_refusal_or_remark(&sources(&units), &response.text) {
            for unit in &units {
                asked.failed.insert(unit.id, Problem::Refusal);
            }
        }
        // An answer stopped at its token limit ends in a cut block: the last one it has.
        let cut = if response.truncated && !ends_in_extra {
            units
                .iter()
                .rev()
                .map(|u| u.id)
                .find(|id| blocks.contains_key(id))
        } else {
            None
        };
        if let Some(id) = cut {
            if let (Some(answer), Some(unit)) =
                (blocks.remove(&id), units.iter().find(|u| u.id == id))
            {
                let answer =
                    markup::with_kept_text(&unit.source, &clean_characters(&unit.source, &answer));
                asked.rejected.insert(id, answer);
            }
            asked.failed.insert(id, Problem::Truncated);
        }
        self.check_blocks(&units, &mut blocks, known, &mut asked.failed);
        for unit in &units {
            if let Some(text) = blocks.remove(&unit.id) {
                if asked.failed.contains_key(&unit.id) {
                    asked.rejected.insert(unit.id, text);
                } else {
                    asked.passed.insert(unit.id, text);
                }
            }
        }
        Ok(asked)
    }

    /// The request for `units` on `rung`: the simplest prompt for one block, the block
    /// protocol for the others.
    fn request(&self, rung: Rung, units: &[Unit]) -> Result<ChatRequest, ChatError> {
        let work = self.work;
        let text = sources(units);
        let ids: BTreeSet<usize> = units.iter().map(|u| u.id).collect();
        if rung == Rung::Simple {
            let [unit] = units else {
                return Err(ChatError::Fatal("the simple prompt takes one block".into()));
            };
            let glossary = matching(
                work.input.glossary,
                &booktr_formats::markup::plain_text(&text),
            );
            Ok(simple_request(
                work.input.source_lang,
                work.input.target_lang,
                &glossary,
                work.input.instruction,
                unit,
            ))
        } else {
            let similar = similar_lines(work.input, work.segments, self.pass, units);
            Ok(chunk_request(
                work.input,
                self.pass,
                units,
                &text,
                self.violations,
                &ids,
                (work.config.window, &self.earlier, &similar),
            ))
        }
    }

    /// Every block of an answer checked on its own, then against the others of the request
    /// and the chapter around it; the blocks that fail go into `failed` with why.
    fn check_blocks(
        &self,
        units: &[Unit],
        blocks: &mut BTreeMap<usize, String>,
        known: &HashMap<usize, String>,
        failed: &mut HashMap<usize, Problem>,
    ) {
        for unit in units {
            if failed.contains_key(&unit.id) {
                continue;
            }
            // Code and `translate="no"` text go into the book as the source has them, whatever
            // the model made of them; characters a book must not hold never reach it.
            if let Some(answer) = blocks.get_mut(&unit.id) {
                *answer =
                    markup::with_kept_text(&unit.source, &clean_characters(&unit.source, answer));
            }
            let verdict = match blocks.get(&unit.id) {
                Some(answer) => self.judge(unit, answer),
                None => Err(Problem::Missing),
            };
            if let Err(problem) = verdict {
                failed.insert(unit.id, problem);
            }
        }
        self.find_merged(units, blocks, failed);
        for (at, unit) in units.iter().enumerate() {
            if failed.contains_key(&unit.id) {
                continue;
            }
            if let Some(answer) = blocks.get(&unit.id) {
                if self.carries_neighbour(units, at, answer, blocks, known) {
                    failed.insert(unit.id, Problem::Merged);
                }
            }
        }
        self.find_echoes(units, blocks, failed);
        self.find_same(units, blocks, failed);
    }

    /// Whether the answer for `units[at]` carries the text of a block beside it (see
    /// `neighbours`). Beside it are the blocks of the request up to the nearest one the answer
    /// has on each side (a review answers with some blocks only, and the one whose marker was
    /// dropped may be any before the next it answers), and the chapter's segment before or
    /// after the request's first or last block. Each is compared by its answer in `blocks`,
    /// its text from an earlier rung (`known`) or the chapter's so far, and by its source.
    pub(super) fn carries_neighbour(
        &self,
        units: &[Unit],
        at: usize,
        answer: &str,
        blocks: &BTreeMap<usize, String>,
        known: &HashMap<usize, String>,
    ) -> bool {
        let segments = self.work.segments;
        let id = units[at].id;
        let mut beside: Vec<(Side, usize)> = Vec::new();
        for (side, order) in [
            (Side::Before, units[..at].iter().rev().collect::<Vec<_>>()),
            (Side::After, units[at + 1..].iter().collect::<Vec<_>>()),
        ] {
            let mut reached_answered = false;
            for unit in order {
                beside.push((side, unit.id));
                if blocks.contains_key(&unit.id) {
                    reached_answered = true;
                    break;
                }
            }
            // At the request's edge: the chapter's segment beyond it.
            if !reached_answered {
                let outside = match side {
                    Side::Before => units[0].id.checked_sub(1),
                    Side::After => Some(units[units.len() - 1].id + 1),
                };
                if let Some(outside) = outside.filter(|&o| o < segments.len() && o != id) {
                    beside.push((side, outside));
                }
            }
        }
        let current = self.current;
        beside.into_iter().any(|(side, other)| {
            let mut translations: Vec<&str> = Vec::new();
            let answered = blocks.get(&other).or_else(|| known.get(&other));
            translations.extend(answered.map(String::as_str));
            if current.translated.contains(&other) {
                translations.push(current.texts[other].as_str());
            }
            translations.dedup();
            let source = segments[other].source.as_str();
            let judge = |translation: Option<&str>| {
                let neighbour = Neighbour {
                    side,
                    source,
                    translation,
                };
                neighbours::carries(&units[at].source, answer, &neighbour)
            };
            let carried = if translations.is_empty() {
                judge(None)
            } else {
                translations.iter().any(|t| judge(Some(t)))
            };
            if carried {
                debug!(
                    pass = self.pass.task(),
                    block = id,
                    neighbour = other,
                    "an answer holds its neighbour's text"
                );
            }
            carried
        })
    }

    /// Blocks of one answer with the same translation while their sources differ: the model
    /// wrote one paragraph where it was asked for several. Both are asked for again.
    pub(super) fn find_same(
        &self,
        units: &[Unit],
        blocks: &BTreeMap<usize, String>,
        failed: &mut HashMap<usize, Problem>,
    ) {
        let plain: Vec<(usize, String, String)> = units
            .iter()
            .filter(|u| !failed.contains_key(&u.id))
            .filter_map(|u| {
                let answer = blocks.get(&u.id)?;
                Some((
                    u.id,
                    markup::translatable_text(&u.source),
                    markup::translatable_text(answer),
                ))
            })
            .collect();
        for id in adequacy::same_translations(&plain) {
            failed.insert(id, Problem::Duplicate);
        }
    }

    /// An answer that gives most of its judged blocks back untranslated is an echo through and
    /// through: its headings and names given back as they were are echoes too, not titles that
    /// may stay (which a block alone, or in an answer that translated the rest, may be).
    pub(super) fn find_echoes(
        &self,
        units: &[Unit],
        blocks: &BTreeMap<usize, String>,
        failed: &mut HashMap<usize, Problem>,
    ) {
        let echoed = units
            .iter()
            .filter(|u| failed.get(&u.id) == Some(&Problem::Untranslated))
            .count();
        let answered = units.iter().filter(|u| blocks.contains_key(&u.id)).count();
        if echoed == 0 || echoed * 2 < answered {
            return;
        }
        for unit in units {
            let same = blocks
                .get(&unit.id)
                .is_some_and(|text| text.trim() == unit.source.trim());
            if same
                && unit.source.chars().any(char::is_alphabetic)
                && !failed.contains_key(&unit.id)
            {
                failed.insert(unit.id, Problem::Untranslated);
            }
        }
    }

    /// A block next to one missing from the answer, longer than its own translation by half of
    /// the missing block's: it holds its neighbour's text (the neighbour's marker was dropped
    /// and its text run onto this line).
    pub(super) fn find_merged(
        &self,
        units: &[Unit],
        blocks: &BTreeMap<usize, String>,
        failed: &mut HashMap<usize, Problem>,
    ) {
        let letters = |text: &str| {
            booktr_formats::markup::plain_text(text)
                .chars()
                .filter(|c| c.is_alphabetic())
                .count() as f64
        };
        for (at, unit) in units.iter().enumerate() {
            if failed.get(&unit.id) != Some(&Problem::Missing) {
                continue;
            }
            let missing = self.work.checks.expected_letters(&unit.source);
            let neighbours = [at.checked_sub(1), Some(at + 1)];
            for neighbour in neighbours
                .into_iter()
                .flatten()
                .filter_map(|n| units.get(n))
            {
                let Some(text) = blocks.get(&neighbour.id) else {
                    continue;
                };
                let own = self.work.checks.expected_letters(&neighbour.source);
                if !failed.contains_key(&neighbour.id) && letters(text) >= own + missing * 0.5 {
                    failed.insert(neighbour.id, Problem::Merged);
                }
            }
        }
    }
}

/// The review's term lines without the characters a book must not hold (see
/// `reading::clean_characters`): they go on the book's term list.
pub(super) fn clean_terms(terms: &mut [(String, String)]) {
    for (source, target) in terms.iter_mut() {
        *target = clean_characters(source, target);
    }
}

impl PassWork<'_> {
    pub(super) fn chunk<'c>(
        &'c self,
        pass: Pass,
        violations: &'c [(usize, String, String)],
        earlier: Vec<String>,
        current: Current<'c>,
    ) -> Chunk<'c> {
        Chunk {
            work: self,
            pass,
            violations,
            earlier,
            current,
        }
    }
}

/// The sources of a request's blocks, one a line.
fn sources(units: &[Unit]) -> String {
    units
        .iter()
        .map(|u| u.source.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
