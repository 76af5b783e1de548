//! A book's XLIFF from its page (`/dashboard/books/{id}/xliff`): the file for a translator's
//! tool to download (the whole book, or a chapter), and a translator's file uploaded back, with
//! a page of what became of every unit. The services are the API's
//! (`GET`/`POST /api/books/{id}/xliff`); an upload counts against the plan's API limits, as
//! the editor's saves do (`crate::limits::count_as_api_call`).

use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use booktr_core::translation::passages::xliff::{XliffError, XliffReport, MAX_XLIFF_BYTES};
use booktr_formats::xliff::ReadError;
use minijinja::context;
use serde::Deserialize;

use super::failure::{page_error, refused};
use super::page::page;
use super::passage::passage_error;
use super::session::SignedIn;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Routes;
use crate::routes::books::{multipart_error, read_limited, text_field, MULTIPART_OVERHEAD};
use crate::routes::xliff::xliff_file;
use crate::state::AppState;
use crate::wire::xliff::XliffReport as Report;
use crate::wire::Mirror;

pub fn router() -> Routes {
    Routes::new().route(
        "/dashboard/books/{id}/xliff",
        get(download).post(upload).layer(DefaultBodyLimit::max(
            MAX_XLIFF_BYTES + MULTIPART_OVERHEAD as usize,
        )),
    )
}

#[derive(Deserialize)]
struct ChapterQuery {
    chapter: Option<u32>,
}

async fn download(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Query(q): Query<ChapterQuery>,
) -> Response {
    match state
        .services
        .translations
        .export_xliff(&me.user.id, &id, q.chapter)
        .await
    {
        Ok(export) => xliff_file(export),
        Err(e) => page_error(me.lang, xliff_error(e)),
    }
}

async fn upload(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let imported = async {
        let bytes = xliff_form(&state, &me, request).await?;
        crate::limits::count_as_api_call(&state, &me.user).await?;
        let report = state
            .services
            .translations
            .import_xliff(&me.user.id, &id, &bytes)
            .await
            .map_err(xliff_error)?;
        let book = state.services.books.get(&me.user.id, &id).await?;
        Ok::<_, ApiError>((book.title, report))
    }
    .await;
    match imported {
        Ok((title, report)) => report_page(&state, &me, &id, &title, report).await,
        Err(e) => page_error(me.lang, e),
    }
}

/// The upload's file: the CSRF token first (a forged form is refused before its file is read),
/// then the file, within what an import reads and the platform takes.
async fn xliff_form(
    state: &AppState,
    me: &SignedIn,
    request: Request,
) -> Result<bytes::Bytes, ApiError> {
    let limit = state
        .settings
        .body_limit
        .map_or(MAX_XLIFF_BYTES, |l| (l as usize).min(MAX_XLIFF_BYTES));
    let mut multipart = Multipart::from_request(request, state)
        .await
        .map_err(|e| ApiError::bad_request(e.body_text()))?;
    let (mut checked, mut file) = (false, None);
    while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
        let name = field.name().unwrap_or_default().to_string();
        if name == super::csrf::FIELD {
            me.check_form(Some(&text_field(field, &name).await?))?;
            checked = true;
            continue;
        }
        if !checked {
            me.check_form(None)?;
        }
        if name == "file" {
            let picked = field.file_name().is_some_and(|n| !n.is_empty());
            let bytes = read_limited(field, limit).await?.ok_or_else(|| {
                refused(
                    me.lang
                        .get("xliff_too_large")
                        .replace("{mb}", &(limit / (1024 * 1024)).to_string()),
                )
            })?;
            file = (picked && !bytes.is_empty()).then_some(bytes);
        } else {
            read_limited(field, 4 * 1024).await?;
        }
    }
    if !checked {
        me.check_form(None)?;
    }
    file.ok_or_else(|| refused(me.lang.get("xliff_missing")))
}

/// The report: the units counted by outcome, and every unit but the unchanged ones, each with
/// its passage (a link to it in the editor) and why.
async fn report_page(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    title: &str,
    report: XliffReport,
) -> Response {
    let report = Report::mirror(report);
    let listed: Vec<_> = report
        .units
        .iter()
        .filter(|u| u.outcome != "unchanged")
        .collect();
    let heading = me.lang.get("xliff_report_title");
    let data = context! { book_id => id, book_title => title, report => &report, listed };
    page(
        state,
        Some(me),
        me.lang,
        "app/xliff_report.html",
        heading,
        data,
    )
    .await
    .unwrap_or_else(|r| r)
}

/// An export's or an import's failure as the pages show it.
fn xliff_error(e: XliffError) -> ApiError {
    match e {
        XliffError::Passages(e) => passage_error(e),
        XliffError::File(e @ ReadError::TooLarge(_)) => {
            ApiError::new(StatusCode::BAD_REQUEST, "file_too_large", e.to_string())
        }
        XliffError::File(e) => {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_xliff", e.to_string())
        }
    }
}
