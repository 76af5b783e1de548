//! The passes over a chapter's segments: the first pass (chunk after chunk, then the chapter
//! judged whole) and the review or the polish (the blocks they change, each checked).

use std::collections::{BTreeMap, BTreeSet};

use futures::stream::{self, StreamExt};
use tracing::warn;

use crate::checks::Problem;
use crate::ladder::Rung;
use crate::model::ChatError;
use crate::protocol::{chunk, Pass, Unit};

use super::checkpoint::*;
use super::chunk::*;
use super::confidence::*;
use super::config::*;
use super::segments::*;
use super::work::*;

impl PassWork<'_> {
    /// The first pass: every segment translated, chunk after chunk with the translation so far
    /// in view; then the chapter's blocks judged against each other, and those that fail asked
    /// for again one at a time.
    pub(super) async fn translate(&self, state: &mut Checkpoint) -> Result<(), ChatError> {
        let units: Vec<Unit> = (0..self.segments.len())
            .filter(|id| !self.segments[*id].remembered)
            .map(|id| self.unit(id, None))
            .collect();
        let chunks = chunk(units, self.config.chunk_tokens, self.config.chunk_blocks);
        let start = self.input.ladder.first();
        // What the memory supplied is translated already, and in view of its neighbours.
        let mut translated: BTreeSet<usize> = (0..self.segments.len())
            .filter(|id| self.segments[*id].remembered)
            .collect();
        let source_tokens = chunks
            .iter()
            .flatten()
            .map(|unit| crate::model::estimate_tokens(&unit.source))
            .sum();
        if !windowed(self.config, source_tokens) {
            // Nothing is translated yet: the chunks go out at once, with the source before
            // them where that is the window.
            let current = Current {
                texts: &state.texts,
                translated: &translated,
            };
            let with_source = carries_window(self.config, source_tokens);
            let results: Vec<Result<ChunkDone, ChatError>> = stream::iter(chunks)
                .map(|units| {
                    let earlier = if with_source {
                        self.source_window(units[0].id)
                    } else {
                        Vec::new()
                    };
                    self.chunk(Pass::Translate, &[], earlier, current)
                        .run(start, units, false)
                })
                .buffer_unordered(self.config.concurrency.max(1))
                .collect()
                .await;
            for result in results {
                translated.extend(absorb(state, Pass::Translate, result?));
            }
        } else {
            for units in chunks {
                let earlier = self.window(&state.texts, &translated, units[0].id);
                let current = Current {
                    texts: &state.texts,
                    translated: &translated,
                };
                let done = self
                    .chunk(Pass::Translate, &[], earlier, current)
                    .run(start, units, false)
                    .await?;
                translated.extend(absorb(state, Pass::Translate, done));
            }
        }
        self.ask_suspects_again(state, &mut translated).await?;
        if self.config.second_opinion {
            self.second_opinion(state, &translated).await?;
        }
        Ok(())
    }

    /// The chapter's translated blocks judged against each other: those unlike the rest
    /// (another block's text, a length out of proportion) asked for again one at a time, and
    /// flagged with their source when they still are.
    pub(super) async fn ask_suspects_again(
        &self,
        state: &mut Checkpoint,
        translated: &mut BTreeSet<usize>,
    ) -> Result<(), ChatError> {
        // The memory's text was accepted before: judged with the rest, never asked again.
        let mut suspects = self.suspects(&state.texts, translated);
        suspects.retain(|id, _| !self.segments[*id].remembered);
        if suspects.is_empty() {
            return Ok(());
        }
        warn!(
            blocks = suspects.len(),
            "translations unlike the rest of the chapter; asking again for those blocks"
        );
        let units: Vec<Unit> = suspects
            .keys()
            .map(|&id| {
                state.texts[id] = self.segments[id].source.clone();
                translated.remove(&id);
                self.unit(id, None)
            })
            .collect();
        let current = Current {
            texts: &state.texts,
            translated: &*translated,
        };
        let mut done = self
            .chunk(Pass::Translate, &[], Vec::new(), current)
            .run(Rung::Singles, units, true)
            .await?;
        done.retries += suspects.len() as u32;
        translated.extend(absorb(state, Pass::Translate, done));
        // Asked alone and still unlike the rest: the block keeps its source and is flagged.
        for (id, problem) in self.suspects(&state.texts, translated) {
            if suspects.contains_key(&id) {
                let answer =
                    std::mem::replace(&mut state.texts[id], self.segments[id].source.clone());
                state.rejected.insert(id, (answer, problem));
                state.failures.insert((id, problem));
            }
        }
        Ok(())
    }

    /// The review or the polish: each chunk's answer holds the blocks it changes; a change
    /// that fails a check, or makes a block unlike the rest of the chapter, is not kept (the
    /// block keeps its checked translation).
    pub(super) async fn edit(&self, pass: Pass, state: &mut Checkpoint) -> Result<(), ChatError> {
        let ladder = self.input.ladder;
        if ladder.echoes(pass) {
            // The model answers this pass with echoes: not asked in this chapter (the quality
            // record and the report say so).
            state.quality.echo_stopped.push(pass);
            return Ok(());
        }
        // A block the translate pass could not translate holds its source: there is no
        // translation to review or polish.
        let untranslatable: BTreeSet<usize> = state.failures.iter().map(|f| f.0).collect();
        let translated: BTreeSet<usize> = (0..self.segments.len())
            .filter(|id| !untranslatable.contains(id))
            .collect();
        // The memory's text was accepted before: judged with the rest, never edited.
        let editable = translated
            .iter()
            .copied()
            .filter(|id| !self.segments[*id].remembered);
        let look_at: BTreeSet<usize> = match self.config.later_passes {
            LaterPasses::Every => editable.collect(),
            LaterPasses::WhereNeeded => {
                let confidence = self.confidence(state);
                editable
                    .filter(|id| needs_look(pass, *id, &confidence, state))
                    .collect()
            }
        };
        let units: Vec<Unit> = look_at
            .iter()
            .map(|&id| self.unit(id, Some(state.texts[id].clone())))
            .collect();
        let sent = units.len() as u32;
        match pass {
            Pass::Review => state.quality.sent.review += sent,
            Pass::Polish => state.quality.sent.polish += sent,
            Pass::Translate => {}
        }
        // Every translated block is judged against the others, asked about or not.
        let judged = translated;
        let violations = state.violations.clone();
        let current = Current {
            texts: &state.texts,
            translated: &judged,
        };
        let results: Vec<Result<ChunkDone, ChatError>> = stream::iter(chunk(
            units,
            self.config.chunk_tokens,
            self.config.chunk_blocks,
        ))
        .map(|units| {
            self.chunk(pass, &violations, Vec::new(), current)
                .edit(units)
        })
        .buffer_unordered(self.config.concurrency.max(1))
        .collect()
        .await;
        let before = state.texts.clone();
        let mut changed = BTreeSet::new();
        let mut echoed = 0;
        for result in results {
            let done = result?;
            echoed += done.echoed;
            changed.extend(absorb(state, pass, done));
        }
        ladder.record_edit(pass, sent, echoed);
        for (id, problem) in self.suspects(&state.texts, &judged) {
            if changed.remove(&id) {
                state.texts[id] = before[id].clone();
                state.kept.push((pass, id, problem));
            }
        }
        let count = changed.len() as u32;
        for id in changed {
            state.changed_by.insert(id, pass);
        }
        match pass {
            Pass::Review => state.quality.changed.review += count,
            Pass::Polish => state.quality.changed.polish += count,
            Pass::Translate => {}
        }
        Ok(())
    }

    /// The chapter's translation so far before segment `at`, as much as the window holds:
    /// whole blocks, newest first, and the end of the newest alone when it is longer.
    pub(super) fn window(
        &self,
        texts: &[String],
        translated: &BTreeSet<usize>,
        at: usize,
    ) -> Vec<String> {
        window_of(
            translated.range(..at).rev().map(|id| &texts[*id]),
            self.config.context_tokens,
        )
    }

    /// The source before segment `at`, as much as the window holds.
    pub(super) fn source_window(&self, at: usize) -> Vec<String> {
        window_of(
            self.segments[..at].iter().rev().map(|s| &s.source),
            self.config.context_tokens,
        )
    }

    pub(super) fn suspects(
        &self,
        texts: &[String],
        ids: &BTreeSet<usize>,
    ) -> BTreeMap<usize, Problem> {
        suspects(self.segments, texts, ids)
    }

    /// Each segment's confidence as the pass starts.
    pub(super) fn confidence(&self, state: &Checkpoint) -> BTreeMap<usize, u8> {
        confidence(
            self.input,
            self.segments,
            state,
            self.checks,
            Agreement::Left,
        )
    }
}

