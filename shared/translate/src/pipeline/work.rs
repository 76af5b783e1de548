//! What one pass works with.

use crate::adequacy::Name;
use crate::checks::Checks;
use crate::model::ChatModel;
use crate::protocol::Unit;

use super::config::*;
use super::input::*;
use super::segments::*;

/// What one pass works with: the model, the chapter, and what every answer is judged by.
pub(super) struct PassWork<'w> {
    pub(super) model: &'w dyn ChatModel,
    pub(super) input: &'w ChapterInput<'w>,
    pub(super) config: &'w PipelineConfig,
    pub(super) checks: &'w Checks,
    pub(super) segments: &'w [Segment],
    /// The book's names (capitalised glossary and term list entries).
    pub(super) names: Vec<Name<'w>>,
}

impl PassWork<'_> {
    /// Segment `id` as sent, with its current translation in the later passes.
    pub(super) fn unit(&self, id: usize, draft: Option<String>) -> Unit {
        Unit {
            id,
            source: self.segments[id].source.clone(),
            draft,
        }
    }
}
