//! The pipeline's settings: how much a request carries, what the first pass sees, which blocks
//! the later passes look at.

use crate::protocol::Window;

#[derive(Debug, Clone, Copy)]
pub struct PipelineConfig {
    /// Estimated source tokens per chunk. 2,000 keeps answers well inside every model's output
    /// limit while the per-request instructions stay a small share of what is sent.
    pub chunk_tokens: u64,
    /// Blocks per chunk at most, within the token budget. A small local model keeps each block
    /// to its own text best when it is asked for one at a time (docs/translation.md, the
    /// quality bench); a hosted model is asked for as many as fit.
    pub chunk_blocks: usize,
    /// Chunks of one pass in flight at once: 12 covers the longest chapters of real novels (the
    /// longest in Moby-Dick is 7 chunks), so a pass takes about one model round trip.
    pub concurrency: usize,
    /// Tries per request on retryable model errors (rate limits, overload).
    pub max_model_retries: u32,
    /// Estimated tokens of the chapter's translation so far that each first-pass request
    /// carries (the EARLIER lines), so that names, pronouns and register follow through a
    /// chapter. With the translation as the window the first pass's chunks go one after the
    /// other (in chapters of up to 8,000 source tokens; longer ones go at once without it, see
    /// [`windowed`]); 0 sends none.
    pub context_tokens: u64,
    /// Whether the window is the translation so far or the source (the model's profile's
    /// choice).
    pub window: Window,
    /// Which blocks the review and the polish are asked about (the model's profile's choice).
    pub later_passes: LaterPasses,
    /// Whether the first pass asks for a second translation of every block of some length
    /// and keeps the more complete of the two (the model's profile's choice; see
    /// `second_opinion`).
    pub second_opinion: bool,
}

/// Which blocks the review and the polish are asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaterPasses {
    /// Every translated block: a strong model refines every segment, which helps fluency,
    /// style and terms.
    Every,
    /// The blocks that need a look ([`needs_look`]): a small model's review changes few blocks
    /// and costs as much as the translation, so it is spent where the run saw trouble.
    WhereNeeded,
}

/// One block in this many is reviewed and polished where only the blocks that need it are
/// ([`LaterPasses::WhereNeeded`]), so that a chapter with no trouble seen is still looked at.
pub(super) const SAMPLE_EVERY: usize = 8;

/// Whether segment `id` is in the later passes' sample: one in [`SAMPLE_EVERY`] from the
/// second on, since a chapter's first block is most often its heading.
pub(super) fn sampled(id: usize) -> bool {
    id % SAMPLE_EVERY == 1
}

/// A block's confidence (0 to 100) under which the later passes look at it.
pub(super) const LOW_CONFIDENCE: u8 = 70;

/// The most blocks a chunk may hold (`PipelineConfig::chunk_blocks`'s default and ceiling).
pub const MAX_CHUNK_BLOCKS: usize = 100;

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            chunk_tokens: 2000,
            chunk_blocks: MAX_CHUNK_BLOCKS,
            concurrency: 12,
            max_model_retries: 5,
            context_tokens: 300,
            window: Window::Translation,
            later_passes: LaterPasses::Every,
            second_opinion: false,
        }
    }
}
