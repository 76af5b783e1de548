//! What the user is shown about a chapter's translation: the quality record and the tokens
//! of each pass.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::checks::Problem;
use crate::ladder::Repaired;
use crate::protocol::Pass;
use crate::reading::Removed;

/// Tokens one pass used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PassUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub requests: u32,
}

impl PassUsage {
    /// One request as the offline engine counts it, answered with `answer`: the estimate of a
    /// request not sent yet.
    pub fn estimated(request: &crate::model::ChatRequest, answer: &str) -> PassUsage {
        use crate::model::estimate_tokens;
        PassUsage {
            input_tokens: estimate_tokens(&request.system) + estimate_tokens(&request.user),
            output_tokens: estimate_tokens(answer),
            requests: 1,
        }
    }
}

impl std::ops::AddAssign for PassUsage {
    fn add_assign(&mut self, other: PassUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.requests += other.requests;
    }
}

impl std::iter::Sum for PassUsage {
    fn sum<I: Iterator<Item = PassUsage>>(iter: I) -> PassUsage {
        iter.fold(PassUsage::default(), |mut sum, usage| {
            sum += usage;
            sum
        })
    }
}

/// What the user is shown about a chapter's translation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Quality {
    /// Glossary uses checked after the last pass, and how many used the glossary's target.
    pub glossary_checked: u32,
    pub glossary_satisfied: u32,
    /// (block index, source term, expected target) still missing after the last pass.
    pub glossary_violations: Vec<(usize, String, String)>,
    /// Blocks whose translation could not be trusted, by what was wrong: the blocks the first
    /// pass could not get a passing answer for on any rung (they keep their source text,
    /// unless a later pass translated them; listed all the same, so nothing that happened is
    /// hidden), and `untranslated` for every block whose final text is still its source.
    pub flagged: BTreeMap<Problem, Vec<usize>>,
    /// Review or polish answers that failed every rung: (pass, block, why). The block kept
    /// the previous pass's text, a checked translation, so it is not flagged.
    pub kept_previous: Vec<(Pass, usize, Problem)>,
    /// Blocks that passed only when asked again, by the rung that repaired them.
    pub repaired: Repaired,
    /// Text removed from the answers around the blocks (preambles, sign-offs, reasoning ...).
    pub removed: Removed,
    /// Names and terms the review reported translating otherwise than the book's term list:
    /// (source, the list's translation, the review's). The list's is kept.
    pub term_conflicts: Vec<(String, String, String)>,
    /// Blocks asked for again after a rejected answer (each time counted).
    pub retries: u32,
    /// Blocks the review and the polish changed (their answers carry only those).
    pub changed: Changed,
    /// Blocks whose final text a later pass wrote, by the last pass that changed them; every
    /// other translated block holds the translate pass's text. None on records made before
    /// this was kept.
    pub last_pass: Option<BTreeMap<usize, Pass>>,
    /// How far each block's text can be trusted, 0 to 100, from what the run saw of it (see
    /// [`confidence`]); the blocks a reviewer should look at first are the lowest.
    pub confidence: BTreeMap<usize, u8>,
    /// Blocks sent to the review and to the polish (all, or those that needed a look).
    pub sent: Changed,
    /// Later passes not asked in this chapter: the model had answered them with echoes (every
    /// block back as it was) earlier in the run.
    pub echo_stopped: Vec<Pass>,
    /// The model profile the chapter ran with (`profile::Profile::name`), as its job set it.
    pub profile: Option<String>,
    /// What the book's fallback model did with the blocks this model left flagged or of low
    /// confidence (`fallback`); None when the run names no fallback or sent it nothing. A block
    /// whose text the fallback's replaced holds that text's confidence and is not flagged.
    pub fallback: Option<Fallback>,
    /// What the first pass's second opinion did (nothing where the profile asks for none).
    pub second_opinion: SecondOpinion,
    /// Blocks whose text the owner's translation memory supplied (no model was asked for
    /// them, and no check or later pass judged them: the text was accepted before).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remembered: Vec<usize>,
    pub translate: PassUsage,
    pub review: PassUsage,
    pub polish: PassUsage,
}

/// Blocks each later pass changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Changed {
    pub review: u32,
    pub polish: u32,
}

impl std::ops::AddAssign for Changed {
    fn add_assign(&mut self, o: Changed) {
        self.review += o.review;
        self.polish += o.polish;
    }
}

impl Quality {
    /// Flagged blocks of each kind (a block flagged for two reasons counts under both).
    pub fn flag_counts(&self) -> BTreeMap<Problem, usize> {
        self.flagged
            .iter()
            .map(|(k, blocks)| (*k, blocks.len()))
            .collect()
    }

    /// Blocks flagged for any reason.
    pub fn flagged_blocks(&self) -> BTreeSet<usize> {
        self.flagged.values().flatten().copied().collect()
    }

    /// Glossary compliance in percent (100 when nothing was checked).
    pub fn glossary_compliance(&self) -> f64 {
        if self.glossary_checked == 0 {
            100.0
        } else {
            f64::from(self.glossary_satisfied) * 100.0 / f64::from(self.glossary_checked)
        }
    }

    /// The tokens and requests of one pass.
    pub fn usage(&self, pass: Pass) -> PassUsage {
        match pass {
            Pass::Translate => self.translate,
            Pass::Review => self.review,
            Pass::Polish => self.polish,
        }
    }

    pub(super) fn usage_mut(&mut self, pass: Pass) -> &mut PassUsage {
        match pass {
            Pass::Translate => &mut self.translate,
            Pass::Review => &mut self.review,
            Pass::Polish => &mut self.polish,
        }
    }
}

/// What the second opinion did in a chapter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SecondOpinion {
    /// Blocks asked for a second translation.
    pub asked: u32,
    /// Blocks whose second translation was kept (it left out less).
    pub taken: u32,
}

impl std::ops::AddAssign for SecondOpinion {
    fn add_assign(&mut self, o: SecondOpinion) {
        self.asked += o.asked;
        self.taken += o.taken;
    }
}

/// What the fallback model did for a chapter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Fallback {
    /// The model asked (the run's `fallbackModel`).
    pub model: String,
    /// Blocks sent to it.
    pub sent: u32,
    /// Blocks whose text is now the fallback's.
    pub taken: u32,
    /// Tokens and requests of its passes, together.
    pub usage: PassUsage,
}
