//! One chapter through the three passes. Chunks of a pass run in parallel (bounded). Every
//! block of every answer is read strictly (`reading`) and checked against its source
//! (`checks`); the blocks that fail, and only they, go down the repair ladder (`ladder`). A
//! block that fails every rung keeps the text it had before the pass (its source, in the first
//! pass) and is listed by kind in the quality record: never silently accepted.
//!
//! Its modules, each importing only modules listed before it: `config` (the settings),
//! `quality` (the record the user sees), `input` (what a chapter starts from and ends with),
//! `segments` (what goes to the model and back), `checkpoint` (where a chapter stands between
//! passes), `work` (what a pass works with), `confidence`, `chunk` (one request down the
//! repair ladder, every answer checked), `passes` (the first pass and the later ones),
//! `second_opinion`, and `chapter` (a chapter's passes, one at a time or all at once).

mod chapter;
mod checkpoint;
mod chunk;
mod confidence;
mod config;
mod input;
mod passes;
mod quality;
mod second_opinion;
mod segments;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod whole_book;
mod work;

pub use chapter::{translate_chapter, ChapterTranslation};
pub use checkpoint::Checkpoint;
pub use config::{LaterPasses, PipelineConfig, MAX_CHUNK_BLOCKS};
pub use input::{ChapterInput, ChapterOutput, Rejected};
pub use quality::{Changed, Fallback, PassUsage, Quality, SecondOpinion};
pub(crate) use segments::glossary_counts;
pub use segments::{edited, windowed};
