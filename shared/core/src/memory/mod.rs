//! The translation memory: per user and language pair, every passage accepted before (the
//! model's text a chapter stored, an owner's edit, an accepted re-translation, an imported TMX
//! unit), keyed by its source exactly as written (text and inline marks). A later translation
//! takes what it holds: a block whose source is in it exactly is not sent to any model, and a
//! block with a close passage in it is sent with that passage beside it
//! (`booktr_translate::memory`).
//!
//! Layout, all in the user's memory partition `MEMORY#<userId>` (the purge removes it whole):
//! one item per pair, `PAIR#<source>#<target>` (its entry count, taken by a conditional update
//! before each new entry is written, so the cap holds under concurrent writes; and the passages
//! it refused once full), and one per entry,
//! `ENTRY#<source>#<target>#<hash>`, listed newest first through `gsi1`
//! (`MEMORY#<userId>#<source>#<target>` / `<updatedAt>#<hash>`).
//!
//! Bounds: [`MAX_ENTRIES`] entries a pair and [`MAX_PAIRS`] pairs a user. A full pair keeps
//! every entry it has: a passage new to it is not remembered (a passage it holds is still
//! replaced by a later acceptance), and the pair counts what it refused so the owner is told;
//! deleting entries makes room. A passage longer than [`MAX_PASSAGE_CHARS`] (source or text) is
//! not remembered. A chapter compares its blocks with at most [`CANDIDATES`] of the pair's
//! newest entries for close passages.

mod error;
mod model;
mod record;
mod service;
pub mod tmx;

pub use error::MemoryError;
pub use model::{
    passage_id, Entry, EntryPage, Imported, Origin, Pair, PairMemory, PairSummary, Passage,
    Recorded, CANDIDATES, DEFAULT_PAGE, MAX_ENTRIES, MAX_PAGE, MAX_PAIRS, MAX_PASSAGE_CHARS,
};
pub use service::{Lookup, Memory};
