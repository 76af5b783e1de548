//! A book's passages (the blocks it is translated in) as the owner reviews them: each with its
//! source, its text now, its flags and where the text came from; and the owner's changes of
//! them: an edit, an undo, a reset to the model's text; the model's text kept as it is (`keep`);
//! a passage or a chapter translated again as a proposal the owner accepts or discards
//! (`proposals`); the passages out to a translator's tool and back as XLIFF (`xliff`).
//!
//! The model's text stays what the chapter job stored (`StoredChapter`, one per translation
//! key); the owner's changes are kept beside it, one item per passage changed (`record`), and
//! laid over it wherever the book is read: its files, its reader, its quality record. So an
//! edit is kept through every later run, whatever model or glossary it translates with, until
//! the owner resets it; and a passage the owner never changed follows the model's latest text.
//! An edit is written in the book's target language and belongs to it: a run into another
//! language starts from the model's text, and the edits come back with the language.
//!
//! Every change names the version the client read and is written only while the passage is
//! still at it (a conditional write): a concurrent change answers [`PassageError::Stale`] with
//! the passage as it is now, never a lost update.

mod checked;
mod error;
mod keep;
mod model;
pub mod proposals;
mod record;
pub mod review;
mod service;
mod term_text;
mod terms;
pub mod xliff;

pub use checked::{check_characters, max_edit_chars, EDIT_FLOOR, EDIT_GROWTH};
pub use error::PassageError;
pub use model::{
    answer_failed, chapter_record, without_edited, Flag, FlaggedPage, Origin, Passage, PassageAt,
    PassagePage, DEFAULT_PAGE, MAX_PAGE,
};
pub use record::MAX_VERSIONS;
pub use service::page;
pub use term_text::{occurrences, TermChange, MAX_RENDERING};
pub use terms::{
    Skip, TermApplied, TermPassage, TermPreview, TermRequest, TermSkipped, TermsGlossary,
    PREVIEW_CHAPTERS,
};
