//! Files: `POST /api/generate`, `GET /api/download/{id}?format=` (a link valid for an hour), and
//! `GET /files/{key}`, which serves such a link in worker-queue mode (on AWS links go to S3).

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use booktr_core::jobs::OutputFormat;
use booktr_core::ports::{BlobKey, LinkCheck};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::{Json, Query};
use crate::{AppState, Caller};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/generate", post(generate))
        .route("/api/download/{id}", get(download))
        .route("/files/{*key}", get(file))
}

/// `epub` or `pdf`, else 400.
pub(crate) fn output_format(raw: Option<&str>) -> Result<OutputFormat, ApiError> {
    match raw {
        None | Some("") => Err(ApiError::bad_request("format is required: epub or pdf")),
        Some(raw) => OutputFormat::parse(raw)
            .ok_or_else(|| ApiError::bad_request(format!("format '{raw}' is not epub or pdf"))),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Generate {
    book_id: String,
    format: String,
}

#[derive(Serialize)]
struct Queued {
    success: bool,
    message: String,
}

async fn generate(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<Generate>,
) -> Result<axum::Json<Queued>, ApiError> {
    let format = output_format(Some(&body.format))?;
    state
        .services
        .translations
        .generate(caller.user_id(), &body.book_id, format)
        .await?;
    Ok(axum::Json(Queued {
        success: true,
        message: format!(
            "generating the {}; the book is COMPLETED when it is ready",
            format.as_str()
        ),
    }))
}

#[derive(Deserialize)]
struct FormatQuery {
    format: Option<String>,
}

#[derive(Serialize)]
struct Link {
    url: String,
    /// Beyond the spec: false when the file holds only the chapters finished so far.
    complete: bool,
}

async fn download(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<FormatQuery>,
) -> Result<axum::Json<Link>, ApiError> {
    let format = output_format(q.format.as_deref())?;
    let download = state
        .services
        .translations
        .download(caller.user_id(), &id, format)
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
    let media_type = if key.ends_with(".pdf") {
        OutputFormat::Pdf.media_type()
    } else if key.ends_with(".epub") {
        OutputFormat::Epub.media_type()
    } else {
        "application/octet-stream"
    };
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
