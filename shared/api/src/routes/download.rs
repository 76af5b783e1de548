//! Files: `POST /api/generate`, `GET /api/download/{id}?format=` (a link valid for an hour), and
//! `GET /files/{key}`, which serves such a link in worker-queue mode (on AWS links go to S3).

use axum::body::Body;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use booktr_core::job::{Edition, Layout, OutputFormat};
use booktr_core::ports::{BlobKey, LinkCheck};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::{Json, Path, Query};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;

pub fn router() -> Routes {
    let mut routes = OpenApiRouter::new()
        .routes(routes!(generate))
        .routes(routes!(download))
        // A wildcard, which OpenAPI cannot template: served here, documented by `file_doc`.
        .route("/files/{*key}", get(file));
    let (_, documented, _): utoipa_axum::router::UtoipaMethodRouter<AppState> = routes!(file_doc);
    routes
        .get_openapi_mut()
        .paths
        .paths
        .extend(documented.paths);
    routes
}

/// `epub`, `pdf` or `markdown` in `translated` (the default) or `bilingual` layout, else 400
/// (whether the book can be made in it is the service's to say).
pub(crate) fn edition(format: Option<&str>, layout: Option<&str>) -> Result<Edition, ApiError> {
    let format = match format {
        None | Some("") => {
            return Err(ApiError::bad_request(
                "format is required: epub, pdf or markdown",
            ))
        }
        Some(raw) => OutputFormat::parse(raw).ok_or_else(|| {
            ApiError::bad_request(format!("format '{raw}' is not epub, pdf or markdown"))
        })?,
    };
    let layout = match layout {
        None => Layout::Translated,
        Some(raw) => Layout::parse(raw).ok_or_else(|| {
            ApiError::bad_request(format!("layout '{raw}' is not translated or bilingual"))
        })?,
    };
    Ok(Edition::new(format, layout))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Generate {
    book_id: String,
    /// `epub`, `pdf`, or `markdown` (a Markdown book only, in the translated layout).
    format: String,
    /// `translated` (default): the translation alone; `bilingual`: each translated block after
    /// its original (EPUB) or beside it (PDF).
    layout: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Queued {
    success: bool,
    message: String,
}

/// Renders the translated book in the background: EPUB, PDF, or Markdown for a Markdown book.
#[utoipa::path(post, path = "/api/generate", tag = "files", security(("apiKey" = []), ("session" = [])), request_body = Generate,
    responses((status = 200, description = "Queued", body = Queued),
        (status = 400, description = "An unknown format or layout, a book not translated yet, or `markdown` for a book that was not Markdown (or in the bilingual layout)", body = ErrorBody),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn generate(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<Generate>,
) -> Result<axum::Json<Queued>, ApiError> {
    let edition = edition(Some(&body.format), body.layout.as_deref())?;
    state
        .services
        .translations
        .generate(caller.user_id(), &body.book_id, edition)
        .await?;
    Ok(axum::Json(Queued {
        success: true,
        message: format!(
            "generating the {}; the book is COMPLETED when it is ready",
            edition.label()
        ),
    }))
}

#[derive(Deserialize)]
struct FormatQuery {
    format: Option<String>,
    layout: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Link {
    url: String,
    /// Beyond the spec: false when the file holds only the chapters finished so far.
    complete: bool,
}

/// A signed link to the book's file, valid for an hour.
#[utoipa::path(get, path = "/api/download/{id}", tag = "files", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("format" = String, Query, description = "`epub`, `pdf`, or `markdown` (a Markdown book's translation alone)"),
        ("layout" = Option<String>, Query, description = "`translated` (default) or `bilingual`")),
    responses((status = 200, description = "The link", body = Link),
        (status = 400, description = "An unknown format or layout, or `markdown` for a book that was not Markdown (or in the bilingual layout)", body = ErrorBody),
        (status = 404, description = "No such book or no such file yet", body = ErrorBody),
        (status = 422, description = "The book's file could not be made: `render_failed`, naming the limit it met", body = ErrorBody)))]
async fn download(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<FormatQuery>,
) -> Result<axum::Json<Link>, ApiError> {
    let edition = edition(q.format.as_deref(), q.layout.as_deref())?;
    let download = state
        .services
        .translations
        .download(caller.user_id(), &id, edition)
        .await?;
    Ok(axum::Json(Link {
        url: download.url,
        complete: download.complete,
    }))
}

#[derive(Deserialize)]
struct Signed {
    name: Option<String>,
    expires: Option<i64>,
    signature: Option<String>,
}

/// A signed link's file (worker-queue mode; on AWS links go to S3). The key may hold slashes.
#[utoipa::path(get, path = "/files/{key}", tag = "files",
    params(("key" = String, Path, description = "The file's key, slashes included"),
        ("name" = String, Query), ("expires" = i64, Query), ("signature" = String, Query)),
    responses((status = 200, description = "The file", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 403, description = "Not signed, a wrong signature or expired", body = ErrorBody),
        (status = 404, description = "No such file", body = ErrorBody)))]
async fn file_doc() {
    // Never routed: only its documentation is used (the route is the wildcard).
}

/// Serves a signed link: 403 when the signature does not match or the link has expired.
async fn file(
    State(state): State<AppState>,
    Path(key): Path<String>,
    Query(q): Query<Signed>,
) -> Result<Response, ApiError> {
    let (Some(name), Some(expires), Some(signature)) = (q.name, q.expires, q.signature) else {
        return Err(ApiError::forbidden("this link is not signed"));
    };
    match state
        .services
        .translations
        .verify_link(&key, &name, expires, &signature)
    {
        LinkCheck::Valid => {}
        LinkCheck::Expired => {
            return Err(ApiError::forbidden(
                "this link has expired; ask for a new one at /api/download",
            ))
        }
        LinkCheck::Invalid => {
            return Err(ApiError::forbidden("this link's signature is not valid"))
        }
    }
    let blob = BlobKey::parse(&key).map_err(|_| ApiError::not_found("file"))?;
    let bytes = state
        .services
        .translations
        .file(&blob)
        .await?
        .ok_or_else(|| ApiError::not_found("file"))?;
    let media_type = key
        .rsplit_once('.')
        .and_then(|(_, extension)| OutputFormat::of_extension(extension))
        .map_or("application/octet-stream", OutputFormat::media_type);
    // The name was signed with the link, but is still quoted safely.
    let safe_name: String = name
        .chars()
        .filter(|c| c.is_ascii_graphic() && *c != '"' && *c != '\\')
        .collect();
    Ok((
        [
            (CONTENT_TYPE, media_type.to_string()),
            (
                CONTENT_DISPOSITION,
                format!("attachment; filename=\"{safe_name}\""),
            ),
            (CACHE_CONTROL, "private, no-store".to_string()),
        ],
        Body::from(bytes),
    )
        .into_response())
}
