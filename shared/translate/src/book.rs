//! A whole book on one machine (`booktr translate`), on the server's plan: the book-wide term
//! pass, then chapters in parallel, each through the three passes; and which model a run uses.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use booktr_formats::manuscript::{Block, BlockKind, Manuscript};
use futures::stream::{self, StreamExt};

use crate::estimate::{cost, RESERVE_MARGIN};
use crate::glossary::GlossaryEntry;
use crate::ladder::Ladder;
use crate::model::{ChatError, ChatModel};
use crate::offline::OfflineEngine;
use crate::pipeline::{
    ChapterInput, ChapterOutput, ChapterTranslation, PassUsage, PipelineConfig, Quality,
};
use crate::protocol::Pass;
use crate::providers::{lookup, HttpModel};
use crate::terms::{candidates, estimate_terms, translate_terms, TermList};

/// The model for a run: the provider's when a key for its family is configured (the user's own,
/// else the server's), else the offline engine. `env` looks up environment variables.
pub fn choose_model(
    model: &str,
    user_key: Option<String>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Box<dyn ChatModel>, ChatError> {
    let (family, _) =
        lookup(model).ok_or_else(|| ChatError::Fatal(format!("unknown model '{model}'")))?;
    let (key_var, url_var) = crate::providers::env_names(family);
    match user_key
        .or_else(|| env(key_var))
        .filter(|k| !k.trim().is_empty())
    {
        Some(key) => Ok(Box::new(HttpModel::new(
            model,
            key,
            env(url_var),
            model_timeout(&env),
        )?)),
        None => Ok(Box::new(OfflineEngine)),
    }
}

/// How long one model request may take: `BOOKTR_MODEL_TIMEOUT_SECS` (1 to 3600), else 180 s,
/// which a hosted model's longest answer fits. A small model on a CPU writes a chunk's answer
/// in minutes, and a local server answers one request at a time while the others queue.
fn model_timeout(env: &impl Fn(&str) -> Option<String>) -> Duration {
    env("BOOKTR_MODEL_TIMEOUT_SECS")
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|s| (1..=3600).contains(s))
        .map_or(Duration::from_secs(180), Duration::from_secs)
}

/// How [`translate_book`] runs.
#[derive(Debug, Clone)]
pub struct BookOptions {
    /// Chapters translated at the same time.
    pub parallel: usize,
    /// A cap on the model cost in US dollars: no pass starts that could take the run past it.
    pub max_cost: Option<f64>,
    /// The model whose list price counts against the cap.
    pub model: String,
}

pub struct BookTranslation {
    /// The book with every translated chapter; chapters left out at the cost cap keep their
    /// source text.
    pub manuscript: Manuscript,
    /// The translated chapters' quality records, in chapter order.
    pub qualities: Vec<Quality>,
    /// The book's term list, and what finding it cost.
    pub terms: TermList,
    /// Chapters (indexes) left untranslated because the next pass would have passed the cap.
    pub stopped_at_cap: Vec<usize>,
}

/// Progress of a book's translation.
pub enum Event<'a> {
    TermsDone {
        found: usize,
    },
    ChapterStarted {
        chapter: usize,
    },
    PassDone {
        chapter: usize,
        pass: Pass,
        /// The chapter's blocks as the passes so far left them.
        blocks: &'a [Block],
    },
    ChapterDone {
        chapter: usize,
        quality: &'a Quality,
    },
}

/// Reservations against the cost cap, shared by the chapters in flight (the server does the
/// same on the book's record: `booktr_core::jobs::cost`).
struct CostCap {
    cap: Option<f64>,
    model: String,
    /// Spent plus reserved, in US dollars.
    committed: Mutex<f64>,
}

impl CostCap {
    /// Reserves a pass's estimated cost; None when it does not fit under the cap.
    fn reserve(&self, estimate: PassUsage) -> Option<f64> {
        let amount =
            cost(&self.model, estimate.input_tokens, estimate.output_tokens) * RESERVE_MARGIN;
        let mut committed = self.committed.lock().unwrap_or_else(|p| p.into_inner());
        if self.cap.is_some_and(|cap| *committed + amount > cap) {
            return None;
        }
        *committed += amount;
        Some(amount)
    }

