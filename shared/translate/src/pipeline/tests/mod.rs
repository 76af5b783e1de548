use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use booktr_formats::manuscript::{Block, BlockKind};

use crate::checks::Problem;
use crate::glossary::GlossaryEntry;
use crate::ladder::{Ladder, Rung};
use crate::model::{ChatError, ChatModel};
use crate::protocol::{Pass, Window};
use crate::reading::{read_answer, Removed};

use crate::misbehaving::{Fault, Misbehaving};
use crate::model::{ChatRequest, ChatResponse};
use crate::offline::OfflineEngine;
use crate::pipeline::chapter::*;
use crate::pipeline::checkpoint::*;
use crate::pipeline::config::*;
use crate::pipeline::input::*;
use crate::pipeline::quality::*;

mod memory;
mod neighbours;
mod repair;

/// A stand-in that leaves the glossary's term out of its answers (until told to fix it,
/// or always), and otherwise answers like the offline engine.
struct IgnoresGlossary {
    until_told: bool,
}

#[async_trait]
impl ChatModel for IgnoresGlossary {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request.clone()).await?;
        let told_to_fix = request.user.contains("\nFIX:\n");
        let translating = request.user.starts_with("TASK: translate");
        if !self.until_told || (translating && !told_to_fix) {
            response.text = response.text.replace("ballena", "cachalote");
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "ignores-glossary"
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
    run_on(model, &chapter(), &Ladder::default()).await
}

async fn run_on(model: &dyn ChatModel, blocks: &[Block], ladder: &Ladder) -> ChapterOutput {
    let glossary = glossary();
    let ledger = HashMap::new();
    let input = ChapterInput {
        blocks,
        source_lang: "en",
        target_lang: "es",
        glossary: &glossary,
        ledger: &ledger,
        ladder,
        instruction: None,
        memory: &crate::memory::NOTHING,
    };
    translate_chapter(model, &input, &PipelineConfig::default())
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
        ladder: &Ladder::default(),
        instruction: None,
        memory: &crate::memory::NOTHING,
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
    assert!(q.flagged.is_empty(), "{:?}", q.flagged);
    assert!(q.translate.requests > 30, "{:?}", q.translate);
}

/// Answers as the offline engine does, but leaves the glossary's "whale" untranslated in
/// every answer, and notes which blocks each later pass was asked about. With `echo`, the
/// later passes answer every block back as it was sent instead of `NO CHANGES`.
struct Watching {
    echo: bool,
    asked: std::sync::Mutex<Vec<(String, Vec<usize>)>>,
}

