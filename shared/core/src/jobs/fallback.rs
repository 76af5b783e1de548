//! The run's fallback model over a chapter its first model has translated: the blocks left
//! flagged or of low confidence go to it as a chapter of their own, through its passes with its
//! own profile, each pass within the run's cost cap like the first model's; what it does better
//! is laid over the first model's text (`booktr_translate::fallback`).
//!
//! Its passes are not checkpointed: a try cut short after them asks it again (the first model's
//! passes are kept, see `chapter`). Its tokens are priced and capped under its own name.

use booktr_translate::fallback::{self, Fallback};
use booktr_translate::ladder::Ladder;
use booktr_translate::model::ChatError;
use booktr_translate::pipeline::{ChapterInput, ChapterOutput, ChapterTranslation, PassUsage};
use tracing::{info, warn};

use super::context::JobHandler;
use super::cost;
use super::error::JobError;
use super::run::failed_attempt;
use crate::books::Book;

/// Sends the blocks of `output` (the first model's translation of `input`) that need it to the
/// book's fallback model and takes what it does better. True when the chapter goes on to be
/// stored (also when there is no fallback, nothing to send, or the fallback refused the work:
/// the first model's text and flags then stand); false when the chapter stops here (the run
/// paused at its cap or moved on, or the fallback's try failed and is counted).
pub(super) async fn run(
    handler: &JobHandler,
    book: &Book,
    number: u32,
    input: &ChapterInput<'_>,
    output: &mut ChapterOutput,
) -> Result<bool, JobError> {
    let Some(name) = book.fallback_model.as_deref() else {
        return Ok(true);
    };
    let sent = fallback::to_send(output);
    if sent.is_empty() {
        return Ok(true);
    }
    let model = match handler.developer.model_for(&book.user_id, name).await? {
        Ok(model) => model,
        Err(reason) => {
            warn!(fallback = name, %reason, "the fallback model cannot answer; the first model's text stands");
            return Ok(true);
        }
    };
    let sources = fallback::source_blocks(input.blocks, &sent);
    let ladder = Ladder::for_run(model.name(), &format!("{}#{}", book.id, book.run));
    let second = ChapterInput {
        blocks: &sources,
        ladder: &ladder,
        // Its blocks are numbered anew: what the memory supplied is not among them.
        memory: &booktr_translate::memory::NOTHING,
        ..*input
    };
    let (profile, settings) = handler.pipeline.for_model(model.as_ref());
    info!(
        fallback = name,
        profile = profile.name(),
        blocks = sent.len(),
        "blocks sent to the fallback model"
    );
    let mut translation = ChapterTranslation::new(&second, &settings, None);
    let estimates = book.max_cost_micros.map(|_| translation.estimate());
    let mut usage = PassUsage::default();
    while let Some(pass) = translation.next_pass() {
        let done = usize::from(translation.checkpoint().passes_done);
        let estimate = estimates.map(|e| e[done]).unwrap_or_default();
        let Some(reserved) = cost::reserve_or_stop(handler, book, model.name(), estimate).await?
        else {
            return Ok(false);
        };
        let result = translation.run_pass(model.as_ref()).await;
        let used = match &result {
            Ok(_) => translation.checkpoint().quality().usage(pass),
            Err(_) => PassUsage::default(),
        };
        cost::settle(handler, book, model.name(), reserved, used).await?;
        usage += used;
        match result {
            Ok(_) => {}
            Err(ChatError::Retryable { message, .. }) => {
                let cause = format!("the fallback model is unavailable: {message}");
                failed_attempt(handler, book, number, pass, &cause).await?;
                return Ok(false);
            }
            Err(ChatError::Fatal(message)) => {
                warn!(fallback = name, %message, "the fallback model refused; the first model's text stands");
                output.quality.fallback = Some(Fallback {
                    model: name.to_string(),
                    sent: sent.len() as u32,
                    taken: 0,
                    usage,
                });
                return Ok(true);
            }
        }
    }
    let answered = translation.finish();
    let done = fallback::take(input, output, &sent, answered, name, usage);
    info!(
        fallback = name,
        sent = done.sent,
        taken = done.taken,
        "the fallback model's text taken where it is better"
    );
    Ok(true)
}
