//! The caller's translation memory: `GET /api/memory` (its pairs), `GET/DELETE
//! /api/memory/entries` (a pair's entries a page at a time; all of them deleted),
//! `DELETE /api/memory/entries/{id}` (one forgotten), `GET/POST /api/memory/tmx` (a pair as a
//! TMX 1.4 file; a TMX file imported). Served beside the glossaries (their function on AWS).

use axum::body::Body;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use booktr_core::memory::tmx::MAX_TMX_BYTES;
use booktr_core::memory::{MemoryError, Pair, DEFAULT_PAGE, MAX_PAGE};
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::{ErrorBody, Routes};
use crate::state::AppState;
use crate::wire::memory::{EntryPage, Imported, PairSummary};
use crate::wire::Mirror;

/// The header an export answers with when the pair holds more than its file: the `offset` of
/// the next file.
pub const NEXT_OFFSET: HeaderName = HeaderName::from_static("x-next-offset");

/// TMX's media type.
pub const TMX_TYPE: &str = "application/x-tmx+xml; charset=utf-8";

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(memory_pairs))
        .routes(routes!(memory_entries, forget_pair))
        .routes(routes!(forget_entry))
        .routes(routes!(export_tmx, import_tmx))
}

impl From<MemoryError> for ApiError {
    fn from(e: MemoryError) -> Self {
        match e {
            MemoryError::Invalid(m) => ApiError::bad_request(m),
            MemoryError::NotFound(what) => ApiError::not_found(what),
            MemoryError::Store(s) => s.into(),
            MemoryError::Fault(f) => f.into(),
        }
    }
}

/// Which pair: `source` and `target`, language codes.
#[derive(Deserialize)]
struct PairQuery {
    source: Option<String>,
    target: Option<String>,
    offset: Option<usize>,
    limit: Option<usize>,
}

impl PairQuery {
    fn pair(&self) -> Result<Pair, ApiError> {
        match (&self.source, &self.target) {
            (Some(source), Some(target)) => Ok(Pair::parse(source, target)?),
            _ => Err(ApiError::bad_request(
                "the source and target query parameters (language codes) are required",
            )),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
struct Pairs {
    pairs: Vec<PairSummary>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Deleted {
    success: bool,
    /// Entries deleted.
    deleted: u64,
}

/// The caller's language pairs, each with its passages counted.
#[utoipa::path(get, path = "/api/memory", tag = "memory", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "The pairs", body = Pairs)))]
async fn memory_pairs(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<Pairs>, ApiError> {
    let pairs = state.services.memory.pairs(caller.user_id()).await?;
    Ok(axum::Json(Pairs {
        pairs: Mirror::mirror(pairs),
    }))
}

/// A page of the pair's passages, newest first.
#[utoipa::path(get, path = "/api/memory/entries", tag = "memory", security(("apiKey" = []), ("session" = [])),
    params(("source" = String, Query, description = "The pair's source language code"),
        ("target" = String, Query, description = "The pair's target language code"),
        ("offset" = Option<usize>, Query, description = "Entries to skip (default 0)"),
        ("limit" = Option<usize>, Query, description = "Entries on the page: 1 to 200 (default 50)")),
    responses((status = 200, description = "The page", body = EntryPage),
        (status = 400, description = "A missing or invalid language code, or limit", body = ErrorBody),
        (status = 404, description = "The caller's memory has no such pair", body = ErrorBody)))]
async fn memory_entries(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<PairQuery>,
) -> Result<axum::Json<EntryPage>, ApiError> {
    let pair = q.pair()?;
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::bad_request(format!(
            "limit must be between 1 and {MAX_PAGE}"
        )));
    }
    let page = state
        .services
        .memory
        .page(caller.user_id(), &pair, q.offset.unwrap_or(0), limit)
        .await?;
    Ok(axum::Json(page.into()))
}

/// Forgets every passage of the pair.
#[utoipa::path(delete, path = "/api/memory/entries", tag = "memory", security(("apiKey" = []), ("session" = [])),
    params(("source" = String, Query, description = "The pair's source language code"),
        ("target" = String, Query, description = "The pair's target language code")),
    responses((status = 200, description = "Deleted", body = Deleted),
        (status = 404, description = "The caller's memory has no such pair", body = ErrorBody)))]
