//! The model port in production: each family's provider (OpenAI, Anthropic, Gemini) over HTTP
//! when a key for it is configured, the offline engine otherwise.

use std::sync::Arc;

use async_trait::async_trait;
use booktr_ports::models::KEY_CHECK_TIMEOUT;
use booktr_ports::{ChatError, ChatModel, Family, KeyCheckError, Models};
use booktr_translate::providers;

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
        booktr_translate::providers::choose_model(model, user_key, |name| self.var(name))
            .map(Arc::from)
    }

    async fn check_key(&self, family: Family, key: &str) -> Result<(), KeyCheckError> {
        let (_, url_var) = providers::env_names(family);
        // The same base URL `choose_model` gives the chat client, so the key is checked
        // against the server that will use it.
        let base_url = self
            .var(url_var)
            .unwrap_or_else(|| providers::default_base_url(family).to_string());
        providers::check_key(family, key, &base_url, KEY_CHECK_TIMEOUT).await
    }
}
