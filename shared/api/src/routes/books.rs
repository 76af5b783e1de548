//! Books and upload: `GET /api/books`, `GET/PATCH/DELETE /api/books/{id}`, `POST /api/upload`.

use axum::extract::multipart::{Field, MultipartError};
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::header::CONTENT_LENGTH;
use axum::http::StatusCode;
use booktr_core::books::{Upload, MAX_UPLOAD_BYTES};
use booktr_core::types::BookStatus;
use bytes::{Bytes, BytesMut};
use serde::{Deserialize, Serialize};

use super::{Success, SUCCESS};
use crate::error::ApiError;
use crate::extract::{Json, Path, Query};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::books::{Book, BookDetail};

/// Room for the multipart framing and the small text fields around a maximal file.
pub(crate) const MULTIPART_OVERHEAD: u64 = 64 * 1024;
const UPLOAD_BODY_LIMIT: usize = (MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD) as usize;
/// The longest text field (title, targetLang) accepted in an upload.
const MAX_TEXT_FIELD: usize = 4 * 1024;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(detail, update, remove))
        // The whole body is capped as it streams in: the multipart parser reads ahead as far as
        // data is available, so the cap (not the per-field check alone) is what bounds memory.
        .routes(routes!(upload).layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)))
        // A book's passages are the book's, served where the book is.
        .merge(super::passages::router())
        .merge(super::proposals::router())
        .merge(super::passage_terms::router())
        .merge(super::xliff::router())
}

#[derive(Deserialize)]
struct ListQuery {
    status: Option<String>,
    limit: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct BookList {
    books: Vec<Book>,
}

/// The caller's books, newest first.
#[utoipa::path(get, path = "/api/books", tag = "books", security(("apiKey" = []), ("session" = [])),
    params(("status" = Option<crate::wire::types::BookStatus>, Query), ("limit" = Option<u32>, Query)),
    responses((status = 200, description = "Books", body = BookList)))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<BookList>, ApiError> {
    let status = q
        .status
        .map(|s| s.parse::<BookStatus>())
        .transpose()
        .map_err(|e| ApiError::bad_request(e.0))?;
    let limit = q
        .limit
        .map(|l| l.parse::<usize>())
        .transpose()
        .map_err(|_| ApiError::bad_request("limit must be a whole number"))?;
    let books = state
        .services
        .books
        .list(caller.user_id(), status, limit)
        .await?;
    Ok(axum::Json(BookList {
        books: books.into_iter().map(Book::from).collect(),
    }))
}

