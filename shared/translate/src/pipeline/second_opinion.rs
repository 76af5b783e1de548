//! The second opinion: where the model's profile asks for it (a small model), every translated
//! block of some length is asked for once more after the first pass, alone and with the
//! plainest prompt, without the chapter's translation so far. The two translations then say
//! two things:
//!
//! - **which one to keep**: the one that leaves out less, read as the one with more letters,
//!   unless it makes the block unlike the rest of the chapter (`suspects`). A small model drops
//!   sentences of a long paragraph now and then, and rarely the same ones twice;
//! - **how far to trust it**: the harder the passage was for the model, the less its two
//!   translations agree (`agreement`). Low agreement lowers the block's confidence, which
//!   orders the owner's review queue.
//!
//! On the quality bench (docs/benchmarks.md, three seeds of Frankenstein's letters 1 and 3 by
//! Qwen2.5-1.5B), the book with it scored 1.020x and 0.995x the plain prompts' chrF against the
//! published human translation, against 1.012x and 0.989x without it, and the confidence ranked
//! the long paragraphs by chrF at a Spearman of 0.19 and 0.74, against 0.04 and none without.
//! It costs one more request per block, about the tokens of the translation again; the later
//! passes see a block it translated twice only for a missing term (`passes::needs_look`).

use std::collections::{BTreeSet, HashMap};

use booktr_formats::markup;

use crate::agreement::agreement;
use crate::ladder::Rung;
use crate::model::ChatError;
use crate::protocol::{Pass, Unit};

use super::checkpoint::*;
use super::chunk::*;
use super::confidence::*;
use super::quality::*;
use super::segments::*;
use super::work::*;

/// Blocks of fewer letters (headings, dates, signatures) are not asked again: their two
/// translations differ by a word or two and disagree by chance.
const LETTERS: usize = 60;

/// Whether segment `id` is asked for a second opinion (where the profile asks for one).
pub(super) fn asked_for(segment: &Segment) -> bool {
    plain_letters(&segment.source) >= LETTERS
}

/// The plain prompt's own words around a block (its instructions and the request's frame),
/// in estimated tokens: `protocol::simple_request` without a glossary or an instruction.
const PLAIN_PROMPT_TOKENS: u64 = 64;

/// What the second opinion's requests will use, estimated as `ChapterTranslation::estimate`
/// estimates the rest: one plain request per block it asks about, answered as long as the
/// block (the glossary lines a request carries are not foreseen).
pub(super) fn second_opinion_estimate(segments: &[Segment]) -> PassUsage {
    segments
        .iter()
        .filter(|segment| !segment.remembered && asked_for(segment))
        .map(|segment| {
            let tokens = crate::model::estimate_tokens(&segment.source);
            PassUsage {
                input_tokens: tokens + PLAIN_PROMPT_TOKENS,
                output_tokens: tokens,
                requests: 1,
            }
        })
        .sum()
}

