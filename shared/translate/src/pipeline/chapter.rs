//! One chapter's passes, one at a time or all at once.

use std::collections::{BTreeMap, BTreeSet};

use booktr_formats::manuscript::Block;
use tracing::debug;

use crate::adequacy::{self};
use crate::checks::{Checks, Problem};
use crate::model::{ChatError, ChatModel};
use crate::protocol::{chunk, glossary_violations, put_in_copied_names, Pass, Unit};
use crate::split::split_block;

use super::checkpoint::*;
use super::chunk::*;
use super::confidence::*;
use super::config::*;
use super::input::*;
use super::quality::*;
use super::second_opinion::*;
use super::segments::*;
use super::work::*;

/// One chapter through the three passes at once, with nothing kept between them.
pub async fn translate_chapter(
    model: &dyn ChatModel,
    input: &ChapterInput<'_>,
    config: &PipelineConfig,
) -> Result<ChapterOutput, ChatError> {
    let mut translation = ChapterTranslation::new(input, config, None);
    while translation.next_pass().is_some() {
        translation.run_pass(model).await?;
    }
    Ok(translation.finish())
}

/// One chapter's passes, run one at a time so that the caller can keep a [`Checkpoint`]
/// between them.
pub struct ChapterTranslation<'a> {
    pub(super) input: &'a ChapterInput<'a>,
    pub(super) config: &'a PipelineConfig,
    /// What goes to the model: whole blocks, and the parts of blocks larger than a chunk (see
    /// `split`). Ids from here on are segment ids, mapped back to blocks at the end.
    pub(super) segments: Vec<Segment>,
    pub(super) state: Checkpoint,
}

