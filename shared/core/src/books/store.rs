//! How books map onto table items and blobs:
//!
//! | item | pk | sk | gsi1pk / gsi1sk |
//! |---|---|---|---|
//! | book | `BOOK#<id>` | `BOOK` | `USER#<userId>#BOOKS` / `<createdAt>#<id>` |
//! | chapter | `BOOK#<id>` | `CHAPTER#<number, 5 digits>` | |
//!
//! Blobs: `books/<id>/original.<ext>`; the extracted manuscript as `books/<id>/manuscript.json`
//! (metadata and the list of images), `books/<id>/chapters/<number>.json` (one chapter's blocks)
//! and `books/<id>/assets/<file>` (images). Everything a book owns sits under its partition and
//! its blob prefix, which is how deletion finds it all.

use crate::books::{Book, BookFormat, Chapter};
use crate::fault::DataError;
use crate::items::{
    corrupt, opt_string, opt_time, parse_time, parsed, required_str, required_time, time, time_text,
};
use crate::job::{Edition, Layout, OutputFormat};
use crate::ports::{BlobKey, Item, StoreError};

pub const BOOK_SK: &str = "BOOK";
pub const CHAPTER_PREFIX: &str = "CHAPTER#";

pub fn book_pk(book_id: &str) -> String {
    format!("BOOK#{book_id}")
}

pub fn user_books(user_id: &str) -> String {
    format!("USER#{user_id}#BOOKS")
}

pub fn chapter_sk(number: u32) -> String {
    format!("{CHAPTER_PREFIX}{number:05}")
}

pub fn blob_prefix(book_id: &str) -> String {
    format!("books/{book_id}/")
}

pub fn original_key(book_id: &str, format: BookFormat) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("books/{book_id}/original.{}", format.as_str()))
}

pub fn chapter_key(book_id: &str, number: u32) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("books/{book_id}/chapters/{number:05}.json"))
}

pub fn manuscript_key(book_id: &str) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("books/{book_id}/manuscript.json"))
}

pub fn asset_key(book_id: &str, file_name: &str) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("books/{book_id}/assets/{file_name}"))
}

pub fn book_item(book: &Book) -> Item {
    Item::new(book_pk(&book.id), BOOK_SK)
        .with("id", book.id.clone())
        .with("userId", book.user_id.clone())
        .with("title", book.title.clone())
        .with("titleFromUser", book.title_from_user)
        .with("author", book.author.clone())
        .with("originalLang", book.original_lang.clone())
        .with("targetLang", book.target_lang.clone())
        .with("status", book.status.as_str())
        .with("progress", book.progress)
        .with("wordCount", book.word_count)
        .with("chapterCount", book.chapter_count)
        .with("translationModel", book.translation_model.clone())
        .with("format", book.format.as_str())
        .with("fileName", book.file_name.clone())
        .with("fileSize", book.file_size)
        .with("error", book.error.clone())
        .with("warnings", book.warnings.clone())
        .with("glossaryId", book.glossary_id.clone())
        .with("run", book.run)
        .with("translationKey", book.translation_key.clone())
        .with("createdAt", time(book.created_at))
        .with("updatedAt", time(book.updated_at))
        .with("completedAt", opt_time(book.completed_at))
        .with("gsi1pk", user_books(&book.user_id))
        .with(
            "gsi1sk",
            format!("{}#{}", time_text(book.created_at), book.id),
        )
}

pub fn book_from(item: &Item) -> Result<Book, DataError> {
    let format = required_str(item, "format")?;
    Ok(Book {
        id: required_str(item, "id")?.to_string(),
        user_id: required_str(item, "userId")?.to_string(),
        title: required_str(item, "title")?.to_string(),
        title_from_user: item.bool("titleFromUser").unwrap_or(false),
        author: opt_string(item, "author"),
        original_lang: required_str(item, "originalLang")?.to_string(),
        target_lang: required_str(item, "targetLang")?.to_string(),
        status: parsed(item, "status")?,
        progress: item
            .i64("progress")
            .and_then(|p| u8::try_from(p).ok())
            .unwrap_or(0),
        word_count: item.i64("wordCount").and_then(|n| u64::try_from(n).ok()),
        chapter_count: item.i64("chapterCount").and_then(|n| u32::try_from(n).ok()),
        translation_model: opt_string(item, "translationModel"),
        engine: opt_string(item, "engine"),
        format: BookFormat::parse(format).ok_or_else(|| corrupt(item, "format"))?,
        file_name: required_str(item, "fileName")?.to_string(),
        file_size: item
            .i64("fileSize")
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0),
        error: opt_string(item, "error"),
        warnings: item
            .attrs
            .get("warnings")
            .and_then(serde_json::Value::as_array)
            .map(|all| {
                all.iter()
                    .filter_map(|w| w.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        glossary_id: opt_string(item, "glossaryId"),
        run: item
            .i64("run")
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0),
        translation_key: opt_string(item, "translationKey"),
        share_token: opt_string(item, "shareToken"),
        charged_period: opt_string(item, "chargedPeriod"),
        max_cost_micros: item.i64("maxCostMicros"),
        created_at: required_time(item, "createdAt")?,
        updated_at: required_time(item, "updatedAt")?,
        completed_at: parse_time(item, "completedAt")?,
    })
}

pub fn chapter_item(book_id: &str, chapter: &Chapter) -> Item {
    Item::new(book_pk(book_id), chapter_sk(chapter.number))
        .with("id", chapter.id.clone())
        .with("number", chapter.number)
        .with("title", chapter.title.clone())
        .with("wordCount", chapter.word_count)
        .with("status", chapter.status.as_str())
        .with("passesDone", chapter.passes_done)
        .with("error", chapter.error.clone())
}

pub fn chapter_from(item: &Item) -> Result<Chapter, DataError> {
    Ok(Chapter {
        id: required_str(item, "id")?.to_string(),
        number: item
            .i64("number")
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| corrupt(item, "number"))?,
        title: opt_string(item, "title"),
        word_count: item.i64("wordCount").and_then(|n| u64::try_from(n).ok()),
        status: parsed(item, "status")?,
        passes_done: item
            .i64("passesDone")
            .and_then(|n| u8::try_from(n).ok())
            .unwrap_or(0),
        error: opt_string(item, "error"),
        stored_key: opt_string(item, "storedKey"),
    })
}