/// A book with its chapters and translation state.
#[utoipa::path(get, path = "/api/books/{id}", tag = "books", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id")),
    responses((status = 200, description = "The book", body = BookDetail),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn detail(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<BookDetail>, ApiError> {
    Ok(axum::Json(
        state
            .services
            .books
            .detail(caller.user_id(), &id)
            .await?
            .into(),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateBook {
    title: Option<String>,
    author: Option<String>,
}

#[utoipa::path(patch, path = "/api/books/{id}", tag = "books", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id")), request_body = UpdateBook,
    responses((status = 200, description = "The book now", body = Book),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<UpdateBook>,
) -> Result<axum::Json<Book>, ApiError> {
    Ok(axum::Json(
        state
            .services
            .books
            .update(caller.user_id(), &id, body.title, body.author)
            .await?
            .into(),
    ))
}

/// Deletes the book, its translations and files.
#[utoipa::path(delete, path = "/api/books/{id}", tag = "books", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id")),
    responses((status = 200, description = "Deleted", body = Success),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Success>, ApiError> {
    state.services.books.delete(caller.user_id(), &id).await?;
    Ok(axum::Json(SUCCESS))
}

#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct Uploaded {
    pub success: bool,
    pub book: Book,
}

/// Reads the multipart body as it arrives. A declared length over the limit is refused before a
/// byte of the body is read; without one, reading stops at the first chunk past the cap, so the
/// server never holds more than the limit of any upload.
#[utoipa::path(post, path = "/api/upload", tag = "books", security(("apiKey" = []), ("session" = [])),
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses((status = 200, description = "Uploaded; extraction runs in the background", body = Uploaded)))]
async fn upload(
    State(state): State<AppState>,
    caller: Caller,
    request: Request,
) -> Result<axum::Json<Uploaded>, ApiError> {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let too_large = || match state.settings.body_limit {
        Some(limit) => over_the_body_limit(limit),
        None => ApiError::file_too_large(),
    };
    let body_limit = state
        .settings
        .body_limit
        .unwrap_or(MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD);
    if declared.is_some_and(|len| len > body_limit) {
        return Err(too_large());
    }
    // Where the platform's limit is the lower one, the file's share of the body is what is
    // left of it.
    let file_limit = MAX_UPLOAD_BYTES.min(body_limit);
    let mut multipart = Multipart::from_request(request, &state)
        .await
        .map_err(|e| ApiError::bad_request(e.body_text()))?;
    let mut file: Option<(String, Bytes)> = None;
    let mut title = None;
    let mut target_lang = None;
    while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
        match field.name() {
            Some("file") => {
                let name = field
                    .file_name()
                    .map(str::to_string)
                    .filter(|n| !n.trim().is_empty())
                    .ok_or_else(|| {
                        ApiError::bad_request("the 'file' part needs a filename, such as book.epub")
                    })?;
                let bytes = read_limited(field, file_limit as usize)
                    .await?
                    .ok_or_else(too_large)?;
                file = Some((name, bytes));
            }
            Some("title") => title = Some(text_field(field, "title").await?),
            Some("targetLang") => target_lang = Some(text_field(field, "targetLang").await?),
            // Unknown parts are read past (and bounded) rather than refused, as browsers add some.
            _ => {
                read_limited(field, MAX_TEXT_FIELD).await?;
            }
        }
    }
    let (file_name, bytes) =
        file.ok_or_else(|| ApiError::bad_request("the multipart field 'file' is required"))?;
    let book = state
        .services
        .books
        .upload(
            &caller.0.user,
            Upload {
                file_name,
                title,
                target_lang,
                bytes,
            },
        )
        .await?;
    Ok(axum::Json(Uploaded {
        success: true,
        book: book.into(),
    }))
}

/// A body over what the platform lets through (a Lambda's): the direct flow takes up to 50 MB.
pub(crate) fn over_the_body_limit(limit: u64) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "file_too_large",
        format!(
            "this endpoint takes files up to {} MB on this deployment; send larger books (up to \
             {} MB) straight to storage: POST /api/uploads, post the file with the form it \
             answers, then POST /api/uploads/{{id}}/confirm",
            limit / (1024 * 1024),
            MAX_UPLOAD_BYTES / (1024 * 1024)
        ),
    )
}

/// The upload's form, for the description (the handler reads it as it streams in).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct UploadForm {
    /// The book: EPUB, PDF, TXT, DOCX, HTML, Markdown or FictionBook 2 (.fb2, .fb2.zip), up to
    /// 50 MB.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    title: Option<String>,
    #[schema(rename = "targetLang")]
    target_lang: Option<String>,
}

/// A body cut off by the size cap is too large; anything else is a malformed request.
pub(crate) fn multipart_error(e: MultipartError) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::file_too_large()
    } else {
        ApiError::bad_request(e.body_text())
    }
}

/// The field's bytes, or None as soon as they exceed `limit`.
pub(crate) async fn read_limited(
    mut field: Field<'_>,
    limit: usize,
) -> Result<Option<Bytes>, ApiError> {
    // The chunks are kept as they come and joined once at the end: a buffer grown by doubling
    // would hold up to twice a 50 MB file, and more while each growth copies it.
    let mut chunks = Vec::new();
    let mut len = 0;
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        if len + chunk.len() > limit {
            return Ok(None);
        }
        len += chunk.len();
        chunks.push(chunk);
    }
    if chunks.len() == 1 {
        return Ok(chunks.pop());
    }
    let mut buffer = BytesMut::with_capacity(len);
    for chunk in chunks {
        buffer.extend_from_slice(&chunk);
    }
    Ok(Some(buffer.freeze()))
}

pub(crate) async fn text_field(field: Field<'_>, name: &str) -> Result<String, ApiError> {
    let bytes = read_limited(field, MAX_TEXT_FIELD)
        .await?
        .ok_or_else(|| ApiError::bad_request(format!("'{name}' is too long")))?;
    String::from_utf8(bytes.to_vec())
        .map_err(|_| ApiError::bad_request(format!("'{name}' must be UTF-8 text")))
}
