//! `cargo bench -p booktr-translate --bench checks`: do the checks cry wolf? Two measurements
//! on the corpus (`corpus/`), printed per book:
//!
//! 1. A clean model, the whole pipeline: every book translated by the offline engine into four
//!    languages (one in another script); every flagged block is a false flag, except where the
//!    pseudo-translation cannot change the text (it accents Latin vowels, so an Arabic book's
//!    blocks come back as they were, and are rightly untranslated).
//! 2. Language identification on real text: every block of every book, taken as a correct
//!    translation into the book's own language from three others; every block the
//!    wrong-language check flags is a false flag.
#![allow(clippy::expect_used)]

use std::path::Path;

use booktr_formats::markup::plain_text;
use std::collections::HashMap;

use booktr_formats::manuscript::Manuscript;
use booktr_translate::checks::{Checks, Problem};
use booktr_translate::ladder::Ladder;
use booktr_translate::offline::OfflineEngine;
use booktr_translate::pipeline::{ChapterInput, ChapterTranslation, PipelineConfig, Quality};
use booktr_translate::terms::{candidates, translate_terms};

const BOOKS: [&str; 4] = [
    "moby-dick.epub",
    "childrens-literature.epub",
    "wasteland.epub",
    "regime-anticancer-arabic.epub",
];
const TARGETS: [&str; 4] = ["es", "fr", "de", "ja"];

#[tokio::main]
async fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    let (mut all_blocks, mut all_flags, mut all_judged, mut all_language) = (0, 0, 0, 0);
    for name in BOOKS {
        let bytes = std::fs::read(corpus.join(name)).expect("corpus book");
        let book = booktr_formats::epub::extract(&bytes).expect("extract");
        let own = book.language.clone().unwrap_or_else(|| "en".into());
        let own = own.split('-').next().unwrap_or("en").to_string();
        for target in TARGETS {
            let qualities = translate(&book, &own, target).await;
            let blocks: usize = book.chapters.iter().map(|c| c.blocks.len()).sum();
            let mut kinds = std::collections::BTreeMap::<Problem, usize>::new();
            let mut flagged = 0;
            for quality in &qualities {
                flagged += quality.flagged_blocks().len();
                for (kind, n) in quality.flag_counts() {
                    *kinds.entry(kind).or_default() += n;
                }
            }
            println!("{name} -> {target} (offline engine): {flagged} of {blocks} blocks flagged {kinds:?}");
            if own != "ar" {
                all_blocks += blocks;
                all_flags += flagged;
            }
        }
        // Real text in the book's language, as a translation from three other languages.
        let (mut judged, mut wrong) = (0, 0);
        for source_lang in ["es", "fr", "de"]
            .into_iter()
            .chain((own != "en").then_some("en"))
        {
            let checks = Checks::new(source_lang, &own, true);
            for block in book.chapters.iter().flat_map(|c| &c.blocks) {
                let text = plain_text(&block.text);
                if text.chars().filter(|c| c.is_alphabetic()).count() < 4 {
                    continue;
                }
                judged += 1;
                // No source text: the script check judges the block on its own.
                if checks.in_wrong_language("", &text) {
                    wrong += 1;
                    if wrong <= 3 {
                        println!("  flagged as not {own} (from {source_lang}): {text:.120}");
                    }
                }
            }
        }
        println!(
            "{name}: language identification on its own {own} text: {wrong} of {judged} block checks flagged ({:.2}%)",
            wrong as f64 * 100.0 / judged.max(1) as f64
        );
        all_judged += judged;
        all_language += wrong;
    }
    println!(
        "False flags: clean model {all_flags} of {all_blocks} blocks ({:.2}%, Latin-script books into es, fr, de, ja); \
         language identification {all_language} of {all_judged} block checks ({:.2}%)",
        all_flags as f64 * 100.0 / all_blocks.max(1) as f64,
        all_language as f64 * 100.0 / all_judged.max(1) as f64
    );
}

/// The book's chapters through the three passes of the pipeline, with the book's term list, as
/// the chapter jobs run them (one after the other here: the offline engine does not wait).
async fn translate(book: &Manuscript, source: &str, target: &str) -> Vec<Quality> {
    let config = PipelineConfig::default();
    let texts: Vec<String> = book
        .chapters
        .iter()
        .flat_map(|c| c.blocks.iter().map(|b| b.plain_text()))
        .collect();
    let found = candidates(&texts, &[]);
    let terms = translate_terms(&OfflineEngine, &found, source, target, &[], &config)
        .await
        .expect("terms");
    let enforced = terms.with_glossary(&[]);
    let (ledger, ladder) = (HashMap::new(), Ladder::default());
    let mut qualities = Vec::new();
    for chapter in &book.chapters {
        let input = ChapterInput {
            blocks: &chapter.blocks,
            source_lang: source,
            target_lang: target,
            glossary: &enforced,
            ledger: &ledger,
            ladder: &ladder,
            instruction: None,
            memory: &booktr_translate::memory::NOTHING,
        };
        let mut translation = ChapterTranslation::new(&input, &config, None);
        while translation.next_pass().is_some() {
            translation.run_pass(&OfflineEngine).await.expect("pass");
        }
        qualities.push(translation.finish().quality);
    }
    qualities
}