impl Watching {
    fn new(echo: bool) -> Self {
        Watching {
            echo,
            asked: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn asked(&self, task: &str) -> Vec<usize> {
        let asked = self.asked.lock().unwrap();
        let mut ids: Vec<usize> = asked
            .iter()
            .filter(|(t, _)| t == task)
            .flat_map(|(_, ids)| ids.iter().copied())
            .collect();
        ids.sort_unstable();
        ids
    }
}

#[async_trait]
impl ChatModel for Watching {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let task = request.user.lines().next().unwrap_or_default().to_string();
        let mut response = OfflineEngine.complete(request.clone()).await?;
        if let Some(task) = task.strip_prefix("TASK: ").filter(|t| *t != "translate") {
            let drafts = request.user.split("DRAFT:\n").nth(1).unwrap_or_default();
            let drafts = drafts.split("\nFIX:").next().unwrap_or_default();
            let blocks = read_answer(drafts, None).blocks;
            self.asked
                .lock()
                .unwrap()
                .push((task.to_string(), blocks.keys().copied().collect()));
            if self.echo {
                response.text = blocks
                    .iter()
                    .map(|(id, text)| format!("[[{id}]] {text}\n"))
                    .collect();
            }
        }
        response.text = response.text.replace("ballena", "whale");
        Ok(response)
    }

    fn name(&self) -> &str {
        "watching"
    }

    fn writes_language(&self) -> bool {
        false
    }
}

/// Twenty paragraphs, the sixth about the whale.
fn twenty_paragraphs() -> Vec<Block> {
    (0..20)
        .map(|i| {
            let about = if i == 5 { "the whale" } else { "the sea" };
            Block::new(
                BlockKind::Paragraph,
                format!("Paragraph {i} tells of {about} and of a ship called number {i}."),
            )
        })
        .collect()
}

async fn run_with(
    model: &dyn ChatModel,
    blocks: &[Block],
    ladder: &Ladder,
    config: &PipelineConfig,
) -> ChapterOutput {
    let glossary = glossary();
    let ledger = HashMap::new();
    let input = ChapterInput {
        blocks,
        source_lang: "en",
        target_lang: "es",
        glossary: &glossary,
        ledger: &ledger,
        ladder,
        instruction: None,
        memory: &crate::memory::NOTHING,
    };
    translate_chapter(model, &input, config).await.unwrap()
}

#[tokio::test]
async fn where_needed_the_later_passes_look_at_the_blocks_with_trouble_and_a_sample() {
    let blocks = twenty_paragraphs();
    let small = PipelineConfig {
        chunk_tokens: 400,
        chunk_blocks: 1,
        later_passes: LaterPasses::WhereNeeded,
        ..PipelineConfig::default()
    };
    let model = Watching::new(false);
    let out = run_with(&model, &blocks, &Ladder::default(), &small).await;
    // The block missing its glossary term, and one in eight.
    assert_eq!(model.asked("review"), [1, 5, 9, 17]);
    assert_eq!(model.asked("polish"), [1, 5, 9, 17]);
    assert_eq!((out.quality.sent.review, out.quality.sent.polish), (4, 4));
    // Its confidence says so (a term missed), and the others are trusted.
    assert_eq!(out.quality.confidence[&5], 80);
    assert_eq!(out.quality.confidence[&4], 100);
    assert_eq!(out.quality.confidence.len(), 20);

    let model = Watching::new(false);
    let every = PipelineConfig::default();
    let out = run_with(&model, &blocks, &Ladder::default(), &every).await;
    assert_eq!(model.asked("review"), (0..20).collect::<Vec<_>>());
    assert_eq!(out.quality.sent.review, 20);
}

#[tokio::test]
async fn a_later_pass_answered_with_echoes_is_not_asked_again_in_the_run() {
    let blocks = twenty_paragraphs();
    let ladder = Ladder::default();
    let config = PipelineConfig::default();
    let model = Watching::new(true);
    let first = run_with(&model, &blocks, &ladder, &config).await;
    assert_eq!(model.asked("review").len(), 20);
    assert_eq!(model.asked("polish").len(), 20);
    assert_eq!(first.quality.changed.review, 0);
    assert!(first.quality.echo_stopped.is_empty());

    // The next chapter of the run: neither pass is asked, and the record says why.
    let model = Watching::new(true);
    let second = run_with(&model, &blocks, &ladder, &config).await;
    assert!(model.asked("review").is_empty());
    assert!(model.asked("polish").is_empty());
    assert_eq!(second.quality.echo_stopped, [Pass::Review, Pass::Polish]);
    assert_eq!(second.quality.review, PassUsage::default());

    // A model that says NO CHANGES, or changes what it answers, goes on being asked.
    let ladder = Ladder::default();
    for _ in 0..2 {
        let model = Watching::new(false);
        let out = run_with(&model, &blocks, &ladder, &config).await;
        assert_eq!(model.asked("review").len(), 20);
        assert!(out.quality.echo_stopped.is_empty());
    }
}

#[tokio::test]
async fn a_block_repaired_on_a_low_rung_or_left_in_its_source_is_trusted_least() {
    let clean = run(&OfflineEngine).await;
    assert_eq!(
        clean
            .quality
            .confidence
            .values()
            .copied()
            .collect::<Vec<_>>(),
        [100, 100, 100]
    );
    // A model that never gives a usable answer: every block keeps its source.
    let refuses = Misbehaving::new(OfflineEngine, &[Fault::Refusal], 1);
    let out = run(&refuses).await;
    assert!(!out.quality.flagged.is_empty());
    assert!(
        out.quality.confidence.values().all(|c| *c == 0),
        "{:?}",
        out.quality.confidence
    );

    // Blocks repaired on the way: the lower the rung, the less they are trusted.
    let blocks = chapter();
    let glossary = glossary();
    let ledger = HashMap::new();
    let input = ChapterInput {
        blocks: &blocks,
        source_lang: "en",
        target_lang: "es",
        glossary: &glossary,
        ledger: &ledger,
        ladder: &Ladder::default(),
        instruction: None,
        memory: &crate::memory::NOTHING,
    };
    let config = PipelineConfig::default();
    let mut translation = ChapterTranslation::new(&input, &config, None);
    while translation.next_pass().is_some() {
        translation.run_pass(&OfflineEngine).await.unwrap();
    }
    translation.state.repaired_on.insert(1, Rung::Simple);
    translation.state.repaired_on.insert(2, Rung::Halves);
    let out = translation.finish();
    assert_eq!(
        out.quality.confidence.values().copied().collect::<Vec<_>>(),
        [100, 65, 90]
    );
}

#[tokio::test]
async fn a_block_much_shorter_than_its_chapters_ratio_is_trusted_less_the_shorter_it_is() {
    let blocks: Vec<Block> = (0..8)
        .map(|n| {
            Block::new(
                BlockKind::Paragraph,
                format!(
                    "Paragraph {n}: the sea was grey and the wind rose; we sailed north for \
                     days, the men silent, the ice before us, the stars above the masts, \
                     and no land in sight; the captain kept his cabin and wrote his letters \
                     home by the light of one lamp."
                ),
            )
        })
        .collect();
    let glossary = glossary();
    let ledger = HashMap::new();
    let input = ChapterInput {
        blocks: &blocks,
        source_lang: "en",
        target_lang: "es",
        glossary: &glossary,
        ledger: &ledger,
        ladder: &Ladder::default(),
        instruction: None,
        memory: &crate::memory::NOTHING,
    };
    let config = PipelineConfig::default();
    let mut translation = ChapterTranslation::new(&input, &config, None);
    while translation.next_pass().is_some() {
        translation.run_pass(&OfflineEngine).await.unwrap();
    }
    // Block 3 loses half its text, block 5 a tenth (a translation's usual spread).
    let cut = |text: &str, keep: f64| {
        let at = (text.len() as f64 * keep) as usize;
        let at = (at..text.len())
            .find(|i| text.is_char_boundary(*i))
            .unwrap();
        text[..at].to_string()
    };
    translation.state.texts[3] = cut(&translation.state.texts[3], 0.5);
    translation.state.texts[5] = cut(&translation.state.texts[5], 0.9);
    let out = translation.finish();
    let confidence = &out.quality.confidence;
    assert!(confidence[&3] < LOW_CONFIDENCE, "{confidence:?}");
    assert_eq!(confidence[&5], 100, "{confidence:?}");
    assert_eq!(confidence[&0], 100, "{confidence:?}");
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
        ladder: &Ladder::default(),
        instruction: None,
        memory: &crate::memory::NOTHING,
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
    assert!(q.flagged.is_empty(), "{:?}", q.flagged);
    assert_eq!(q.removed, Removed::default());
    assert_eq!(
        (q.translate.requests, q.review.requests, q.polish.requests),
        (1, 1, 1)
    );
    assert!(q.translate.input_tokens > 0 && q.polish.output_tokens > 0);
    assert_eq!(out.terms, [("whale".to_string(), "ballena".to_string())]);
}

/// The chapter as a clean model translates it.
async fn clean() -> ChapterOutput {
    run(&OfflineEngine).await
}

fn flagged(out: &ChapterOutput) -> Vec<(Problem, Vec<usize>)> {
    out.quality.flagged.clone().into_iter().collect()
}

/// Paragraphs long enough to be judged for sameness and length, each unlike the others.
fn paragraphs(n: usize) -> Vec<Block> {
    const SENTENCES: [&str; 8] = [
        "The captain walked the deck alone at dawn, counting the birds that followed the ship.",
        "Below, the cook argued with the carpenter about the price of salt and the weather.",
        "Nobody aboard had seen land for forty days, and the water casks were running low.",
        "A boy climbed the mast to watch the horizon, singing an old song from his village.",
        "The mate kept the log in a small neat hand, noting every change of wind and current.",
        "When the storm came at night, the sails were torn and two barrels rolled overboard.",
        "In the morning the sea was calm again, grey and flat as a sheet of hammered lead.",
        "They buried the old sailor at noon, wrapped in canvas, while the bell rang slowly.",
    ];
    SENTENCES
        .iter()
        .cycle()
        .take(n)
        .map(|s| Block::new(BlockKind::Paragraph, (*s).to_string()))
        .collect()
}

/// The offline engine, except that it goes on after the blocks asked for with one of its own
/// and is cut there by its token limit, as a small model does.
struct GoesOn;

#[async_trait]
impl ChatModel for GoesOn {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request.clone()).await?;
        if request.user.starts_with("TASK: translate") {
            response
                .text
                .push_str("\n[[99]] And the same again and again and");
            response.truncated = true;
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "goes-on"
    }
}

#[tokio::test]
async fn an_answer_cut_in_a_block_of_the_models_own_keeps_the_blocks_asked_for() {
    let blocks = chapter();
    let ledger = HashMap::new();
    let input = ChapterInput {
        blocks: &blocks,
        source_lang: "en",
        target_lang: "es",
        glossary: &[],
        ledger: &ledger,
        ladder: &Ladder::default(),
        instruction: None,
        memory: &crate::memory::NOTHING,
    };
    let config = PipelineConfig {
        chunk_blocks: 1,
        ..PipelineConfig::default()
    };
    let out = translate_chapter(&GoesOn, &input, &config).await.unwrap();
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    assert_eq!(
        out.quality.repaired.total(),
        0,
        "{:?}",
        out.quality.repaired
    );
    assert_eq!(out.quality.retries, 0);
}
