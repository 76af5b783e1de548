//! A second model for what the first could not do. After a chapter's passes, the blocks the
//! first model left flagged (they kept their source after the repair ladder) and those of low
//! confidence go to the book's fallback model, as a chapter of their own through its passes.
//! A block takes the fallback's text only where the fallback's is better by the same measures:
//! not flagged, and of higher confidence than the first model's. Every other block keeps the
//! first model's text and record.

use std::collections::BTreeSet;

use booktr_formats::manuscript::Block;
use tracing::debug;

use crate::pipeline::{glossary_counts, ChapterInput, ChapterOutput, PassUsage};

/// A block's confidence (of 100) under which it goes to the fallback model: the status's "low
/// confidence" (the blocks a reviewer should read first).
pub const LOW_CONFIDENCE: u8 = 50;

/// The share of a chapter's blocks a quote expects the first model to leave to the fallback:
/// one in [`QUOTED_SHARE`]. A guess on the safe side of what runs show (a hosted model leaves
/// none or a few in a hundred; a small local one more), stated so that a quote can be read.
pub const QUOTED_SHARE: usize = 10;

pub use crate::pipeline::Fallback;

/// The blocks of `output` that go to the fallback model, in order: those flagged and those
/// whose confidence is under [`LOW_CONFIDENCE`].
pub fn to_send(output: &ChapterOutput) -> Vec<usize> {
    let mut blocks: BTreeSet<usize> = output.quality.flagged_blocks();
    blocks.extend(
        output
            .quality
            .confidence
            .iter()
            .filter(|(_, c)| **c < LOW_CONFIDENCE)
            .map(|(block, _)| *block),
    );
    blocks.into_iter().collect()
}

/// The source blocks numbered `sent`, as the fallback's chapter (its block `i` is `sent[i]`).
pub fn source_blocks(source: &[Block], sent: &[usize]) -> Vec<Block> {
    sent.iter()
        .filter_map(|&block| source.get(block).cloned())
        .collect()
}

/// The sample a quote prices for the fallback: one block in [`QUOTED_SHARE`] of the chapter's.
pub fn quoted_blocks(source: &[Block]) -> Vec<Block> {
    source
        .iter()
        .enumerate()
        .filter(|(i, _)| i % QUOTED_SHARE == QUOTED_SHARE - 1)
        .map(|(_, b)| b.clone())
        .collect()
}

