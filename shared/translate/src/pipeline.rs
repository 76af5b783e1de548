//! One chapter through the three passes. Chunks of a pass run in parallel (bounded); an answer
//! block that is missing, mangles inline marks or (in the first pass) echoes the source is asked
//! for again, alone, up to `max_attempts` times, then kept as it was and flagged in the quality
//! record: never silently accepted.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use booktr_formats::manuscript::Block;
use futures::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use tracing::{debug, warn};

use crate::glossary::{self, contains_term, matching, GlossaryEntry, TermSet};
use crate::model::{ChatError, ChatModel};
use crate::protocol::{
    self, build_request, check, chunk, glossary_violations, Pass, Problem, PromptContext, Unit,
};
use crate::split::{join_parts, split_block};

#[derive(Debug, Clone, Copy)]
pub struct PipelineConfig {
    /// Estimated source tokens per chunk. 2,000 keeps answers well inside every model's output
    /// limit while the per-request instructions stay a small share of what is sent.
    pub chunk_tokens: u64,
    /// Chunks of one pass in flight at once: 12 covers the longest chapters of real novels (the
    /// longest in Moby-Dick is 7 chunks), so a pass takes about one model round trip.
    pub concurrency: usize,
    /// Tries per block and pass before it is flagged.
    pub max_attempts: u32,
    /// Tries per request on retryable model errors (rate limits, overload).
    pub max_model_retries: u32,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            chunk_tokens: 2000,
            concurrency: 12,
            max_attempts: 3,
            max_model_retries: 5,
        }
    }
}

/// Tokens one pass used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PassUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub requests: u32,
}

impl PassUsage {
    /// One request as the offline engine counts it, answered with `answer`: the estimate of a
    /// request not sent yet.
    pub fn estimated(request: &crate::model::ChatRequest, answer: &str) -> PassUsage {
        use crate::model::estimate_tokens;
        PassUsage {
            input_tokens: estimate_tokens(&request.system) + estimate_tokens(&request.user),
            output_tokens: estimate_tokens(answer),
            requests: 1,
        }
    }
}

impl std::ops::AddAssign for PassUsage {
    fn add_assign(&mut self, other: PassUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.requests += other.requests;
    }
}

impl std::iter::Sum for PassUsage {
    fn sum<I: Iterator<Item = PassUsage>>(iter: I) -> PassUsage {
        iter.fold(PassUsage::default(), |mut sum, usage| {
            sum += usage;
            sum
        })
    }
}

/// What the user is shown about a chapter's translation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Quality {
    /// Glossary uses checked after the last pass, and how many used the glossary's target.
    pub glossary_checked: u32,
    pub glossary_satisfied: u32,
    /// (block index, source term, expected target) still missing after the last pass.
    pub glossary_violations: Vec<(usize, String, String)>,
    /// Blocks whose text is still the source's.
    pub untranslated_blocks: Vec<usize>,
    /// Blocks the model did not return in some pass, after every retry (the text from before
    /// that pass was kept: the source, in the first pass). Flagged even if a later pass
    /// recovered them, so nothing that happened is hidden.
    pub missing_blocks: Vec<usize>,
    /// Blocks whose inline marks the model kept breaking in some pass (the text from before that
    /// pass was kept).
    pub broken_marks_blocks: Vec<usize>,
    /// Answer lines for blocks that were not asked for (ignored).
    pub extra_blocks: u32,
    /// Names and terms the review reported translating otherwise than the book's term list:
    /// (source, the list's translation, the review's). The list's is kept.
    #[serde(default)]
    pub term_conflicts: Vec<(String, String, String)>,
    /// Blocks asked for again after a rejected answer.
    pub retries: u32,
    pub translate: PassUsage,
    pub review: PassUsage,
    pub polish: PassUsage,
}

