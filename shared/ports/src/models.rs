//! The model port: which `ChatModel` translates a run, and whether a provider takes a key.
//! Production picks the provider for the model's family (the user's own key, else the server's)
//! or the offline engine; tests hand in stand-ins that count calls or fail on purpose.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use booktr_translate::model::{ChatError, ChatModel};
use booktr_translate::providers::{self, Family};

pub use booktr_translate::providers::KeyCheckError;

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

/// Providers chosen from the process environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, ...),
/// read once when built, falling back to the offline engine when no key is set.
pub struct EnvModels {
    env: Vec<(String, String)>,
}

impl EnvModels {
    pub fn from_env() -> Self {
        Self::from_vars(std::env::vars().collect())
    }

    /// From the given variables only: `from_vars(vec![])` always picks the offline engine.
    pub fn from_vars(env: Vec<(String, String)>) -> Self {
        EnvModels { env }
    }

    fn var(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.trim().is_empty())
    }
}

#[async_trait]
impl Models for EnvModels {
    fn model(
        &self,
        model: &str,
        user_key: Option<String>,
    ) -> Result<Arc<dyn ChatModel>, ChatError> {
        providers::choose_model(model, user_key, |name| self.var(name)).map(Arc::from)
    }

    async fn check_key(&self, family: Family, key: &str) -> Result<(), KeyCheckError> {
        let (_, url_var) = family.env_names();
        // The same base URL `choose_model` gives the chat client, so the key is checked
        // against the server that will use it.
        let base_url = self
            .var(url_var)
            .unwrap_or_else(|| family.default_base_url().to_string());
        providers::check_key(family, key, &base_url, KEY_CHECK_TIMEOUT).await
    }
}
