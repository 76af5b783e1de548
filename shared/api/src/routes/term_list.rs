//! The book's term list: `GET /api/translate/terms` shows it, `PUT /api/translate/terms`
//! changes it. Served by the translation group.

use axum::extract::State;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Json, Query};
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::term_list::{BookTermList, TermListChange};

pub fn router() -> Routes {
    OpenApiRouter::new().routes(routes!(show, change))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BookQuery {
    book_id: Option<String>,
}

fn book_id(q: BookQuery) -> Result<String, ApiError> {
    q.book_id
        .filter(|id| !id.is_empty())
        .ok_or_else(|| ApiError::bad_request("the bookId query parameter is required"))
}

/// The terms the book's chapters enforce, each with where it came from: the glossary the run
/// was started with, then the run's term list (the model's, and the owner's changes).
#[utoipa::path(get, path = "/api/translate/terms", tag = "translation", security(("apiKey" = []), ("session" = [])),
    params(("bookId" = String, Query, description = "The book's id")),
    responses((status = 200, description = "The book's terms", body = BookTermList),
        (status = 400, description = "No bookId", body = ErrorBody),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<BookQuery>,
) -> Result<axum::Json<BookTermList>, ApiError> {
    let book_id = book_id(q)?;
    Ok(axum::Json(
        state
            .services
            .translations
            .term_list(caller.user_id(), &book_id)
            .await?
            .into(),
    ))
}

/// Changes the run's term list: each rendering set becomes the owner's (a term may be bound to
/// itself), each term removed is translated freely. The chapters translated from then on use
/// it; a run started with `pauseAtTerms` waits for this before its first chapter. The list must
/// be made first (its `ready`), and the glossary's terms are changed in the glossary.
#[utoipa::path(put, path = "/api/translate/terms", tag = "translation", security(("apiKey" = []), ("session" = [])),
    params(("bookId" = String, Query, description = "The book's id")),
    request_body = TermListChange,
    responses((status = 200, description = "The book's terms after the change", body = BookTermList),
        (status = 400, description = "No bookId; an empty or too long term or rendering (1 to 200 characters), a control character or one the book cannot hold; a term named twice; more than 300 changes or a list of more than 600 terms; a term the glossary fixes; a list not made yet", body = ErrorBody),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn change(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<BookQuery>,
    Json(body): Json<TermListChange>,
) -> Result<axum::Json<BookTermList>, ApiError> {
    let book_id = book_id(q)?;
    Ok(axum::Json(
        state
            .services
            .translations
            .change_term_list(caller.user_id(), &book_id, body.into())
            .await?
            .into(),
    ))
}