impl Quality {
    /// Glossary compliance in percent (100 when nothing was checked).
    pub fn glossary_compliance(&self) -> f64 {
        if self.glossary_checked == 0 {
            100.0
        } else {
            f64::from(self.glossary_satisfied) * 100.0 / f64::from(self.glossary_checked)
        }
    }

    /// The tokens and requests of one pass.
    pub fn usage(&self, pass: Pass) -> PassUsage {
        match pass {
            Pass::Translate => self.translate,
            Pass::Review => self.review,
            Pass::Polish => self.polish,
        }
    }

    fn usage_mut(&mut self, pass: Pass) -> &mut PassUsage {
        match pass {
            Pass::Translate => &mut self.translate,
            Pass::Review => &mut self.review,
            Pass::Polish => &mut self.polish,
        }
    }
}

pub struct ChapterInput<'a> {
    pub blocks: &'a [Block],
    pub source_lang: &'a str,
    pub target_lang: &'a str,
    pub glossary: &'a [GlossaryEntry],
    /// Names and terms chosen in earlier chapters: source -> translation.
    pub ledger: &'a HashMap<String, String>,
}

pub struct ChapterOutput {
    pub blocks: Vec<Block>,
    pub quality: Quality,
    /// Terms the review reported, for the book's ledger.
    pub terms: Vec<(String, String)>,
}

/// The failures the quality record lists by block (an echo is reported from the final text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum ProblemKind {
    Missing,
    BrokenMarks,
}

impl ProblemKind {
    fn of(problem: &Problem) -> Option<ProblemKind> {
        match problem {
            Problem::Missing => Some(ProblemKind::Missing),
            Problem::BrokenMarks => Some(ProblemKind::BrokenMarks),
            Problem::Untranslated => None,
        }
    }
}

/// The result of one chunk of one pass.
struct ChunkDone {
    texts: HashMap<usize, String>,
    failed: HashMap<usize, Problem>,
    usage: PassUsage,
    retries: u32,
    extra: u32,
    terms: Vec<(String, String)>,
}

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

/// Where a chapter's translation stands after some of its passes: enough to go on with the
/// next pass without paying again for the ones done. Stored by the chapter job after each pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// Passes finished, in order: 0 to 3.
    pub passes_done: u8,
    /// The fingerprint of the segments it was made of (see [`fingerprint`]).
    segments: String,
    /// The text of every segment after those passes.
    texts: Vec<String>,
    quality: Quality,
    terms: Vec<(String, String)>,
    /// Glossary terms the last pass left out: (segment, source, target).
    violations: Vec<(usize, String, String)>,
    failures: BTreeSet<(usize, ProblemKind)>,
}

/// One chapter's passes, run one at a time so that the caller can keep a [`Checkpoint`]
/// between them.
pub struct ChapterTranslation<'a> {
    input: &'a ChapterInput<'a>,
    config: &'a PipelineConfig,
    /// What goes to the model: whole blocks, and the parts of blocks larger than a chunk (see
    /// `split`). Ids from here on are segment ids, mapped back to blocks at the end.
    segments: Vec<Segment>,
    state: Checkpoint,
}

