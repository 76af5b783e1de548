//! The model port: which `ChatModel` translates a run, and whether a provider takes a key.
//! Production picks the provider for the model's family (the user's own key, else the server's)
//! or the offline engine (`booktr_outbound::EnvModels`); tests hand in stand-ins that count calls
//! or fail on purpose.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::chat::{ChatError, ChatModel};

/// How long a key check waits for the provider's answer.
pub const KEY_CHECK_TIMEOUT: Duration = Duration::from_secs(5);

#[async_trait]
pub trait Models: Send + Sync {
    /// The client for `model` (one of the spec's six identifiers). `user_key` is the user's own
    /// key for that provider family, when they configured one. MUST fail with
    /// `ChatError::Fatal` for an unknown model; MUST NOT touch the network.
    fn model(&self, model: &str, user_key: Option<String>)
        -> Result<Arc<dyn ChatModel>, ChatError>;

    /// Asks the provider of `family`, where this process sends that family's chat calls, whether
    /// it takes `key`: one cheap authenticated request, answered within
    /// [`KEY_CHECK_TIMEOUT`]. MUST answer `Refused` only when the provider said no (or the key
    /// cannot be this provider's), `Unreachable` when there is no verdict (no answer in time,
    /// 5xx, rate limits), and MUST NOT put the key in an error message or a log line.
    async fn check_key(&self, family: Family, key: &str) -> Result<(), KeyCheckError>;
}

/// A model provider: the family of the spec's models whose chat calls go to one provider's API
/// and take that provider's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Family {
    /// The provider's name, for people.
    pub fn label(self) -> &'static str {
        match self {
            Family::OpenAi => "OpenAI",
            Family::Anthropic => "Anthropic",
            Family::Gemini => "Gemini",
        }
    }
}

/// Why a provider key could not be confirmed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyCheckError {
    /// The provider answered that the key is not valid (401 or 403; Gemini's 400
    /// `API_KEY_INVALID`), or the key cannot be one of this provider's (its shape).
    #[error("the provider refused the key{}", detail(.0))]
    Refused(Option<String>),
    /// No verdict: the provider could not be reached, timed out, or answered something other than
    /// a yes or a no (5xx, 429, 404 ...). The message never contains the key.
    #[error("the provider could not be reached: {0}")]
    Unreachable(String),
}

fn detail(reason: &Option<String>) -> String {
    reason
        .as_ref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default()
}
