//! The chapter job: one chapter through the three passes, stored under the run's translation
//! key. Idempotent: a chapter already translated under the key is marked completed without a
//! model call, whatever the redelivery.

use std::collections::HashMap;
use std::sync::Arc;

use booktr_formats::manuscript::Chapter as SourceChapter;
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::model::{ChatError, ChatModel};
use booktr_translate::pipeline::{translate_chapter_reporting, ChapterInput};
use booktr_translate::protocol::Pass;
use booktr_translate::providers::lookup;
use serde_json::Value;
use tokio::sync::mpsc;
use tracing::{info, warn};

use super::JobHandler;
use crate::books::lifecycle::BookEvent;
use crate::books::{store, Book};
use crate::developer::DeveloperError;
use crate::events::{EventKind, Occurrence};
use crate::ports::{Condition, StoreError, Update, WriteOp};
use crate::translation::{BookTerms, StoredChapter};
use crate::types::{BookStatus, ChapterStatus};

pub(super) async fn run(
    handler: &JobHandler,
    book_id: &str,
    number: u32,
    run: u32,
) -> Result<(), StoreError> {
    let Some(book) = handler.books.find(book_id).await? else {
        info!("book deleted; dropping the job");
        return Ok(());
    };
    if book.run == run && book.status == BookStatus::Translated {
        // A retry of the job that finished the book, in case it died before queuing the file.
        return handler.translations.finish_if_translated(book_id).await;
    }
    let Some(key) = run_key(&book, run)? else {
        return Ok(());
    };
    let translations = &handler.translations;
    if translations
        .stored_chapter(book_id, number)
        .await?
        .is_some_and(|stored| stored.key == key)
    {
        info!("chapter already translated under this key; no model call");
        return mark_completed(handler, &book, number, &key, None, 0).await;
    }

    let source: SourceChapter = handler
        .translations
        .read_json(&store::chapter_key(book_id, number)?)
        .await?
        .ok_or_else(|| StoreError::Unavailable(format!("chapter {number} text is missing")))?;
    let glossary: Vec<GlossaryEntry> = handler
        .translations
        .read_json(&store::glossary_snapshot_key(book_id)?)
        .await?
        .unwrap_or_default();
    // The book's term list joins the glossary (which wins where both name a term): every pass
    // enforces it, so chapters translated at the same time agree.
    let terms = handler
        .translations
        .read_json::<BookTerms>(&store::terms_key(book_id, &key)?)
        .await?
        .filter(|t| t.key == key)
        .map(|t| t.list)
        .unwrap_or_default();
    let enforced = terms.with_glossary(&glossary);
    let title = booktr_formats::render::chapter_title(&source, number as usize - 1);
    handler
        .ports
        .table
        .update(
            &store::book_pk(book_id),
            store::BOOK_SK,
            Update::default().set("currentChapter", title),
            Condition::Exists,
        )
        .await?;
    handler
        .translations
        .update_chapter(
            book_id,
            number,
            Update::default().set("status", ChapterStatus::Translating.as_str()),
        )
        .await?;

    let model = match model_for(handler, &book).await? {
        Ok(model) => model,
        Err(reason) => return fail_chapter(handler, &book, number, &reason).await,
    };
    let no_ledger = HashMap::new();
    let input = ChapterInput {
        blocks: &source.blocks,
        source_lang: &book.original_lang,
        target_lang: &book.target_lang,
        glossary: &enforced,
        ledger: &no_ledger,
    };
    // Passes are recorded as they end (for progress) while the pipeline goes on.
    let (passes_tx, mut passes_rx) = mpsc::unbounded_channel::<Pass>();
    let on_pass = move |pass: Pass| {
        let _ = passes_tx.send(pass);
    };
    let translating = async move {
        let result =
            translate_chapter_reporting(model.as_ref(), &input, &handler.pipeline, &on_pass).await;
        drop(on_pass);
        result
    };
    let recording = async {
        let mut done: u8 = 0;
        while passes_rx.recv().await.is_some() {
            done += 1;
            record_passes(handler, book_id, number, done).await;
        }
    };
    let (result, ()) = tokio::join!(translating, recording);
    let mut output = match result {
        Ok(output) => output,
        Err(ChatError::Retryable { message, .. }) => {
            return Err(StoreError::Unavailable(format!(
                "the model is unavailable: {message}"
            )))
        }
        Err(ChatError::Fatal(message)) => {
            return fail_chapter(
                handler,
                &book,
                number,
                &format!("the model refused: {message}"),
            )
            .await
        }
    };

    // The chapter's title follows the block that carries the same words, translated.
    let title = source.title.as_deref().map(|t| {
        source
            .blocks
            .iter()
            .position(|b| b.plain_text().trim() == t.trim())
            .map_or_else(
                || t.to_string(),
                |i| output.blocks[i].plain_text().trim().to_string(),
            )
    });
    output.quality.term_conflicts = output
        .terms
        .iter()
        .filter_map(|(source, proposed)| {
            let listed = terms.terms.get(source)?;
            (!listed.eq_ignore_ascii_case(proposed))
                .then(|| (source.clone(), listed.clone(), proposed.clone()))
        })
        .collect();
    let stored = StoredChapter {
        key: key.clone(),
        title,
        blocks: output.blocks,
        quality: output.quality,
        terms: output.terms,
    };
    handler
        .translations
        .put_json(&store::translation_key(book_id, number)?, &stored)
        .await?;
    let quality = serde_json::to_value(&stored.quality).unwrap_or(Value::Null);
    let words = source.word_count();
    info!(
        words,
        glossary = format!(
            "{}/{}",
            stored.quality.glossary_satisfied, stored.quality.glossary_checked
        ),
        "chapter translated"
    );
    mark_completed(handler, &book, number, &key, Some(quality), words).await
}

