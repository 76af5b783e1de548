//! A whole book: chapters in order (the term ledger carries from one to the next), each through
//! the three passes; and which model a run uses.

use std::collections::HashMap;
use std::time::Duration;

use booktr_formats::manuscript::Manuscript;

use crate::glossary::GlossaryEntry;
use crate::model::{ChatError, ChatModel};
use crate::offline::OfflineEngine;
use crate::pipeline::{translate_chapter_reporting, ChapterInput, PipelineConfig, Quality};
use crate::protocol::Pass;
use crate::providers::{lookup, HttpModel};

/// The model for a run: the provider's when a key for its family is configured (the user's own,
/// else the server's), else the offline engine. `env` looks up environment variables.
pub fn choose_model(
    model: &str,
    user_key: Option<String>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Box<dyn ChatModel>, ChatError> {
    let (family, _) =
        lookup(model).ok_or_else(|| ChatError::Fatal(format!("unknown model '{model}'")))?;
    let (key_var, url_var) = family.env_names();
    match user_key
        .or_else(|| env(key_var))
        .filter(|k| !k.trim().is_empty())
    {
        Some(key) => Ok(Box::new(HttpModel::new(
            model,
            key,
            env(url_var),
            Duration::from_secs(180),
        )?)),
        None => Ok(Box::new(OfflineEngine)),
    }
}

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

pub struct BookTranslation {
    pub manuscript: Manuscript,
    pub qualities: Vec<Quality>,
    pub ledger: HashMap<String, String>,
}

/// Progress of a book's translation.
pub enum Event<'a> {
    PassDone {
        chapter: usize,
        pass: Pass,
    },
    ChapterDone {
        chapter: usize,
        quality: &'a Quality,
    },
}

/// Translates every chapter in order; `on_event` is told as each pass and each chapter ends.
pub async fn translate_book(
    model: &dyn ChatModel,
    manuscript: &Manuscript,
    source_lang: &str,
    target_lang: &str,
    glossary: &[GlossaryEntry],
    config: &PipelineConfig,
    on_event: &(dyn Fn(Event<'_>) + Sync),
) -> Result<BookTranslation, ChatError> {
    let mut translated = manuscript.clone();
    let mut ledger: HashMap<String, String> = glossary
        .iter()
        .map(|e| (e.source.clone(), e.target.clone()))
        .collect();
    let mut qualities = Vec::with_capacity(manuscript.chapters.len());
    for (index, chapter) in manuscript.chapters.iter().enumerate() {
        let input = ChapterInput {
            blocks: &chapter.blocks,
            source_lang,
            target_lang,
            glossary,
            ledger: &ledger,
        };
        let on_pass = |pass| {
            on_event(Event::PassDone {
                chapter: index,
                pass,
            })
        };
        let output = translate_chapter_reporting(model, &input, config, &on_pass).await?;
        // The glossary's choices are fixed; other terms keep their first translation.
        for (source, target) in output.terms {
            ledger.entry(source).or_insert(target);
        }
        let target_chapter = &mut translated.chapters[index];
        // The chapter's title follows the block that carries the same words, translated. A title
        // no block repeats (a navigation label of its own) stays as the book had it.
        let title_block = chapter.title.as_deref().and_then(|title| {
            chapter
                .blocks
                .iter()
                .position(|b| b.plain_text().trim() == title.trim())
        });
        if let Some(position) = title_block {
            target_chapter.title = Some(output.blocks[position].plain_text().trim().to_string());
        }
        target_chapter.blocks = output.blocks;
        on_event(Event::ChapterDone {
            chapter: index,
            quality: &output.quality,
        });
        qualities.push(output.quality);
    }
    translated.language = Some(target_lang.to_string());
    Ok(BookTranslation {
        manuscript: translated,
        qualities,
        ledger,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_key_the_offline_engine_is_used() {
        let model = choose_model("gpt-4o-mini", None, |_| None).unwrap();
        assert_eq!(model.name(), crate::offline::NAME);
        let model = choose_model("claude-3-haiku", None, |v| {
            (v == "ANTHROPIC_API_KEY").then(|| "sk".into())
        })
        .unwrap();
        assert_eq!(model.name(), "claude-3-haiku");
        let model = choose_model("gemini-2.0-flash", Some("user-key".into()), |_| None).unwrap();
        assert_eq!(
            model.name(),
            "gemini-2.0-flash",
            "the user's own key counts"
        );
        assert!(choose_model("gpt-9", None, |_| None).is_err());
    }

    #[tokio::test]
    async fn a_book_is_translated_chapter_by_chapter_with_titles_following_headings() {
        let bytes = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/corpus/wasteland.epub"),
        )
        .unwrap();
        let manuscript = booktr_formats::epub::extract(&bytes).unwrap();
        let glossary = vec![GlossaryEntry {
            source: "April".into(),
            target: "Abril".into(),
            context: None,
        }];
        let events = std::sync::Mutex::new((0, 0));
        let count = |event: Event<'_>| {
            let mut seen = events.lock().unwrap();
            match event {
                Event::PassDone { .. } => seen.0 += 1,
                Event::ChapterDone { .. } => seen.1 += 1,
            }
        };
        let done = translate_book(
            &OfflineEngine,
            &manuscript,
            "en",
            "es",
            &glossary,
            &PipelineConfig::default(),
            &count,
        )
        .await
        .unwrap();
        let chapters = manuscript.chapters.len();
        assert_eq!(*events.lock().unwrap(), (3 * chapters, chapters));
        assert_eq!(done.manuscript.chapters.len(), manuscript.chapters.len());
        let burial = done
            .manuscript
            .chapters
            .iter()
            .find(|c| c.plain_text().contains("Abril"))
            .unwrap();
        assert_eq!(burial.title.as_deref(), Some("Ì. THÉ BÜRÌÀL ÖF THÉ DÉÀD"));
        assert!(done
            .qualities
            .iter()
            .all(|q| q.missing_blocks.is_empty() && q.broken_marks_blocks.is_empty()));
        assert_eq!(done.manuscript.language.as_deref(), Some("es"));
    }
}
