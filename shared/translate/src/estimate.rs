//! What translating a book will use, cost and take, before any request: the quote a user sees
//! and the figure a run's cost cap is checked against.
//!
//! Tokens come from the requests the run will build (the pipeline's chunks and prompts, the term
//! pass's batches), counted as the offline engine counts them; a provider's tokenizer counts
//! somewhat differently. The duration follows the run's shape: the term pass, then the chapters
//! in the book's window, each taking the first place free (a pass's chunks run at the same
//! time, so a chapter's three passes are each as long as a typical answer of theirs). The
//! provider key's capacity is not modelled: a key that takes fewer requests at once than the
//! window asks for makes the run longer.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use booktr_formats::manuscript::Chapter;
use serde::Serialize;

use crate::glossary::GlossaryEntry;
use crate::memory::Remembered;
use crate::pipeline::{windowed, ChapterInput, ChapterTranslation, PassUsage, PipelineConfig};
use crate::terms::{candidates, estimate_terms, TermList};

/// What a cost cap reserves over an estimate: retried blocks and longer answers cost more than
/// foreseen, and work that has started must not go past the cap.
pub const RESERVE_MARGIN: f64 = 1.25;

/// US dollars per million tokens (input, output) as the providers list them; the offline engine
/// is free. Used for estimates only.
pub fn price_per_million(model: &str) -> (f64, f64) {
    match model {
        "gpt-4o-mini" => (0.15, 0.60),
        "gpt-4o" => (2.50, 10.00),
        "claude-3-haiku" => (0.25, 1.25),
        "claude-sonnet-4-20250514" => (3.00, 15.00),
        "gemini-2.0-flash" => (0.10, 0.40),
        "gemini-1.5-pro" => (1.25, 5.00),
        _ => (0.0, 0.0),
    }
}

pub fn cost(model: &str, input_tokens: u64, output_tokens: u64) -> f64 {
    let (input, output) = price_per_million(model);
    (input_tokens as f64 * input + output_tokens as f64 * output) / 1_000_000.0
}

/// How long a model takes to answer a request: a fixed part and a part per output token. The
/// default is typical of the hosted models at the time of writing (about 2 s to the first token,
/// then 100 tokens a second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    pub base: Duration,
    pub per_output_token: Duration,
}

impl Default for Pace {
    fn default() -> Self {
        Pace {
            base: Duration::from_secs(2),
            per_output_token: Duration::from_millis(10),
        }
    }
}

impl Pace {
    fn request(&self, output_tokens: u64) -> Duration {
        self.base + self.per_output_token * u32::try_from(output_tokens).unwrap_or(u32::MAX)
    }
}

/// The estimate for a book, pass by pass.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BookEstimate {
    pub terms: PassUsage,
    pub translate: PassUsage,
    pub review: PassUsage,
    pub polish: PassUsage,
    /// US dollars at the model's list price.
    pub cost: f64,
    pub seconds: u64,
}

impl BookEstimate {
    pub fn total(&self) -> PassUsage {
        [self.terms, self.translate, self.review, self.polish]
            .into_iter()
            .sum()
    }
}

/// One chapter's three passes, with the book's terms (or the glossary alone) in its prompts;
/// the blocks `memory` supplies cost nothing.
fn estimate_chapter(
    (chapter, memory): (&Chapter, &Remembered),
    source_lang: &str,
    target_lang: &str,
    glossary: &[GlossaryEntry],
    config: &PipelineConfig,
) -> [PassUsage; 3] {
    let input = ChapterInput {
        blocks: &chapter.blocks,
        source_lang,
        target_lang,
        glossary,
        ledger: &Default::default(),
        ladder: &Default::default(),
        instruction: None,
        memory,
    };
    ChapterTranslation::new(&input, config, None).estimate()
}