/// Lays the fallback's chapter (`fallback`, made of the blocks `sent` of `first`) over the
/// first model's: each block whose fallback text is not flagged and of higher confidence takes
/// that text and confidence and is no longer flagged; the glossary's counts and misses follow
/// the final text. `input` is the first model's chapter (its sources and glossary). Returns
/// what the fallback did, which is also recorded in `first`'s quality.
pub fn take(
    input: &ChapterInput<'_>,
    first: &mut ChapterOutput,
    sent: &[usize],
    fallback: ChapterOutput,
    model: &str,
    usage: PassUsage,
) -> Fallback {
    let refused = fallback.quality.flagged_blocks();
    let mut taken = BTreeSet::new();
    for (at, &block) in sent.iter().enumerate() {
        let Some(score) = fallback.quality.confidence.get(&at).copied() else {
            continue;
        };
        let before = first.quality.confidence.get(&block).copied().unwrap_or(0);
        if refused.contains(&at) || score <= before {
            debug!(block, score, before, "the fallback's text is not taken");
            continue;
        }
        let (Some(text), Some(target)) = (fallback.blocks.get(at), first.blocks.get_mut(block))
        else {
            continue;
        };
        target.text = text.text.clone();
        first.quality.confidence.insert(block, score);
        taken.insert(block);
    }
    let quality = &mut first.quality;
    for blocks in quality.flagged.values_mut() {
        blocks.retain(|b| !taken.contains(b));
    }
    quality.flagged.retain(|_, blocks| !blocks.is_empty());
    first.rejected.retain(|b, _| !taken.contains(b));
    if let Some(last) = quality.last_pass.as_mut() {
        last.retain(|b, _| !taken.contains(b));
    }
    quality
        .glossary_violations
        .retain(|(b, _, _)| !taken.contains(b));
    quality
        .glossary_violations
        .extend(
            fallback
                .quality
                .glossary_violations
                .iter()
                .filter_map(|(at, source, target)| {
                    let block = *sent.get(*at)?;
                    taken
                        .contains(&block)
                        .then(|| (block, source.clone(), target.clone()))
                }),
        );
    quality.glossary_violations.sort();
    let blocks = &first.blocks;
    (quality.glossary_checked, quality.glossary_satisfied) = glossary_counts(
        input,
        quality
            .confidence
            .keys()
            .filter_map(|&b| Some((b, blocks.get(b)?.text.as_str()))),
    );
    let done = Fallback {
        model: model.to_string(),
        sent: sent.len() as u32,
        taken: taken.len() as u32,
        usage,
    };
    quality.fallback = Some(done.clone());
    done
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use async_trait::async_trait;
    use booktr_formats::manuscript::BlockKind;

    use super::*;
    use crate::checks::Problem;
    use crate::glossary::GlossaryEntry;
    use crate::ladder::Ladder;
    use crate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};
    use crate::offline::OfflineEngine;
    use crate::pipeline::{translate_chapter, PipelineConfig};

    /// Refuses every request that holds `marker` (on every rung of the ladder), and
    /// answers the others like the offline engine.
    struct Refuses {
        marker: &'static str,
    }

    #[async_trait]
    impl ChatModel for Refuses {
        async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
            let mut response = OfflineEngine.complete(request.clone()).await?;
            if request.user.contains(self.marker) {
                response.text = "I'm sorry, but I can't help with translating this text.".into();
            }
            Ok(response)
        }

        fn name(&self) -> &str {
            "refuses"
        }
    }

    fn chapter() -> Vec<Block> {
        [
            "Call me Ishmael. Some years ago I went to sea.",
            "The harpoon struck the whale below the hump.",
            "Queequeg sat by the fire and smoked his pipe.",
            "It was a cold night in New Bedford, in December.",
        ]
        .into_iter()
        .map(|t| Block::new(BlockKind::Paragraph, t.into()))
        .collect()
    }

    fn glossary() -> Vec<GlossaryEntry> {
        vec![GlossaryEntry {
            source: "harpoon".into(),
            target: "arpón".into(),
            context: None,
        }]
    }

    /// The chapter by `first`, then its flagged and low-confidence blocks by `fallback`.
    async fn with_fallback(
        first: &dyn ChatModel,
        fallback: &dyn ChatModel,
    ) -> (ChapterOutput, Vec<usize>, Fallback) {
        let (blocks, glossary, ledger, ladder) =
            (chapter(), glossary(), HashMap::new(), Ladder::default());
        let input = ChapterInput {
            blocks: &blocks,
            source_lang: "en",
            target_lang: "es",
            glossary: &glossary,
            ledger: &ledger,
            ladder: &ladder,
            instruction: None,
            memory: &crate::memory::NOTHING,
        };
        let config = PipelineConfig::default();
        let mut output = translate_chapter(first, &input, &config).await.unwrap();
        let sent = to_send(&output);
        let sources = source_blocks(&blocks, &sent);
        let second_ladder = Ladder::default();
        let second = ChapterInput {
            blocks: &sources,
            ladder: &second_ladder,
            ..input
        };
        let answered = translate_chapter(fallback, &second, &config).await.unwrap();
        let usage = [
            answered.quality.translate,
            answered.quality.review,
            answered.quality.polish,
        ]
        .into_iter()
        .sum();
        let done = take(&input, &mut output, &sent, answered, "gpt-4o", usage);
        (output, sent, done)
    }

    #[tokio::test]
    async fn blocks_the_first_model_refuses_are_translated_by_the_fallback_and_taken() {
        let (output, sent, done) =
            with_fallback(&Refuses { marker: "harpoon" }, &OfflineEngine).await;
        assert_eq!(sent, [1], "only the refused block goes to the fallback");
        assert_eq!((done.sent, done.taken), (1, 1));
        assert_eq!(done.model, "gpt-4o");
        assert!(done.usage.requests > 0);
        assert_eq!(output.quality.fallback.as_ref(), Some(&done));
        assert!(output.quality.flagged.is_empty(), "{:?}", output.quality);
        assert_ne!(output.blocks[1].text, chapter()[1].text);
        assert!(
            output.blocks[1].text.contains("arpón"),
            "{}",
            output.blocks[1].text
        );
        assert!(output.quality.confidence[&1] >= LOW_CONFIDENCE);
        assert_eq!(
            output.quality.glossary_checked,
            output.quality.glossary_satisfied
        );
        assert!(output.quality.glossary_violations.is_empty());
    }

    #[tokio::test]
    async fn a_block_the_fallback_also_refuses_keeps_its_source_and_its_flag() {
        let refuses = Refuses { marker: "harpoon" };
        let (output, sent, done) = with_fallback(&refuses, &refuses).await;
        assert_eq!(sent, [1]);
        assert_eq!((done.sent, done.taken), (1, 0));
        assert_eq!(output.blocks[1].text, chapter()[1].text);
        assert!(output.quality.flagged_blocks().contains(&1));
        assert!(output.quality.flagged.contains_key(&Problem::Untranslated));
        assert_eq!(output.quality.confidence[&1], 0);
    }

    #[tokio::test]
    async fn a_chapter_the_first_model_translates_well_sends_nothing() {
        let (output, sent, done) = with_fallback(&OfflineEngine, &OfflineEngine).await;
        assert!(sent.is_empty());
        assert_eq!((done.sent, done.taken), (0, 0));
        assert!(output.quality.flagged.is_empty());
    }
}
