//! The model's unit of work, chosen for it: how many blocks and tokens one request carries, how
//! much of the chapter's translation so far it sees, and how the later passes run. A user who
//! points the service at a model should not have to find these in the documentation.
//!
//! The profile comes from where the model runs. A model the service knows, on its provider's
//! own server, is a hosted model: it answers 2,000 tokens of many blocks well and every block is
//! reviewed and polished. Any other server (a local model behind an OpenAI-compatible API, a
//! proxy) serves a model the service cannot know, and it starts from the small profile: a
//! small local model loses its place in a long answer and keeps each block to its own text best
//! one at a time (docs/translation.md, "Quality against a human translation"); the repair
//! ladder (`ladder`) then moves its requests up or down as its answers go, and every block of
//! some length is translated a second time (`pipeline::second_opinion`). The offline engine
//! takes the hosted profile: it answers anything, and the README's first run stays quick.
//!
//! `BOOKTR_MODEL_PROFILE` names a profile for every model; `BOOKTR_CHUNK_TOKENS` and
//! `BOOKTR_CHUNK_BLOCKS` set one setting over whichever profile runs (see `booktr-core`'s
//! config).

use serde::{Deserialize, Serialize};

use crate::model::ChatModel;
use crate::pipeline::{LaterPasses, PipelineConfig};
use crate::protocol::Window;

/// A named set of the pipeline's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// A model the service knows, on its provider's server.
    Hosted,
    /// A model on a server of the operator's choosing: a paragraph at a time.
    Small,
}

impl Profile {
    /// The profile for a model on its provider's own server (`custom_server` false) or on
    /// another.
    pub fn for_server(custom_server: bool) -> Profile {
        if custom_server {
            Profile::Small
        } else {
            Profile::Hosted
        }
    }

    /// Its name, as the quote, the report and the book's page show it.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Hosted => "hosted",
            Profile::Small => "small",
        }
    }

    /// The profile a name (`BOOKTR_MODEL_PROFILE`) stands for.
    pub fn from_name(name: &str) -> Option<Profile> {
        match name.trim().to_ascii_lowercase().as_str() {
            "hosted" => Some(Profile::Hosted),
            "small" => Some(Profile::Small),
            _ => None,
        }
    }

    /// Estimated source tokens one request carries.
    fn chunk_tokens(self) -> u64 {
        match self {
            Profile::Hosted => 2000,
            Profile::Small => 400,
        }
    }

    /// Blocks one request carries at most.
    fn chunk_blocks(self) -> usize {
        match self {
            Profile::Hosted => crate::pipeline::MAX_CHUNK_BLOCKS,
            Profile::Small => 1,
        }
    }

    /// What the first pass sees of the chapter before a chunk. A hosted model answers many
    /// requests at once, and a chapter's chunks all go out at once with the source before
    /// each: one after the other, a chapter of four chunks takes four answers' time (Moby-Dick
    /// through the whole-book bench: docs/benchmarks.md). A local server answers one request at
    /// a time, so a small model loses no time to seeing its own translation so far.
    fn window(self) -> Window {
        match self {
            Profile::Hosted => Window::Source,
            Profile::Small => Window::Translation,
        }
    }

    /// Which blocks the review and the polish look at: a strong hosted model refines every
    /// block; a small model only those that need it (its review of the rest changes little
    /// and costs as much as the translation).
    fn later_passes(self) -> LaterPasses {
        match self {
            Profile::Hosted => LaterPasses::Every,
            Profile::Small => LaterPasses::WhereNeeded,
        }
    }
}

/// What the operator set by hand, over any profile: `BOOKTR_MODEL_PROFILE`,
/// `BOOKTR_CHUNK_TOKENS`, `BOOKTR_CHUNK_BLOCKS`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByHand {
    pub profile: Option<Profile>,
    pub chunk_tokens: Option<u64>,
    pub chunk_blocks: Option<usize>,
}

impl ByHand {
    /// The profile a model runs with: the one set by hand, else the one its server calls for.
    pub fn profile(&self, custom_server: bool) -> Profile {
        self.profile
            .unwrap_or_else(|| Profile::for_server(custom_server))
    }

    /// The pipeline's settings for `profile`: `base` (the settings no profile decides:
    /// concurrency, retries, the window) with the profile's unit of work, and over it what was
    /// set by hand.
    pub fn settings(&self, profile: Profile, base: PipelineConfig) -> PipelineConfig {
        PipelineConfig {
            chunk_tokens: self.chunk_tokens.unwrap_or(profile.chunk_tokens()),
            chunk_blocks: self.chunk_blocks.unwrap_or(profile.chunk_blocks()),
            later_passes: profile.later_passes(),
            second_opinion: profile == Profile::Small,
            window: profile.window(),
            ..base
        }
    }
}

/// The pipeline's settings for every model of a process: what no profile decides, and what the
/// operator set by hand.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings {
    pub base: PipelineConfig,
    pub by_hand: ByHand,
}

impl Settings {
    /// The profile `model` runs with and the pipeline's settings for it.
    pub fn for_model(&self, model: &dyn ChatModel) -> (Profile, PipelineConfig) {
        let profile = self.by_hand.profile(model.on_operators_server());
        (profile, self.by_hand.settings(profile, self.base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_model_on_its_providers_server_is_hosted_and_any_other_server_small() {
        let nothing = ByHand::default();
        assert_eq!(nothing.profile(false), Profile::Hosted);
        assert_eq!(nothing.profile(true), Profile::Small);
        let hosted = nothing.settings(Profile::Hosted, PipelineConfig::default());
        assert_eq!((hosted.chunk_tokens, hosted.chunk_blocks), (2000, 100));
        let small = nothing.settings(Profile::Small, PipelineConfig::default());
        assert_eq!((small.chunk_tokens, small.chunk_blocks), (400, 1));
        assert_eq!(
            (hosted.later_passes, small.later_passes),
            (LaterPasses::Every, LaterPasses::WhereNeeded)
        );
        assert_eq!(
            (hosted.window, small.window),
            (Window::Source, Window::Translation)
        );
        assert_eq!((hosted.second_opinion, small.second_opinion), (false, true));
        assert_eq!(
            small.context_tokens,
            PipelineConfig::default().context_tokens
        );
    }

    #[test]
    fn what_is_set_by_hand_wins_over_the_profile() {
        let forced = ByHand {
            profile: Some(Profile::Hosted),
            ..ByHand::default()
        };
        assert_eq!(forced.profile(true), Profile::Hosted);
        let tokens = ByHand {
            chunk_tokens: Some(800),
            ..ByHand::default()
        };
        let settings = tokens.settings(Profile::Small, PipelineConfig::default());
        assert_eq!((settings.chunk_tokens, settings.chunk_blocks), (800, 1));
        assert_eq!(Profile::from_name(" Small "), Some(Profile::Small));
        assert_eq!(Profile::from_name("large"), None);
    }
}
