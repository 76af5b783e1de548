//! `cargo bench -p booktr-translate`: one long Moby-Dick chapter through the three passes with a
//! stand-in model that answers after a fixed delay. Prints the wall time beside the ideal (the
//! first pass's chunks one after the other, each later pass's at once: (chunks + 2) x delay), the
//! prompt overhead (input tokens sent / (3 x source tokens)) with a 50-entry glossary, and the
//! output tokens of each pass.
//!
//! Targets: wall time within 1.3x of the ideal; overhead under 1.6.
#![allow(clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::model::{estimate_tokens, ChatError, ChatModel, ChatRequest, ChatResponse};
use booktr_translate::offline::OfflineEngine;
use booktr_translate::pipeline::{translate_chapter, ChapterInput, PipelineConfig};

const DELAY: Duration = Duration::from_millis(400);

/// The offline engine, answering after a fixed delay like a remote model would.
struct Delayed;

#[async_trait]
impl ChatModel for Delayed {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        tokio::time::sleep(DELAY).await;
        OfflineEngine.complete(request).await
    }

    fn name(&self) -> &str {
        "delayed-offline"
    }
}

/// 50 entries, the first few of which occur in Moby-Dick's text.
fn glossary() -> Vec<GlossaryEntry> {
    let real = [
        "whale", "Ahab", "Queequeg", "Starbuck", "harpoon", "ship", "sea", "captain", "Pequod",
        "Stubb",
    ];
    let mut entries: Vec<GlossaryEntry> = real
        .iter()
        .map(|s| GlossaryEntry {
            source: (*s).into(),
            target: format!("{s}-es"),
            context: None,
        })
        .collect();
    for i in entries.len()..50 {
        entries.push(GlossaryEntry {
            source: format!("term{i}"),
            target: format!("término{i}"),
            context: Some("unused".into()),
        });
    }
    entries
}

#[tokio::main]
async fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/moby-dick.epub");
    let manuscript = booktr_formats::epub::extract(&std::fs::read(path).expect("moby-dick.epub"))
        .expect("extract");
    // The longest chapter: the hardest case for parallelism.
    let chapter = manuscript
        .chapters
        .iter()
        .max_by_key(|c| c.word_count())
        .expect("chapters");
    let glossary = glossary();
    let ledger = HashMap::new();
    let input = ChapterInput {
        blocks: &chapter.blocks,
        source_lang: "en",
        target_lang: "es",
        glossary: &glossary,
        ledger: &ledger,
        ladder: &Default::default(),
        instruction: None,
        memory: &booktr_translate::memory::NOTHING,
    };
    let config = PipelineConfig::default();
    let source_tokens: u64 = chapter
        .blocks
        .iter()
        .map(|b| estimate_tokens(&b.text))
        .sum();

    let started = Instant::now();
    let out = translate_chapter(&Delayed, &input, &config)
        .await
        .expect("translate");
    let wall = started.elapsed();
    let q = &out.quality;
    let requests = q.translate.requests + q.review.requests + q.polish.requests;
    let input_tokens = q.translate.input_tokens + q.review.input_tokens + q.polish.input_tokens;
    // The first pass's chunks go one after the other (each sees the translation before it),
    // the later passes' all at once.
    let ideal = DELAY * (q.translate.requests + 2);
    println!(
        "chapter {:?}: {} words, ~{} source tokens, {} chunks per pass, concurrency {}",
        chapter.title.as_deref().unwrap_or(""),
        chapter.word_count(),
        source_tokens,
        q.translate.requests,
        config.concurrency
    );
    println!(
        "wall time {:>7.0} ms   ideal {:>5.0} ms ({} first-pass chunks and 2 passes x {} ms)   ratio {:.2} (target <= 1.3)",
        wall.as_secs_f64() * 1e3,
        ideal.as_secs_f64() * 1e3,
        q.translate.requests,
        DELAY.as_millis(),
        wall.as_secs_f64() / ideal.as_secs_f64()
    );
    println!(
        "prompt overhead {:.2} (target < 1.6): {} input tokens in {} requests for 3 x {} source tokens, 50-entry glossary",
        input_tokens as f64 / (3 * source_tokens) as f64,
        input_tokens,
        requests,
        source_tokens
    );
    println!(
        "output tokens: translate {}, review {}, polish {}",
        q.translate.output_tokens, q.review.output_tokens, q.polish.output_tokens
    );
    println!("glossary compliance {:.1}%", q.glossary_compliance());
}
