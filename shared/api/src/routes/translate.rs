//! Translation: `POST /api/translate`, `/api/translate/{pause,resume,stop}`,
//! `GET /api/translate/status` and `GET /api/translate/quote` (and the term list's routes,
//! `routes::term_list`).

use axum::extract::State;
use axum::http::StatusCode;
use booktr_core::translation::{QuoteRequest, RenderError, StartRequest, TranslationError};
use booktr_core::types::BookStatus;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::{Json, Query};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::translation::{Quote, TranslationStatus};

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(start))
        .routes(routes!(pause))
        .routes(routes!(resume))
        .routes(routes!(stop))
        .routes(routes!(status))
        .routes(routes!(quote))
        .merge(super::term_list::router())
}

impl From<TranslationError> for ApiError {
    fn from(e: TranslationError) -> Self {
        match e {
            TranslationError::Invalid(m) => ApiError::bad_request(m),
            TranslationError::CannotStart {
                ref book_id,
                status,
            } => ApiError::bad_request(format!("{e}; {}", way_to_start(book_id, status))),
            TranslationError::NotFound => ApiError::not_found("book"),
            TranslationError::NothingTranslated(_) => ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!(
                    "{e}: start a translation with POST /api/translate, and download once GET \
                     /api/translate/status shows a chapter completed"
                ),
            ),
            TranslationError::QuotaExceeded(m) => {
                ApiError::new(StatusCode::BAD_REQUEST, "quota_exceeded", m)
            }
            TranslationError::Render(RenderError::Store(s)) | TranslationError::Store(s) => {
                s.into()
            }
            TranslationError::Render(RenderError::Fault(f)) | TranslationError::Fault(f) => {
                f.into()
            }
            // The book lists a chapter whose text is not stored: asking again finds the same.
            e @ TranslationError::MissingText(_) => ApiError::internal(&e),
            TranslationError::Books(e) => e.into(),
            TranslationError::Developer(e) => e.into(),
            // A new run took the chapters meanwhile: the next try finds them.
            TranslationError::Render(e @ RenderError::Missing(_)) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "service_unavailable",
                format!("{e}; try again shortly"),
            ),
            // The same book fails the same way again; the message names the limit it met.
            TranslationError::Render(e @ RenderError::Refused { .. }) => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "render_failed",
                e.to_string(),
            ),
            TranslationError::Render(e @ RenderError::Stopped(_)) => ApiError::internal(&e),
        }
    }
}