impl PassWork<'_> {
    /// Asks for a second translation of every block of `translated` long enough, keeps the
    /// more complete of each block's two, and records how far they agreed.
    pub(super) async fn second_opinion(
        &self,
        state: &mut Checkpoint,
        translated: &BTreeSet<usize>,
    ) -> Result<(), ChatError> {
        let failed: BTreeSet<usize> = state.failures.iter().map(|f| f.0).collect();
        let units: Vec<Unit> = translated
            .iter()
            .copied()
            .filter(|id| {
                !failed.contains(id)
                    && !self.segments[*id].remembered
                    && asked_for(&self.segments[*id])
            })
            .map(|id| self.unit(id, None))
            .collect();
        if units.is_empty() {
            return Ok(());
        }
        let asked = units.len() as u32;
        let results = {
            let current = Current {
                texts: &state.texts,
                translated,
            };
            let chunk = self.chunk(Pass::Translate, &[], Vec::new(), current);
            let known = HashMap::new();
            // A few at a time, as many as a pass has in flight.
            let mut results = Vec::with_capacity(units.len());
            for group in units.chunks(self.config.concurrency.max(1)) {
                let asks = group
                    .iter()
                    .map(|unit| chunk.ask(Rung::Simple, vec![unit.clone()], &known));
                results.extend(futures::future::join_all(asks).await);
            }
            results
        };
        let mut answers = Vec::new();
        for result in results {
            let result = result?;
            state.quality.translate += result.usage;
            state.quality.removed += result.removed;
            answers.extend(result.passed);
        }
        let before = state.texts.clone();
        let mut taken = BTreeSet::new();
        for (id, answer) in answers {
            let first = &state.texts[id];
            let agreed = agreement(
                &markup::translatable_text(first),
                &markup::translatable_text(&answer),
            );
            state.agreement.insert(id, agreed.round() as u8);
            if plain_letters(&answer) > plain_letters(first) {
                state.texts[id] = answer;
                taken.insert(id);
            }
        }
        // A longer translation that makes its block unlike the rest of the chapter (too long
        // for the chapter's ratio, another block's text) is not the more complete one.
        for id in self.suspects(&state.texts, translated).into_keys() {
            if taken.remove(&id) {
                state.texts[id] = before[id].clone();
            }
        }
        let taken = taken.len() as u32;
        state.quality.second_opinion.asked += asked;
        state.quality.second_opinion.taken += taken;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use async_trait::async_trait;
    use booktr_formats::manuscript::{Block, BlockKind};

    use super::penalty;
    use crate::ladder::Ladder;
    use crate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};
    use crate::offline::OfflineEngine;
    use crate::pipeline::config::LOW_CONFIDENCE;
    use crate::pipeline::{translate_chapter, ChapterInput, PipelineConfig};
    use crate::profile::{ByHand, Profile};

    /// The offline engine, except that asked with the block protocol about a paragraph of the
    /// storm it answers with its first sentence only, as a small model drops sentences.
    struct LeavesOutTheStorm;

    #[async_trait]
    impl ChatModel for LeavesOutTheStorm {
        async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
            let mut response = OfflineEngine.complete(request.clone()).await?;
            if request.user.starts_with("TASK: translate") && request.user.contains("storm") {
                let cut = response
                    .text
                    .find(". ")
                    .map_or(response.text.len(), |at| at + 1);
                response.text.truncate(cut);
            }
            Ok(response)
        }

        fn name(&self) -> &str {
            "leaves-out-the-storm"
        }

        fn writes_language(&self) -> bool {
            false
        }
    }

    fn paragraphs() -> Vec<Block> {
        [
            "Chapter 1.",
            "The morning was calm and the harbour lay still under a pale sky. Nobody on the \
             quay spoke of the voyage ahead.",
            "Then the storm came down from the north in the night. It tore the sails from two \
             ships and drove a third onto the rocks beyond the lighthouse.",
            "By noon the sea was flat again and the fishermen counted what the wind had left \
             them. They said little and mended their nets.",
        ]
        .into_iter()
        .map(|text| Block::new(BlockKind::Paragraph, text.into()))
        .collect()
    }

    async fn run(config: &PipelineConfig) -> crate::pipeline::ChapterOutput {
        let blocks = paragraphs();
        let ledger = HashMap::new();
        let ladder = Ladder::default();
        let input = ChapterInput {
            blocks: &blocks,
            source_lang: "en",
            target_lang: "es",
            glossary: &[],
            ledger: &ledger,
            ladder: &ladder,
            instruction: None,
            memory: &crate::memory::NOTHING,
        };
        translate_chapter(&LeavesOutTheStorm, &input, config)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn the_small_profile_keeps_the_more_complete_of_two_translations_and_trusts_it_less() {
        let small = ByHand::default().settings(Profile::Small, PipelineConfig::default());
        let out = run(&small).await;
        // The heading is too short to ask about again; the three paragraphs are asked twice.
        assert_eq!(out.quality.second_opinion.asked, 3);
        assert_eq!(out.quality.second_opinion.taken, 1);
        let storm = &out.blocks[2].text;
        assert!(storm.contains("lìghthöüsé"), "{storm}");
        // Its two translations disagreed: it is the one the review queue shows first.
        let confidence = &out.quality.confidence;
        assert!(confidence[&2] < confidence[&1], "{confidence:?}");
        assert_eq!((confidence[&1], confidence[&3]), (100, 100));
        // Every paragraph was looked at twice: the later passes take no sample.
        assert_eq!((out.quality.sent.review, out.quality.sent.polish), (0, 0));

        // Without the second opinion the sentence stays out, and nothing says so.
        let hosted = ByHand::default().settings(Profile::Hosted, PipelineConfig::default());
        let out = run(&hosted).await;
        assert_eq!(out.quality.second_opinion.asked, 0);
        assert!(!out.blocks[2].text.contains("lìghthöüsé"));
    }

    #[test]
    fn the_estimates_plain_prompt_is_as_long_as_the_plain_prompt_sent() {
        use crate::model::estimate_tokens;
        let source = "The morning was calm and the harbour lay still under a pale sky.";
        let unit = crate::protocol::Unit {
            id: 1,
            source: source.into(),
            draft: None,
        };
        let sent = crate::protocol::simple_request("en", "fr", &[], None, &unit);
        let frame =
            estimate_tokens(&sent.system) + estimate_tokens(&sent.user) - estimate_tokens(source);
        assert!(
            frame.abs_diff(super::PLAIN_PROMPT_TOKENS) <= 8,
            "the plain prompt's frame is {frame} estimated tokens"
        );
    }

    #[test]
    fn translations_that_agree_cost_nothing_and_the_least_agreeing_fall_under_the_review_line() {
        assert_eq!(penalty(100), 0);
        assert_eq!(penalty(75), 0);
        assert_eq!(penalty(65), 15);
        assert!(100 - penalty(45) < i32::from(LOW_CONFIDENCE));
        assert_eq!(penalty(0), 60);
    }
}
