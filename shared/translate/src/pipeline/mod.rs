//! One chapter through the three passes. Chunks of a pass run in parallel (bounded). Every
//! block of every answer is read strictly (`reading`) and checked against its source
//! (`checks`); the blocks that fail, and only they, go down the repair ladder (`ladder`). A
//! block that fails every rung keeps the text it had before the pass (its source, in the first
//! pass) and is listed by kind in the quality record: never silently accepted.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use booktr_formats::manuscript::{Block, BlockKind};
use booktr_formats::markup;
use futures::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use tracing::{debug, info, warn};

use crate::adequacy::{self, Name};
use crate::checks::{is_refusal_or_remark, Checks, Problem};
use crate::glossary::{self, contains_term, matching, GlossaryEntry, TermSet};
use crate::ladder::{Ladder, Repaired, Rung};
use crate::model::{ChatError, ChatModel};
use crate::neighbours::{self, Neighbour, Side};
use crate::protocol::{
    build_request, chunk, glossary_violations, simple_request, Pass, PromptContext, Unit, Window,
};
use crate::reading::{clean_characters, read_answer, read_plain_answer, Removed};
use crate::split::{join_parts, split_block};

mod chunk;
mod confidence;
mod passes;
mod second_opinion;
mod segments;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod whole_book;

// The stages' items are the pipeline's own (`pub(super)`), named here for every stage.
pub(crate) use chunk::complete_with_retries;
use chunk::*;
use confidence::*;
use passes::*;
pub use second_opinion::SecondOpinion;
pub(crate) use segments::glossary_counts;
use segments::*;
pub use segments::{edited, windowed};

#[derive(Debug, Clone, Copy)]
pub struct PipelineConfig {
    /// Estimated source tokens per chunk. 2,000 keeps answers well inside every model's output
    /// limit while the per-request instructions stay a small share of what is sent.
    pub chunk_tokens: u64,
    /// Blocks per chunk at most, within the token budget. A small local model keeps each block
    /// to its own text best when it is asked for one at a time (docs/translation.md, the
    /// quality bench); a hosted model is asked for as many as fit.
    pub chunk_blocks: usize,
    /// Chunks of one pass in flight at once: 12 covers the longest chapters of real novels (the
    /// longest in Moby-Dick is 7 chunks), so a pass takes about one model round trip.
    pub concurrency: usize,
    /// Tries per request on retryable model errors (rate limits, overload).
    pub max_model_retries: u32,
    /// Estimated tokens of the chapter's translation so far that each first-pass request
    /// carries (the EARLIER lines), so that names, pronouns and register follow through a
    /// chapter. With the translation as the window the first pass's chunks go one after the
    /// other (in chapters of up to 8,000 source tokens; longer ones go at once without it, see
    /// [`windowed`]); 0 sends none.
    pub context_tokens: u64,
    /// Whether the window is the translation so far or the source (the model's profile's
    /// choice).
    pub window: Window,
    /// Which blocks the review and the polish are asked about (the model's profile's choice).
    pub later_passes: LaterPasses,
    /// Whether the first pass asks for a second translation of every block of some length
    /// and keeps the more complete of the two (the model's profile's choice; see
    /// `second_opinion`).
    pub second_opinion: bool,
}

/// Which blocks the review and the polish are asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaterPasses {
    /// Every translated block: a strong model refines every segment, which helps fluency,
    /// style and terms.
    Every,
    /// The blocks that need a look ([`needs_look`]): a small model's review changes few blocks
    /// and costs as much as the translation, so it is spent where the run saw trouble.
    WhereNeeded,
}

/// One block in this many is reviewed and polished where only the blocks that need it are
/// ([`LaterPasses::WhereNeeded`]), so that a chapter with no trouble seen is still looked at.
const SAMPLE_EVERY: usize = 8;

