//! Sharing: `POST/DELETE /api/books/{id}/share`, and the public reader at `/shared/{token}`
//! (no credentials): the chapter list, original and translation side by side, download links.

use axum::extract::{Path, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use booktr_core::books::Book;
use booktr_core::jobs::OutputFormat;
use booktr_core::translation::SideBySide;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::download::output_format;
use super::{Success, SUCCESS};
use crate::error::ApiError;
use crate::extract::Query;
use crate::{AppState, Caller};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/books/{id}/share", post(share).delete(unshare))
        .route("/shared/{token}", get(reader))
        .route("/shared/{token}/download", get(public_download))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ShareRequest {
    expires_in: Option<i64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Shared {
    success: bool,
    share_url: String,
    share_token: String,
    expires_at: Option<DateTime<Utc>>,
}

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
        .share(caller.user_id(), &id, body.expires_in)
        .await?;
    Ok(axum::Json(Shared {
        success: true,
        share_url: format!("{}/shared/{}", state.settings.public_url, share.token),
        share_token: share.token,
        expires_at: share.expires_at,
    }))
}

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
}

async fn reader(
    State(state): State<AppState>,
    Path(token): Path<String>,
    Query(q): Query<ReaderQuery>,
) -> Result<Response, ApiError> {
    let book = shared_book(&state, &token).await?;
    let translations = &state.services.translations;
    let chapters = state.services.books.chapters(&book.id).await?;
    let number = q.chapter.unwrap_or(1);
    let current = translations
        .side_by_side(&book, number)
        .await?
        .ok_or_else(|| ApiError::not_found("chapter"))?;
    let mut formats = Vec::new();
    for format in [OutputFormat::Epub, OutputFormat::Pdf] {
        if translations.has_file(&book, format).await? {
            formats.push(format);
        }
    }
    let page = render_page(&book, &token, &chapters, number, &current, &formats);
    Ok((
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            // Revocation must take effect at once, so nobody may keep a copy.
            (CACHE_CONTROL, "no-store"),
        ],
        page,
    )
        .into_response())
}

#[derive(Deserialize)]
struct FormatQuery {
    format: Option<String>,
}

/// Redirects to a fresh signed link of the shared book's file.
async fn public_download(
    State(state): State<AppState>,
    Path(token): Path<String>,
    Query(q): Query<FormatQuery>,
) -> Result<Response, ApiError> {
    let book = shared_book(&state, &token).await?;
    let format = output_format(q.format.as_deref())?;
    let download = state
        .services
        .translations
        .existing_download(&book, format)
        .await?;
    Ok((StatusCode::FOUND, [(LOCATION, download.url)]).into_response())
}

/// Text and attribute values alike: the page quotes its attributes with `"`.
fn escape(text: &str) -> String {
    booktr_formats::markup::escape_attr(text)
}

fn render_page(
    book: &Book,
    token: &str,
    chapters: &[booktr_core::books::Chapter],
    number: u32,
    current: &SideBySide,
    formats: &[OutputFormat],
) -> String {
    let downloads: String = formats
        .iter()
        .map(|f| {
            format!(
                "<a href=\"/shared/{token}/download?format={}\">Download {}</a>",
                f.as_str(),
                f.as_str().to_uppercase()
            )
        })
        .collect();
    let dir = |lang: &str| {
        if booktr_formats::render::is_rtl(lang) {
            "rtl"
        } else {
            "ltr"
        }
    };
    let title = escape(&book.title);
    let mut contents = String::new();
    for chapter in chapters {
        let label = chapter
            .title
            .clone()
            .unwrap_or_else(|| format!("Chapter {}", chapter.number));
        let marker = if chapter.number == number {
            " aria-current=\"page\""
        } else {
            ""
        };
        contents.push_str(&format!(
            "<li><a href=\"/shared/{token}?chapter={}\"{marker}>{}</a></li>",
            chapter.number,
            escape(&label)
        ));
    }
    let mut rows = String::new();
    let translated = current.translation.as_ref().map(|t| &t.blocks);
    for (i, block) in current.source.blocks.iter().enumerate() {
        let original = block.plain_text();
        if original.trim().is_empty() {
            continue;
        }
        let translation = translated
            .and_then(|blocks| blocks.get(i))
            .map(|b| escape(&b.plain_text()))
            .unwrap_or_else(|| "<em class=\"pending\">not translated yet</em>".into());
        rows.push_str(&format!(
            "<tr><td dir=\"{}\">{}</td><td dir=\"{}\">{}</td></tr>",
            dir(&book.original_lang),
            escape(&original),
            dir(&book.target_lang),
            translation
        ));
    }
    let author = book
        .author
        .as_deref()
        .map(|a| format!("<p class=\"author\">{}</p>", escape(a)))
        .unwrap_or_default();
    format!(
        "<!DOCTYPE html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>\
         body{{font-family:Georgia,serif;margin:0;display:flex;color:#222}}\
         nav{{width:16rem;padding:1rem;border-right:1px solid #ddd;height:100vh;overflow:auto;position:sticky;top:0}}\
         nav ol{{padding-left:1.2rem}} nav a[aria-current]{{font-weight:bold}}\
         main{{flex:1;padding:1rem 2rem;max-width:70rem}}\
         table{{border-collapse:collapse;width:100%}} td{{vertical-align:top;padding:.4rem .8rem;width:50%;line-height:1.5}}\
         tr:nth-child(even){{background:#f7f7f5}} th{{text-align:left;padding:.4rem .8rem}}\
         .pending{{color:#999}} .downloads a{{margin-right:1rem}}\
         </style></head><body>\
         <nav><h2>{title}</h2>{author}<p class=\"downloads\">{downloads}</p>\
         <ol>{contents}</ol></nav>\
         <main><table><thead><tr><th>Original ({from})</th><th>Translation ({to})</th></tr></thead>\
         <tbody>{rows}</tbody></table></main></body></html>\n",
        lang = escape(&book.target_lang),
        from = escape(&book.original_lang),
        to = escape(&book.target_lang),
    )
}
