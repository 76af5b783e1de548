//! The terms job: a run's first job, before its chapter windows (in the book's message group).
//! It finds the book's names and key terms in every chapter's text, has the run's model
//! translate them once, and stores the list under the run's translation key; every chapter then
//! enforces it like the glossary (see `booktr_translate::terms`). Idempotent: a list already
//! stored under the key is kept without a model call.
//!
//! A run started with `pauseAtTerms` pauses here once its list is stored, so the owner can
//! check and change the list before any chapter is translated; the chapters job queued behind
//! this one is then dropped, and a resume queues the chapters again (with this job first, which
//! finds the list stored and leaves it as the owner made it).

use booktr_formats::manuscript::Chapter as SourceChapter;
use booktr_translate::budget;
use booktr_translate::model::ChatError;
use booktr_translate::terms::{candidates, estimate_terms, translate_terms, TermList};
use serde_json::Value;
use tracing::{info, warn};

use super::context::JobHandler;
use super::cost;
use super::error::JobError;
use super::run::{book_share, model_for, run_key};
use crate::books::lifecycle::BookEvent;
use crate::books::record::{self, BookChange};
use crate::books::{store, Book};
use crate::fault::DataError;
use crate::memory::Lookup;
use crate::ports::StoreError;
use crate::translation::BookTerms;

/// What the book shows as its current step while the list is made.
const STEP: &str = "Finding the book's names and terms";

/// Lists the terms of the chapters numbered in `chapters` (every chapter when None).
pub(super) async fn run(
    handler: &JobHandler,
    book_id: &str,
    run: u32,
    chapters: Option<&[u32]>,
) -> Result<(), JobError> {
    let Some(book) = handler.books.find(book_id).await? else {
        return Ok(());
    };
    let Some(key) = run_key(&book, run)? else {
        return Ok(());
    };
    let translations = &handler.translations;
    let terms_key = store::terms_key(book_id, &key)?;
    if let Some(stored) = translations
        .read_json::<BookTerms>(&terms_key)
        .await?
        .filter(|t| t.key == key)
    {
        info!("the book's terms are already listed under this key");
        // A redelivery after the list was stored but before the run paused still pauses it.
        return Ok(pause_if_asked(handler, &book, stored.list.terms.len()).await?);
    }
    set_step(handler, &book, &key).await?;

    let glossary = translations.run_glossary(book_id).await?;
    let mut texts = Vec::new();
    let numbers = match chapters {
        Some(numbers) => numbers.to_vec(),
        None => (1..=book.chapter_count.unwrap_or(0)).collect(),
    };
    for number in numbers {
        let chapter: Option<SourceChapter> = translations
            .read_json(&store::chapter_key(book_id, number)?)
            .await?;
        let blocks = chapter.map(|c| c.blocks).unwrap_or_default();
        // The passages the owner's memory supplies go to no model: their terms need no list.
        let remembered = translations
            .remembered(&book, &blocks, &glossary, Lookup::Exact)
            .await?;
        texts.extend(
            blocks
                .iter()
                .enumerate()
                .filter(|(i, _)| !remembered.exact.contains_key(i))
                .map(|(_, b)| b.plain_text()),
        );
    }
    let found = candidates(&texts, &glossary);
    let list = if found.is_empty() {
        TermList::default()
    } else {
        match model_for(handler, &book).await? {
            Err(reason) => {
                warn!(%reason, "no model for the term list; chapters report it");
                TermList::default()
            }
            Ok(model) => {
                let estimate =
                    estimate_terms(&found, &book.original_lang, &book.target_lang, &glossary);
                let Some(reserved) =
                    cost::reserve_or_stop(handler, &book, model.name(), estimate).await?
                else {
                    return Ok(());
                };
                let width = handler.translations.window_for(&book.user_id).await?;
                let (_, settings) = handler.pipeline.for_model(model.as_ref());
                let translated = translate_terms(
                    model.as_ref(),
                    &found,
                    &book.original_lang,
                    &book.target_lang,
                    &glossary,
                    &settings,
                );
                let translated = budget::within(book_share(&book.id, width), translated).await;
                let used = translated.as_ref().map(|l| l.usage).unwrap_or_default();
                cost::settle(handler, &book, model.name(), reserved, used).await?;
                match translated {
                    Ok(list) => list,
                    Err(ChatError::Retryable { message, .. }) => {
                        return Err(JobError::ModelFailed(format!(
                            "the model is unavailable: {message}"
                        )))
                    }
                    // The chapters meet the same refusal and report it; the run goes on
                    // without a list rather than failing here.
                    Err(ChatError::Fatal(message)) => {
                        warn!(%message, "the model refused the term list; chapters choose their own terms");
                        TermList::default()
                    }
                }
            }
        }
    };
    Ok(store_list(handler, &book, key, list, found.len()).await?)
}

