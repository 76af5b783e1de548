//! `GET /api/translate/quote`: what a translation of the book would use, cost and take, before
//! anything is spent (see `booktr_translate::estimate`).

use std::collections::BTreeMap;

use booktr_formats::manuscript::Chapter as SourceChapter;
use booktr_translate::estimate::{estimate_book, estimate_fallback, Pace, RunShape};
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::memory::Remembered;
use booktr_translate::pipeline::PassUsage;

use super::error::TranslationError;
use super::service::Translations;
use super::start::{Models, RunChoice};
use crate::accounts::User;
use crate::books::{store, Book};
use crate::memory::Lookup;
use crate::types::BookStatus;

/// The choices a quote is for; each defaults as a start's does.
#[derive(Debug, Clone, Default)]
pub struct QuoteRequest {
    pub book_id: String,
    pub model: Option<String>,
    pub glossary_id: Option<String>,
    pub target_lang: Option<String>,
    pub fallback_model: Option<String>,
    /// As a start's: None keeps the book's choice.
    pub memory: Option<bool>,
}

#[derive(Debug, Clone)]
pub struct Quote {
    pub book_id: String,
    pub model: String,
    /// What would translate: the provider's model, or `offline-pseudo` when the offline engine
    /// stands in (no provider key for the model's family), which costs nothing. Null when the
    /// user's stored key for the model no longer opens (a start would fail its chapters).
    pub engine: Option<String>,
    /// How the model would be asked (`booktr_translate::profile`): `hosted` or `small`.
    pub profile: &'static str,
    pub target_lang: String,
    /// Chapters a start would translate; the others are already translated with these choices
    /// and cost nothing.
    pub chapters: u32,
    pub reused_chapters: u32,
    pub words: u64,
    pub passes: QuotePasses,
    /// What the owner's translation memory would supply: passages taken as they are, at no
    /// cost (in none of the figures below).
    pub memory: QuoteMemory,
    /// The fallback model's share, when the start names one; in `total` and `estimated_cost`.
    pub fallback: Option<QuoteFallback>,
    pub total: PassUsage,
    /// US dollars at the list price of what would translate (0 for the offline engine), the
    /// fallback's included.
    pub estimated_cost: f64,
    pub currency: &'static str,
    /// From the run's shape (term pass, then the chapters in the book's window, each taking the
    /// first place free) at a typical hosted model's pace.
    pub estimated_seconds: u64,
}

/// What the owner's translation memory would supply to a start with the same choices.
#[derive(Debug, Clone, Copy, Default)]
pub struct QuoteMemory {
    /// Whether the run would use the memory.
    pub enabled: bool,
    /// Passages of the chapters to translate that the memory holds exactly: no model is asked
    /// for them.
    pub passages: u32,
    /// Their words.
    pub words: u64,
}

#[derive(Debug, Clone)]
pub struct QuotePasses {
    pub terms: PassUsage,
    pub translate: PassUsage,
    pub review: PassUsage,
    pub polish: PassUsage,
}

/// What the fallback model would use: its passes over the share of blocks a quote expects the
/// first model to leave to it, one in ten (`booktr_translate::fallback::QUOTED_SHARE`).
#[derive(Debug, Clone)]
pub struct QuoteFallback {
    pub model: String,
    /// What would answer it, as [`Quote::engine`] says of the first model.
    pub engine: Option<String>,
    pub usage: PassUsage,
    /// US dollars at its list price.
    pub estimated_cost: f64,
}

impl Translations {
    pub async fn quote(
        &self,
        user: &User,
        request: QuoteRequest,
    ) -> Result<Quote, TranslationError> {
        let book = self.books.get(&user.id, &request.book_id).await?;
        if matches!(book.status, BookStatus::Uploaded | BookStatus::Extracting)
            || book.chapter_count.is_none()
        {
            return Err(TranslationError::Invalid(format!(
                "the book is {}; a quote needs its chapters, once it is EXTRACTED",
                book.status
            )));
        }
        let RunChoice {
            model,
            fallback,
            target,
            entries,
            key,
            ..
        } = self
            .choose_run(
                user,
                &book,
                Models {
                    model: request.model,
                    fallback: request.fallback_model,
                },
                request.glossary_id,
                request.target_lang,
            )
            .await?;
        let engine = self.engine_for(&user.id, &model).await?;
        let (profile, settings) = self.pipeline_for(&user.id, &model).await?;
        let (sources, pending, words) = self.quote_sources(&book, &key).await?;
        let on = request.memory.unwrap_or(book.memory);
        let (memory, remembered) = self
            .quote_memory(&book, on, (&sources, &pending), &entries)
            .await?;
        let nothing = Remembered::default();
        let to_translate: Vec<(&SourceChapter, &Remembered)> = pending
            .iter()
            .map(|&i| (&sources[i], remembered.get(&i).unwrap_or(&nothing)))
            .collect();
        let (texts, for_fallback) = left_to_models(&sources, &remembered, &to_translate);
        let shape = RunShape {
            // Priced by what would answer.
            model: engine.as_deref().unwrap_or(&model),
            source_lang: &book.original_lang,
            target_lang: &target,
            glossary: &entries,
            config: &settings,
            window: self.window_for(&book.user_id).await?,
        };
        let estimate = if to_translate.is_empty() {
            Default::default()
        } else {
            estimate_book(&to_translate, &texts, &shape, &Pace::default())
        };
        let fallback = match fallback {
            Some(model) => {
                let chapters: Vec<&SourceChapter> = for_fallback.iter().collect();
                Some(
                    self.quote_fallback(&book, &target, &entries, &chapters, model)
                        .await?,
                )
            }
            None => None,
        };
        let (mut total, mut cost) = (estimate.total(), estimate.cost);
        if let Some(fallback) = &fallback {
            total += fallback.usage;
            cost += fallback.estimated_cost;
        }
        Ok(Quote {
            book_id: book.id,
            model,
            engine,
            profile: profile.name(),
            target_lang: target,
            chapters: to_translate.len() as u32,
            reused_chapters: (sources.len() - to_translate.len()) as u32,
            words,
            memory,
            fallback,
            total,
            passes: QuotePasses {
                terms: estimate.terms,
                translate: estimate.translate,
                review: estimate.review,
                polish: estimate.polish,
            },
            estimated_cost: rounded(cost),
            currency: "USD",
            estimated_seconds: estimate.seconds,
        })
    }
}

