//! Where a chapter's translation stands between its passes.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::checks::Problem;
use crate::ladder::Rung;
use crate::protocol::Pass;

use super::quality::*;

/// Where a chapter's translation stands after some of its passes: enough to go on with the
/// next pass without paying again for the ones done. Stored by the chapter job after each pass.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// Passes finished, in order: 0 to 3.
    pub passes_done: u8,
    /// The fingerprint of the segments it was made of (see [`fingerprint`]).
    pub(super) segments: String,
    /// The text of every segment after those passes.
    pub(super) texts: Vec<String>,
    pub(super) quality: Quality,
    pub(super) terms: Vec<(String, String)>,
    /// Glossary terms the last pass left out: (segment, source, target).
    pub(super) violations: Vec<(usize, String, String)>,
    /// Segments the first pass could not get a passing answer for, and why.
    pub(super) failures: BTreeSet<(usize, Problem)>,
    /// For those segments, the last answer the model gave and the check it failed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) rejected: BTreeMap<usize, (String, Problem)>,
    /// Segments whose review or polish answer failed every rung (they kept their text).
    #[serde(default)]
    pub(super) kept: Vec<(Pass, usize, Problem)>,
    /// Segments the review or the polish changed, by the last pass that did.
    #[serde(default)]
    pub(super) changed_by: BTreeMap<usize, Pass>,
    /// Segments the first pass got only when asked again, by the rung that passed them.
    #[serde(default)]
    pub(super) repaired_on: BTreeMap<usize, Rung>,
    /// Whether the answers were judged by language identification (not the offline engine's).
    #[serde(default)]
    pub(super) judged_language: bool,
    /// How far each segment's two first-pass translations agreed (0 to 100), where the
    /// second opinion asked for two.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) agreement: BTreeMap<usize, u8>,
}

impl Checkpoint {
    /// The quality record so far, with the tokens of the passes done.
    pub fn quality(&self) -> &Quality {
        &self.quality
    }
}