/// The whole run over `chapters` (those still to translate, each with what the owner's
/// translation memory supplies of it; `book_texts` is every block of the book the memory does
/// not supply, which the term pass reads), `window` chapters at a time.
pub fn estimate_book(
    chapters: &[(&Chapter, &Remembered)],
    book_texts: &[String],
    run: &RunShape<'_>,
    pace: &Pace,
) -> BookEstimate {
    let found = candidates(book_texts, run.glossary);
    let mut estimate = BookEstimate {
        terms: estimate_terms(&found, run.source_lang, run.target_lang, run.glossary),
        ..BookEstimate::default()
    };
    // The chapters' prompts carry the list's entries where they occur; the candidates' own
    // words stand in for their translations.
    let mut list = TermList::default();
    list.terms
        .extend(found.iter().map(|c| (c.term.clone(), c.term.clone())));
    let enforced = list.with_glossary(run.glossary);
    let terms = if estimate.terms.requests > 0 {
        pace.request(estimate.terms.output_tokens / u64::from(estimate.terms.requests))
    } else {
        Duration::ZERO
    };
    // The window's places: when each is free again. A chapter takes the first free place, as
    // the chapters job gives a finished chapter's place to the next.
    let mut places: BinaryHeap<Reverse<Duration>> = std::iter::repeat_n(
        Reverse(Duration::ZERO),
        run.window.clamp(1, chapters.len().max(1)),
    )
    .collect();
    let mut last_done = Duration::ZERO;
    for &(chapter, memory) in chapters {
        let passes = estimate_chapter(
            (chapter, memory),
            run.source_lang,
            run.target_lang,
            &enforced,
            run.config,
        );
        // A pass's chunks go at the same time, each pass as long as its typical answer;
        // the first pass's go one after the other when they carry a window on the chapter.
        let source_tokens = chapter
            .blocks
            .iter()
            .map(|block| crate::model::estimate_tokens(&block.text))
            .sum();
        let took: Duration = passes
            .iter()
            .enumerate()
            .filter(|(_, pass)| pass.requests > 0)
            .map(|(at, pass)| {
                let one = pace.request(pass.output_tokens / u64::from(pass.requests));
                if at == 0 && windowed(run.config, source_tokens) {
                    one * pass.requests
                } else {
                    one
                }
            })
            .sum();
        let Reverse(free) = places.pop().unwrap_or(Reverse(Duration::ZERO));
        last_done = last_done.max(free + took);
        places.push(Reverse(free + took));
        for (sum, pass) in [
            &mut estimate.translate,
            &mut estimate.review,
            &mut estimate.polish,
        ]
        .into_iter()
        .zip(passes)
        {
            *sum += pass;
        }
    }
    let duration = terms + last_done;
    let total = estimate.total();
    estimate.cost = cost(run.model, total.input_tokens, total.output_tokens);
    estimate.seconds = duration.as_secs();
    estimate
}

/// What a run's fallback model (`fallback`) would use over `chapters`, and its cost at its list
/// price: its passes over one block in [`crate::fallback::QUOTED_SHARE`] of each chapter, the
/// share a quote expects the first model to leave to it, with the glossary (not the book's
/// term list, which a quote only guesses) in its prompts. `run` is the fallback's shape: its
/// model and its profile's settings.
pub fn estimate_fallback(chapters: &[&Chapter], run: &RunShape<'_>) -> (PassUsage, f64) {
    let usage: PassUsage = chapters
        .iter()
        .map(|chapter| Chapter {
            title: None,
            blocks: crate::fallback::quoted_blocks(&chapter.blocks),
        })
        .filter(|sample| !sample.blocks.is_empty())
        .flat_map(|sample| {
            estimate_chapter(
                (&sample, &crate::memory::NOTHING),
                run.source_lang,
                run.target_lang,
                run.glossary,
                run.config,
            )
        })
        .sum();
    let cost = cost(run.model, usage.input_tokens, usage.output_tokens);
    (usage, cost)
}

/// What decides a run's requests besides its chapters.
pub struct RunShape<'a> {
    pub model: &'a str,
    pub source_lang: &'a str,
    pub target_lang: &'a str,
    pub glossary: &'a [GlossaryEntry],
    pub config: &'a PipelineConfig,
    /// Chapters translated at the same time.
    pub window: usize,
}

