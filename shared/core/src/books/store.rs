//! Where books live in the table and the blobs. The table's keys are spelled in `super::record`
//! with what the items hold, and re-exported here for the callers that name them `store::...`:
//!
//! | item | pk | sk | gsi1pk / gsi1sk |
//! |---|---|---|---|
//! | book | `BOOK#<id>` | `BOOK` | `USER#<userId>#BOOKS` / `<createdAt>#<id>` |
//! | chapter | `BOOK#<id>` | `CHAPTER#<number, 5 digits>` | |
//! | an owner's passage | `BOOK#<id>` | `PASSAGE#<target language>#<chapter, 5 digits>#<block, 5 digits>` | |
//! | a re-translation's proposal | `BOOK#<id>` | `PROPOSAL#<proposal id>` | |
//!
//! Blobs: `books/<id>/original.<ext>`; the extracted manuscript as `books/<id>/manuscript.json`
//! (metadata and the list of images), `books/<id>/chapters/<number>.json` (one chapter's blocks)
//! and `books/<id>/assets/<file>` (images); the owner's edits of passages as
//! `books/<id>/passages/<language>/<chapter>/<block>/<name>.txt` (a passage can outgrow an item),
//! and a re-translation's passages as `books/<id>/proposals/<proposal id>.json`. Everything a book owns sits under its partition and
//! its blob prefix, which is how deletion finds it all.

use crate::books::BookFormat;
use crate::job::{Edition, Layout, OutputFormat};
use crate::ports::{BlobKey, StoreError};

pub use super::record::{
    book_pk, chapter_passages_prefix, chapter_sk, passage_sk, proposal_sk, share_pk, user_books,
    BOOK_SK, CHAPTER_PREFIX, PASSAGE_PREFIX, PROPOSAL_PREFIX, SHARE_SK,
};

/// The text of one version of a passage the owner edited; `name` is unique to the version, so
/// that a concurrent edit that loses the race never overwrites the winner's text.
pub fn passage_text_key(
    book_id: &str,
    lang: &str,
    chapter: u32,
    block: u32,
    name: &str,
) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!(
        "books/{book_id}/passages/{lang}/{chapter:05}/{block:05}/{name}.txt"
    ))
}

/// A proposal's passages: each one's text when it was asked for and the text proposed.
pub fn proposal_key(book_id: &str, proposal_id: &str) -> Result<BlobKey, StoreError> {
    BlobKey::parse(&format!("books/{book_id}/proposals/{proposal_id}.json"))
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

/// Every edition a book's file can be made in, whatever the book.
pub fn editions() -> [Edition; 5] {
    [
        Edition::new(OutputFormat::Epub, Layout::Translated),
        Edition::new(OutputFormat::Pdf, Layout::Translated),
        Edition::new(OutputFormat::Epub, Layout::Bilingual),
        Edition::new(OutputFormat::Pdf, Layout::Bilingual),
        Edition::new(OutputFormat::Markdown, Layout::Translated),
    ]
}

/// The editions a book of `format` can be made in: EPUB and PDF, each alone or bilingual, and
/// the translation alone as Markdown for a Markdown book.
pub fn editions_of(format: BookFormat) -> Vec<Edition> {
    editions()
        .into_iter()
        .filter(|e| edition_fits(format, *e).is_ok())
        .collect()
}

/// Whether a book of `format` can be made in `edition`; if not, why, in words for the user.
pub fn edition_fits(format: BookFormat, edition: Edition) -> Result<(), String> {
    match (edition.format, edition.layout) {
        (OutputFormat::Markdown, _) if format != BookFormat::Markdown => Err(format!(
            "a Markdown file is made only from a Markdown book; this book is {}: ask for epub \
             or pdf",
            format.label()
        )),
        (OutputFormat::Markdown, Layout::Bilingual) => Err(
            "a Markdown file holds the translation alone: ask for the translated layout, or a \
             bilingual epub or pdf"
                .into(),
        ),
        _ => Ok(()),
    }
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
