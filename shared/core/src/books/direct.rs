//! Direct uploads: the file goes straight to storage (a presigned S3 POST on AWS, this server's
//! `POST /uploads` in worker-queue mode) instead of through the API, whose request size API
//! Gateway and Lambda cap far below the spec's 50 MB. Three steps: `direct_upload` checks what
//! can be checked before the file moves (name, size, title, language, quota) and answers a
//! signed form; the client posts the file with it; `confirm_upload` then puts the file through
//! the same sniffing, quota and extraction as `POST /api/upload`, and removes it from the
//! upload area whatever the answer, unless storage itself failed (then a confirm may be retried).

use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::Serialize;
use tracing::{info, instrument, warn};

use super::format::format_by_name;
use super::service::{file_name_of, validate_title};
use super::{Book, Books, BooksError, Upload, MAX_UPLOAD_BYTES};
use crate::accounts::store::user_pk;
use crate::accounts::User;
use crate::ids::new_id;
use crate::items::{opt_string, parse_time, required_str, time};
use crate::ports::{BlobKey, Condition, Item, LinkCheck, Query, StoreError};
use crate::types::LanguageCode;
use crate::usage::Spend;

/// How long a form stays valid: time to start sending 50 MB on a slow line, short enough that a
/// leaked form is soon worthless.
pub const DIRECT_UPLOAD_TTL: Duration = Duration::from_secs(15 * 60);
/// An upload asked for and never confirmed is removed by the owner's next request after this
/// (on AWS the bucket's lifecycle rule also expires the upload area after a day).
const ABANDONED_AFTER: chrono::Duration = chrono::Duration::hours(24);
const UPLOAD_PREFIX: &str = "UPLOAD#";

/// What a client asks for before it sends a file.
#[derive(Debug, Clone)]
pub struct DirectUploadRequest {
    pub file_name: String,
    /// The file's size in bytes, as the client reads it (storage refuses a larger file).
    pub size: u64,
    pub title: Option<String>,
    pub target_lang: Option<String>,
}

/// Where and how to send the file, and what to confirm afterwards.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DirectUpload {
    pub upload_id: String,
    /// Post the form here as `multipart/form-data`.
    pub url: String,
    /// Always `POST`.
    pub method: String,
    /// The form's fields, sent in this order, before the file.
    pub fields: Vec<FormField>,
    /// The name of the file's part, sent last.
    pub file_field: String,
    /// The largest file the form takes: the size asked for.
    pub max_bytes: u64,
    pub expires_at: DateTime<Utc>,
    /// Once the file is sent: `POST` this path to create the book.
    pub confirm_path: String,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct FormField {
    pub name: String,
    pub value: String,
}

fn upload_sk(upload_id: &str) -> String {
    format!("{UPLOAD_PREFIX}{upload_id}")
}

/// The upload area of one user, under which each upload has its own key.
pub(crate) fn uploads_prefix(user_id: &str) -> String {
    format!("uploads/{user_id}/")
}

fn upload_key(user_id: &str, upload_id: &str) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("{}{upload_id}", uploads_prefix(user_id)))
}

impl Books {
    /// Checks the upload before any byte moves and answers a form that stores the file in the
    /// caller's upload area. Nothing is spent yet: the quota is checked here and spent by the
    /// confirm.
    #[instrument(skip(self, user, request), fields(user_id = %user.id, file = %request.file_name, bytes = request.size))]
    pub async fn direct_upload(
        &self,
        user: &User,
        request: DirectUploadRequest,
    ) -> Result<DirectUpload, BooksError> {
        let file_name = file_name_of(&request.file_name)?;
        format_by_name(&file_name).map_err(BooksError::UnsupportedFile)?;
        if request.size == 0 {
            return Err(BooksError::Invalid("the file is empty".into()));
        }
        if request.size > MAX_UPLOAD_BYTES {
            return Err(BooksError::TooLarge);
        }
        let title = request
            .title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(validate_title)
            .transpose()?;
        let target_lang = request
            .target_lang
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| {
                LanguageCode::parse(t)
                    .map(|l| l.to_string())
                    .map_err(|e| BooksError::Invalid(format!("targetLang: {e}")))
            })
            .transpose()?;
        let one_book = Spend { books: 1, words: 0 };
        self.usage.check(user, one_book).await?;
        self.remove_abandoned_uploads(&user.id).await?;