/// One chapter's finished translation ([`crate::translation::StoredChapter`]).
pub fn translation_key(book_id: &str, number: u32) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("books/{book_id}/translations/{number:05}.json"))
}

/// The glossary entries a run translates with, copied at start so edits during a run do not
/// make its chapters disagree.
pub fn glossary_snapshot_key(book_id: &str) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("books/{book_id}/run/glossary.json"))
}

/// Where a chapter's translation stands between passes (see
/// `booktr_translate::pipeline::Checkpoint`), with the translation key it was made under.
pub fn checkpoint_key(book_id: &str, number: u32) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("books/{book_id}/run/passes/{number:05}.json"))
}

/// The book's names and terms under one translation key, found and translated before its
/// chapters. One file per key, so a late term job of an earlier run cannot replace the list of
/// the run that follows it.
pub fn terms_key(book_id: &str, translation_key: &str) -> Result<BlobKey, StoreError> {
    let name = &crate::ids::sha256_hex(translation_key)[..32];
    BlobKey::parse(&format!("books/{book_id}/run/terms/{name}.json"))
}

pub fn outputs_prefix(book_id: &str) -> String {
    format!("books/{book_id}/output/")
}

/// The generated file of a translated book: `book.epub`, `book.bilingual.pdf`.
pub fn output_key(book_id: &str, edition: Edition) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("books/{book_id}/output/book.{}", edition.suffix()))
}

/// Where the finished files of the book's previous translation wait while a new run of it
/// translates: downloads are served from them until the new run's files are made.
pub fn previous_outputs_prefix(book_id: &str) -> String {
    format!("books/{book_id}/output/previous/")
}

pub fn previous_output_key(book_id: &str, edition: Edition) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!(
        "{}book.{}",
        previous_outputs_prefix(book_id),
        edition.suffix()
    ))
}

/// Every edition a book's file can be made in.
pub fn editions() -> [Edition; 4] {
    [
        Edition::new(OutputFormat::Epub, Layout::Translated),
        Edition::new(OutputFormat::Pdf, Layout::Translated),
        Edition::new(OutputFormat::Epub, Layout::Bilingual),
        Edition::new(OutputFormat::Pdf, Layout::Bilingual),
    ]
}

/// Where the files rendered for downloads of an unfinished book live.
pub fn progress_files_prefix(book_id: &str) -> String {
    format!("books/{book_id}/output/progress/")
}

/// A file rendered for a download while the book is unfinished, named for what it holds
/// (`fingerprint`: the chapters finished and the translation they belong to), so that the
/// next download of the same progress is served from it rather than rendered again.
pub fn progress_file_key(
    book_id: &str,
    fingerprint: &str,
    edition: Edition,
) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!(
        "{}{fingerprint}.{}",
        progress_files_prefix(book_id),
        edition.suffix()
    ))
}

/// Whether `key` is a progress file (see [`progress_file_key`]) of `edition`.
pub fn is_progress_file_of(key: &BlobKey, book_id: &str, edition: Edition) -> bool {
    key.as_str()
        .strip_prefix(&progress_files_prefix(book_id))
        .and_then(|name| name.split_once('.'))
        .is_some_and(|(_, suffix)| suffix == edition.suffix())
}

/// Where a share link's copies of the book's files live: a download through a share hands out
/// a link to its own copy, so that revoking the share (deleting the copies) ends every link
/// given out through it. Under the outputs, so a new run or a new file drops them too.
pub fn shared_files_prefix(book_id: &str) -> String {
    format!("books/{book_id}/output/shared/")
}

/// The copies of one share link's files.
pub fn share_files_prefix(book_id: &str, token: &str) -> String {
    format!("{}{token}/", shared_files_prefix(book_id))
}

/// One share link's copy of the book's `edition`.
pub fn share_file_key(book_id: &str, token: &str, edition: Edition) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!(
        "{}book.{}",
        share_files_prefix(book_id, token),
        edition.suffix()
    ))
}

/// The public share link: `SHARE#<token>` / `SHARE`, read by token without credentials. Kept
/// outside the book's partition so a revoked token is gone at once (an index may lag).
pub fn share_pk(token: &str) -> String {
    format!("SHARE#{token}")
}

pub const SHARE_SK: &str = "SHARE";