/// Whether segment `id` is in the later passes' sample: one in [`SAMPLE_EVERY`] from the
/// second on, since a chapter's first block is most often its heading.
fn sampled(id: usize) -> bool {
    id % SAMPLE_EVERY == 1
}

/// A block's confidence (0 to 100) under which the later passes look at it.
const LOW_CONFIDENCE: u8 = 70;

/// The most blocks a chunk may hold (`PipelineConfig::chunk_blocks`'s default and ceiling).
pub const MAX_CHUNK_BLOCKS: usize = 100;

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            chunk_tokens: 2000,
            chunk_blocks: MAX_CHUNK_BLOCKS,
            concurrency: 12,
            max_model_retries: 5,
            context_tokens: 300,
            window: Window::Translation,
            later_passes: LaterPasses::Every,
            second_opinion: false,
        }
    }
}

/// Tokens one pass used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
#[serde(rename_all = "camelCase", default)]
pub struct Quality {
    /// Glossary uses checked after the last pass, and how many used the glossary's target.
    pub glossary_checked: u32,
    pub glossary_satisfied: u32,
    /// (block index, source term, expected target) still missing after the last pass.
    pub glossary_violations: Vec<(usize, String, String)>,
    /// Blocks whose translation could not be trusted, by what was wrong: the blocks the first
    /// pass could not get a passing answer for on any rung (they keep their source text,
    /// unless a later pass translated them; listed all the same, so nothing that happened is
    /// hidden), and `untranslated` for every block whose final text is still its source.
    pub flagged: BTreeMap<Problem, Vec<usize>>,
    /// Review or polish answers that failed every rung: (pass, block, why). The block kept
    /// the previous pass's text, a checked translation, so it is not flagged.
    pub kept_previous: Vec<(Pass, usize, Problem)>,
    /// Blocks that passed only when asked again, by the rung that repaired them.
    pub repaired: Repaired,
    /// Text removed from the answers around the blocks (preambles, sign-offs, reasoning ...).
    pub removed: Removed,
    /// Names and terms the review reported translating otherwise than the book's term list:
    /// (source, the list's translation, the review's). The list's is kept.
    pub term_conflicts: Vec<(String, String, String)>,
    /// Blocks asked for again after a rejected answer (each time counted).
    pub retries: u32,
    /// Blocks the review and the polish changed (their answers carry only those).
    pub changed: Changed,
    /// Blocks whose final text a later pass wrote, by the last pass that changed them; every
    /// other translated block holds the translate pass's text. None on records made before
    /// this was kept.
    pub last_pass: Option<BTreeMap<usize, Pass>>,
    /// How far each block's text can be trusted, 0 to 100, from what the run saw of it (see
    /// [`confidence`]); the blocks a reviewer should look at first are the lowest.
    pub confidence: BTreeMap<usize, u8>,
    /// Blocks sent to the review and to the polish (all, or those that needed a look).
    pub sent: Changed,
    /// Later passes not asked in this chapter: the model had answered them with echoes (every
    /// block back as it was) earlier in the run.
    pub echo_stopped: Vec<Pass>,
    /// The model profile the chapter ran with (`profile::Profile::name`), as its job set it.
    pub profile: Option<String>,
    /// What the book's fallback model did with the blocks this model left flagged or of low
    /// confidence (`fallback`); None when the run names no fallback or sent it nothing. A block
    /// whose text the fallback's replaced holds that text's confidence and is not flagged.
    pub fallback: Option<crate::fallback::Fallback>,
    /// What the first pass's second opinion did (nothing where the profile asks for none).
    pub second_opinion: SecondOpinion,
    pub translate: PassUsage,
    pub review: PassUsage,
    pub polish: PassUsage,
}

/// Blocks each later pass changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Changed {
    pub review: u32,
    pub polish: u32,
}

impl std::ops::AddAssign for Changed {
    fn add_assign(&mut self, o: Changed) {
        self.review += o.review;
        self.polish += o.polish;
    }
}