        let upload_id = new_id();
        let key = upload_key(&user.id, &upload_id)?;
        let form = self
            .ports
            .links
            .upload_form(&key, request.size, DIRECT_UPLOAD_TTL)
            .await?;
        let mut item = Item::new(user_pk(&user.id), upload_sk(&upload_id))
            .with("fileName", file_name.as_str())
            .with("size", i64::try_from(request.size).unwrap_or(i64::MAX))
            .with("createdAt", time(self.ports.clock.now()))
            .with("expiresAt", time(form.expires_at));
        if let Some(title) = title {
            item = item.with("title", title);
        }
        if let Some(lang) = target_lang {
            item = item.with("targetLang", lang);
        }
        self.ports.table.put(item, Condition::NotExists).await?;
        info!(upload_id, "direct upload offered");
        Ok(DirectUpload {
            confirm_path: format!("/api/uploads/{upload_id}/confirm"),
            upload_id,
            url: form.url,
            method: "POST".into(),
            fields: form
                .fields
                .into_iter()
                .map(|(name, value)| FormField { name, value })
                .collect(),
            file_field: "file".into(),
            max_bytes: request.size,
            expires_at: form.expires_at,
        })
    }

    /// Creates the book from the file the caller sent with the form, exactly as an upload
    /// would. A confirm claims the upload first, so two confirms make one book.
    #[instrument(skip(self, user), fields(user_id = %user.id))]
    pub async fn confirm_upload(&self, user: &User, upload_id: &str) -> Result<Book, BooksError> {
        let (pk, sk) = (user_pk(&user.id), upload_sk(upload_id));
        // An id that is no valid key segment names no upload of anybody's.
        let key = upload_key(&user.id, upload_id).map_err(|_| BooksError::UploadNotFound)?;
        let item = self
            .ports
            .table
            .get(&pk, &sk)
            .await?
            .ok_or(BooksError::UploadNotFound)?;
        let Some(bytes) = self.ports.blobs.get(&key).await? else {
            let expires_at = parse_time(&item, "expiresAt")?.unwrap_or_default();
            if self.ports.clock.now() > expires_at {
                self.ports.table.delete(&pk, &sk, Condition::Always).await?;
                return Err(BooksError::Invalid(
                    "the upload's form expired before a file arrived; ask for a new one with \
                     POST /api/uploads"
                        .into(),
                ));
            }
            return Err(BooksError::Invalid(
                "no file has arrived for this upload yet: post it with the form's fields to the \
                 form's URL, then confirm again"
                    .into(),
            ));
        };
        match self.ports.table.delete(&pk, &sk, Condition::Exists).await {
            Ok(()) => {}
            Err(StoreError::Conflict) => return Err(BooksError::UploadNotFound),
            Err(e) => return Err(e.into()),
        }
        let upload = Upload {
            file_name: required_str(&item, "fileName")?.to_string(),
            title: opt_string(&item, "title"),
            target_lang: opt_string(&item, "targetLang"),
            bytes,
        };
        // Storage holds the form's size; checked again for a store that does not (an emulator).
        let (sent, asked) = (upload.bytes.len() as u64, item.i64("size").unwrap_or(0));
        let result = if sent > MAX_UPLOAD_BYTES {
            Err(BooksError::TooLarge)
        } else if i64::try_from(sent).map_or(true, |sent| sent > asked) {
            Err(BooksError::Invalid(format!(
                "the file sent ({sent} bytes) is larger than the {asked} bytes the upload was \
                 asked for; ask again with the file's size"
            )))
        } else {
            self.upload(user, upload).await
        };
        match &result {
            Err(BooksError::Store(e)) => {
                // Storage failed, not the file: give the claim back so a confirm can be retried.
                warn!(upload_id, error = %e, "confirm failed on storage; the upload stays");
                self.ports.table.put(item, Condition::Always).await?;
            }
            outcome => {
                // In the book now, or refused: either way the upload area lets go of it.
                self.ports.blobs.delete(&key).await?;
                match outcome {
                    Ok(book) => info!(upload_id, book_id = %book.id, "direct upload confirmed"),
                    Err(e) => info!(upload_id, reason = %e, "direct upload refused and removed"),
                }
            }
        }
        result
    }

    /// Whether a form posted to this server (worker-queue mode's upload storage) is one
    /// `direct_upload` signed, unaltered and unexpired.
    pub fn verify_upload_form(
        &self,
        key: &str,
        max_bytes: u64,
        expires: i64,
        signature: &str,
    ) -> LinkCheck {
        self.ports
            .links
            .verify_upload(key, max_bytes, expires, signature)
    }

    /// Stores the file of a verified form (worker-queue mode's upload storage).
    pub async fn receive_upload(&self, key: &BlobKey, bytes: Bytes) -> Result<(), StoreError> {
        info!(key = %key, bytes = bytes.len(), "direct upload received");
        self.ports.blobs.put(key, bytes).await
    }

    /// Removes the user's uploads asked for more than a day ago and never confirmed, with
    /// any file they received.
    async fn remove_abandoned_uploads(&self, user_id: &str) -> Result<(), StoreError> {
        let pending = self
            .ports
            .table
            .query(Query::partition(user_pk(user_id)).prefix(UPLOAD_PREFIX))
            .await?;
        let now = self.ports.clock.now();
        for item in pending {
            let expires_at = parse_time(&item, "expiresAt")?.unwrap_or_default();
            if expires_at + ABANDONED_AFTER > now {
                continue;
            }
            if let Some(upload_id) = item.sk.strip_prefix(UPLOAD_PREFIX) {
                self.ports
                    .blobs
                    .delete(&upload_key(user_id, upload_id)?)
                    .await?;
            }
            self.ports
                .table
                .delete(&item.pk, &item.sk, Condition::Always)
                .await?;
        }
        Ok(())
    }
}