async fn store_list(
    handler: &JobHandler,
    book: &Book,
    key: String,
    list: TermList,
    candidates: usize,
) -> Result<(), DataError> {
    let usage = serde_json::to_value(list.usage).unwrap_or(Value::Null);
    let found = list.terms.len();
    handler
        .translations
        .put_json(
            &store::terms_key(&book.id, &key)?,
            &BookTerms {
                key: key.clone(),
                list,
            },
        )
        .await?;
    let update = BookChange::terms_listed(&key, found, usage).into_update();
    let listed = handler
        .ports
        .table
        .update(
            &store::book_pk(&book.id),
            store::BOOK_SK,
            update,
            record::translating_under(&key),
        )
        .await;
    match listed {
        Ok(_) => pause_if_asked(handler, book, found).await?,
        Err(StoreError::Conflict | StoreError::NotFound) => {
            if handler.books.find(&book.id).await?.is_none() {
                // Deleted while we worked: take back what we wrote so nothing is left behind.
                warn!("book deleted during the term pass; removing what the job wrote");
                return handler.books.remove_everything(&book.id).await;
            }
            // Another run has begun; its own term job makes its list.
        }
        Err(e) => return Err(e.into()),
    }
    info!(candidates, terms = found, "book terms listed");
    handler.observe(|o| o.terms_listed(&book.id, found));
    Ok(())
}

/// A term job that ran out of tries: the run goes on with an empty list.
pub(super) async fn give_up(handler: &JobHandler, book: &Book) -> Result<(), DataError> {
    let Some(key) = book.translation_key.clone() else {
        return Ok(());
    };
    warn!(book_id = %book.id, "the term list could not be made; chapters choose their own terms");
    store_list(handler, book, key, TermList::default(), 0).await
}

/// Pauses the run (TRANSLATING -> PAUSED, saying why) when its start asked to stop at the term
/// list; only once, and only while the book is still in the run the list was made for.
async fn pause_if_asked(handler: &JobHandler, book: &Book, found: usize) -> Result<(), DataError> {
    let reason = format!(
        "paused with the book's term list ready for review ({found} names and terms): check or \
         change it, then resume to translate the chapters with it"
    );
    let update = BookChange::paused_at_terms(&reason)
        .moved_to(BookEvent::Paused.target(), handler.ports.clock.now())
        .into_update();
    match handler
        .ports
        .table
        .update(
            &store::book_pk(&book.id),
            store::BOOK_SK,
            update,
            record::pausing_at_terms(book.run),
        )
        .await
    {
        Ok(_) => {
            info!(found, "run paused with its term list ready for review");
            Ok(())
        }
        Err(StoreError::Conflict | StoreError::NotFound) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Shows the term pass as the run's current step.
async fn set_step(handler: &JobHandler, book: &Book, key: &str) -> Result<(), DataError> {
    let update = BookChange::current_chapter(STEP).into_update();
    match handler
        .ports
        .table
        .update(
            &store::book_pk(&book.id),
            store::BOOK_SK,
            update,
            record::translating_under(key),
        )
        .await
    {
        Ok(_) | Err(StoreError::Conflict | StoreError::NotFound) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