/// The call that moves a book in `status` on to where a translation can start.
fn way_to_start(id: &str, status: BookStatus) -> String {
    match status {
        BookStatus::Uploaded | BookStatus::Extracting => format!(
            "its text is still being read: start the translation once GET /api/books/{id} shows \
             EXTRACTED"
        ),
        BookStatus::Translating => format!(
            "it is being translated: follow it with GET /api/translate/status?bookId={id}, or \
             pause or stop it first (POST /api/translate/pause, POST /api/translate/stop)"
        ),
        BookStatus::Paused => "resume it with POST /api/translate/resume, or stop it with POST \
             /api/translate/stop and then start again"
            .to_string(),
        BookStatus::Error => {
            "its file could not be read: upload it again (POST /api/upload)".to_string()
        }
        BookStatus::Translated | BookStatus::Generating => format!(
            "its file is being made: download it once GET /api/books/{id} shows COMPLETED, or \
             translate it again then"
        ),
        BookStatus::Extracted | BookStatus::Completed => "it can start".to_string(),
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Start {
    book_id: String,
    model: Option<String>,
    glossary_id: Option<String>,
    target_lang: Option<String>,
    max_cost: Option<f64>,
    /// A second model (one of the six, not `model`) for the blocks the first leaves flagged or
    /// of confidence under 50; its cost counts in the quote and under `maxCost`.
    fallback_model: Option<String>,
    /// Pause once the book's term list is ready (GET /api/translate/terms), so it can be checked
    /// and changed before any chapter is translated; POST /api/translate/resume goes on.
    #[serde(default)]
    pause_at_terms: bool,
    /// Whether the run takes from and gives to the caller's translation memory: passages whose
    /// source was translated and accepted before are taken as they are, free, and what this run
    /// translates is remembered. Default: the book's choice (true for a book never started).
    memory: Option<bool>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct BookRef {
    book_id: String,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Resume {
    book_id: String,
    /// A new cost cap for the resumed run.
    max_cost: Option<f64>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Started {
    success: bool,
    message: String,
    jobs_created: u32,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Done {
    success: bool,
    message: &'static str,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Resumed {
    success: bool,
    message: String,
    resumed: u32,
    total: u32,
}

/// Queues the book's chapters for translation (three passes each, the glossary enforced).
#[utoipa::path(post, path = "/api/translate", tag = "translation", security(("apiKey" = []), ("session" = [])), request_body = Start,
    responses((status = 200, description = "Started", body = Started),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn start(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<Start>,
) -> Result<axum::Json<Started>, ApiError> {
    let request = StartRequest {
        book_id: body.book_id,
        model: body.model,
        glossary_id: body.glossary_id,
        target_lang: body.target_lang,
        max_cost: body.max_cost,
        fallback_model: body.fallback_model,
        pause_at_terms: body.pause_at_terms,
        memory: body.memory,
    };
    let jobs = state
        .services
        .translations
        .start(&caller.0.user, request)
        .await?;
    Ok(axum::Json(Started {
        success: true,
        message: format!("translation started: {jobs} chapters queued"),
        jobs_created: jobs,
    }))
}

#[utoipa::path(post, path = "/api/translate/pause", tag = "translation", security(("apiKey" = []), ("session" = [])), request_body = BookRef,
    responses((status = 200, description = "Paused", body = Done),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<BookRef>,
) -> Result<axum::Json<Done>, ApiError> {
    state
        .services
        .translations
        .pause(caller.user_id(), &body.book_id)
        .await?;
    Ok(axum::Json(Done {
        success: true,
        message: "translation paused; the chapter in progress will finish and be kept",
    }))
}

#[utoipa::path(post, path = "/api/translate/resume", tag = "translation", security(("apiKey" = []), ("session" = [])), request_body = Resume,
    responses((status = 200, description = "Resumed", body = Resumed),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<Resume>,
) -> Result<axum::Json<Resumed>, ApiError> {
    let (resumed, total) = state
        .services
        .translations
        .resume(caller.user_id(), &body.book_id, body.max_cost)
        .await?;
    Ok(axum::Json(Resumed {
        success: true,
        message: format!("translation resumed: {resumed} of {total} chapters queued"),
        resumed,
        total,
    }))
}

#[utoipa::path(post, path = "/api/translate/stop", tag = "translation", security(("apiKey" = []), ("session" = [])), request_body = BookRef,
    responses((status = 200, description = "Stopped", body = Done),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn stop(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<BookRef>,
) -> Result<axum::Json<Done>, ApiError> {
    state
        .services
        .translations
        .stop(caller.user_id(), &body.book_id)
        .await?;
    Ok(axum::Json(Done {
        success: true,
        message: "translation stopped; completed chapters are kept for the next start",
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusQuery {
    book_id: Option<String>,
}

/// The book's translation progress, cost and errors.
#[utoipa::path(get, path = "/api/translate/status", tag = "translation", security(("apiKey" = []), ("session" = [])),
    params(("bookId" = String, Query, description = "The book's id")),
    responses((status = 200, description = "Status", body = TranslationStatus),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn status(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<StatusQuery>,
) -> Result<axum::Json<TranslationStatus>, ApiError> {
    let book_id = q
        .book_id
        .filter(|id| !id.is_empty())
        .ok_or_else(|| ApiError::bad_request("the bookId query parameter is required"))?;
    Ok(axum::Json(
        state
            .services
            .translations
            .status(caller.user_id(), &book_id)
            .await?
            .into(),
    ))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct QuoteQuery {
    book_id: Option<String>,
    model: Option<String>,
    glossary_id: Option<String>,
    target_lang: Option<String>,
    fallback_model: Option<String>,
    memory: Option<bool>,
}

/// What a start with the same choices would use and cost; nothing is spent or changed.
#[utoipa::path(get, path = "/api/translate/quote", tag = "translation", security(("apiKey" = []), ("session" = [])),
    params(("bookId" = String, Query, description = "The book's id"),
        ("model" = Option<String>, Query, description = "Default: the caller's preference"),
        ("glossaryId" = Option<String>, Query),
        ("targetLang" = Option<String>, Query),
        ("fallbackModel" = Option<String>, Query, description = "A second model for what the first cannot do; its share is quoted"),
        ("memory" = Option<bool>, Query, description = "Whether the run would use the caller's translation memory (default: the book's choice)")),
    responses((status = 200, description = "The estimate", body = Quote),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn quote(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<QuoteQuery>,
) -> Result<axum::Json<Quote>, ApiError> {
    let book_id = q
        .book_id
        .filter(|id| !id.is_empty())
        .ok_or_else(|| ApiError::bad_request("the bookId query parameter is required"))?;
    let request = QuoteRequest {
        book_id,
        model: q.model.filter(|m| !m.is_empty()),
        glossary_id: q.glossary_id.filter(|g| !g.is_empty()),
        target_lang: q.target_lang.filter(|t| !t.is_empty()),
        fallback_model: q.fallback_model.filter(|m| !m.is_empty()),
        memory: q.memory,
    };
    Ok(axum::Json(
        state
            .services
            .translations
            .quote(&caller.0.user, request)
            .await?
            .into(),
    ))
}
