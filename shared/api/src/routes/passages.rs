//! A book's passages, for its owner to review and correct:
//! `GET /api/books/{id}/chapters/{number}/passages`, `GET /api/books/{id}/passages/flagged`,
//! `PUT /api/books/{id}/chapters/{number}/passages/{index}` and its `undo`, `reset` and `keep`.
//! Served by the books group (its Lambda takes `/api/books/{proxy+}`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use booktr_core::translation::passages::{self as domain, PassageAt, PassageError};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Json, Path, Query};
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::passage_terms::EditedPassage;
use crate::wire::passages::{FlaggedPage, Passage, PassagePage};

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(chapter_passages))
        .routes(routes!(flagged))
        .routes(routes!(edit))
        .routes(routes!(undo))
        .routes(routes!(reset))
        .routes(routes!(keep))
}

/// A failure of a passage's route: the `{error, message}` body, with the passage as it is now
/// on a `409` (a stale version, nothing to undo), so the client can show what it lost to.
pub struct PassageFailure(PassageError);

/// The body of a `409`: `{error, message, passage}`.
#[derive(Serialize, utoipa::ToSchema)]
struct Conflict {
    /// `version_conflict` or `nothing_to_undo`.
    error: &'static str,
    message: String,
    /// The passage as it is now.
    passage: Passage,
}

impl From<PassageError> for PassageFailure {
    fn from(e: PassageError) -> Self {
        PassageFailure(e)
    }
}

impl IntoResponse for PassageFailure {
    fn into_response(self) -> Response {
        let message = self.0.to_string();
        let conflict = |error, passage: Box<domain::Passage>| {
            let body = Conflict {
                error,
                message: message.clone(),
                passage: Passage::from(*passage),
            };
            (StatusCode::CONFLICT, axum::Json(body)).into_response()
        };
        match self.0 {
            PassageError::Stale { current, .. } => conflict("version_conflict", current),
            PassageError::NothingToUndo(current) => conflict("nothing_to_undo", current),
            PassageError::NotFound(_) => {
                ApiError::new(StatusCode::NOT_FOUND, "not_found", message).into_response()
            }
            PassageError::Invalid(m) => ApiError::bad_request(m).into_response(),
            PassageError::TooLong(m) => {
                ApiError::new(StatusCode::BAD_REQUEST, "text_too_long", m).into_response()
            }
            PassageError::Characters(m) => {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_character", m).into_response()
            }
            PassageError::Marks(_) => {
                ApiError::new(StatusCode::BAD_REQUEST, "marks_mismatch", message).into_response()
            }
            PassageError::Store(s) => ApiError::from(s).into_response(),
            PassageError::Fault(f) => ApiError::from(f).into_response(),
        }
    }
}

#[derive(Deserialize)]
struct PageQuery {
    offset: Option<u32>,
    limit: Option<u32>,
}

/// A page of a chapter's passages, in order, each with its source, its text now, its flags and
/// where its text came from.
#[utoipa::path(get, path = "/api/books/{id}/chapters/{number}/passages", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("number" = u32, Path, description = "The chapter's number, from 1"),
        ("offset" = Option<u32>, Query, description = "The first passage, from 0 (default 0)"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 200, description = "Passages on the page, 1 to 200 (default 50)")),
    responses((status = 200, description = "The page", body = PassagePage),
        (status = 400, description = "A bad number, offset or limit", body = ErrorBody),
        (status = 404, description = "No such book or chapter", body = ErrorBody)))]
async fn chapter_passages(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, number)): Path<(String, u32)>,
    Query(q): Query<PageQuery>,
) -> Result<axum::Json<PassagePage>, PassageFailure> {
    let (offset, limit) = domain::page(q.offset, q.limit)?;
    let page = state
        .services
        .translations
        .passages(caller.user_id(), &id, number, offset, limit)
        .await?;
    Ok(axum::Json(page.into()))
}

