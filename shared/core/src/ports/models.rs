//! The model port: which `ChatModel` translates a run. Production picks the provider for the
//! model's family (the user's own key, else the server's) or the offline engine; tests hand in
//! stand-ins that count calls or fail on purpose.

use std::sync::Arc;

use booktr_translate::model::{ChatError, ChatModel};

pub trait Models: Send + Sync {
    /// The client for `model` (one of the spec's six identifiers). `user_key` is the user's own
    /// key for that provider family, when they configured one. MUST fail with
    /// `ChatError::Fatal` for an unknown model; MUST NOT touch the network.
    fn model(&self, model: &str, user_key: Option<String>)
        -> Result<Arc<dyn ChatModel>, ChatError>;
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
}

impl Models for EnvModels {
    fn model(
        &self,
        model: &str,
        user_key: Option<String>,
    ) -> Result<Arc<dyn ChatModel>, ChatError> {
        let lookup = |name: &str| {
            self.env
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        booktr_translate::book::choose_model(model, user_key, lookup).map(Arc::from)
    }
}