/// The translation key of run `run` while the book still translates it; None (logged) when the
/// run has moved on (paused, stopped, failed or restarted since the job was queued).
pub(super) fn run_key(book: &Book, run: u32) -> Result<Option<String>, StoreError> {
    if book.run != run || book.status != BookStatus::Translating {
        info!(book_run = book.run, status = %book.status, "the run has moved on; dropping the job");
        return Ok(None);
    }
    book.translation_key
        .clone()
        .map(Some)
        .ok_or_else(|| StoreError::Unavailable("a translating book has no translation key".into()))
}

/// The model the book's run translates with: the owner's own key for the model's family when
/// they set one. `Err` is a reason to fail the chapter with: a stored key that no longer opens
/// (rather than falling back to the server's key: they chose to pay for their translations, and
/// a silent switch would bill the service, or without a server key hand them the offline
/// engine's text), or a model the port refuses.
pub(super) async fn model_for(
    handler: &JobHandler,
    book: &Book,
) -> Result<Result<Arc<dyn ChatModel>, String>, StoreError> {
    let model_name = book.translation_model.clone().unwrap_or_default();
    let user_key = match lookup(&model_name) {
        Some((family, _)) => match handler.developer.user_key(&book.user_id, family).await {
            Ok(key) => key,
            Err(e @ DeveloperError::Unreadable(_)) => return Ok(Err(e.to_string())),
            Err(DeveloperError::Store(e)) => return Err(e),
            Err(e) => return Err(StoreError::Unavailable(e.to_string())),
        },
        // An unknown model is refused just below, by the port.
        None => None,
    };
    Ok(handler
        .ports
        .models
        .model(&model_name, user_key)
        .map_err(|e| e.to_string()))
}

