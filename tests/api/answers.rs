//! What models answer, as real ones do: a misbehaving model's flags reach the status, the book's
//! warnings and the notification; a real small model's recorded answers (made by
//! `scripts/real-model.sh`) replay into a book without chatter, its flagged blocks in English.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use async_trait::async_trait;
use booktr_core::ports::{KeyCheckError, Models};
use booktr_translate::checks::language_of;
use booktr_translate::ladder::Ladder;
use booktr_translate::misbehaving::{Fault, Misbehaving};
use booktr_translate::model::{ChatError, ChatModel};
use booktr_translate::offline::OfflineEngine;
use booktr_translate::pipeline::PipelineConfig;
use booktr_translate::pipeline::{translate_chapter, ChapterInput, ChapterTranslation};
use booktr_translate::profile::{Profile, Settings};
use booktr_translate::protocol::Pass;
use booktr_translate::providers::Family;
use booktr_translate::recorded::Replay;
use booktr_translate::terms::{candidates, translate_terms};
use serde_json::{json, Value};

use crate::helpers::{sample_txt, TestApp, TestUser};

/// Every request answered by a model spoiling every answer with `faults`.
struct Spoiling(&'static [Fault]);

#[async_trait]
impl Models for Spoiling {
    fn model(&self, _: &str, _: Option<String>) -> Result<Arc<dyn ChatModel>, ChatError> {
        Ok(Arc::new(Misbehaving::new(OfflineEngine, self.0, 1)))
    }

    async fn check_key(&self, _: Family, _: &str) -> Result<(), KeyCheckError> {
        Ok(())
    }
}

/// The sample book uploaded and translated to COMPLETED: the book, its translation status and
/// its owner.
async fn translated_sample(app: &TestApp) -> (Value, Value, TestUser) {
    let user = app.user().await;
    let id = app.upload_ok(&user.key, "voyage.txt", sample_txt()).await;
    app.wait_for_status(&user.key, &id, "EXTRACTED").await;
    let book = app.translate_to_end(&user.key, &id, json!({})).await;
    assert_eq!(book["status"], "COMPLETED", "{book}");
    let status: Value = app
        .get(&format!("/api/translate/status?bookId={id}"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    (book, status, user)
}

#[tokio::test]
async fn a_model_that_refuses_everything_leaves_a_book_flagged_in_status_warnings_and_notification()
{
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(Spoiling(&[Fault::Refusal])))
        .start()
        .await;
    let (book, status, user) = translated_sample(&app).await;

    let quality = &status["quality"];
    let flagged = quality["flaggedBlocks"].as_u64().unwrap();
    assert!(flagged > 0, "{quality}");
    assert_eq!(
        quality["flagged"]["refusal"].as_u64(),
        Some(flagged),
        "{quality}"
    );
    let warnings = book["warnings"].as_array().unwrap();
    let sentence = format!("Translation: {flagged} blocks flagged (");
    let refused = format!("{flagged} refused or commented on");
    assert!(
        warnings.iter().any(|w| {
            let w = w.as_str().unwrap();
            w.starts_with(&sentence) && w.contains(&refused)
        }),
        "{warnings:?}"
    );
    let page: Value = app
        .get("/api/notifications", &user.key)
        .await
        .json()
        .await
        .unwrap();
    let message = page["notifications"][0]["message"].as_str().unwrap();
    assert!(message.contains("blocks flagged"), "{message}");
}

#[tokio::test]
async fn a_clean_model_leaves_a_clean_book_with_no_translation_warning() {
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(Spoiling(&[])))
        .start()
        .await;
    let (book, status, _) = translated_sample(&app).await;
    assert_eq!(status["quality"]["flaggedBlocks"], 0, "{status}");
    assert!(
        !book["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|w| w.as_str().unwrap().starts_with("Translation:")),
        "{book}"
    );
}

/// Qwen2.5-Coder-1.5B-Instruct (Q4 GGUF, llama.cpp's server) translating Frankenstein's first
/// letter into French, as `RECORD=1 bash scripts/quality-bench.sh` recorded it (the letter as
/// the bench extracts it from `corpus/reference`). Its first answer, for the whole letter
/// at once, runs one sentence round and round until the token limit.
const RECORDED: &str = include_str!("../fixtures/real-model/qwen2.5-coder-1.5b.fr.jsonl");
const LETTER: &[u8] = include_bytes!("../fixtures/real-model/frankenstein-letter-1.txt");

/// The recorded letter, extracted as an upload of it is.
fn letter() -> booktr_formats::manuscript::Manuscript {
    let format = booktr_core::books::sniff("letter.txt", LETTER).unwrap();
    booktr_formats::extract(format.reader(), LETTER).unwrap()
}

/// The letter's term list as `booktr translate` makes it (the recorded term pass), as the
/// glossary every pass then enforces.
async fn letter_terms(
    model: &dyn ChatModel,
    book: &booktr_formats::manuscript::Manuscript,
    config: &PipelineConfig,
) -> Vec<booktr_translate::glossary::GlossaryEntry> {
    let texts: Vec<String> = book.chapters[0]
        .blocks
        .iter()
        .map(|b| b.plain_text())
        .collect();
    translate_terms(model, &candidates(&texts, &[]), "en", "fr", &[], config)
        .await
        .expect("the term pass was recorded")
        .with_glossary(&[])
}

#[tokio::test]
async fn a_real_small_models_recorded_first_pass_replays_into_a_french_letter_with_no_paragraph_twice(
) {
    let book = letter();
    let model = Replay::from_lines(RECORDED).unwrap();
    let config = PipelineConfig::default();
    // The run's term list, then the chapter's first pass, as `booktr translate` makes them.
    let glossary = letter_terms(&model, &book, &config).await;
    let ladder = Ladder::default();
    let ledger = HashMap::new();
    let input = ChapterInput {
        blocks: &book.chapters[0].blocks,
        source_lang: "en",
        target_lang: "fr",
        glossary: &glossary,
        ledger: &ledger,
        ladder: &ladder,
        instruction: None,
        memory: &booktr_translate::memory::NOTHING,
    };
    let mut translation = ChapterTranslation::new(&input, &config, None);
    translation
        .run_pass(&model)
        .await
        .expect("every request of the first pass was recorded");
    let quality = translation.checkpoint().quality().clone();
    let blocks = translation.blocks_so_far();
    let failed: BTreeSet<usize> = translation.failed_blocks();
    let (mut judged, mut french) = (0, 0);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, (block, original)) in blocks.iter().zip(&book.chapters[0].blocks).enumerate() {
        for chatter in ["Voici", "```", "<think>", "traduction", "Translation"] {
            assert!(!block.text.contains(chatter), "{}", block.text);
        }
        if failed.contains(&i) {
            assert_eq!(block.text, original.text, "a failed block keeps its source");
            continue;
        }
        // No two blocks with different sources carry the same translation.
        if block.text.chars().filter(|c| c.is_alphabetic()).count() >= 30 {
            if let Some(other) = seen.insert(block.text.clone(), i) {
                panic!("blocks {other} and {i} carry the same text: {}", block.text);
            }
        }
        if let Some(lang) = language_of(&block.plain_text()) {
            judged += 1;
            if lang == "fr" {
                french += 1;
            } else {
                panic!("silently {lang}: {}", block.text);
            }
        }
    }
    assert!(
        judged >= 8 && french == judged,
        "{french} of {judged} in French"
    );
    // The looping answer was cut at its limit and repeated itself: its blocks were asked for
    // again, in halves and one at a time, and repaired.
    assert!(quality.repaired.total() >= 5, "{:?}", quality.repaired);
    assert!(quality.retries > 0);
}

/// The same model and letter with nothing set by hand, as the quality bench runs it against the
/// model's own local server (`LETTER=1 RECORD=1 SEEDS=1 bash scripts/quality-bench.sh`): the
/// small profile, one block a request with the translation so far as its window, a second
/// translation of every block of 60 letters or more with the plain prompt, the review and the
/// polish only for the blocks that need a look. Three of its first answers went on past their
/// block with blocks of the model's own until the token limit cut them.
const RECORDED_SMALL_PROFILE: &str =
    include_str!("../fixtures/real-model/qwen2.5-coder-1.5b.fr.small-profile.jsonl");
const SCORED_SMALL_PROFILE: &str =
    include_str!("../fixtures/real-model/frankenstein-letter-1.fr.small-profile.txt");

/// A recorded model, served as on a server the operator chose (a local OpenAI-compatible one).
struct OnLocalServer(Replay);

#[async_trait]
impl ChatModel for OnLocalServer {
    async fn complete(
        &self,
        request: booktr_translate::model::ChatRequest,
    ) -> Result<booktr_translate::model::ChatResponse, ChatError> {
        self.0.complete(request).await
    }

    fn name(&self) -> &str {
        "local"
    }

    fn on_operators_server(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn a_real_small_model_on_a_local_server_runs_the_small_profile_and_replays_into_the_book_the_bench_scored(
) {
    let book = letter();
    let model = OnLocalServer(Replay::from_lines(RECORDED_SMALL_PROFILE).unwrap());
    // Nothing set by hand: the profile comes from where the model runs.
    let (profile, config) = Settings::default().for_model(&model);
    assert_eq!(profile, Profile::Small);
    // The term list holds the letter's one name, as the 1821 translation renders it: no
    // function word or contraction from a sentence's start, no common noun bound to itself.
    let glossary = letter_terms(&model, &book, &config).await;
    let listed: Vec<(&str, &str)> = glossary
        .iter()
        .map(|e| (e.source.as_str(), e.target.as_str()))
        .collect();
    assert_eq!(listed, [("Margaret", "Marguerite")]);
    let (ladder, ledger) = (Ladder::default(), HashMap::new());
    let input = ChapterInput {
        blocks: &book.chapters[0].blocks,
        source_lang: "en",
        target_lang: "fr",
        glossary: &glossary,
        ledger: &ledger,
        ladder: &ladder,
        instruction: None,
        memory: &booktr_translate::memory::NOTHING,
    };
    let out = translate_chapter(&model, &input, &config)
        .await
        .expect("every request of the three passes was recorded");
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    // Three answers went on past their block with blocks of the model's own until the token
    // limit cut them: the blocks asked for were whole, kept, and nothing was asked again.
    assert_eq!(
        out.quality.repaired.total(),
        0,
        "{:?}",
        out.quality.repaired
    );
    assert_eq!(out.quality.retries, 0);
    assert!(out.quality.removed.extra >= 3, "{:?}", out.quality.removed);
    // The ten paragraphs were translated twice; five kept their second, more complete
    // translation, and the two translations' agreement is in every paragraph's confidence.
    let second = out.quality.second_opinion;
    assert_eq!((second.asked, second.taken), (10, 5));
    let trusted_less = out
        .quality
        .confidence
        .values()
        .filter(|c| **c < 100)
        .count();
    assert_eq!(trusted_less, 6, "{:?}", out.quality.confidence);
    // The later passes were sent only the blocks that needed a look: the heading in the
    // sample. The paragraphs whose answers kept "Margaret" have the book's "Marguerite" put in.
    let sent = out.quality.sent;
    assert_eq!((sent.review, sent.polish), (1, 1));
    assert_eq!(
        (out.quality.changed.review, out.quality.changed.polish),
        (0, 0)
    );
    assert!(out.quality.glossary_violations.is_empty());
    // Every block has a confidence; the blocks repaired on the way are trusted least.
    assert_eq!(out.quality.confidence.len(), book.chapters[0].blocks.len());
    let made: Vec<String> = out.blocks.iter().map(|b| b.plain_text()).collect();
    assert_eq!(made.join("\n\n") + "\n", SCORED_SMALL_PROFILE);
}

/// The same recorded letter as chapter after chapter of one run: the small model answers the
/// review with the block as it was sent it (the heading the sample sends, one a chapter), and
/// once twelve blocks of the pass came back so, three in four or more, the run's ladder says the
/// pass is not to be asked again: the next chapter skips it and its quality record says so.
#[tokio::test]
async fn a_real_small_models_echoed_later_passes_stop_being_asked_within_a_run() {
    let book = letter();
    let recorded = OnLocalServer(Replay::from_lines(RECORDED_SMALL_PROFILE).unwrap());
    let (_, config) = Settings::default().for_model(&recorded);
    let glossary = letter_terms(&recorded, &book, &config).await;
    let (ladder, ledger) = (Ladder::default(), HashMap::new());
    let input = ChapterInput {
        blocks: &book.chapters[0].blocks,
        source_lang: "en",
        target_lang: "fr",
        glossary: &glossary,
        ledger: &ledger,
        ladder: &ladder,
        instruction: None,
        memory: &booktr_translate::memory::NOTHING,
    };
    let mut review_stopped = Vec::new();
    for chapter in 1..=13 {
        let model = OnLocalServer(Replay::from_lines(RECORDED_SMALL_PROFILE).unwrap());
        let out = translate_chapter(&model, &input, &config)
            .await
            .unwrap_or_else(|e| panic!("chapter {chapter}: {e}"));
        let skipped = out.quality.echo_stopped.contains(&Pass::Review);
        assert_eq!(skipped, chapter == 13, "chapter {chapter}");
        review_stopped.push(ladder.echoes(Pass::Review));
    }
    // One block a chapter was sent to the review and came back as sent: after the twelfth.
    let first_stopped = review_stopped.iter().position(|stopped| *stopped);
    assert_eq!(first_stopped, Some(11), "{review_stopped:?}");
}
