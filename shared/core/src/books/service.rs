//! Book use cases for their owner. A book of another user is reported exactly like a missing one.

use bytes::Bytes;
use tracing::{info, instrument, warn};

use super::error::BooksError;
use super::format::{sniff, BookFormat};
use super::lifecycle::BookEvent;
use super::model::{Book, BookDetail, Chapter, MAX_UPLOAD_BYTES};
use super::record::{self, BookChange};
use super::store;
use crate::accounts::User;
use crate::fault::{DataError, Fault};
use crate::ids::new_id;
use crate::job::Job;
use crate::memory::Memory;
use crate::ports::Ports;
use crate::ports::{blobs, Condition, Index, Query, StoreError};
use crate::types::{BookStatus, LanguageCode};
use crate::usage::{Spend, Usage};

/// The most books one list call returns (a gap in the spec; documented in docs/api.md).
pub const MAX_LIST_LIMIT: usize = 100;
const DEFAULT_LIST_LIMIT: usize = 50;
const MAX_TITLE_CHARS: usize = 500;

/// A file as received by upload.
#[derive(Debug, Clone)]
pub struct Upload {
    pub file_name: String,
    pub title: Option<String>,
    pub target_lang: Option<String>,
    pub bytes: Bytes,
}

/// How an upload's book is paid for.
pub(super) enum Payment<'a> {
    /// Spent from the month's quota now.
    Spend,
    /// By the reservation of a direct upload's offer, under this id.
    Reserved(&'a str),
}

#[derive(Clone)]
pub struct Books {
    pub(super) ports: Ports,
    pub(super) usage: Usage,
    /// For what a deleted book taught the owner's memory.
    memory: Memory,
}

impl Books {
    pub fn new(ports: Ports, usage: Usage) -> Self {
        let memory = Memory::new(ports.clone());
        Books {
            ports,
            usage,
            memory,
        }
    }

    /// Stores the original, creates the book as UPLOADED and queues its extraction.
    /// The upload counts against the plan's monthly book quota (given back if it fails).
    #[instrument(skip(self, user, upload), fields(user_id = %user.id, file = %upload.file_name, bytes = upload.bytes.len()))]
    pub async fn upload(&self, user: &User, upload: Upload) -> Result<Book, BooksError> {
        self.upload_paid(user, upload, Payment::Spend).await
    }

