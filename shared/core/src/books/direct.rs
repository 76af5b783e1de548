//! Direct uploads: the file goes straight to storage (a presigned S3 POST on AWS, this server's
//! `POST /uploads` in worker-queue mode) instead of through the API, whose request size API
//! Gateway and Lambda cap far below the spec's 50 MB. Three steps: `direct_upload` checks what
//! can be checked before the file moves (name, size, title, language) and reserves the book the
//! file will become against the month's quota, then answers a signed form; the client posts the
//! file with it; `confirm_upload` then puts the file through the same sniffing and extraction
//! as `POST /api/upload`, the reservation paying for the book, and removes it from the upload
//! area whatever the answer, unless storage itself failed (then a confirm may be retried).
//!
//! What a user can store is what their quota can pay for: every file in the upload area belongs
//! to an open offer, and each open offer holds a book of the month. An offer is open until
//! [`CONFIRM_WITHIN`] after its form expires; then its book is given back and its item and
//! file are removed. A form can be used once: this server refuses a second post of it, and on
//! S3 (which cannot be told) whatever a form stores once its offer is confirmed or over has no
//! open offer, and the clean-up removes it.

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};

use tracing::{info, instrument, warn};

use super::error::BooksError;
use super::error::FormUse;
use super::format::format_by_name;
use super::model::{Book, MAX_UPLOAD_BYTES};
use super::record::{upload_sk, UploadOffer, UPLOAD_PREFIX};
use super::service::Payment;
use super::service::{file_name_of, validate_title};
use super::service::{Books, Upload};
use crate::accounts::User;
use crate::fault::{DataError, Fault};
use crate::ids::new_id;
use crate::items::user_pk;
use crate::ports::{BlobKey, Condition, Item, LinkCheck, Query, StoreError};
use crate::types::LanguageCode;
use crate::usage::Spend;

/// How long a form stays valid: time to start sending 50 MB on a slow line, short enough that a
/// leaked form is soon worthless.
pub const DIRECT_UPLOAD_TTL: Duration = Duration::from_secs(15 * 60);
/// How long after its form expires an offer can still be confirmed: a file begun at the last
/// minute has time to arrive on a slow line. Then the offer is over.
pub const CONFIRM_WITHIN: chrono::Duration = chrono::Duration::hours(1);

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
#[derive(Debug, Clone)]
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
    /// The form is refused after this.
    pub expires_at: DateTime<Utc>,
    /// Once the file is sent: `POST` this path to create the book.
    pub confirm_path: String,
    /// The offer is over after this (an hour after `expiresAt`): not confirmed by then, its
    /// book goes back to the month's quota and its file is removed.
    pub confirm_by: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct FormField {
    pub name: String,
    pub value: String,
}

/// The upload area of one user, under which each upload has its own key.
pub(crate) fn uploads_prefix(user_id: &str) -> String {
    format!("uploads/{user_id}/")
}

fn upload_key(user_id: &str, upload_id: &str) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("{}{upload_id}", uploads_prefix(user_id)))
}

/// The user and upload a key of the upload area names.
fn upload_of(key: &BlobKey) -> Option<(&str, &str)> {
    let rest = key.as_str().strip_prefix("uploads/")?;
    let (user_id, upload_id) = rest.split_once('/')?;
    (!user_id.is_empty() && !upload_id.is_empty() && !upload_id.contains('/'))
        .then_some((user_id, upload_id))
}

/// When the offer `item` is over: [`CONFIRM_WITHIN`] after its form expired, by this service's
/// clock (an offer stored before `confirmBy` was: by its form's).
fn confirm_by(offer: &UploadOffer) -> DateTime<Utc> {
    offer
        .confirm_by
        .unwrap_or(offer.expires_at + CONFIRM_WITHIN)
}

/// An upload's book, paid for by its offer's reservation.
fn one_book() -> Spend {
    Spend { books: 1, words: 0 }
}