/// COMPLETED, but only while the book still translates under `key`: a job of a stopped run that
/// finishes after a restart with another model keeps its text for later without claiming the
/// chapter for the new run. Then the book's progress, and the book moves on when this was the
/// last chapter (one read of the chapters for both).
async fn mark_completed(
    handler: &JobHandler,
    book: &Book,
    number: u32,
    key: &str,
    quality: Option<Value>,
    words: u64,
) -> Result<(), StoreError> {
    let pk = store::book_pk(&book.id);
    let mut chapter = Update::default()
        .set("status", ChapterStatus::Completed.as_str())
        .set("passesDone", 3)
        .set("error", Value::Null);
    if let Some(quality) = quality {
        chapter = chapter.set("quality", quality);
    }
    let mut book_update =
        Update::default().set("updatedAt", crate::items::time(handler.ports.clock.now()));
    if words > 0 {
        book_update = book_update.add("runWords", words as i64);
    }
    let result = handler
        .ports
        .table
        .transact(vec![
            WriteOp::Update {
                pk: pk.clone(),
                sk: store::chapter_sk(number),
                update: chapter,
                condition: Condition::Exists,
            },
            WriteOp::Update {
                pk,
                sk: store::BOOK_SK.into(),
                update: book_update,
                condition: Condition::equals("translationKey", key),
            },
        ])
        .await;
    match result {
        Ok(()) => {}
        Err(StoreError::Conflict) => {
            if handler.books.find(&book.id).await?.is_none() {
                // Deleted while we worked: take back what we wrote so nothing is left behind.
                warn!("book deleted during translation; removing what the job wrote");
                return handler.books.remove_everything(&book.id).await;
            }
            info!("the book moved on to another translation; the text is kept for later");
            return Ok(());
        }
        Err(e) => return Err(e),
    }
    let chapters = handler
        .books
        .chapters(&book.id)
        .await
        .map_err(crate::translation::into_store)?;
    let progress = crate::translation::progress_of(&chapters);
    handler
        .ports
        .table
        .update(
            &store::book_pk(&book.id),
            store::BOOK_SK,
            Update::default().set("progress", progress),
            Condition::Exists,
        )
        .await?;
    handler
        .translations
        .finish_if_all_completed(&book.id, &chapters)
        .await
}

/// A failure no retry fixes (or the last one): the chapter and the book go to ERROR and the
/// user is told (notification, webhook, email).
pub(super) async fn fail_chapter(
    handler: &JobHandler,
    book: &Book,
    number: u32,
    reason: &str,
) -> Result<(), StoreError> {
    warn!(number, reason, "chapter failed");
    handler
        .translations
        .update_chapter(
            &book.id,
            number,
            Update::default()
                .set("status", ChapterStatus::Error.as_str())
                .set("error", reason),
        )
        .await?;
    let message = format!("chapter {number} could not be translated: {reason}");
    let update = Update::default()
        .set("error", message.clone())
        .set("currentChapter", Value::Null);
    let failed = handler
        .books
        .transition(&book.id, BookEvent::TranslationFailed, update)
        .await?;
    if let Some(failed) = failed {
        let occurrence = Occurrence {
            key: format!("translation.error:{}:{}:{number}", book.id, failed.run),
            user_id: book.user_id.clone(),
            book_id: book.id.clone(),
            title: failed.title.clone(),
            status: failed.status.as_str().to_string(),
            kind: EventKind::TranslationError {
                error: message,
                chapter_index: number,
            },
        };
        handler.events.emit(&occurrence).await?;
    }
    Ok(())
}

/// The chapters of a window that ran out of tries: every one not translated yet fails.
pub(super) async fn fail_unfinished(
    handler: &JobHandler,
    book: &Book,
    numbers: &[u32],
    reason: &str,
) -> Result<(), StoreError> {
    let chapters = handler
        .books
        .chapters(&book.id)
        .await
        .map_err(crate::translation::into_store)?;
    for number in numbers {
        let done = chapters
            .iter()
            .any(|c| c.number == *number && c.status == ChapterStatus::Completed);
        if !done {
            fail_chapter(handler, book, *number, reason).await?;
        }
    }
    Ok(())
}

/// Passes done only ever grow, so progress never goes back when a chapter interrupted by a
/// crash starts its passes again.
async fn record_passes(handler: &JobHandler, book_id: &str, number: u32, done: u8) {
    let smaller: Vec<Value> = (0..done).map(Value::from).collect();
    let result = handler
        .ports
        .table
        .update(
            &store::book_pk(book_id),
            &store::chapter_sk(number),
            Update::default().set("passesDone", done),
            Condition::In("passesDone".into(), smaller),
        )
        .await;
    match result {
        Ok(_) | Err(StoreError::Conflict) => {}
        Err(e) => warn!(error = %e, "could not record a finished pass"),
    }
}