    fn settle(&self, reserved: f64, used: PassUsage) {
        let spent = cost(&self.model, used.input_tokens, used.output_tokens);
        *self.committed.lock().unwrap_or_else(|p| p.into_inner()) += spent - reserved;
    }
}

/// Translates the book as the server does: the book-wide term pass first, then `parallel`
/// chapters at a time, each in three passes with the glossary and the term list enforced.
/// `on_event` is told as the term list is ready and as chapters start, pass and end.
#[allow(clippy::too_many_arguments)]
pub async fn translate_book(
    model: &dyn ChatModel,
    manuscript: &Manuscript,
    source_lang: &str,
    target_lang: &str,
    glossary: &[GlossaryEntry],
    config: &PipelineConfig,
    options: &BookOptions,
    on_event: &(dyn Fn(Event<'_>) + Sync),
) -> Result<BookTranslation, ChatError> {
    let texts: Vec<String> = manuscript
        .chapters
        .iter()
        .flat_map(|c| c.blocks.iter().map(|b| b.plain_text()))
        .collect();
    let found = candidates(&texts, glossary);
    let budget = CostCap {
        cap: options.max_cost,
        model: options.model.clone(),
        committed: Mutex::new(0.0),
    };
    let terms = if found.is_empty() {
        TermList::default()
    } else {
        let Some(reserved) =
            budget.reserve(estimate_terms(&found, source_lang, target_lang, glossary))
        else {
            return Ok(BookTranslation {
                manuscript: manuscript.clone(),
                qualities: Vec::new(),
                terms: TermList::default(),
                stopped_at_cap: (0..manuscript.chapters.len()).collect(),
            });
        };
        let list =
            translate_terms(model, &found, source_lang, target_lang, glossary, config).await?;
        budget.settle(reserved, list.usage);
        list
    };
    on_event(Event::TermsDone {
        found: terms.terms.len(),
    });
    let enforced = terms.with_glossary(glossary);
    let no_ledger = HashMap::new();
    // The run's own: which rungs of the repair ladder work for this model.
    let ladder = Ladder::default();

    let chapters = stream::iter(manuscript.chapters.iter().enumerate())
        .map(|(index, chapter)| {
            let (enforced, no_ledger, budget, ladder) = (&enforced, &no_ledger, &budget, &ladder);
            async move {
                on_event(Event::ChapterStarted { chapter: index });
                let input = ChapterInput {
                    blocks: &chapter.blocks,
                    source_lang,
                    target_lang,
                    glossary: enforced,
                    ledger: no_ledger,
                    ladder,
                };
                let mut translation = ChapterTranslation::new(&input, config, None);
                // A whole chapter is reserved at once: with nothing stored between runs, a
                // chapter stopped after some passes would be paid for and thrown away.
                let Some(reserved) = budget.reserve(translation.estimate().into_iter().sum())
                else {
                    return Ok((index, None));
                };
                let mut result = Ok(());
                while let Some(pass) = translation.next_pass() {
                    if let Err(e) = translation.run_pass(model).await {
                        result = Err(e);
                        break;
                    }
                    on_event(Event::PassDone {
                        chapter: index,
                        pass,
                        blocks: &translation.blocks_so_far(),
                    });
                }
                let quality = translation.checkpoint().quality();
                budget.settle(
                    reserved,
                    Pass::ALL.map(|p| quality.usage(p)).into_iter().sum(),
                );
                result?;
                let output = translation.finish();
                on_event(Event::ChapterDone {
                    chapter: index,
                    quality: &output.quality,
                });
                Ok::<_, ChatError>((index, Some(output)))
            }
        })
        .buffer_unordered(options.parallel.max(1))
        .collect::<Vec<_>>()
        .await;

    let mut translated = manuscript.clone();
    let mut outputs: Vec<(usize, Option<ChapterOutput>)> =
        chapters.into_iter().collect::<Result<_, _>>()?;
    outputs.sort_by_key(|(index, _)| *index);
    let mut qualities = Vec::with_capacity(outputs.len());
    let mut stopped_at_cap = Vec::new();
    for (index, output) in outputs {
        let Some(output) = output else {
            stopped_at_cap.push(index);
            continue;
        };
        let chapter = &manuscript.chapters[index];
        let target_chapter = &mut translated.chapters[index];
        if let Some(title) = chapter.title.as_deref() {
            if let Some(translated) = translated_title(title, &chapter.blocks, &output.blocks) {
                target_chapter.title = Some(translated);
            }
        }
        target_chapter.blocks = output.blocks;
        qualities.push(output.quality);
    }
    if stopped_at_cap.is_empty() {
        translated.language = Some(target_lang.to_string());
    }
    Ok(BookTranslation {
        manuscript: translated,
        qualities,
        terms,
        stopped_at_cap,
    })
}

/// A chapter's title in the target language, so that the navigation, a PDF's contents and the
/// share page name a chapter as its heading reads: the translation of the block that carries
/// the same words as `title`, else of the headings that carry them one after the other (a
/// number and a name are often two headings apart: `<h3>190</h3>` ... `<h4>A FOUR-LEAVED
/// CLOVER</h4>` under the label "190 A FOUR-LEAVED CLOVER"). None when no block carries them
/// (a navigation label of its own): the title then stays as the book had it.
pub fn translated_title(title: &str, source: &[Block], translated: &[Block]) -> Option<String> {
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let title = words(title);
    let texts: Vec<String> = source.iter().map(|b| words(&b.plain_text())).collect();
    let parts: Vec<usize> = match texts.iter().position(|t| *t == title) {
        Some(whole) => vec![whole],
        None => {
            let mut rest = title.as_str();
            let mut parts = Vec::new();
            for (i, text) in texts.iter().enumerate() {
                let heading = matches!(source[i].kind, BlockKind::Heading { .. });
                if rest.is_empty() || !heading || text.is_empty() {
                    continue;
                }
                if rest == text {
                    rest = "";
                    parts.push(i);
                } else if let Some(after) = rest
                    .strip_prefix(text.as_str())
                    .and_then(|r| r.strip_prefix(' '))
                {
                    rest = after;
                    parts.push(i);
                }
            }
            if !rest.is_empty() {
                return None;
            }
            parts
        }
    };
    if title.is_empty() || parts.is_empty() {
        return None;
    }
    let translated: Vec<String> = parts
        .iter()
        .map(|&i| translated.get(i).map(|b| words(&b.plain_text())))
        .collect::<Option<_>>()?;
    let translated: Vec<String> = translated.into_iter().filter(|t| !t.is_empty()).collect();
    // A heading that came back empty names nothing: the book's own title is better.
    (!translated.is_empty()).then(|| translated.join(" "))
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
    async fn a_book_is_translated_in_parallel_with_titles_following_headings() {
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
                Event::TermsDone { .. } | Event::ChapterStarted { .. } => {}
            }
        };
        let done = translate_book(
            &OfflineEngine,
            &manuscript,
            "en",
            "es",
            &glossary,
            &PipelineConfig::default(),
            &BookOptions {
                parallel: 4,
                max_cost: None,
                model: "gpt-4o-mini".into(),
            },
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
        let flagged: Vec<_> = done.qualities.iter().map(|q| &q.flagged).collect();
        assert!(flagged.iter().all(|f| f.is_empty()), "{flagged:?}");
        assert_eq!(done.manuscript.language.as_deref(), Some("es"));
    }

    #[test]
    fn a_title_carried_by_a_number_and_a_name_is_translated_from_both() {
        use booktr_formats::manuscript::BlockKind;
        let block = |text: &str| Block::new(BlockKind::Heading { level: 3 }, text.into());
        let source = [
            block("174"),
            block("190"),
            block("A FOUR-LEAVED CLOVER"),
            block("Once"),
        ];
        let translated = [
            block("174"),
            block("190"),
            block("UN TRÈFLE"),
            block("Il était"),
        ];
        assert_eq!(
            translated_title("190 A FOUR-LEAVED CLOVER", &source, &translated).as_deref(),
            Some("190 UN TRÈFLE")
        );
        assert_eq!(
            translated_title("A FOUR-LEAVED  CLOVER", &source, &translated).as_deref(),
            Some("UN TRÈFLE")
        );
        assert_eq!(translated_title("Contents", &source, &translated), None);
        let emptied = [block(""), block(""), block(""), block("")];
        assert_eq!(
            translated_title("190 A FOUR-LEAVED CLOVER", &source, &emptied),
            None,
            "a heading that came back empty names nothing"
        );
    }
}
