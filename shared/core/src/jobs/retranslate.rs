//! The re-translation job: a proposal's passages through the three passes with the owner's
//! instruction (`crate::translation::passages::proposals`), each pass reserving and settling
//! its cost on the book as a run's chapter does. A model that fails (after the pipeline's own
//! retries) fails the proposal with the reason and gives its words back: the owner asks again
//! when they choose, rather than the queue trying again.

use std::collections::HashMap;

use booktr_translate::estimate::cost;
use booktr_translate::model::ChatError;
use booktr_translate::pipeline::{ChapterTranslation, PassUsage};
use tracing::info;

use super::context::JobHandler;
use super::cost::{micros, reserve, settle, Reservation};
use super::error::JobError;

pub(super) async fn run(
    handler: &JobHandler,
    book_id: &str,
    proposal_id: &str,
) -> Result<(), JobError> {
    let translations = &handler.translations;
    let Some(work) = translations.proposal_work(book_id, proposal_id).await? else {
        return Ok(());
    };
    let book = &work.book;
    let model = match handler
        .developer
        .model_for(&book.user_id, work.model())
        .await?
    {
        Ok(model) => model,
        Err(reason) => {
            let reason = reason.to_string();
            translations
                .fail_proposal(book_id, proposal_id, &reason, None, PassUsage::default(), 0)
                .await?;
            return Ok(());
        }
    };
    let engine = model.name().to_string();
    let ladder = work.ladder(&engine);
    let ledger = HashMap::new();
    let input = work.input(&ladder, &ledger);
    let (_, settings) = handler.pipeline.for_model(model.as_ref());
    let mut translation = ChapterTranslation::new(&input, &settings, None);
    // What each pass will cost, for the book's cost cap (as a run's chapter reserves it).
    let estimates = book.max_cost_micros.map(|_| translation.estimate());
    let mut spent = 0;
    let mut used_so_far = PassUsage::default();
    while let Some(pass) = translation.next_pass() {
        let done = usize::from(translation.checkpoint().passes_done);
        let estimate = estimates.map(|e| e[done]).unwrap_or_default();
        let reserved = match reserve(handler, book, &engine, estimate).await? {
            Reservation::Go(amount) => amount,
            Reservation::OverCap | Reservation::Moved => {
                let reason = format!(
                    "its {} pass would go past the book's cost cap of ${:.2}",
                    pass.task(),
                    book.max_cost_micros.unwrap_or(0) as f64 / 1e6
                );
                translations
                    .fail_proposal(
                        book_id,
                        proposal_id,
                        &reason,
                        Some(&engine),
                        used_so_far,
                        spent,
                    )
                    .await?;
                return Ok(());
            }
        };
        let result = translation.run_pass(model.as_ref()).await;
        let used = match &result {
            Ok(_) => translation.checkpoint().quality().usage(pass),
            Err(_) => PassUsage::default(),
        };
        settle(handler, book, &engine, reserved, used).await?;
        spent += micros(cost(&engine, used.input_tokens, used.output_tokens));
        used_so_far += used;
        if let Err(e) = result {
            let reason = match e {
                ChatError::Retryable { message, .. } => {
                    format!("the model is unavailable: {message}")
                }
                ChatError::Fatal(message) => format!("the model refused: {message}"),
            };
            translations
                .fail_proposal(
                    book_id,
                    proposal_id,
                    &reason,
                    Some(&engine),
                    used_so_far,
                    spent,
                )
                .await?;
            return Ok(());
        }
        info!(pass = pass.task(), "re-translation pass done");
    }
    let output = translation.finish();
    translations
        .finish_proposal(work, output, &engine, spent)
        .await?;
    Ok(())
}
