//! Direct uploads, for files larger than a function can receive: `POST /api/uploads` answers a
//! signed form, the client posts the file with it (to S3 on AWS; to `POST /uploads` of this
//! server in worker-queue mode), then `POST /api/uploads/{id}/confirm` creates the book.

use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::StatusCode;
use booktr_core::books::{DirectUploadRequest, MAX_UPLOAD_BYTES};
use booktr_core::ports::{BlobKey, LinkCheck};
use serde::Deserialize;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

use super::books::{multipart_error, read_limited, text_field, Uploaded, MULTIPART_OVERHEAD};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::books::DirectUpload;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(offer))
        .routes(routes!(confirm))
        .routes(routes!(receive).layer(DefaultBodyLimit::max(
            (MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD) as usize,
        )))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OfferRequest {
    /// The file's name; its extension must be a book format's (.epub, .pdf, .txt, .docx,
    /// .html, .md, .fb2, .fb2.zip).
    file_name: String,
    /// The file's size in bytes: 1 to 50 MB.
    size: u64,
    title: Option<String>,
    target_lang: Option<String>,
}

/// Asks for a form that sends a book (up to 50 MB) straight to storage. Post the `fields` in
/// order, then the file as the part named `fileField`, as `multipart/form-data` to `url`
/// before `expiresAt`, once; then confirm before `confirmBy`. The book is counted against the
/// month's quota now (the offer reserves it); an offer not confirmed by `confirmBy` gives it
/// back.
#[utoipa::path(post, path = "/api/uploads", tag = "books", security(("apiKey" = []), ("session" = [])),
    request_body = OfferRequest,
    responses((status = 201, description = "Where and how to send the file", body = DirectUpload),
        (status = 400, description = "Not a book file name, empty, over 50 MB, or over the quota", body = ErrorBody)))]
async fn offer(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<OfferRequest>,
) -> Result<(StatusCode, axum::Json<DirectUpload>), ApiError> {
    let offered = state
        .services
        .books
        .direct_upload(
            &caller.0.user,
            DirectUploadRequest {
                file_name: body.file_name,
                size: body.size,
                title: body.title,
                target_lang: body.target_lang,
            },
        )
        .await?;
    Ok((StatusCode::CREATED, axum::Json(offered.into())))
}

/// Creates the book from the file sent with the upload's form: the same checks and extraction
/// as `POST /api/upload`, the book the offer reserved becoming this one (a refused file gives
/// it back). The sent file is removed whatever the answer.
#[utoipa::path(post, path = "/api/uploads/{id}/confirm", tag = "books", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The upload's id")),
    responses((status = 200, description = "Uploaded; extraction runs in the background", body = Uploaded),
        (status = 400, description = "No file arrived yet, the offer is over, or the file is too large or not a book", body = ErrorBody),
        (status = 404, description = "No such upload (another user's, already confirmed, or expired long ago)", body = ErrorBody)))]
async fn confirm(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Uploaded>, ApiError> {
    let book = state
        .services
        .books
        .confirm_upload(&caller.0.user, &id)
        .await?;
    Ok(axum::Json(Uploaded {
        success: true,
        book: book.into(),
    }))
}

/// Worker-queue mode's storage for direct uploads (on AWS forms post to S3): takes a form of
/// `POST /api/uploads`, once. Its fields come before the file, so a form that is not signed,
/// expired, altered, posted already or whose upload was confirmed is refused before a byte of
/// the file is read.
#[utoipa::path(post, path = "/uploads", tag = "books",
    request_body(content = ReceiveForm, content_type = "multipart/form-data"),
    responses((status = 204, description = "Stored; now confirm the upload"),
        (status = 400, description = "The file is over the form's size, or the form is malformed", body = ErrorBody),
        (status = 403, description = "Not signed, a wrong signature or expired", body = ErrorBody),
        (status = 409, description = "The form was posted already, or its upload was confirmed or is over", body = ErrorBody)))]
async fn receive(State(state): State<AppState>, request: Request) -> Result<StatusCode, ApiError> {
    let mut multipart = Multipart::from_request(request, &state)
        .await
        .map_err(|e| ApiError::bad_request(e.body_text()))?;
    let mut fields = Signed::default();
    while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
        match field.name() {
            Some("file") => {
                let (key, max_bytes) = fields.check(&state)?;
                let books = &state.services.books;
                books.take_upload_form(&key).await?;
                let read = match read_limited(field, max_bytes as usize).await {
                    Ok(Some(bytes)) if bytes.is_empty() => {
                        Err(ApiError::bad_request("the file is empty"))
                    }
                    Ok(Some(bytes)) => Ok(bytes),
                    Ok(None) => Err(ApiError::file_too_large()),
                    Err(e) => Err(e),
                };
                let bytes = match read {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        // Nothing stored: the form may be posted again with a file it takes.
                        books.give_back_upload_form(&key).await?;
                        return Err(e);
                    }
                };
                books.receive_upload(&key, bytes).await?;
                return Ok(StatusCode::NO_CONTENT);
            }
            Some(name @ ("key" | "maxBytes" | "expires" | "signature")) => {
                let name = name.to_string();
                let value = text_field(field, &name).await?;
                fields.set(&name, value);
            }
            // Fields a client adds (as S3 allows) are read past, bounded.
            _ => {
                read_limited(field, 4 * 1024).await?;
            }
        }
    }
    Err(ApiError::bad_request(
        "the form has no part named 'file' (send it last, after the form's fields)",
    ))
}

/// The signed fields of a form, as they arrive.
#[derive(Default)]
struct Signed {
    key: Option<String>,
    max_bytes: Option<String>,
    expires: Option<String>,
    signature: Option<String>,
}

impl Signed {
    fn set(&mut self, name: &str, value: String) {
        match name {
            "key" => self.key = Some(value),
            "maxBytes" => self.max_bytes = Some(value),
            "expires" => self.expires = Some(value),
            _ => self.signature = Some(value),
        }
    }

    /// The key and size the form allows, once its signature holds.
    fn check(&self, state: &AppState) -> Result<(BlobKey, u64), ApiError> {
        let unsigned = || {
            ApiError::forbidden(
                "this form is not signed: send the fields POST /api/uploads answered, before the file",
            )
        };
        let (Some(key), Some(max), Some(expires), Some(signature)) =
            (&self.key, &self.max_bytes, &self.expires, &self.signature)
        else {
            return Err(unsigned());
        };
        let max_bytes: u64 = max.parse().map_err(|_| unsigned())?;
        let expires: i64 = expires.parse().map_err(|_| unsigned())?;
        match state
            .services
            .books
            .verify_upload_form(key, max_bytes, expires, signature)
        {
            LinkCheck::Valid => {}
            LinkCheck::Expired => {
                return Err(ApiError::forbidden(
                    "this form has expired; ask for a new one with POST /api/uploads",
                ))
            }
            LinkCheck::Invalid => {
                return Err(ApiError::forbidden("this form's signature is not valid"))
            }
        }
        let key = BlobKey::parse(key).map_err(|_| unsigned())?;
        Ok((key, max_bytes))
    }
}

/// The storage form, for the description (the handler reads it as it streams in).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct ReceiveForm {
    key: String,
    #[schema(rename = "maxBytes")]
    max_bytes: String,
    expires: String,
    signature: String,
    /// The book, last.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}