impl<'a> ChapterTranslation<'a> {
    /// Starts at the first pass, or after the passes of `checkpoint` when it was taken of the
    /// same blocks with the same chunk size (a checkpoint of other blocks is ignored).
    pub fn new(
        input: &'a ChapterInput<'a>,
        config: &'a PipelineConfig,
        checkpoint: Option<Checkpoint>,
    ) -> Self {
        let segments: Vec<Segment> = input
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| !nothing_to_translate(&b.text))
            .flat_map(|(block, b)| {
                // A block the memory supplies stays whole: its text is the whole block's.
                let parts = match input.memory.exact.contains_key(&block) {
                    true => vec![(b.text.clone(), String::new())],
                    false => split_block(&b.text, part_budget(config.chunk_tokens))
                        .into_iter()
                        .map(|part| (part.text, part.separator))
                        .collect(),
                };
                parts.into_iter().map(move |(source, separator)| Segment {
                    block,
                    source,
                    separator,
                    remembered: input.memory.exact.contains_key(&block),
                })
            })
            .collect();
        let first_texts: Vec<String> = segments
            .iter()
            .map(|s| match s.remembered {
                true => input
                    .memory
                    .exact
                    .get(&s.block)
                    .cloned()
                    .unwrap_or_default(),
                false => s.source.clone(),
            })
            .collect();
        let print = fingerprint(&segments, &first_texts);
        let state = checkpoint
            .filter(|c| {
                c.segments == print
                    && c.texts.len() == segments.len()
                    && usize::from(c.passes_done) <= 3
            })
            .unwrap_or_else(|| Checkpoint {
                passes_done: 0,
                segments: print,
                texts: first_texts,
                quality: Quality::default(),
                terms: Vec::new(),
                violations: Vec::new(),
                failures: BTreeSet::new(),
                rejected: BTreeMap::new(),
                kept: Vec::new(),
                changed_by: BTreeMap::new(),
                repaired_on: BTreeMap::new(),
                judged_language: false,
                agreement: BTreeMap::new(),
            });
        ChapterTranslation {
            input,
            config,
            segments,
            state,
        }
    }

    /// The pass [`ChapterTranslation::run_pass`] runs next; None when all three are done.
    pub fn next_pass(&self) -> Option<Pass> {
        Pass::ALL.get(usize::from(self.state.passes_done)).copied()
    }

    /// Where the translation stands, to store and resume from.
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.state
    }

    /// Runs the next pass over every segment and returns it: the first pass chunk after
    /// chunk with the translation so far in view (in parallel without a window), the review
    /// and the polish in parallel (bounded). On an error nothing of the pass is kept: the
    /// checkpoint is still the one before it.
    pub async fn run_pass(&mut self, model: &dyn ChatModel) -> Result<Pass, ChatError> {
        let Some(pass) = self.next_pass() else {
            return Err(ChatError::Fatal("every pass is already done".into()));
        };
        let checks = Checks::new(
            self.input.source_lang,
            self.input.target_lang,
            model.writes_language(),
        );
        let mut state = self.state.clone();
        state.judged_language = model.writes_language();
        let work = PassWork {
            model,
            input: self.input,
            config: self.config,
            checks: &checks,
            segments: &self.segments,
            names: adequacy::names(
                self.input
                    .glossary
                    .iter()
                    .map(|e| (e.source.as_str(), e.target.as_str())),
            ),
        };
        if pass == Pass::Translate {
            work.translate(&mut state).await?;
        } else {
            work.edit(pass, &mut state).await?;
        }
        self.put_in_copied_names(&mut state);
        state.violations = self
            .segments
            .iter()
            .enumerate()
            .flat_map(|(id, segment)| {
                glossary_violations(self.input.glossary, &segment.source, &state.texts[id])
                    .into_iter()
                    .map(|e| (id, e.source.clone(), e.target.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        state.passes_done += 1;
        debug!(
            pass = pass.task(),
            violations = state.violations.len(),
            failures = state.failures.len(),
            kept = state.kept.len(),
            "pass done"
        );
        self.state = state;
        Ok(pass)
    }

    /// Puts in, after each pass, the names its answers copied as written instead of as the
    /// glossary renders them (`protocol::put_in_copied_names`), so that no later pass is
    /// asked to, and the quality record's missing terms are the ones still missing.
    fn put_in_copied_names(&self, state: &mut Checkpoint) {
        // A block the first pass could not translate holds its source, and the memory's text
        // was accepted as it is: nothing to put in.
        let untranslated: BTreeSet<usize> = state.failures.iter().map(|f| f.0).collect();
        for (id, segment) in self.segments.iter().enumerate() {
            if untranslated.contains(&id) || segment.remembered {
                continue;
            }
            if let Some(text) =
                put_in_copied_names(self.input.glossary, &segment.source, &state.texts[id])
            {
                debug!(
                    segment = id,
                    "a name copied as written put in as the glossary renders it"
                );
                state.texts[id] = text;
            }
        }
    }

    /// What each pass will use, estimated before any request: the requests the passes build
    /// (the same chunks, prompts and glossary lines), counted as the offline engine counts,
    /// with each answer as long as its blocks (translations come out about as long as their
    /// source), the later passes' drafts standing in for the source, and the later passes'
    /// answers holding the share of blocks an editor changes ([`edited`]). Where the later
    /// passes look only at the blocks that need it ([`LaterPasses::WhereNeeded`]), only the
    /// sample is foreseen: the blocks that need a look are the run's trouble, which the
    /// estimate no more foresees than its retries. A windowed first pass carries the sources
    /// before each chunk in its window, standing in for their translations. Retries and the
    /// review's term lines are not foreseen.
    pub fn estimate(&self) -> [PassUsage; 3] {
        let source_tokens = self
            .segments
            .iter()
            .map(|s| crate::model::estimate_tokens(&s.source))
            .sum();
        let mut usage = Pass::ALL.map(|pass| {
            let with_window = pass == Pass::Translate && carries_window(self.config, source_tokens);
            let mut before: Vec<String> = Vec::new();
            let selective = self.config.later_passes == LaterPasses::WhereNeeded;
            let units: Vec<Unit> = self
                .segments
                .iter()
                .enumerate()
                .filter(|(id, segment)| {
                    !segment.remembered
                        && (pass == Pass::Translate
                            || !selective
                            || (sampled(*id)
                                && !(self.config.second_opinion && asked_for(segment))))
                })
                .map(|(id, segment)| Unit {
                    id,
                    source: segment.source.clone(),
                    draft: (pass != Pass::Translate).then(|| segment.source.clone()),
                })
                .collect();
            chunk(units, self.config.chunk_tokens, self.config.chunk_blocks)
                .into_iter()
                .map(|units| {
                    let text = units
                        .iter()
                        .map(|u| u.source.as_str())
                        .collect::<Vec<_>>()
                        .join("\n");
                    let ids: BTreeSet<usize> = units.iter().map(|u| u.id).collect();
                    let earlier = if with_window {
                        window_of(before.iter().rev(), self.config.context_tokens)
                    } else {
                        Vec::new()
                    };
                    before.extend(units.iter().map(|u| u.source.clone()));
                    let similar = similar_lines(self.input, &self.segments, pass, &units);
                    let request = chunk_request(
                        self.input,
                        pass,
                        &units,
                        &text,
                        &[],
                        &ids,
                        (self.config.window, &earlier, &similar),
                    );
                    let answer = units
                        .iter()
                        .filter(|u| pass == Pass::Translate || edited(u.id))
                        .map(|u| format!("[[{}]] {}", u.id, u.source))
                        .collect::<Vec<_>>()
                        .join("\n");
                    PassUsage::estimated(&request, &answer)
                })
                .sum::<PassUsage>()
        });
        if self.config.second_opinion {
            usage[0] += second_opinion_estimate(&self.segments);
        }
        usage
    }

    /// The blocks the first pass could not get a passing answer for (they hold their source).
    pub fn failed_blocks(&self) -> BTreeSet<usize> {
        self.state
            .failures
            .iter()
            .map(|(id, _)| self.segments[*id].block)
            .collect()
    }

    /// The chapter's blocks as the passes done so far left them (for following a run pass by
    /// pass: `booktr translate --pass-texts`).
    pub fn blocks_so_far(&self) -> Vec<Block> {
        with_texts(
            self.input.blocks,
            &joined(&self.segments, &self.state.texts),
        )
    }

    /// The translated chapter and its quality record, from the passes done (all three, unless
    /// the caller stopped early).
    pub fn finish(self) -> ChapterOutput {
        let ChapterTranslation {
            input,
            segments,
            state,
            ..
        } = self;
        // Judged on the final text of every part; language identification only where the
        // answers were judged by it.
        let checks = Checks::new(input.source_lang, input.target_lang, state.judged_language);
        let mut block_confidence: BTreeMap<usize, u8> = BTreeMap::new();
        for (id, score) in confidence(input, &segments, &state, &checks, Agreement::Counted) {
            // The memory's text was accepted before: no confidence of the model's to show.
            if segments[id].remembered {
                continue;
            }
            let block = block_confidence.entry(segments[id].block).or_insert(score);
            *block = (*block).min(score);
        }
        let Checkpoint {
            texts,
            mut quality,
            terms,
            violations,
            failures,
            rejected,
            kept,
            changed_by,
            ..
        } = state;
        let rejected = rejected_blocks(&segments, &texts, &failures, rejected);
        quality.confidence = block_confidence;
        // Blocks sent in parts are joined back before anything is checked: the quality record
        // describes the final text, block by block.
        let translated = joined(&segments, &texts);
        (quality.glossary_checked, quality.glossary_satisfied) =
            glossary_counts(input, translated.iter().map(|(b, t)| (*b, t.as_str())));
        let block_of = |id: usize| segments[id].block;
        let mut seen_violations = BTreeSet::new();
        quality.glossary_violations = violations
            .into_iter()
            .map(|(id, source, target)| (block_of(id), source, target))
            .filter(|v| seen_violations.insert(v.clone()))
            .collect();
        let mut flagged: BTreeMap<Problem, BTreeSet<usize>> = BTreeMap::new();
        for (id, problem) in failures {
            flagged.entry(problem).or_default().insert(block_of(id));
        }
        // Judged on the final text of every part: language identification plays no part here.
        let checks = Checks::new(input.source_lang, input.target_lang, false);
        for (id, segment) in segments.iter().enumerate() {
            if !segment.remembered
                && !may_stay(input, segment)
                && checks.untranslated(&segment.source, &texts[id])
            {
                flagged
                    .entry(Problem::Untranslated)
                    .or_default()
                    .insert(block_of(id));
            }
        }
        quality.flagged = flagged
            .into_iter()
            .map(|(problem, blocks)| (problem, blocks.into_iter().collect()))
            .collect();
        let mut last_pass = BTreeMap::new();
        for (id, pass) in changed_by {
            let block = last_pass.entry(block_of(id)).or_insert(pass);
            *block = (*block).max(pass);
        }
        quality.last_pass = Some(last_pass);
        let mut seen_kept = BTreeSet::new();
        quality.kept_previous = kept
            .into_iter()
            .map(|(pass, id, problem)| (pass, block_of(id), problem))
            .filter(|k| seen_kept.insert(*k))
            .collect();
        quality.remembered = segments
            .iter()
            .filter(|s| s.remembered)
            .map(|s| s.block)
            .collect();
        let blocks = with_texts(input.blocks, &translated);
        ChapterOutput {
            blocks,
            quality,
            terms,
            rejected,
        }
    }
}