#[cfg(test)]
mod tests {
    use booktr_formats::manuscript::{Block, BlockKind};

    use super::*;

    fn chapter(paragraphs: usize) -> Chapter {
        let text =
            |i| format!("The whale passed the ship at dawn, and the crew counted {i} spouts.");
        Chapter {
            title: None,
            blocks: (0..paragraphs)
                .map(|i| Block::new(BlockKind::Paragraph, text(i)))
                .collect(),
        }
    }

    fn seconds(chapters: &[Chapter], window: usize) -> u64 {
        let chapters: Vec<(&Chapter, &Remembered)> = chapters
            .iter()
            .map(|c| (c, &crate::memory::NOTHING))
            .collect();
        let run = RunShape {
            model: "gpt-4o-mini",
            source_lang: "en",
            target_lang: "es",
            glossary: &[],
            config: &PipelineConfig::default(),
            window,
        };
        estimate_book(&chapters, &[], &run, &Pace::default()).seconds
    }

    #[test]
    fn a_fallback_is_quoted_for_one_block_in_ten_at_its_own_price() {
        let book = [chapter(40), chapter(5)];
        let chapters: Vec<&Chapter> = book.iter().collect();
        let config = PipelineConfig::default();
        let shape = |model| RunShape {
            model,
            source_lang: "en",
            target_lang: "es",
            glossary: &[],
            config: &config,
            window: 1,
        };
        let (usage, cheap) = estimate_fallback(&chapters, &shape("gpt-4o-mini"));
        let (same, dear) = estimate_fallback(&chapters, &shape("gpt-4o"));
        assert_eq!(usage, same);
        assert!(usage.requests > 0 && cheap > 0.0);
        assert!(dear > 10.0 * cheap, "{dear} against {cheap}");
        // Four blocks of the first chapter; none of the second's five.
        let none: Vec<&Chapter> = vec![&book[1]];
        assert_eq!(
            estimate_fallback(&none, &shape("gpt-4o")).0,
            PassUsage::default()
        );
    }

    #[test]
    fn the_blocks_the_memory_supplies_are_quoted_at_nothing() {
        let book = chapter(12);
        let run = RunShape {
            model: "gpt-4o-mini",
            source_lang: "en",
            target_lang: "es",
            glossary: &[],
            config: &PipelineConfig::default(),
            window: 1,
        };
        let quote =
            |memory: &Remembered| estimate_book(&[(&book, memory)], &[], &run, &Pace::default());
        let nothing = quote(&crate::memory::NOTHING);
        let all = Remembered {
            exact: (0..12).map(|i| (i, format!("texto {i}"))).collect(),
            ..Remembered::default()
        };
        assert_eq!(quote(&all).total(), PassUsage::default());
        assert_eq!(quote(&all).cost, 0.0);
        let half = Remembered {
            exact: (0..6).map(|i| (i, format!("texto {i}"))).collect(),
            ..Remembered::default()
        };
        let some = quote(&half).total();
        assert!(some.output_tokens < nothing.total().output_tokens * 6 / 10);
        assert!(some.output_tokens > nothing.total().output_tokens * 4 / 10);
    }

    #[test]
    fn a_finished_chapters_place_goes_to_the_next_in_the_quoted_duration() {
        // One long chapter first, then six short ones.
        let mut book = vec![chapter(160)];
        book.extend((0..6).map(|_| chapter(1)));
        let (long, short) = (seconds(&book[..1], 1), seconds(&book[1..2], 1));
        assert!(long > 6 * short, "{long} s against {short} s");

        assert!(seconds(&book, 1) >= long + 6 * short, "one at a time");
        // The short chapters go one after another beside the long one, not after it (as a
        // window of two waiting for its slowest would).
        assert_eq!(seconds(&book, 2), long);
        assert_eq!(seconds(&book, 128), long);
    }
}