async fn forget_pair(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<PairQuery>,
) -> Result<axum::Json<Deleted>, ApiError> {
    let deleted = state
        .services
        .memory
        .delete_pair(caller.user_id(), &q.pair()?)
        .await?;
    Ok(axum::Json(Deleted {
        success: true,
        deleted,
    }))
}

/// Forgets one passage.
#[utoipa::path(delete, path = "/api/memory/entries/{id}", tag = "memory", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The entry's id"),
        ("source" = String, Query, description = "The pair's source language code"),
        ("target" = String, Query, description = "The pair's target language code")),
    responses((status = 200, description = "Deleted", body = super::Success),
        (status = 404, description = "The caller's memory has no such entry", body = ErrorBody)))]
async fn forget_entry(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<PairQuery>,
) -> Result<axum::Json<super::Success>, ApiError> {
    state
        .services
        .memory
        .delete_entry(caller.user_id(), &q.pair()?, &id)
        .await?;
    Ok(axum::Json(super::SUCCESS))
}

/// The pair's passages as a TMX 1.4 file, newest first, as many as fit in 4 MB: when more are
/// left, the `X-Next-Offset` header gives the `offset` of the next file.
#[utoipa::path(get, path = "/api/memory/tmx", tag = "memory", security(("apiKey" = []), ("session" = [])),
    params(("source" = String, Query, description = "The pair's source language code"),
        ("target" = String, Query, description = "The pair's target language code"),
        ("offset" = Option<usize>, Query, description = "Entries to skip (default 0)")),
    responses((status = 200, description = "The TMX file", content_type = "application/x-tmx+xml", body = String),
        (status = 404, description = "The caller's memory has no such pair", body = ErrorBody)))]
async fn export_tmx(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<PairQuery>,
) -> Result<Response, ApiError> {
    let pair = q.pair()?;
    let (tmx, next) = state
        .services
        .memory
        .export(caller.user_id(), &pair, q.offset.unwrap_or(0))
        .await?;
    Ok(tmx_file(&pair, tmx, next))
}

/// A TMX file as an attachment, with the next file's offset when there is one.
pub fn tmx_file(pair: &Pair, tmx: String, next: Option<usize>) -> Response {
    let name = format!("booktr-memory-{}-{}.tmx", pair.source, pair.target);
    let mut response = (
        [
            (CONTENT_TYPE, TMX_TYPE.to_string()),
            (
                CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
            (CACHE_CONTROL, "private, no-store".to_string()),
        ],
        tmx,
    )
        .into_response();
    if let Some(next) = next {
        response.headers_mut().insert(NEXT_OFFSET, next.into());
    }
    response
}

/// Remembers the units of a TMX file (the request's body, at most 4 MB, UTF-8) in the pair's
/// languages: each replaces the passage of the same source, as imported. Units without a
/// segment in each language are skipped; a DOCTYPE that declares entities, an entity XML does
/// not define, or a file that is not well-formed is 400.
#[utoipa::path(post, path = "/api/memory/tmx", tag = "memory", security(("apiKey" = []), ("session" = [])),
    params(("source" = String, Query, description = "The pair's source language code"),
        ("target" = String, Query, description = "The pair's target language code")),
    request_body(content = String, content_type = "application/x-tmx+xml", description = "A TMX file"),
    responses((status = 200, description = "Imported", body = Imported),
        (status = 400, description = "Not a TMX file this takes", body = ErrorBody),
        (status = 413, description = "A file over 4 MB", body = ErrorBody)))]
async fn import_tmx(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<PairQuery>,
    body: Body,
) -> Result<axum::Json<Imported>, ApiError> {
    let pair = q.pair()?;
    let bytes = axum::body::to_bytes(body, MAX_TMX_BYTES)
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!("a TMX file is at most {} MB", MAX_TMX_BYTES / (1024 * 1024)),
            )
        })?;
    let text = String::from_utf8(bytes.to_vec())
        .map_err(|_| ApiError::bad_request("the TMX file must be UTF-8 text"))?;
    let imported = state
        .services
        .memory
        .import(caller.user_id(), &pair, &text)
        .await?;
    Ok(axum::Json(imported.into()))
}