impl Books {
    /// Checks the upload before any byte moves, reserves its book against the month's quota
    /// (refused when the quota cannot pay for it) and answers a form that stores the file in
    /// the caller's upload area.
    #[instrument(skip(self, user, request), fields(user_id = %user.id, file = %request.file_name, bytes = request.size))]
    pub async fn direct_upload(
        &self,
        user: &User,
        request: DirectUploadRequest,
    ) -> Result<DirectUpload, BooksError> {
        let file_name = file_name_of(&request.file_name)?;
        format_by_name(&file_name)?;
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
        self.clean_up_uploads(&user.id).await?;

        let upload_id = new_id();
        let key = upload_key(&user.id, &upload_id)?;
        let form = self
            .ports
            .links
            .upload_form(&key, request.size, DIRECT_UPLOAD_TTL)
            .await?;
        let now = self.ports.clock.now();
        // By the clock that decides when the offer is over (a store may date its form by
        // another).
        let confirm_by = now
            + chrono::Duration::from_std(DIRECT_UPLOAD_TTL).unwrap_or_default()
            + CONFIRM_WITHIN;
        let item = UploadOffer {
            file_name,
            size: i64::try_from(request.size).unwrap_or(i64::MAX),
            created_at: now,
            expires_at: form.expires_at,
            confirm_by: Some(confirm_by),
            title,
            target_lang,
        }
        .item(user_pk(&user.id), upload_sk(&upload_id));
        self.usage
            .reserve(user, &upload_id, one_book(), confirm_by)
            .await?;
        if let Err(e) = self.ports.table.put(item, Condition::NotExists).await {
            self.usage.release(&user.id, &upload_id).await?;
            return Err(e.into());
        }
        info!(upload_id, %confirm_by, "direct upload offered; its book reserved");
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
            confirm_by,
        })
    }

    /// Creates the book from the file the caller sent with the form, exactly as an upload
    /// would, paid for by the offer's reservation. A confirm claims the upload first, so two
    /// confirms make one book.
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
        let offer = UploadOffer::from_item(&item).map_err(Fault::from)?;
        let now = self.ports.clock.now();
        if now > confirm_by(&offer) {
            self.end_offer(&user.id, &item).await?;
            return Err(BooksError::UploadOver(
                "the upload was not confirmed in time (an hour after its form expired) and is \
                 removed",
            ));
        }
        let Some(bytes) = self.ports.blobs.get(&key).await? else {
            if now > offer.expires_at {
                return Err(BooksError::UploadOver(
                    "the upload's form expired before a file arrived",
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
            file_name: offer.file_name,
            title: offer.title,
            target_lang: offer.target_lang,
            bytes,
        };
        // Storage holds the form's size; checked again for a store that does not (an emulator).
        let (sent, asked) = (upload.bytes.len() as u64, offer.size);
        let result = if sent > MAX_UPLOAD_BYTES {
            Err(BooksError::TooLarge)
        } else if i64::try_from(sent).map_or(true, |sent| sent > asked) {
            Err(BooksError::Invalid(format!(
                "the file sent ({sent} bytes) is larger than the {asked} bytes the upload was \
                 asked for; ask again with the file's size"
            )))
        } else {
            self.upload_paid(user, upload, Payment::Reserved(upload_id))
                .await
        };
        match &result {
            Err(BooksError::Store(e)) => {
                // Storage failed, not the file: give the claim back so a confirm can be retried.
                warn!(upload_id, error = %e, "confirm failed on storage; the upload stays");
                self.ports.table.put(item, Condition::Always).await?;
            }
            outcome => {
                // In the book now, or refused: either way the upload area lets go of it, and a
                // refused file gives its book back. (Whatever a form stores at this key later
                // has no offer: the clean-up removes it.)
                self.ports.blobs.delete(&key).await?;
                match outcome {
                    Ok(book) => info!(upload_id, book_id = %book.id, "direct upload confirmed"),
                    Err(e) => {
                        self.usage.release(&user.id, upload_id).await?;
                        info!(upload_id, reason = %e, "direct upload refused and removed");
                    }
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

    /// Takes the one post a verified form allows (worker-queue mode's upload storage), before
    /// a byte of the file is read: refused when the form was posted already, or its offer was
    /// confirmed or is over. [`Books::give_back_upload_form`] undoes it when the file is not
    /// stored after all.
    pub async fn take_upload_form(&self, key: &BlobKey) -> Result<(), BooksError> {
        let (user_id, upload_id) = upload_of(key).ok_or(BooksError::UploadNotFound)?;
        let posted = self
            .ports
            .table
            .update(
                &user_pk(user_id),
                &upload_sk(upload_id),
                UploadOffer::form_posted(1),
                UploadOffer::form_unposted(),
            )
            .await;
        match posted {
            Ok(_) => Ok(()),
            Err(StoreError::Conflict) => Err(BooksError::FormUsed(FormUse::PostedAlready)),
            Err(StoreError::NotFound) => Err(BooksError::FormUsed(FormUse::Over)),
            Err(e) => Err(e.into()),
        }
    }

    /// Lets the form be posted again: its file was refused before it was stored.
    pub async fn give_back_upload_form(&self, key: &BlobKey) -> Result<(), DataError> {
        let Some((user_id, upload_id)) = upload_of(key) else {
            return Ok(());
        };
        match self
            .ports
            .table
            .update(
                &user_pk(user_id),
                &upload_sk(upload_id),
                UploadOffer::form_posted(-1),
                Condition::Exists,
            )
            .await
        {
            Ok(_) | Err(StoreError::NotFound) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Stores the file of a form taken with [`Books::take_upload_form`].
    pub async fn receive_upload(&self, key: &BlobKey, bytes: Bytes) -> Result<(), DataError> {
        info!(key = %key, bytes = bytes.len(), "direct upload received");
        self.ports
            .blobs
            .put(key, bytes)
            .await
            .map_err(DataError::from)
    }

    /// The clean-up of every user whose upload area holds a file, for those who do not come
    /// back to make another offer (which runs their own); returns how many files it removed.
    /// `booktr serve` runs it every hour; on AWS the bucket's lifecycle rule empties
    /// `uploads/` after a day.
    pub async fn clean_up_upload_area(&self) -> Result<usize, DataError> {
        let files = self.ports.blobs.list("uploads/").await?;
        let users: BTreeSet<&str> = files
            .iter()
            .filter_map(|key| upload_of(key).map(|(user_id, _)| user_id))
            .collect();
        let mut removed = 0;
        for user_id in users {
            removed += self.clean_up_uploads(user_id).await?;
        }
        Ok(removed)
    }

    /// Ends the user's offers that are over (their books given back, their items and files
    /// removed), and removes every file of the user's upload area that has no open offer: a
    /// form posted again after its confirm, or a file that arrived after its offer was over.
    /// Returns how many files it removed.
    async fn clean_up_uploads(&self, user_id: &str) -> Result<usize, DataError> {
        // Files first: a file exists only once its offer's item does, so every file listed
        // here whose offer is open is among the offers read next.
        let files = self.ports.blobs.list(&uploads_prefix(user_id)).await?;
        let offers = self
            .ports
            .table
            .query(Query::partition(user_pk(user_id)).prefix(UPLOAD_PREFIX))
            .await?;
        let now = self.ports.clock.now();
        let mut open = HashSet::new();
        for item in offers {
            if now > confirm_by(&UploadOffer::from_item(&item)?) {
                self.end_offer(user_id, &item).await?;
            } else if let Some(upload_id) = item.sk.strip_prefix(UPLOAD_PREFIX) {
                open.insert(upload_id.to_string());
            }
        }
        let mut removed = 0;
        for key in files {
            let open = upload_of(&key).is_some_and(|(_, upload_id)| open.contains(upload_id));
            if !open {
                info!(user_id, key = %key, "file without an open upload offer removed");
                self.ports.blobs.delete(&key).await?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Ends an offer that is over: its item, its file and its reserved book given back.
    async fn end_offer(&self, user_id: &str, item: &Item) -> Result<(), DataError> {
        let Some(upload_id) = item.sk.strip_prefix(UPLOAD_PREFIX) else {
            return Ok(());
        };
        self.ports
            .table
            .delete(&item.pk, &item.sk, Condition::Always)
            .await?;
        self.ports
            .blobs
            .delete(&upload_key(user_id, upload_id)?)
            .await?;
        self.usage.release(user_id, upload_id).await?;
        info!(user_id, upload_id, "upload offer over; its book given back");
        Ok(())
    }
}
