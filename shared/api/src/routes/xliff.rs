//! A book's passages out to a translator's tool and back as XLIFF 1.2:
//! `GET /api/books/{id}/xliff[?chapter=N]` and `POST /api/books/{id}/xliff`. Served by the books
//! group (its Lambda takes `/api/books/{proxy+}`).

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use booktr_core::translation::passages::xliff::{XliffError, XliffExport, MAX_XLIFF_BYTES};
use booktr_formats::xliff::{ReadError, MEDIA_TYPE};
use serde::Deserialize;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

use super::passages::PassageFailure;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::{ErrorBody, Routes};
use crate::state::AppState;
use crate::wire::xliff::XliffReport;
use crate::wire::Mirror;

pub fn router() -> Routes {
    // The whole body is capped as it arrives; the handler reads it once under the cap.
    OpenApiRouter::new()
        .routes(routes!(export_xliff, import_xliff).layer(DefaultBodyLimit::max(MAX_XLIFF_BYTES)))
}

/// An export's or an import's failure: the passages' answers, or 400 for a file that is not
/// one an import reads.
pub struct XliffFailure(pub XliffError);

impl From<XliffError> for XliffFailure {
    fn from(e: XliffError) -> Self {
        XliffFailure(e)
    }
}

impl IntoResponse for XliffFailure {
    fn into_response(self) -> Response {
        match self.0 {
            XliffError::Passages(e) => PassageFailure::from(e).into_response(),
            XliffError::File(e @ ReadError::TooLarge(_)) => too_large(&e).into_response(),
            XliffError::File(e) => {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_xliff", e.to_string())
                    .into_response()
            }
        }
    }
}

fn too_large(why: &dyn std::fmt::Display) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "file_too_large", why.to_string())
}

/// The export as a file to download.
pub fn xliff_file(export: XliffExport) -> Response {
    // The name is made of the title's letters and digits; only ASCII goes in the header.
    let name: String = export
        .file_name
        .chars()
        .filter(|c| c.is_ascii_graphic() && *c != '"' && *c != '\\')
        .collect();
    (
        [
            (CONTENT_TYPE, format!("{MEDIA_TYPE}; charset=utf-8")),
            (
                CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
            (CACHE_CONTROL, "private, no-store".to_string()),
        ],
        export.xml,
    )
        .into_response()
}

#[derive(Deserialize)]
struct ExportQuery {
    chapter: Option<u32>,
}

/// The book as XLIFF 1.2 for a translator's tool (OmegaT, Trados, memoQ, Weblate): every chapter
/// translated under the book's current translation (or only `chapter`), one `<file>` per
/// chapter, one `<trans-unit>` per passage with its source and its text now as the target;
/// inline marks are codes (`<g>`, `<x/>`) a tool keeps; the target's `state` is `translated`
/// (the model's text), `needs-review-translation` (flagged, or of confidence under 70) or
/// `signed-off` (the owner's text); flags, confidence and origin are notes. A unit's id names
/// the passage and its version and text as exported, for the import.
#[utoipa::path(get, path = "/api/books/{id}/xliff", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("chapter" = Option<u32>, Query, description = "Only this chapter (from 1); it must be translated")),
    responses((status = 200, description = "The XLIFF 1.2 file", content_type = "application/x-xliff+xml", body = String),
        (status = 400, description = "No translated chapter to export, the chapter named is not translated, or a bad chapter number", body = ErrorBody),
        (status = 404, description = "No such book or chapter", body = ErrorBody)))]
async fn export_xliff(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Result<Response, XliffFailure> {
    let export = state
        .services
        .translations
        .export_xliff(caller.user_id(), &id, q.chapter)
        .await?;
    Ok(xliff_file(export))
}

/// Imports an XLIFF 1.2 file exported from this book (the body, as the tool saved it): each
/// unit whose target differs from the text exported becomes the owner's edit of its passage,
/// checked as any edit is (the source's marks, in order; the length; the characters). A
/// passage changed in booktr since the export is a conflict and is left as it is; a unit
/// whose target is the passage's text now is unchanged, so the same file imported twice
/// changes nothing the second time. One import changes at most 500 passages (the rest are
/// refused with `change_limit`; import the file again). The book's files are made again on
/// the next download. The answer reports every unit.
#[utoipa::path(post, path = "/api/books/{id}/xliff", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id")),
    request_body(content = String, content_type = "application/x-xliff+xml",
        description = "The XLIFF 1.2 file, UTF-8, up to 16 MiB and 100,000 units, without a DTD"),
    responses((status = 200, description = "What became of every unit", body = XliffReport),
        (status = 400, description = "Not XLIFF 1.2 this import reads (`invalid_xliff`: not well-formed, not UTF-8, a DTD, too many units or too deep), too large (`file_too_large`), or another content type", body = ErrorBody),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn import_xliff(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    request: Request,
) -> Result<axum::Json<XliffReport>, Response> {
    let bytes = body(&state, request)
        .await
        .map_err(IntoResponse::into_response)?;
    let report = state
        .services
        .translations
        .import_xliff(caller.user_id(), &id, &bytes)
        .await
        .map_err(|e| XliffFailure(e).into_response())?;
    Ok(axum::Json(XliffReport::mirror(report)))
}

/// The request's body, an XLIFF file: of an XML media type, within what the route and the
/// platform take.
async fn body(state: &AppState, request: Request) -> Result<Bytes, ApiError> {
    if !is_xml(request.headers()) {
        return Err(ApiError::bad_request(format!(
            "send the XLIFF file as the body, with Content-Type {MEDIA_TYPE}"
        )));
    }
    let limit = state
        .settings
        .body_limit
        .map_or(MAX_XLIFF_BYTES, |l| (l as usize).min(MAX_XLIFF_BYTES));
    let over = || {
        too_large(&format!(
            "the XLIFF file is larger than {} MiB",
            limit / (1024 * 1024)
        ))
    };
    let bytes = Bytes::from_request(request, state)
        .await
        .map_err(|rejection| match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => over(),
            _ => ApiError::bad_request(rejection.body_text()),
        })?;
    if bytes.len() > limit {
        return Err(over());
    }
    Ok(bytes)
}

/// XLIFF's own media types, and XML's.
fn is_xml(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    [
        "application/x-xliff+xml",
        "application/xliff+xml",
        "application/xml",
        "text/xml",
    ]
    .iter()
    .any(|t| essence.eq_ignore_ascii_case(t))
}