    /// [`Books::upload`], its book paid for as `payment` says.
    pub(super) async fn upload_paid(
        &self,
        user: &User,
        mut upload: Upload,
        payment: Payment<'_>,
    ) -> Result<Book, BooksError> {
        let user_id = user.id.as_str();
        if upload.bytes.is_empty() {
            return Err(BooksError::Invalid("the file is empty".into()));
        }
        if upload.bytes.len() as u64 > MAX_UPLOAD_BYTES {
            return Err(BooksError::TooLarge);
        }
        upload.file_name = file_name_of(&upload.file_name)?;
        let file_name = &upload.file_name;
        let head = &upload.bytes[..upload.bytes.len().min(64 * 1024)];
        let format = sniff(file_name, head)?;
        let user_title = upload
            .title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let title = match user_title {
            Some(t) => validate_title(t)?,
            None => title_from_file_name(file_name),
        };
        let target_lang = match upload
            .target_lang
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            Some(t) => LanguageCode::parse(t)
                .map_err(|e| BooksError::Invalid(format!("targetLang: {e}")))?,
            None => {
                let preferred = crate::preferences::get(&self.ports, user_id)
                    .await?
                    .default_target_language;
                LanguageCode::parse(&preferred).map_err(|e| BooksError::Invalid(e.0))?
            }
        };
        let title_from_user = user_title.is_some();
        let one_book = Spend { books: 1, words: 0 };
        let period = match payment {
            Payment::Spend => self.usage.spend(user, one_book).await?,
            Payment::Reserved(id) => self.usage.redeem(user, id, one_book).await?,
        };
        let stored = self
            .store_upload(user_id, upload, format, title, title_from_user, target_lang)
            .await;
        if stored.is_err() {
            self.usage.refund(user_id, &period, one_book).await?;
        }
        stored
    }

    async fn store_upload(
        &self,
        user_id: &str,
        upload: Upload,
        format: BookFormat,
        title: String,
        title_from_user: bool,
        target_lang: LanguageCode,
    ) -> Result<Book, BooksError> {
        let now = self.ports.clock.now();
        let book = Book {
            id: new_id(),
            user_id: user_id.to_string(),
            title,
            title_from_user,
            author: None,
            original_lang: LanguageCode::undetermined().to_string(),
            target_lang: target_lang.to_string(),
            status: BookStatus::Uploaded,
            progress: 0,
            word_count: None,
            chapter_count: None,
            translation_model: None,
            fallback_model: None,
            memory: true,
            engine: None,
            format,
            file_name: upload.file_name,
            file_size: upload.bytes.len() as u64,
            error: None,
            warnings: Vec::new(),
            glossary_id: None,
            run: 0,
            translation_key: None,
            share_token: None,
            charged_period: None,
            max_cost_micros: None,
            created_at: now,
            updated_at: now,
            completed_at: None,
        };
        // Blob first, then the item, then the job: a crash in between leaves at worst an
        // unreferenced blob, never a book whose file is missing.
        self.ports
            .blobs
            .put(&store::original_key(&book.id, format)?, upload.bytes)
            .await?;
        self.ports
            .table
            .put(record::book_item(&book), Condition::NotExists)
            .await?;
        let job = Job::Extract {
            book_id: book.id.clone(),
        };
        if let Err(e) = job.enqueue(self.ports.queue.as_ref()).await {
            warn!(book_id = %book.id, error = %e, "could not queue extraction; undoing the upload");
            self.remove_everything(&book.id).await?;
            return Err(e.into());
        }
        info!(book_id = %book.id, format = format.as_str(), "book uploaded");
        Ok(book)
    }

    /// The user's books, newest first, optionally only those in one status.
    pub async fn list(
        &self,
        user_id: &str,
        status: Option<BookStatus>,
        limit: Option<usize>,
    ) -> Result<Vec<Book>, BooksError> {
        let limit = limit.unwrap_or(DEFAULT_LIST_LIMIT);
        if !(1..=MAX_LIST_LIMIT).contains(&limit) {
            return Err(BooksError::Invalid(format!(
                "limit must be between 1 and {MAX_LIST_LIMIT}"
            )));
        }
        let mut query = Query::partition(store::user_books(user_id)).descending();
        if status.is_none() {
            query = query.limit(limit);
        }
        let items = self.ports.table.query_index(Index::Gsi1, query).await?;
        let mut books = Vec::with_capacity(limit.min(items.len()));
        for item in &items {
            let book = record::book_from(item).map_err(Fault::from)?;
            if status.is_none_or(|s| s == book.status) {
                books.push(book);
                if books.len() == limit {
                    break;
                }
            }
        }
        Ok(books)
    }

    /// Every book of the user, newest first, without the list's limit (an export, a purge, a
    /// digest).
    pub async fn all_of(&self, user_id: &str) -> Result<Vec<Book>, DataError> {
        let query = Query::partition(store::user_books(user_id)).descending();
        let items = self.ports.table.query_index(Index::Gsi1, query).await?;
        items
            .iter()
            .map(|item| Ok(record::book_from(item)?))
            .collect()
    }

    /// What the owner's edits keep stored across the user's books (see
    /// [`record::StoredEdits`]): one read of their list of books.
    pub async fn stored_edits(&self, user_id: &str) -> Result<record::StoredEdits, DataError> {
        let query = Query::partition(store::user_books(user_id));
        let items = self.ports.table.query_index(Index::Gsi1, query).await?;
        let mut total = record::StoredEdits::default();
        for item in &items {
            let edits = record::StoredEdits::of(item)?;
            total.versions += edits.versions;
            total.bytes += edits.bytes;
        }
        Ok(total)
    }

    /// The book, if it exists and belongs to the user.
    pub async fn get(&self, user_id: &str, book_id: &str) -> Result<Book, BooksError> {
        let item = self
            .ports
            .table
            .get(&store::book_pk(book_id), store::BOOK_SK)
            .await?;
        let book = item
            .as_ref()
            .map(record::book_from)
            .transpose()
            .map_err(Fault::from)?;
        book.filter(|b| b.user_id == user_id)
            .ok_or(BooksError::NotFound)
    }

    pub async fn detail(&self, user_id: &str, book_id: &str) -> Result<BookDetail, BooksError> {
        let book = self.get(user_id, book_id).await?;
        let chapters = self.chapters(book_id).await?;
        Ok(BookDetail { book, chapters })
    }

    /// The chapters in reading order.
    /// Only the store can fail here: the caller already holds the book.
    pub async fn chapters(&self, book_id: &str) -> Result<Vec<Chapter>, DataError> {
        let query = Query::partition(store::book_pk(book_id)).prefix(store::CHAPTER_PREFIX);
        let items = self.ports.table.query(query).await?;
        items
            .iter()
            .map(|item| Ok(record::chapter_from(item)?))
            .collect()
    }

    /// Changes title and/or author. An empty author clears it.
    #[instrument(skip(self))]
    pub async fn update(
        &self,
        user_id: &str,
        book_id: &str,
        title: Option<String>,
        author: Option<String>,
    ) -> Result<Book, BooksError> {
        self.get(user_id, book_id).await?;
        let mut change = BookChange::edited(self.ports.clock.now());
        if let Some(title) = title {
            change = change.titled(&validate_title(&title)?);
        }
        if let Some(author) = author {
            let author = author.trim();
            if author.chars().count() > MAX_TITLE_CHARS {
                return Err(BooksError::Invalid(format!(
                    "author must be at most {MAX_TITLE_CHARS} characters"
                )));
            }
            change = change.author((!author.is_empty()).then_some(author));
        }
        let item = self
            .ports
            .table
            .update(
                &store::book_pk(book_id),
                store::BOOK_SK,
                change.into_update(),
                record::owned_by(user_id),
            )
            .await
            .map_err(|e| match e {
                StoreError::NotFound | StoreError::Conflict => BooksError::NotFound,
                e => e.into(),
            })?;
        Ok(record::book_from(&item).map_err(Fault::from)?)
    }

    /// Sets the language the book is written in, for an owner who knows it better than its file
    /// said (`booktr translate --from`): an EXTRACTED book only, before its run starts.
    #[instrument(skip(self))]
    pub async fn set_source_language(
        &self,
        user_id: &str,
        book_id: &str,
        language: &LanguageCode,
    ) -> Result<Book, BooksError> {
        let change = BookChange::source_language(language, self.ports.clock.now());
        let condition = Condition::All(vec![
            record::owned_by(user_id),
            record::status_in(&[BookStatus::Extracted]),
        ]);
        let item = self
            .ports
            .table
            .update(
                &store::book_pk(book_id),
                store::BOOK_SK,
                change.into_update(),
                condition,
            )
            .await
            .map_err(|e| match e {
                StoreError::NotFound | StoreError::Conflict => {
                    BooksError::Invalid("only an extracted book's language can be set".into())
                }
                e => e.into(),
            })?;
        Ok(record::book_from(&item).map_err(Fault::from)?)
    }

    /// Removes the book, its chapters and every blob it owns. Jobs still queued for it find no
    /// book and are dropped.
    #[instrument(skip(self))]
    pub async fn delete(&self, user_id: &str, book_id: &str) -> Result<(), BooksError> {
        self.get(user_id, book_id).await?;
        self.remove_everything(book_id).await?;
        info!("book deleted");
        Ok(())
    }

    /// Deletes the share link, the chapters, what the book taught the owner's memory, every
    /// blob under the book's prefix, and the book item last (so a crash midway leaves a book
    /// that can be deleted again).
    ///
    /// The order also settles a race with a translation start or a chapter, which write (a
    /// glossary snapshot, a translation, memory entries) before they update the book: what was
    /// written before the book item goes is removed by the second sweep; what is written after
    /// is followed by a failed update of the missing book, and the writer removes what it wrote.
    pub(crate) async fn remove_everything(&self, book_id: &str) -> Result<(), DataError> {
        if let Some(book) = self.find(book_id).await? {
            self.revoke_share(&book).await?;
        }
        let pk = store::book_pk(book_id);
        let items = self.ports.table.query(Query::partition(pk.clone())).await?;
        for item in items.iter().filter(|i| i.sk != store::BOOK_SK) {
            self.ports
                .table
                .delete(&item.pk, &item.sk, Condition::Always)
                .await?;
        }
        self.memory.forget_book(book_id).await?;
        let prefix = store::blob_prefix(book_id);
        blobs::delete_prefix(self.ports.blobs.as_ref(), &prefix).await?;
        self.ports
            .table
            .delete(&pk, store::BOOK_SK, Condition::Always)
            .await?;
        // Once more after the book item: a start or a chapter that read the book before the
        // deletion may have written after the first sweep. One that writes after this sweep
        // fails on the missing book and cleans up after itself.
        self.memory.forget_book(book_id).await?;
        blobs::delete_prefix(self.ports.blobs.as_ref(), &prefix).await?;
        Ok(())
    }

    /// Moves the book through `event` if its status allows it; returns the book after the
    /// change, or None when the book is gone or in a status the event does not apply to.
    /// Ends a book's extraction in ERROR with `message` (what the user reads), and gives the
    /// upload back to the month's book quota: a file that could not be read is no book. Only
    /// the call that moves the book gives it back, so a retried job refunds once.
    pub(crate) async fn fail_extraction(
        &self,
        book_id: &str,
        message: String,
    ) -> Result<Option<Book>, DataError> {
        let failed = self
            .transition(
                book_id,
                BookEvent::ExtractionFailed,
                BookChange::error(&message),
            )
            .await?;
        if let Some(book) = &failed {
            let period = crate::usage::period_of(book.created_at);
            let one_book = Spend { books: 1, words: 0 };
            self.usage.refund(&book.user_id, &period, one_book).await?;
        }
        Ok(failed)
    }

    pub(crate) async fn transition(
        &self,
        book_id: &str,
        event: BookEvent,
        extra: BookChange,
    ) -> Result<Option<Book>, DataError> {
        let update = extra.moved_to(event.target(), self.ports.clock.now());
        let result = self
            .ports
            .table
            .update(
                &store::book_pk(book_id),
                store::BOOK_SK,
                update.into_update(),
                record::status_in(event.allowed_from()),
            )
            .await;
        match result {
            Ok(item) => Ok(Some(record::book_from(&item)?)),
            Err(StoreError::NotFound | StoreError::Conflict) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Keeps a job's latest failure on the book, its status unchanged; nothing when the book is
    /// gone (a failure is no reason to bring it back).
    pub(crate) async fn note_error(&self, book_id: &str, error: &str) -> Result<(), DataError> {
        let update = BookChange::error(error).into_update();
        match self
            .ports
            .table
            .update(
                &store::book_pk(book_id),
                store::BOOK_SK,
                update,
                Condition::Exists,
            )
            .await
        {
            Ok(_) | Err(StoreError::NotFound | StoreError::Conflict) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The book by id alone, for workers (which act for the system, not a user).
    pub(crate) async fn find(&self, book_id: &str) -> Result<Option<Book>, DataError> {
        let item = self
            .ports
            .table
            .get(&store::book_pk(book_id), store::BOOK_SK)
            .await?;
        Ok(item.as_ref().map(record::book_from).transpose()?)
    }
}

pub(super) fn validate_title(title: &str) -> Result<String, BooksError> {
    let title = title.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE_CHARS {
        return Err(BooksError::Invalid(format!(
            "title must be 1 to {MAX_TITLE_CHARS} characters"
        )));
    }
    if title.chars().any(char::is_control) {
        return Err(BooksError::Invalid(
            "title must not contain control characters (such as NUL or line breaks)".into(),
        ));
    }
    Ok(title.to_string())
}

/// The uploaded file's name as stored and shown: its last path component (a client's
/// `../../x.epub` or `C:\books\x.epub` is `x.epub`), at most 255 characters. Control
/// characters are refused rather than dropped: a name with them was not typed by a person.
pub(super) fn file_name_of(raw: &str) -> Result<String, BooksError> {
    if raw.chars().any(char::is_control) {
        return Err(BooksError::Invalid(
            "the file name must not contain control characters".into(),
        ));
    }
    let base = raw.rsplit(['/', '\\']).next().unwrap_or(raw).trim();
    let name: String = base.chars().take(255).collect();
    Ok(match name.as_str() {
        "" | "." | ".." => "book".into(),
        _ => name,
    })
}

fn title_from_file_name(file_name: &str) -> String {
    let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    // A zipped FictionBook's name ends in two extensions.
    let stem = if base.to_ascii_lowercase().ends_with(".fb2.zip") {
        &base[..base.len() - ".fb2.zip".len()]
    } else {
        base.rsplit_once('.').map_or(base, |(stem, _)| stem)
    };
    let title: String = stem
        .replace(['_', '-'], " ")
        .trim()
        .chars()
        .take(MAX_TITLE_CHARS)
        .collect();
    if title.is_empty() {
        "Untitled".into()
    } else {
        title
    }
}