impl Quality {
    /// Flagged blocks of each kind (a block flagged for two reasons counts under both).
    pub fn flag_counts(&self) -> BTreeMap<Problem, usize> {
        self.flagged
            .iter()
            .map(|(k, blocks)| (*k, blocks.len()))
            .collect()
    }

    /// Blocks flagged for any reason.
    pub fn flagged_blocks(&self) -> BTreeSet<usize> {
        self.flagged.values().flatten().copied().collect()
    }

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
    /// How the repair ladder's rungs have done in this run (shared by its chapters).
    pub ladder: &'a Ladder,
    /// The book's owner's wish for this translation, said to every request of every pass
    /// (`protocol::PromptContext::instruction`); None for a book's run.
    pub instruction: Option<&'a str>,
}

pub struct ChapterOutput {
    pub blocks: Vec<Block>,
    pub quality: Quality,
    /// Terms the review reported, for the book's ledger.
    pub terms: Vec<(String, String)>,
    /// For each block the first pass could not get a passing answer for (it holds its source),
    /// the last answer the model gave for it and the checks that answer failed: what an owner
    /// may look at, and take knowingly. A block whose every answer was empty (left out,
    /// refused) has none.
    pub rejected: BTreeMap<usize, Rejected>,
}

/// The last answer a block was given and refused for (see [`ChapterOutput::rejected`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// The block's text with that answer where it failed (a block sent in parts keeps the
    /// parts that passed).
    pub text: String,
    /// The checks it failed.
    pub problems: Vec<Problem>,
}

/// The result of one chunk of one pass.
#[derive(Default)]
struct ChunkDone {
    texts: HashMap<usize, String>,
    /// Blocks that failed every rung, and why (the last rung's reason).
    failed: HashMap<usize, Problem>,
    /// For the blocks that failed, the last answer given for them and what it failed.
    rejected: HashMap<usize, (String, Problem)>,
    usage: PassUsage,
    retries: u32,
    repaired: Repaired,
    /// The rung each repaired block passed on.
    repaired_on: HashMap<usize, Rung>,
    /// Blocks a later pass answered back as they were sent.
    echoed: u32,
    removed: Removed,
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
    /// Segments the first pass could not get a passing answer for, and why.
    failures: BTreeSet<(usize, Problem)>,
    /// For those segments, the last answer the model gave and the check it failed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    rejected: BTreeMap<usize, (String, Problem)>,
    /// Segments whose review or polish answer failed every rung (they kept their text).
    #[serde(default)]
    kept: Vec<(Pass, usize, Problem)>,
    /// Segments the review or the polish changed, by the last pass that did.
    #[serde(default)]
    changed_by: BTreeMap<usize, Pass>,
    /// Segments the first pass got only when asked again, by the rung that passed them.
    #[serde(default)]
    repaired_on: BTreeMap<usize, Rung>,
    /// Whether the answers were judged by language identification (not the offline engine's).
    #[serde(default)]
    judged_language: bool,
    /// How far each segment's two first-pass translations agreed (0 to 100), where the
    /// second opinion asked for two.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    agreement: BTreeMap<usize, u8>,
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
            .filter(|(_, b)| !nothing_to_translate(&b.text))
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
                    pass == Pass::Translate
                        || !selective
                        || (sampled(*id)
                            && !(self.config.second_opinion && second_opinion::asked_for(segment)))
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
                    let request = chunk_request(
                        self.input,
                        pass,
                        &units,
                        &text,
                        &[],
                        &ids,
                        (self.config.window, &earlier),
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
            usage[0] += second_opinion::estimate(self.input, &self.segments);
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
            if !may_stay(input, segment) && checks.untranslated(&segment.source, &texts[id]) {
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
        let blocks = with_texts(input.blocks, &translated);
        ChapterOutput {
            blocks,
            quality,
            terms,
            rejected,
        }
    }
}
