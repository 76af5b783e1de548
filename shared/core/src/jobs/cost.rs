//! The run's cost cap (`maxCost` on a start). Every model pass reserves its estimated cost on
//! the book before it is sent, in one conditional update, and settles it with what it really
//! used afterwards; so chapters translated at the same time together never go past the cap. A
//! pass whose reservation does not fit pauses the run instead, with the reason; its chapter's
//! finished passes are kept for the resume.

use booktr_translate::estimate::cost;
use booktr_translate::estimate::RESERVE_MARGIN;
use booktr_translate::pipeline::PassUsage;
use tracing::info;

use super::context::JobHandler;
use crate::books::lifecycle::BookEvent;
use crate::books::record::{self, BookChange, RunRecord};
use crate::books::{store, Book};
use crate::fault::DataError;
use crate::ports::{Condition, StoreError};
use crate::types::BookStatus;

/// Millionths of a dollar, rounded up (a reservation never falls short by rounding).
pub fn micros(usd: f64) -> i64 {
    (usd * 1_000_000.0).ceil() as i64
}

/// Whether a pass may go ahead.
pub(super) enum Reservation {
    /// Reserved this many micro-dollars (0 without a cap).
    Go(i64),
    /// The pass does not fit under the cap.
    OverCap,
    /// The run has moved on (paused, resumed, stopped): the job stops without pausing anything.
    Moved,
}

/// [`reserve`] for a pass of the run itself: the amount reserved, or None when the pass must not
/// go (the run is paused at its cap here, or has moved on) and the job stops.
pub(super) async fn reserve_or_stop(
    handler: &JobHandler,
    book: &Book,
    engine: &str,
    estimate: PassUsage,
) -> Result<Option<i64>, DataError> {
    Ok(match reserve(handler, book, engine, estimate).await? {
        Reservation::Go(amount) => Some(amount),
        Reservation::OverCap => {
            pause_over_cap(handler, book).await?;
            None
        }
        Reservation::Moved => None,
    })
}

/// Reserves `estimate` (tokens of the pass to come, sent to `engine`: the client's name, so
/// the offline engine reserves nothing) against the book's cap; without a cap, goes ahead at
/// once (the estimate is not looked at).
pub(super) async fn reserve(
    handler: &JobHandler,
    book: &Book,
    engine: &str,
    estimate: PassUsage,
) -> Result<Reservation, DataError> {
    let Some(cap) = book.max_cost_micros else {
        return Ok(Reservation::Go(0));
    };
    let amount =
        micros(cost(engine, estimate.input_tokens, estimate.output_tokens) * RESERVE_MARGIN);
    let reserved = handler
        .ports
        .table
        .update(
            &store::book_pk(&book.id),
            store::BOOK_SK,
            BookChange::reserve_cost(amount).into_update(),
            record::cost_room(book.run, cap, amount),
        )
        .await;
    match reserved {
        Ok(_) => Ok(Reservation::Go(amount)),
        // Either the cap or the run refused: only a pass of the current run may pause it.
        Err(StoreError::Conflict) => Ok(match handler.books.find(&book.id).await? {
            Some(now) if now.run == book.run && now.status == BookStatus::Translating => {
                Reservation::OverCap
            }
            _ => Reservation::Moved,
        }),
        Err(e) => Err(e.into()),
    }
}

/// Records what a pass used (the run's cost so far) and gives back what it reserved beyond.
pub(super) async fn settle(
    handler: &JobHandler,
    book: &Book,
    engine: &str,
    reserved: i64,
    used: PassUsage,
) -> Result<(), DataError> {
    // Priced by what answered: the offline engine costs nothing, whatever model was asked for.
    let spent = micros(cost(engine, used.input_tokens, used.output_tokens));
    if used.input_tokens + used.output_tokens > 0 {
        crate::metrics::model_used(
            engine,
            used.input_tokens,
            used.output_tokens,
            spent.max(0) as u64,
        );
    }
    if spent == 0 && reserved == 0 {
        // Nothing to record (a free model, or a pass that failed without a cap).
        return Ok(());
    }
    handler
        .ports
        .table
        .update(
            &store::book_pk(&book.id),
            store::BOOK_SK,
            BookChange::settle_cost(spent, reserved).into_update(),
            Condition::Exists,
        )
        .await?;
    Ok(())
}

/// Pauses the run because its next pass would go past the cap.
pub(super) async fn pause_over_cap(handler: &JobHandler, book: &Book) -> Result<(), DataError> {
    let spent = match handler
        .ports
        .table
        .get(&store::book_pk(&book.id), store::BOOK_SK)
        .await?
    {
        Some(item) => RunRecord::from_item(&item)?.cost_micros,
        None => 0,
    };
    let reason = format!(
        "paused before going past the run's cost cap of ${:.2}: ${:.4} spent so far; resume \
         with a higher maxCost to go on",
        book.max_cost_micros.unwrap_or(0) as f64 / 1e6,
        spent as f64 / 1e6
    );
    let update = BookChange::paused_at_cost_cap(&reason);
    if handler
        .books
        .transition(&book.id, BookEvent::Paused, update)
        .await?
        .is_some()
    {
        info!(%reason, "run paused at its cost cap");
    }
    Ok(())
}