impl Translations {
    /// The source of every chapter, the places of those a start would translate (not already
    /// translated under the run's `key`), and their words.
    async fn quote_sources(
        &self,
        book: &Book,
        key: &str,
    ) -> Result<(Vec<SourceChapter>, Vec<usize>, u64), TranslationError> {
        let chapters = self.books.chapters(&book.id).await?;
        let mut sources = Vec::with_capacity(chapters.len());
        let mut pending = Vec::new();
        let mut words = 0;
        for chapter in &chapters {
            let source: SourceChapter = self
                .read_json(&store::chapter_key(&book.id, chapter.number)?)
                .await?
                .ok_or(TranslationError::MissingText(chapter.number))?;
            let reusable = self
                .stored_chapter(&book.id, chapter.number)
                .await?
                .is_some_and(|stored| stored.key == key);
            if !reusable {
                pending.push(sources.len());
                words += chapter.word_count.unwrap_or(0);
            }
            sources.push(source);
        }
        Ok((sources, pending, words))
    }
}

impl Translations {
    /// What the owner's memory holds exactly of the chapters a start would translate (the
    /// places `pending` in `sources`) when the run uses it (`on`), counted, and by place.
    async fn quote_memory(
        &self,
        book: &Book,
        on: bool,
        (sources, pending): (&[SourceChapter], &[usize]),
        glossary: &[GlossaryEntry],
    ) -> Result<(QuoteMemory, BTreeMap<usize, Remembered>), TranslationError> {
        let book = Book {
            memory: on,
            ..book.clone()
        };
        let book = &book;
        let mut memory = QuoteMemory {
            enabled: on,
            ..QuoteMemory::default()
        };
        let mut remembered = BTreeMap::new();
        for &at in pending {
            let blocks = &sources[at].blocks;
            let found = self
                .remembered(book, blocks, glossary, Lookup::Exact)
                .await?;
            memory.passages += found.exact.len() as u32;
            memory.words += found
                .exact
                .keys()
                .map(|i| blocks[*i].word_count())
                .sum::<u64>();
            remembered.insert(at, found);
        }
        Ok((memory, remembered))
    }

    /// The fallback model's share of a quote over `chapters`, priced by what would answer it.
    async fn quote_fallback(
        &self,
        book: &crate::books::Book,
        target: &str,
        entries: &[booktr_translate::glossary::GlossaryEntry],
        chapters: &[&SourceChapter],
        model: String,
    ) -> Result<QuoteFallback, TranslationError> {
        let engine = self.engine_for(&book.user_id, &model).await?;
        let (_, settings) = self.pipeline_for(&book.user_id, &model).await?;
        let shape = RunShape {
            model: engine.as_deref().unwrap_or(&model),
            source_lang: &book.original_lang,
            target_lang: target,
            glossary: entries,
            config: &settings,
            window: 1,
        };
        let (usage, cost) = estimate_fallback(chapters, &shape);
        Ok(QuoteFallback {
            model,
            engine,
            usage,
            estimated_cost: rounded(cost),
        })
    }
}

/// What goes to a model besides what the memory supplies: every block of the book the term
/// pass reads (`sources`, by place), and the chapters to translate as the fallback would be
/// sent them.
fn left_to_models(
    sources: &[SourceChapter],
    remembered: &BTreeMap<usize, Remembered>,
    to_translate: &[(&SourceChapter, &Remembered)],
) -> (Vec<String>, Vec<SourceChapter>) {
    let texts = sources
        .iter()
        .enumerate()
        .flat_map(|(at, c)| {
            let supplied = remembered.get(&at);
            c.blocks
                .iter()
                .enumerate()
                .filter(move |(i, _)| supplied.is_none_or(|r| !r.exact.contains_key(i)))
                .map(|(_, b)| b.plain_text())
        })
        .collect();
    let chapters = to_translate
        .iter()
        .map(|(chapter, supplied)| SourceChapter {
            title: chapter.title.clone(),
            blocks: chapter
                .blocks
                .iter()
                .enumerate()
                .filter(|(i, _)| !supplied.exact.contains_key(i))
                .map(|(_, b)| b.clone())
                .collect(),
        })
        .collect();
    (texts, chapters)
}

/// US dollars to four places, as a quote shows them.
fn rounded(usd: f64) -> f64 {
    (usd * 10_000.0).round() / 10_000.0
}
