//! Sharing: `POST/DELETE /api/books/{id}/share`, and the public reader at `/shared/{token}`
//! (no credentials): the chapter list, original and translation side by side, download links.

use axum::extract::State;
use axum::http::header::LOCATION;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use booktr_core::books::Book;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::download::edition;
use super::{Success, SUCCESS};
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::web::app::reading;
use crate::web::app::Visitor;
use crate::web::reader::{Reader, View};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(share, unshare))
        .routes(routes!(reader))
        .routes(routes!(public_download))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ShareRequest {
    expires_in: Option<i64>,
    /// Listed in the sitemap for search engines; absent or false: unlisted, reachable only by
    /// whoever has the link.
    public: Option<bool>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Shared {
    success: bool,
    share_url: String,
    share_token: String,
    expires_at: Option<DateTime<Utc>>,
    /// Whether the link is listed in the sitemap.
    public: bool,
}

/// A link to the book's reader page; `expiresIn` in days (absent or null: no expiry); `public`
/// lists it in the sitemap (unlisted by default).
#[utoipa::path(post, path = "/api/books/{id}/share", tag = "books", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id")),
    request_body(content = Option<ShareRequest>),
    responses((status = 200, description = "Shared", body = Shared),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn share(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<axum::Json<Shared>, ApiError> {
    // The body is optional: none (or whitespace) means a link that never expires.
    let body: ShareRequest = if body.iter().all(u8::is_ascii_whitespace) {
        ShareRequest::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))?
    };
    let share = state
        .services
        .books
        .share(
            caller.user_id(),
            &id,
            body.expires_in,
            body.public.unwrap_or(false),
        )
        .await?;
    Ok(axum::Json(Shared {
        success: true,
        share_url: format!("{}/shared/{}", state.settings.public_url, share.token),
        share_token: share.token,
        expires_at: share.expires_at,
        public: share.public,
    }))
}

#[utoipa::path(delete, path = "/api/books/{id}/share", tag = "books", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id")),
    responses((status = 200, description = "No longer shared", body = Success),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn unshare(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Success>, ApiError> {
    state.services.books.unshare(caller.user_id(), &id).await?;
    Ok(axum::Json(SUCCESS))
}

async fn shared_book(state: &AppState, token: &str) -> Result<Book, ApiError> {
    state
        .services
        .books
        .shared(token)
        .await?
        .ok_or_else(|| ApiError::not_found("shared book"))
}

#[derive(Deserialize)]
struct ReaderQuery {
    chapter: Option<u32>,
    page: Option<u32>,
    view: Option<String>,
}

/// The shared book's reader page: original and translation side by side, a page of a chapter
/// at a time (at most 200 rows and 200,000 characters).
#[utoipa::path(get, path = "/shared/{token}", tag = "pages",
    params(("token" = String, Path), ("chapter" = Option<u32>, Query, minimum = 1),
        ("page" = Option<u32>, Query, minimum = 1, description = "The page of the chapter (default 1)"),
        ("view" = Option<String>, Query, description = "`both` (original and translation side by side) or `translation` (the translation alone); remembered in the `reader_view` cookie")),
    responses((status = 200, description = "HTML page", content_type = "text/html", body = String),
        (status = 404, description = "No such shared book, chapter or page", body = ErrorBody)))]
async fn reader(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(token): Path<String>,
    Query(q): Query<ReaderQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let book = shared_book(&state, &token).await?;
    let translations = &state.services.translations;
    let chapters = state.services.books.chapters(&book.id).await?;
    let number = q.chapter.unwrap_or(1);
    let current = translations
        .side_by_side(&book, number)
        .await?
        .ok_or_else(|| ApiError::not_found("chapter"))?;
    let mut editions = Vec::new();
    for edition in booktr_core::books::store::editions_of(book.format) {
        if translations.has_file(&book, edition).await? {
            editions.push(edition);
        }
    }
    let (view, asked) = View::chosen(q.view.as_deref(), &headers);
    let at = reading::Position {
        chapter: number,
        page: q.page.unwrap_or(1),
    };
    let continue_at = reading::of(&headers, &token).map(|p| (p.chapter, p.page));
    let mut page = crate::web::reader::page(
        &state,
        Reader {
            book: &book,
            base: &format!("/shared/{token}"),
            downloads: &format!("/shared/{token}/download"),
            private: false,
            signed_in: visitor.signed_in,
            chapters: &chapters,
            number,
            page: at.page,
            current: &current,
            editions: &editions,
            view,
            lang: visitor.lang,
            back: None,
            continue_at,
            review: false,
        },
    )?;
    if asked {
        view.remember(&mut page);
    }
    // The book's first page offering to continue does not forget where to.
    let offered = continue_at.is_some() && (at.chapter, at.page) == (1, 1);
    if !offered {
        reading::remember(&headers, reading::Scope::Shared, &token, at, &mut page);
    }
    Ok(page)
}

#[derive(Deserialize)]
struct FormatQuery {
    format: Option<String>,
    layout: Option<String>,
}

/// Redirects to a signed link to the shared book's file, which ends with the share.
#[utoipa::path(get, path = "/shared/{token}/download", tag = "pages",
    params(("token" = String, Path), ("format" = String, Query, description = "`epub` or `pdf`"),
        ("layout" = Option<String>, Query, description = "`translated` (default) or `bilingual`")),
    responses((status = 302, description = "To a signed link", headers(("location" = String))),
        (status = 404, description = "No such shared book or file", body = ErrorBody)))]
async fn public_download(
    State(state): State<AppState>,
    Path(token): Path<String>,
    Query(q): Query<FormatQuery>,
) -> Result<Response, ApiError> {
    let book = shared_book(&state, &token).await?;
    let edition = edition(q.format.as_deref(), q.layout.as_deref())?;
    let download = state
        .services
        .translations
        .shared_download(&book, &token, edition)
        .await?;
    Ok((StatusCode::FOUND, [(LOCATION, download.url)]).into_response())
}