/// Whether `pass` (the review or the polish) looks at segment `id` when only the blocks that
/// need it are. A block the second opinion translated twice has had its look: the review is
/// sent it when it misses a glossary or book term (a fault the review is told of and can fix),
/// and the polish when the review changed it. Any other block is looked at when it misses a
/// term, was repaired on the way, is of low confidence by what the run saw of it (`confidence`
/// without the second opinion's agreement), or is in the sample.
///
/// On the quality bench (docs/benchmarks.md, letters 1 to 3, seven runs), the small model's
/// review and polish, sent every block repaired, of low confidence or sampled, changed 4 of the
/// 41 blocks they were sent and moved the book's chrF by 0.1 in one run, while in letter 1 they
/// wrote about the plain prompts' own tokens again.
pub(super) fn needs_look(
    pass: Pass,
    id: usize,
    confidence: &BTreeMap<usize, u8>,
    state: &Checkpoint,
) -> bool {
    let misses_a_term = state.violations.iter().any(|(at, _, _)| *at == id);
    if state.agreement.contains_key(&id) {
        return match pass {
            Pass::Polish => state.changed_by.get(&id) == Some(&Pass::Review),
            Pass::Review | Pass::Translate => misses_a_term,
        };
    }
    sampled(id)
        || misses_a_term
        || state.repaired_on.contains_key(&id)
        || confidence.get(&id).is_some_and(|c| *c < LOW_CONFIDENCE)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn a_block_translated_twice_is_reviewed_for_a_missing_term_and_polished_after_a_review_change()
    {
        // Blocks 2 to 5 were translated twice; 3 misses a term, 4 was changed by the review,
        // 5 was repaired on the way and is trusted little. Block 6 was translated once.
        let state = Checkpoint {
            agreement: (2..=5).map(|id| (id, 60)).collect(),
            violations: vec![(3, "Margaret".into(), "Marguerite".into())],
            changed_by: [(4, Pass::Review)].into(),
            repaired_on: [(5, Rung::Simple), (6, Rung::Simple)].into(),
            ..Checkpoint::default()
        };
        let confidence: BTreeMap<usize, u8> = [(5, 40), (6, 40)].into();
        let looked_at = |pass| {
            (2..=6)
                .filter(|id| needs_look(pass, *id, &confidence, &state))
                .collect::<Vec<_>>()
        };
        assert_eq!(looked_at(Pass::Review), [3, 6]);
        assert_eq!(looked_at(Pass::Polish), [4, 6]);
    }
}
