//! The chapter job: one chapter through the three passes, stored under the run's translation
//! key. Idempotent: a chapter already translated under the key is marked completed without a
//! model call, whatever the redelivery.

use std::collections::HashMap;
use std::sync::Arc;

use booktr_formats::manuscript::Chapter as SourceChapter;
use booktr_translate::budget;
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::ladder::Ladder;
use booktr_translate::memory::Remembered;
use booktr_translate::model::{ChatError, ChatModel};
use booktr_translate::pipeline::{ChapterInput, ChapterOutput, ChapterTranslation, Checkpoint};
use booktr_translate::protocol::Pass;
use booktr_translate::terms::TermList;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::{debug, info, info_span, warn, Instrument};

use super::context::JobHandler;
use super::cost;
use super::error::JobError;
use super::fallback;
use super::run::{book_share, fail_chapter, failed_attempt, model_for, run_key};
use crate::books::record::{self, BookChange, ChapterChange};
use crate::books::{store, Book};
use crate::fault::DataError;
use crate::memory::Lookup;
use crate::ports::{BlobKey, Condition, StoreError, WriteOp};
use crate::translation::{StoredChapter, Translations};
use crate::types::{BookStatus, ChapterStatus};

/// A chapters job: chapters of one run still to translate.
pub(super) struct Window<'a> {
    pub book_id: &'a str,
    pub numbers: &'a [u32],
    pub run: u32,
    /// The window's passes done when the message was queued.
    pub passes: u32,
}

/// How long a chapters job keeps starting chapters. Then it lets those in flight finish and
/// queues the rest as a fresh message: a job stays within a Lambda's 15 minutes (a slice plus
/// the slowest chapter), and the book's next message goes to the back of the queue, so books
/// waiting for a worker get their turn.
const SLICE: std::time::Duration = std::time::Duration::from_secs(240);