/// A page of the book's flagged passages across its chapters, in reading order: what the checks
/// could not trust and the owner has not yet corrected.
#[utoipa::path(get, path = "/api/books/{id}/passages/flagged", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("offset" = Option<u32>, Query, description = "The first flagged passage, from 0 (default 0)"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 200, description = "Passages on the page, 1 to 200 (default 50)")),
    responses((status = 200, description = "The page", body = FlaggedPage),
        (status = 400, description = "A bad offset or limit", body = ErrorBody),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn flagged(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<axum::Json<FlaggedPage>, PassageFailure> {
    let (offset, limit) = domain::page(q.offset, q.limit)?;
    let page = state
        .services
        .translations
        .flagged_passages(caller.user_id(), &id, offset, limit)
        .await?;
    Ok(axum::Json(page.into()))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Edit {
    /// The passage's new translation, in inline markup with the source's marks.
    text: String,
    /// The passage's version as the client read it.
    version: u64,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Read {
    /// The passage's version as the client read it.
    version: u64,
}

/// Replaces the passage's translation with the owner's: kept through every later run until it is
/// reset, its flag cleared, and the book's files made again on the next download. The passage
/// keeps its last 20 changes for undo (the oldest is dropped). The text must keep the book
/// readable: at most 4 times its source's characters (never fewer than 2,000), only characters
/// XML 1.0 allows, and no bidirectional control its source has not. The answer
/// lists the book's terms whose rendering the edit changed (`termChanges`), to apply everywhere
/// with `/api/books/{id}/terms/preview` and `/terms/apply`.
#[utoipa::path(put, path = "/api/books/{id}/chapters/{number}/passages/{index}", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("number" = u32, Path, description = "The chapter's number, from 1"),
        ("index" = u32, Path, description = "The passage's place in the chapter, from 0")),
    request_body = Edit,
    responses((status = 200, description = "The passage now, with the term changes the edit suggests", body = EditedPassage),
        (status = 400, description = "An empty text; a text longer than the passage may hold (`text_too_long`: 4 times its source's characters, never fewer than 2,000, never more than 100,000); a character the book cannot hold (`invalid_character`, naming its place and code point: a control character XML 1.0 forbids, U+FFFE, U+FFFF, or a bidirectional override, embedding or isolate control its source has not); or marks unlike the source's (`marks_mismatch`, naming the mark)", body = ErrorBody),
        (status = 404, description = "No such book, chapter or passage", body = ErrorBody),
        (status = 409, description = "The passage changed since the version read (`version_conflict`), with the passage now", body = Conflict)))]
async fn edit(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, number, index)): Path<(String, u32, u32)>,
    Json(body): Json<Edit>,
) -> Result<axum::Json<EditedPassage>, PassageFailure> {
    let at = PassageAt {
        chapter: number,
        index,
    };
    let (passage, changes) = state
        .services
        .translations
        .edit_passage_suggesting(caller.user_id(), &id, at, body.version, &body.text)
        .await?;
    Ok(axum::Json(EditedPassage {
        passage: passage.into(),
        term_changes: crate::wire::Mirror::mirror(changes),
    }))
}

/// Takes back the passage's last change (an edit or a reset).
#[utoipa::path(post, path = "/api/books/{id}/chapters/{number}/passages/{index}/undo", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("number" = u32, Path, description = "The chapter's number, from 1"),
        ("index" = u32, Path, description = "The passage's place in the chapter, from 0")),
    request_body = Read,
    responses((status = 200, description = "The passage now", body = Passage),
        (status = 404, description = "No such book, chapter or passage", body = ErrorBody),
        (status = 409, description = "The passage changed since the version read (`version_conflict`), or has no change to undo (`nothing_to_undo`), with the passage now", body = Conflict)))]
async fn undo(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, number, index)): Path<(String, u32, u32)>,
    Json(body): Json<Read>,
) -> Result<axum::Json<Passage>, PassageFailure> {
    let at = PassageAt {
        chapter: number,
        index,
    };
    let passage = state
        .services
        .translations
        .undo_passage(caller.user_id(), &id, at, body.version)
        .await?;
    Ok(axum::Json(passage.into()))
}

/// Gives the passage the model's text again (an undo brings the owner's back).
#[utoipa::path(post, path = "/api/books/{id}/chapters/{number}/passages/{index}/reset", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("number" = u32, Path, description = "The chapter's number, from 1"),
        ("index" = u32, Path, description = "The passage's place in the chapter, from 0")),
    request_body = Read,
    responses((status = 200, description = "The passage now", body = Passage),
        (status = 404, description = "No such book, chapter or passage", body = ErrorBody),
        (status = 409, description = "The passage changed since the version read (`version_conflict`), with the passage now", body = Conflict)))]
async fn reset(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, number, index)): Path<(String, u32, u32)>,
    Json(body): Json<Read>,
) -> Result<axum::Json<Passage>, PassageFailure> {
    let at = PassageAt {
        chapter: number,
        index,
    };
    let passage = state
        .services
        .translations
        .reset_passage(caller.user_id(), &id, at, body.version)
        .await?;
    Ok(axum::Json(passage.into()))
}

/// Keeps the model's text of a flagged passage as it is: its flags cleared (from the passage,
/// the book's quality record, warnings and flagged list), its text the owner's from then on
/// (origin `kept`), kept through later runs and undoable like an edit.
#[utoipa::path(post, path = "/api/books/{id}/chapters/{number}/passages/{index}/keep", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("number" = u32, Path, description = "The chapter's number, from 1"),
        ("index" = u32, Path, description = "The passage's place in the chapter, from 0")),
    request_body = Read,
    responses((status = 200, description = "The passage now", body = Passage),
        (status = 400, description = "A passage that is not flagged, or has no text yet", body = ErrorBody),
        (status = 404, description = "No such book, chapter or passage", body = ErrorBody),
        (status = 409, description = "The passage changed since the version read (`version_conflict`), with the passage now", body = Conflict)))]
async fn keep(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, number, index)): Path<(String, u32, u32)>,
    Json(body): Json<Read>,
) -> Result<axum::Json<Passage>, PassageFailure> {
    let at = PassageAt {
        chapter: number,
        index,
    };
    let passage = state
        .services
        .translations
        .keep_passage(caller.user_id(), &id, at, body.version)
        .await?;
    Ok(axum::Json(passage.into()))
}