impl Checkpoint {
    /// The quality record so far, with the tokens of the passes done.
    pub fn quality(&self) -> &Quality {
        &self.quality
    }
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
            .filter(|(_, b)| !b.text.trim().is_empty())
            .flat_map(|(block, b)| {
                split_block(&b.text, part_budget(config.chunk_tokens))
                    .into_iter()
                    .map(move |part| Segment {
                        block,
                        source: part.text,
                        separator: part.separator,
                    })
            })
            .collect();
        let print = fingerprint(&segments);
        let state = checkpoint
            .filter(|c| {
                c.segments == print
                    && c.texts.len() == segments.len()
                    && usize::from(c.passes_done) <= 3
            })
            .unwrap_or_else(|| Checkpoint {
                passes_done: 0,
                segments: print,
                texts: segments.iter().map(|s| s.source.clone()).collect(),
                quality: Quality::default(),
                terms: Vec::new(),
                violations: Vec::new(),
                failures: BTreeSet::new(),
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

    /// Runs the next pass over every segment (chunks in parallel, bounded) and returns it.
    /// On an error nothing of the pass is kept: the checkpoint is still the one before it.
    pub async fn run_pass(&mut self, model: &dyn ChatModel) -> Result<Pass, ChatError> {
        let Some(pass) = self.next_pass() else {
            return Err(ChatError::Fatal("every pass is already done".into()));
        };
        let input = self.input;
        let config = self.config;
        let change_expected = input.source_lang != input.target_lang;
        let units: Vec<Unit> = self
            .segments
            .iter()
            .enumerate()
            .map(|(id, segment)| Unit {
                id,
                source: segment.source.clone(),
                draft: (pass != Pass::Translate).then(|| self.state.texts[id].clone()),
            })
            .collect();
        let chunks = chunk(units, config.chunk_tokens);
        let pass_violations = &self.state.violations;
        let results: Vec<Result<ChunkDone, ChatError>> = stream::iter(chunks)
            .map(|units| {
                run_chunk(
                    model,
                    input,
                    config,
                    pass,
                    units,
                    pass_violations,
                    change_expected,
                )
            })
            .buffer_unordered(config.concurrency.max(1))
            .collect()
            .await;
        let mut state = self.state.clone();
        for result in results {
            let done = result?;
            for (id, text) in done.texts {
                state.texts[id] = text;
            }
            state.failures.extend(
                done.failed
                    .into_iter()
                    .filter_map(|(id, p)| ProblemKind::of(&p).map(|k| (id, k))),
            );
            *state.quality.usage_mut(pass) += done.usage;
            state.quality.retries += done.retries;
            state.quality.extra_blocks += done.extra;
            state.terms.extend(done.terms);
        }
        state.violations = self
            .segments
            .iter()
            .enumerate()
            .flat_map(|(id, segment)| {
                glossary_violations(input.glossary, &segment.source, &state.texts[id])
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
            "pass done"
        );
        self.state = state;
        Ok(pass)
    }

    /// What each pass will use, estimated before any request: the requests the passes build
    /// (the same chunks, prompts and glossary lines), counted as the offline engine counts,
    /// with each answer as long as its blocks (translations come out about as long as their
    /// source) and the later passes' drafts standing in for the source. Retries and the
    /// review's term lines are not foreseen.
    pub fn estimate(&self) -> [PassUsage; 3] {
        Pass::ALL.map(|pass| {
            let units: Vec<Unit> = self
                .segments
                .iter()
                .enumerate()
                .map(|(id, segment)| Unit {
                    id,
                    source: segment.source.clone(),
                    draft: (pass != Pass::Translate).then(|| segment.source.clone()),
                })
                .collect();
            chunk(units, self.config.chunk_tokens)
                .into_iter()
                .map(|units| {
                    let text = units
                        .iter()
                        .map(|u| u.source.as_str())
                        .collect::<Vec<_>>()
                        .join("\n");
                    let ids: BTreeSet<usize> = units.iter().map(|u| u.id).collect();
                    let request = chunk_request(self.input, pass, &units, &text, &[], &ids);
                    let answer = units
                        .iter()
                        .map(|u| format!("[[{}]] {}", u.id, u.source))
                        .collect::<Vec<_>>()
                        .join("\n");
                    PassUsage::estimated(&request, &answer)
                })
                .sum()
        })
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
        let Checkpoint {
            texts,
            mut quality,
            terms,
            violations,
            failures,
            ..
        } = state;
        let change_expected = input.source_lang != input.target_lang;
        // Blocks sent in parts are joined back before anything is checked: the quality record
        // describes the final text, block by block.
        let mut parts: BTreeMap<usize, Vec<(&str, &str)>> = BTreeMap::new();
        for (id, segment) in segments.iter().enumerate() {
            parts
                .entry(segment.block)
                .or_default()
                .push((texts[id].as_str(), segment.separator.as_str()));
        }
        let translated: BTreeMap<usize, String> = parts
            .into_iter()
            .map(|(block, parts)| (block, join_parts(parts)))
            .collect();
        let sources = glossary::sources(input.glossary);
        for (block, text) in &translated {
            let plain = booktr_formats::markup::plain_text(&input.blocks[*block].text);
            let plain_translated = booktr_formats::markup::plain_text(text);
            for entry in sources.keep_present(input.glossary, &plain) {
                quality.glossary_checked += 1;
                if contains_term(&plain_translated, &entry.target) {
                    quality.glossary_satisfied += 1;
                }
            }
        }
        let block_of = |id: usize| segments[id].block;
        let mut seen_violations = BTreeSet::new();
        quality.glossary_violations = violations
            .into_iter()
            .map(|(id, source, target)| (block_of(id), source, target))
            .filter(|v| seen_violations.insert(v.clone()))
            .collect();
        let failures: BTreeSet<(usize, ProblemKind)> = failures
            .into_iter()
            .map(|(id, kind)| (block_of(id), kind))
            .collect();
        for (block, kind) in failures {
            match kind {
                ProblemKind::Missing => quality.missing_blocks.push(block),
                ProblemKind::BrokenMarks => quality.broken_marks_blocks.push(block),
            }
        }
        if change_expected {
            let untranslated: BTreeSet<usize> = segments
                .iter()
                .enumerate()
                .filter(|(id, segment)| {
                    check(&segment.source, Some(&texts[*id]), true) == Err(Problem::Untranslated)
                })
                .map(|(id, _)| block_of(id))
                .collect();
            quality.untranslated_blocks = untranslated.into_iter().collect();
        }
        let blocks = input
            .blocks
            .iter()
            .enumerate()
            .map(|(i, block)| Block {
                text: translated
                    .get(&i)
                    .cloned()
                    .unwrap_or_else(|| block.text.clone()),
                ..block.clone()
            })
            .collect();
        ChapterOutput {
            blocks,
            quality,
            terms,
        }
    }
}

/// The segments' sources, hashed: a checkpoint applies only to the text it was made of.
fn fingerprint(segments: &[Segment]) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    for segment in segments {
        hash.update((segment.source.len() as u64).to_be_bytes());
        hash.update(segment.source.as_bytes());
    }
    hash.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A block, or a part of one, as translated.
struct Segment {
    block: usize,
    source: String,
    /// The whitespace between this part and the next in the block.
    separator: String,
}

/// The largest part of a block, in estimated tokens: a chunk less the unit's own overhead
/// (its marker) and room for marks reopened at a cut.
fn part_budget(chunk_tokens: u64) -> u64 {
    chunk_tokens.saturating_sub(40).max(64)
}

/// The request for one chunk of a pass: `text` is the units' sources joined, `ids` theirs.
fn chunk_request(
    input: &ChapterInput<'_>,
    pass: Pass,
    units: &[Unit],
    text: &str,
    violations: &[(usize, String, String)],
    ids: &BTreeSet<usize>,
) -> crate::model::ChatRequest {
    let ctx = PromptContext {
        source_lang: input.source_lang,
        target_lang: input.target_lang,
        glossary: matching(input.glossary, &booktr_formats::markup::plain_text(text)),
        ledger: if pass == Pass::Review {
            let entries: Vec<(&String, &String)> = input.ledger.iter().collect();
            TermSet::new(entries.iter().map(|(source, _)| source.as_str()))
                .keep_present(&entries, text)
                .into_iter()
                .map(|(source, target)| ((*source).clone(), (*target).clone()))
                .collect()
        } else {
            Vec::new()
        },
        violations: violations
            .iter()
            .filter(|(id, _, _)| ids.contains(id))
            .cloned()
            .collect(),
    };
    let max_output = (crate::model::estimate_tokens(text) * 3 + 256).min(16_000) as u32;
    build_request(pass, &ctx, units, max_output)
}

async fn run_chunk(
    model: &dyn ChatModel,
    input: &ChapterInput<'_>,
    config: &PipelineConfig,
    pass: Pass,
    units: Vec<Unit>,
    violations: &[(usize, String, String)],
    change_expected: bool,
) -> Result<ChunkDone, ChatError> {
    let mut done = ChunkDone {
        texts: HashMap::new(),
        failed: HashMap::new(),
        usage: PassUsage::default(),
        retries: 0,
        extra: 0,
        terms: Vec::new(),
    };
    let mut pending = units;
    for attempt in 1..=config.max_attempts.max(1) {
        let text: String = pending
            .iter()
            .map(|u| u.source.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let ids: BTreeSet<usize> = pending.iter().map(|u| u.id).collect();
        let request = chunk_request(input, pass, &pending, &text, violations, &ids);
        let response = complete_with_retries(model, request, config.max_model_retries).await?;
        done.usage.input_tokens += response.input_tokens;
        done.usage.output_tokens += response.output_tokens;
        done.usage.requests += 1;
        let answer = protocol::parse_answer(&response.text);
        done.extra += answer.blocks.keys().filter(|id| !ids.contains(id)).count() as u32;
        done.terms.extend(answer.terms);
        let mut still = Vec::new();
        for unit in pending {
            // In the first pass an echo is a failure; later passes may legitimately keep a block.
            let expect_change = change_expected && pass == Pass::Translate;
            match check(
                &unit.source,
                answer.blocks.get(&unit.id).map(String::as_str),
                expect_change,
            ) {
                Ok(text) => {
                    done.failed.remove(&unit.id);
                    done.texts.insert(unit.id, text);
                }
                Err(Problem::Untranslated) if attempt == config.max_attempts.max(1) => {
                    // Kept (it is well-formed) and reported by the quality record.
                    if let Some(text) = answer.blocks.get(&unit.id) {
                        done.texts.insert(unit.id, text.clone());
                    }
                }
                Err(problem) => {
                    done.failed.insert(unit.id, problem);
                    still.push(unit);
                }
            }
        }
        if still.is_empty() {
            break;
        }
        if attempt < config.max_attempts.max(1) {
            done.retries += still.len() as u32;
            warn!(
                pass = pass.task(),
                blocks = still.len(),
                attempt,
                "answer rejected; asking again for those blocks"
            );
        }
        pending = still;
    }
    Ok(done)
}

pub(crate) async fn complete_with_retries(
    model: &dyn ChatModel,
    request: crate::model::ChatRequest,
    max_retries: u32,
) -> Result<crate::model::ChatResponse, ChatError> {
    let mut attempt = 0;
    loop {
        match model.complete(request.clone()).await {
            Err(ChatError::Retryable {
                message,
                retry_after,
            }) if attempt < max_retries => {
                attempt += 1;
                let wait = retry_after
                    .unwrap_or(Duration::from_millis(500 * 2u64.pow(attempt)))
                    .min(Duration::from_secs(60));
                warn!(%message, attempt, wait_ms = wait.as_millis() as u64, "model busy; retrying");
                tokio::time::sleep(wait).await;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use async_trait::async_trait;
    use booktr_formats::manuscript::BlockKind;

    use super::*;
    use crate::model::{ChatRequest, ChatResponse};
    use crate::offline::OfflineEngine;

    /// A stand-in model that misbehaves in one way on its first `bad_answers` answers to the
    /// translate pass (or on all of them), then behaves like the offline engine.
    struct Flaky {
        fault: Fault,
        bad_answers: u32,
        seen: AtomicU32,
    }

    #[derive(Clone, Copy)]
    enum Fault {
        DropsFirstBlock,
        EchoesSource,
        StripsMarks,
        IgnoresGlossaryUntilTold,
        IgnoresGlossaryAlways,
    }

    impl Flaky {
        fn new(fault: Fault, bad_answers: u32) -> Self {
            Flaky {
                fault,
                bad_answers,
                seen: AtomicU32::new(0),
            }
        }
    }

    #[async_trait]
    impl ChatModel for Flaky {
        async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
            let mut response = OfflineEngine.complete(request.clone()).await?;
            let translating = request.user.starts_with("TASK: translate");
            let told_to_fix = request.user.contains("\nFIX:\n");
            let misbehave = match self.fault {
                Fault::IgnoresGlossaryUntilTold => translating && !told_to_fix,
                Fault::IgnoresGlossaryAlways => true,
                _ => translating && self.seen.fetch_add(1, Ordering::SeqCst) < self.bad_answers,
            };
            if misbehave {
                response.text = match self.fault {
                    Fault::DropsFirstBlock => {
                        response.text.lines().skip(1).collect::<Vec<_>>().join("\n")
                    }
                    Fault::EchoesSource => {
                        let blocks = request.user.split("BLOCKS:\n").nth(1).unwrap_or_default();
                        blocks.to_string()
                    }
                    Fault::StripsMarks => response.text.replace("<i>", "").replace("</i>", ""),
                    Fault::IgnoresGlossaryUntilTold | Fault::IgnoresGlossaryAlways => {
                        response.text.replace("ballena", "cachalote")
                    }
                };
            }
            Ok(response)
        }

        fn name(&self) -> &str {
            "flaky"
        }
    }

    fn chapter() -> Vec<Block> {
        vec![
            Block::new(
                BlockKind::Heading { level: 1 },
                "Chapter 1. Loomings.".into(),
            ),
            Block::new(
                BlockKind::Paragraph,
                "Call me <i>Ishmael</i>. The whale is white and old.".into(),
            ),
            Block::new(
                BlockKind::Paragraph,
                "Some years ago, never mind how long precisely, I went to sea.".into(),
            ),
        ]
    }

    fn glossary() -> Vec<GlossaryEntry> {
        vec![GlossaryEntry {
            source: "whale".into(),
            target: "ballena".into(),
            context: None,
        }]
    }

    async fn run(model: &dyn ChatModel) -> ChapterOutput {
        let blocks = chapter();
        let glossary = glossary();
        let ledger = HashMap::new();
        let input = ChapterInput {
            blocks: &blocks,
            source_lang: "en",
            target_lang: "es",
            glossary: &glossary,
            ledger: &ledger,
        };
        translate_chapter(
            model,
            &input,
            &PipelineConfig {
                max_attempts: 3,
                ..PipelineConfig::default()
            },
        )
        .await
        .unwrap()
    }

    /// The offline engine, noting the largest block section of any request.
    #[derive(Default)]
    struct Measuring {
        largest_blocks: AtomicU32,
    }

    #[async_trait]
    impl ChatModel for Measuring {
        async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
            let blocks = request.user.split("BLOCKS:\n").nth(1).unwrap_or_default();
            let tokens = u32::try_from(crate::model::estimate_tokens(blocks)).unwrap_or(u32::MAX);
            self.largest_blocks.fetch_max(tokens, Ordering::SeqCst);
            OfflineEngine.complete(request).await
        }

        fn name(&self) -> &str {
            "measuring"
        }
    }

    #[tokio::test]
    async fn a_block_larger_than_a_chunk_goes_in_parts_and_comes_back_whole() {
        let sentence = "Call me <i>Ishmael</i>, for the whale is white. ";
        let paragraph = sentence.repeat(2_000);
        let paragraph = paragraph.trim_end().to_string();
        let blocks = vec![
            Block::new(BlockKind::Heading { level: 1 }, "Loomings".into()),
            Block::new(BlockKind::Paragraph, paragraph.clone()),
            Block::new(BlockKind::Paragraph, "The end.".into()),
        ];
        let glossary = glossary();
        let ledger = HashMap::new();
        let input = ChapterInput {
            blocks: &blocks,
            source_lang: "en",
            target_lang: "es",
            glossary: &glossary,
            ledger: &ledger,
        };
        let model = Measuring::default();
        let config = PipelineConfig {
            chunk_tokens: 500,
            ..PipelineConfig::default()
        };
        let out = translate_chapter(&model, &input, &config).await.unwrap();
        let largest = model.largest_blocks.load(Ordering::SeqCst);
        // The block section holds the parts with their markers (and drafts after pass one).
        assert!(
            largest <= 2 * 500 + 64,
            "a request carried {largest} tokens of blocks"
        );
        assert_eq!(out.blocks.len(), 3);
        let translated = &out.blocks[1].text;
        let terms = [("whale".to_string(), "ballena".to_string())];
        let whole = crate::offline::pseudo(&paragraph, &terms);
        assert_eq!(
            booktr_formats::markup::plain_text(translated),
            booktr_formats::markup::plain_text(&whole),
        );
        assert_eq!(out.blocks[2].text, crate::offline::pseudo("The end.", &[]));
        let q = &out.quality;
        // One use checked per block and entry, as for any block.
        assert_eq!((q.glossary_checked, q.glossary_satisfied), (1, 1));
        assert!(q.missing_blocks.is_empty() && q.broken_marks_blocks.is_empty());
        assert!(q.translate.requests > 30, "{:?}", q.translate);
    }

    /// The offline engine, counting requests by task.
    #[derive(Default)]
    struct Counting {
        tasks: std::sync::Mutex<Vec<String>>,
    }

    #[async_trait]
    impl ChatModel for Counting {
        async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
            let task = request.user.lines().next().unwrap_or_default().to_string();
            self.tasks.lock().unwrap().push(task);
            OfflineEngine.complete(request).await
        }

        fn name(&self) -> &str {
            "counting"
        }
    }

    #[tokio::test]
    async fn a_chapter_resumed_from_its_checkpoint_pays_only_for_the_passes_left() {
        let blocks = chapter();
        let glossary = glossary();
        let ledger = HashMap::new();
        let input = ChapterInput {
            blocks: &blocks,
            source_lang: "en",
            target_lang: "es",
            glossary: &glossary,
            ledger: &ledger,
        };
        let config = PipelineConfig::default();
        let uninterrupted = translate_chapter(&OfflineEngine, &input, &config)
            .await
            .unwrap();

        // One pass, then the process "dies": only the stored checkpoint survives.
        let mut first = ChapterTranslation::new(&input, &config, None);
        first.run_pass(&OfflineEngine).await.unwrap();
        let stored = serde_json::to_string(first.checkpoint()).unwrap();
        drop(first);

        let model = Counting::default();
        let checkpoint: Checkpoint = serde_json::from_str(&stored).unwrap();
        let mut resumed = ChapterTranslation::new(&input, &config, Some(checkpoint));
        assert_eq!(resumed.next_pass(), Some(Pass::Review));
        while resumed.next_pass().is_some() {
            resumed.run_pass(&model).await.unwrap();
        }
        let out = resumed.finish();
        let tasks = model.tasks.lock().unwrap().clone();
        assert!(!tasks.iter().any(|t| t == "TASK: translate"), "{tasks:?}");
        assert!(tasks.iter().any(|t| t == "TASK: review"), "{tasks:?}");
        assert_eq!(out.blocks, uninterrupted.blocks);
        assert_eq!(out.quality, uninterrupted.quality);

        // A checkpoint of other text (here: one block changed) is ignored: the chapter starts
        // over.
        let mut other = chapter();
        other[0].text.push_str(" And more.");
        let other_input = ChapterInput {
            blocks: &other,
            ..input
        };
        let checkpoint: Checkpoint = serde_json::from_str(&stored).unwrap();
        let fresh = ChapterTranslation::new(&other_input, &config, Some(checkpoint));
        assert_eq!(fresh.next_pass(), Some(Pass::Translate));
    }

    #[tokio::test]
    async fn the_offline_engine_goes_through_all_passes_cleanly() {
        let out = run(&OfflineEngine).await;
        assert_eq!(
            out.blocks[1].text,
            "Càll mé <i>Ìshmàél</i>. Thé ballena ìs whìté ànd öld."
        );
        let q = &out.quality;
        assert_eq!((q.glossary_checked, q.glossary_satisfied), (1, 1));
        assert!(
            q.missing_blocks.is_empty()
                && q.broken_marks_blocks.is_empty()
                && q.untranslated_blocks.is_empty()
        );
        assert_eq!(
            (q.translate.requests, q.review.requests, q.polish.requests),
            (1, 1, 1)
        );
        assert!(q.translate.input_tokens > 0 && q.polish.output_tokens > 0);
        assert_eq!(out.terms, [("whale".to_string(), "ballena".to_string())]);
    }

    #[tokio::test]
    async fn a_dropped_paragraph_is_asked_for_again() {
        let out = run(&Flaky::new(Fault::DropsFirstBlock, 1)).await;
        assert_eq!(out.quality.retries, 1);
        assert!(out.quality.missing_blocks.is_empty());
        assert!(out.blocks[0].text.starts_with("Chàptér"));
    }

    #[tokio::test]
    async fn a_paragraph_never_returned_is_flagged_and_keeps_its_source() {
        let out = run(&Flaky::new(Fault::DropsFirstBlock, u32::MAX)).await;
        assert_eq!(out.quality.missing_blocks, [0]);
        assert_eq!(out.blocks[0].text, "Chapter 1. Loomings.");
        assert_eq!(out.quality.retries, 2);
    }

    #[tokio::test]
    async fn an_echoed_source_is_retried_then_flagged_as_untranslated() {
        let fixed = run(&Flaky::new(Fault::EchoesSource, 1)).await;
        assert!(fixed.quality.untranslated_blocks.is_empty());
        assert!(
            fixed.quality.retries >= 2,
            "both long paragraphs were echoed: {}",
            fixed.quality.retries
        );
        let stuck = run(&Flaky::new(Fault::EchoesSource, u32::MAX)).await;
        // Block 1 was re-translated by the review pass, told that it lacked a glossary term;
        // block 2 stays the source and is reported.
        assert_eq!(stuck.quality.untranslated_blocks, [2]);
    }

    #[tokio::test]
    async fn mangled_inline_marks_are_retried_then_flagged() {
        let fixed = run(&Flaky::new(Fault::StripsMarks, 1)).await;
        assert!(fixed.quality.broken_marks_blocks.is_empty());
        assert!(fixed.blocks[1].text.contains("<i>Ìshmàél</i>"));
        let stuck = run(&Flaky::new(Fault::StripsMarks, u32::MAX)).await;
        assert_eq!(
            stuck.quality.broken_marks_blocks,
            [1],
            "flagged, though the review recovered it"
        );
        let tags = |t: &str| booktr_formats::markup::tags(t).unwrap();
        assert_eq!(
            tags(&stuck.blocks[1].text),
            tags(&chapter()[1].text),
            "a mangled answer is never kept"
        );
    }

    #[tokio::test]
    async fn an_ignored_glossary_term_is_fixed_by_the_review_pass_when_told() {
        let out = run(&Flaky::new(Fault::IgnoresGlossaryUntilTold, 0)).await;
        assert_eq!(
            (out.quality.glossary_checked, out.quality.glossary_satisfied),
            (1, 1)
        );
        assert!(out.blocks[1].text.contains("ballena"));
    }

    #[tokio::test]
    async fn a_glossary_term_never_used_is_reported() {
        let out = run(&Flaky::new(Fault::IgnoresGlossaryAlways, 0)).await;
        assert_eq!(
            out.quality.glossary_violations,
            [(1, "whale".to_string(), "ballena".to_string())]
        );
        assert_eq!(out.quality.glossary_compliance(), 0.0);
    }
}