/// Translates the job's chapters, at most the owner's window of them at once
/// ([`crate::translation::Translations::window_for`]), each place given to the next chapter as
/// soon as its own finishes: no chapter waits for a slower one it happened to start with. Each
/// chapter ends on its own (a chapter that fails for good fails alone). A retryable failure
/// retries the message once the chapters in flight are done, and the chapters already done are
/// then skipped without a model call.
///
/// The message holds the book's FIFO group while it runs, so the book has one job in flight on
/// either queue and its window bounds its chapters in flight; pause and stop are seen by each
/// chapter as it starts (the run has moved on), so the rest drop at once.
///
/// A redelivered message whose chapters made progress since it was queued was cut short by a
/// crash or a deploy, not by its chapters: it goes on as a fresh message, so that kills never
/// use up the queue's receives. The receives still catch a job that makes no progress (one
/// that crashes its worker every time) and send it to the dead-letter queue.
pub(super) async fn run_window(
    handler: &JobHandler,
    window: &Window<'_>,
    receive_count: u32,
) -> Result<(), JobError> {
    if receive_count > 1 && continued(handler, window).await? {
        return Ok(());
    }
    let Some(book) = handler.books.find(window.book_id).await? else {
        info!("book deleted; dropping the job");
        return Ok(());
    };
    let width = handler.translations.window_for(&book.user_id).await?;
    let share = book_share(window.book_id, width);
    let until = tokio::time::Instant::now() + SLICE;
    let mut waiting = window.numbers.iter().copied();
    let mut running = futures::stream::FuturesUnordered::new();
    let mut failure = None;
    loop {
        while running.len() < width && tokio::time::Instant::now() < until {
            let Some(number) = waiting.next() else { break };
            let span = info_span!("chapter", number, run = window.run);
            let chapter = run(handler, window.book_id, number, window.run);
            running.push(budget::within(share.clone(), chapter).instrument(span));
        }
        match futures::StreamExt::next(&mut running).await {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                failure.get_or_insert(e);
            }
            None => break,
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let rest: Vec<u32> = waiting.collect();
    if !rest.is_empty() {
        info!(
            rest = rest.len(),
            "the job's time slice is over; the rest goes on as a fresh message"
        );
        let job = crate::job::Job::Chapters {
            book_id: window.book_id.to_string(),
            numbers: rest,
            run: window.run,
            passes: 0,
        };
        job.enqueue(handler.ports.queue.as_ref()).await?;
    }
    Ok(())
}

/// Queues the window's unfinished chapters as a fresh message when the window made progress
/// since `window` was queued; false (nothing queued) otherwise.
async fn continued(handler: &JobHandler, window: &Window<'_>) -> Result<bool, JobError> {
    let Some(book) = handler.books.find(window.book_id).await? else {
        return Ok(false);
    };
    if run_key(&book, window.run)?.is_none() {
        return Ok(false);
    }
    let chapters = handler.books.chapters(window.book_id).await?;
    let in_window = chapters
        .iter()
        .filter(|c| window.numbers.contains(&c.number));
    let passes: u32 = in_window
        .clone()
        .map(|c| match c.status {
            ChapterStatus::Completed => 3,
            _ => u32::from(c.passes_done),
        })
        .sum();
    let unfinished: Vec<u32> = in_window
        .filter(|c| c.status != ChapterStatus::Completed)
        .map(|c| c.number)
        .collect();
    if passes <= window.passes || unfinished.is_empty() {
        return Ok(false);
    }
    info!(
        passes,
        before = window.passes,
        unfinished = unfinished.len(),
        "the window was cut short while making progress; going on as a fresh message"
    );
    // Counted over the fresh message's own chapters: the finished ones it leaves out would
    // otherwise count in its `passes` but never again in its redelivery's sum, which would then
    // look like no progress however much was made, and kills would use up its receives.
    let passes = chapters
        .iter()
        .filter(|c| unfinished.contains(&c.number))
        .map(|c| u32::from(c.passes_done))
        .sum();
    let job = crate::job::Job::Chapters {
        book_id: window.book_id.to_string(),
        numbers: unfinished,
        run: window.run,
        passes,
    };
    job.enqueue(handler.ports.queue.as_ref()).await?;
    Ok(true)
}

/// One chapter of the run: prepared (its text, the run's terms and model), taken through the
/// passes still to do, and stored. Each step may end the job early (the chapter already
/// translated, the run moved on or paused at its cap, the model refusing), having done what
/// that calls for.
pub(super) async fn run(
    handler: &JobHandler,
    book_id: &str,
    number: u32,
    run: u32,
) -> Result<(), JobError> {
    let Some(chapter) = prepare(handler, book_id, number, run).await? else {
        return Ok(());
    };
    let Some(output) = translate_passes(handler, &chapter, number).await? else {
        return Ok(());
    };
    store_translation(handler, chapter, number, output).await
}

/// What the passes of one chapter work from.
struct Prepared {
    book: Book,
    /// The run's translation key.
    key: String,
    source: SourceChapter,
    /// The book's names and terms under the key.
    terms: TermList,
    /// The glossary every pass enforces: the user's, then the book's terms.
    enforced: Vec<GlossaryEntry>,
    /// What the owner's translation memory holds for the chapter's blocks.
    remembered: Remembered,
    model: Arc<dyn ChatModel>,
}

/// Reads what the chapter's passes need and marks the chapter TRANSLATING; None when there is
/// nothing to translate (the book gone or moved on, the chapter already stored under the key,
/// no model for the run), after doing what that calls for.
async fn prepare(
    handler: &JobHandler,
    book_id: &str,
    number: u32,
    run: u32,
) -> Result<Option<Prepared>, JobError> {
    let Some(book) = handler.books.find(book_id).await? else {
        info!("book deleted; dropping the job");
        return Ok(None);
    };
    if book.run == run && book.status == BookStatus::Translated {
        // A retry of the job that finished the book, in case it died before queuing the file.
        handler.translations.finish_if_translated(book_id).await?;
        return Ok(None);
    }
    let Some(key) = run_key(&book, run)? else {
        return Ok(None);
    };
    let translations = &handler.translations;
    if translations
        .stored_chapter(book_id, number)
        .await?
        .is_some_and(|stored| stored.key == key)
    {
        info!("chapter already translated under this key; no model call");
        mark_completed(handler, &book, number, &key, None, 0).await?;
        return Ok(None);
    }

    let source: SourceChapter = translations
        .read_json(&store::chapter_key(book_id, number)?)
        .await?
        .ok_or_else(|| JobError::Missing(format!("chapter {number} text is missing")))?;
    let terms = translations
        .terms_under(book_id, &key)
        .await?
        .unwrap_or_default();
    let glossary = translations.run_glossary(book_id).await?;
    let enforced = terms.with_glossary(&glossary);
    let remembered = translations
        .remembered(&book, &source.blocks, &glossary, Lookup::WithClose)
        .await?;
    let title = booktr_formats::render::chapter_title(&source, number as usize - 1);
    handler
        .ports
        .table
        .update(
            &store::book_pk(book_id),
            store::BOOK_SK,
            BookChange::current_chapter(&title).into_update(),
            Condition::Exists,
        )
        .await?;
    translations
        .update_chapter(book_id, number, ChapterChange::translating())
        .await?;

    let model = match model_for(handler, &book).await? {
        Ok(model) => model,
        Err(reason) => {
            fail_chapter(handler, &book, number, &reason.to_string()).await?;
            return Ok(None);
        }
    };
    Ok(Some(Prepared {
        book,
        key,
        source,
        terms,
        enforced,
        remembered,
        model,
    }))
}

/// Runs the passes the chapter still needs, each within the run's cost cap, keeping a
/// checkpoint after each; None when the chapter stops before the last (the run paused at its
/// cap or moved on, the model refused), after doing what that calls for.
async fn translate_passes(
    handler: &JobHandler,
    chapter: &Prepared,
    number: u32,
) -> Result<Option<ChapterOutput>, JobError> {
    let Prepared {
        book,
        key,
        source,
        enforced,
        remembered,
        model,
        ..
    } = chapter;
    let translations = &handler.translations;
    let no_ledger = HashMap::new();
    // The run's chapters share what the repair ladder learns about the model.
    let ladder = Ladder::for_run(model.name(), &format!("{}#{}", book.id, book.run));
    let input = ChapterInput {
        blocks: &source.blocks,
        source_lang: &book.original_lang,
        target_lang: &book.target_lang,
        glossary: enforced,
        ledger: &no_ledger,
        ladder: &ladder,
        instruction: None,
        memory: remembered,
    };
    // The passes an earlier try finished under this key are not paid for again.
    let checkpoint_key = store::checkpoint_key(&book.id, number)?;
    let checkpoint = stored_checkpoint(translations, &checkpoint_key, key).await?;
    let (profile, settings) = handler.pipeline.for_model(model.as_ref());
    info!(
        profile = profile.name(),
        chunk_tokens = settings.chunk_tokens,
        chunk_blocks = settings.chunk_blocks,
        "the model's profile"
    );
    let mut translation = ChapterTranslation::new(&input, &settings, checkpoint);
    if translation.checkpoint().passes_done > 0 {
        info!(
            passes_done = translation.checkpoint().passes_done,
            "going on after the passes already done"
        );
    }
    // What each pass will cost, for the run's cost cap (building every prompt ahead is not
    // worth it without one: the reservation then ignores the estimate).
    let estimates = book.max_cost_micros.map(|_| translation.estimate());
    let started = std::time::Instant::now();
    handler.observe(|o| o.chapter_started(&book.id, number));
    while let Some(pass) = translation.next_pass() {
        let done = usize::from(translation.checkpoint().passes_done);
        let estimate = estimates.map(|e| e[done]).unwrap_or_default();
        let Some(reserved) = cost::reserve_or_stop(handler, book, model.name(), estimate).await?
        else {
            return Ok(None);
        };
        let pass_started = std::time::Instant::now();
        let result = translation.run_pass(model.as_ref()).await;
        if result.is_ok() {
            crate::metrics::pass_finished(pass, pass_started.elapsed());
        }
        // A failed pass keeps nothing of what it got back; its reservation is given back.
        let used = match &result {
            Ok(_) => translation.checkpoint().quality().usage(pass),
            Err(_) => Default::default(),
        };
        cost::settle(handler, book, model.name(), reserved, used).await?;
        match result {
            Ok(_) => {}
            Err(ChatError::Retryable { message, .. }) => {
                let cause = format!("the model is unavailable: {message}");
                failed_attempt(handler, book, number, pass, &cause).await?;
                return Ok(None);
            }
            Err(ChatError::Fatal(message)) => {
                let reason = format!("the model refused: {message}");
                fail_chapter(handler, book, number, &reason).await?;
                return Ok(None);
            }
        }
        keep_pass(
            handler,
            chapter,
            number,
            pass,
            &translation,
            &checkpoint_key,
        )
        .await?;
    }
    crate::metrics::chapter_translated(started.elapsed());
    let mut output = translation.finish();
    output.quality.profile = Some(profile.name().to_string());
    if !fallback::run(handler, book, number, &input, &mut output).await? {
        return Ok(None);
    }
    Ok(Some(output))
}

/// The checkpoint an earlier try kept under the chapter's `checkpoint_key`, when it was made
/// under the run's translation `key`.
async fn stored_checkpoint(
    translations: &Translations,
    checkpoint_key: &BlobKey,
    key: &str,
) -> Result<Option<Checkpoint>, JobError> {
    Ok(translations
        .read_json::<StoredCheckpoint>(checkpoint_key)
        .await?
        .filter(|stored| stored.key == key)
        .map(|stored| stored.checkpoint))
}

/// After a pass: the checkpoint kept (except after the last pass when no fallback model
/// follows), the chapter's passes done recorded, and the observer told.
async fn keep_pass(
    handler: &JobHandler,
    chapter: &Prepared,
    number: u32,
    pass: Pass,
    translation: &ChapterTranslation<'_>,
    checkpoint_key: &BlobKey,
) -> Result<(), JobError> {
    let Prepared { book, key, .. } = chapter;
    let translations = &handler.translations;
    let done = translation.checkpoint().passes_done;
    let last = translation.next_pass().is_none();
    // Before the fallback model's passes the last pass is kept too: a try cut short in them
    // does not pay for the first model's again.
    if !last || book.fallback_model.is_some() {
        let stored = StoredCheckpoint {
            key: key.clone(),
            checkpoint: translation.checkpoint().clone(),
        };
        translations.put_json(checkpoint_key, &stored).await?;
    }
    record_passes(handler, &book.id, number, done).await;
    if !last {
        // Kept for a restart, and counted as the job's progress.
        debug!(passes_done = done, "the pass is stored");
    }
    if handler.is_observed() {
        let blocks = translation.blocks_so_far();
        handler.observe(|o| o.pass_done(&book.id, number, pass, &blocks));
    }
    Ok(())
}

/// Stores the chapter's translation under the run's key (its title translated with it, its
/// term conflicts noted), drops its checkpoint and marks it COMPLETED.
async fn store_translation(
    handler: &JobHandler,
    chapter: Prepared,
    number: u32,
    mut output: ChapterOutput,
) -> Result<(), JobError> {
    let Prepared {
        book,
        key,
        source,
        terms,
        ..
    } = chapter;
    // The chapter's title follows the block that carries the same words, translated.
    let title = source.title.as_deref().map(|t| {
        super::title::translated_title(t, &source.blocks, &output.blocks)
            .unwrap_or_else(|| t.to_string())
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
    // The owner's edited passages keep their text whatever the model's was found to be: the
    // chapter's quality record (what the book reports as flagged) leaves them out. The stored
    // translation keeps the model's text and record; the edits are laid over it where the book
    // is read (`crate::translation::passages`).
    let edited = handler.translations.edited_blocks(&book, number).await?;
    // Remembered before the chapter is stored: a failure here tries the chapter again (from
    // its checkpoint), and remembering again is harmless.
    handler
        .translations
        .remember_chapter(&book, &source.blocks, &output, &edited)
        .await?;
    let stored = StoredChapter {
        key: key.clone(),
        title,
        blocks: output.blocks,
        quality: output.quality,
        terms: output.terms,
    };
    handler
        .translations
        .put_json(&store::translation_key(&book.id, number)?, &stored)
        .await?;
    debug!("the chapter's translation is stored");
    // The finished chapter supersedes its checkpoint; one left behind is ignored (and removed
    // with the book).
    if let Err(e) = handler
        .ports
        .blobs
        .delete(&store::checkpoint_key(&book.id, number)?)
        .await
    {
        warn!(error = %e, "could not remove the chapter's checkpoint");
    }
    let quality = crate::translation::passages::chapter_record(&stored.quality, &edited);
    let words = source.word_count();
    info!(
        words,
        glossary = format!(
            "{}/{}",
            stored.quality.glossary_satisfied, stored.quality.glossary_checked
        ),
        "chapter translated"
    );
    mark_completed(handler, &book, number, &key, Some(quality), words).await?;
    handler.observe(|o| o.chapter_done(&book.id, number));
    Ok(())
}

/// A chapter's [`Checkpoint`] under the translation key it was made with.
#[derive(Serialize, Deserialize)]
struct StoredCheckpoint {
    key: String,
    checkpoint: Checkpoint,
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
) -> Result<(), DataError> {
    let pk = store::book_pk(&book.id);
    let chapter = ChapterChange::completed(key, quality);
    let book_update = BookChange::chapter_completed(words, handler.ports.clock.now());
    let result = handler
        .ports
        .table
        .transact(vec![
            WriteOp::Update {
                pk: pk.clone(),
                sk: store::chapter_sk(number),
                update: chapter.into_update(),
                condition: Condition::Exists,
            },
            WriteOp::Update {
                pk,
                sk: store::BOOK_SK.into(),
                update: book_update.into_update(),
                condition: record::translating_under(key),
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
        Err(e) => return Err(e.into()),
    }
    let chapters = handler.books.chapters(&book.id).await?;
    let progress = crate::translation::progress_of(&chapters);
    handler
        .ports
        .table
        .update(
            &store::book_pk(&book.id),
            store::BOOK_SK,
            BookChange::progress(progress).into_update(),
            Condition::Exists,
        )
        .await?;
    handler
        .translations
        .finish_if_all_completed(&book.id, &chapters)
        .await
}

/// The chapters of a job that ran out of tries: every one not translated yet fails.
pub(super) async fn fail_unfinished(
    handler: &JobHandler,
    book: &Book,
    numbers: &[u32],
    reason: &str,
) -> Result<(), DataError> {
    let chapters = handler.books.chapters(&book.id).await?;
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
    let result = handler
        .ports
        .table
        .update(
            &store::book_pk(book_id),
            &store::chapter_sk(number),
            ChapterChange::passes_done(done).into_update(),
            record::passes_below(done),
        )
        .await;
    match result {
        Ok(_) | Err(StoreError::Conflict) => {}
        Err(e) => warn!(error = %e, "could not record a finished pass"),
    }
}
