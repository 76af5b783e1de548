//! The `ChatModel` port: one request, one answer, with token usage. Implemented by the provider
//! clients (OpenAI, Anthropic, Gemini) and the offline engine in `booktr-translate`, whose
//! pipeline speaks to every model through it.

use std::time::Duration;

use async_trait::async_trait;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatRequest {
    pub system: String,
    pub user: String,
    /// The most tokens the answer may have.
    pub max_output_tokens: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatResponse {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The answer stopped at `max_output_tokens` (OpenAI's `finish_reason: length`,
    /// Anthropic's `stop_reason: max_tokens`, Gemini's `finishReason: MAX_TOKENS`): its last
    /// block is cut short and is never kept.
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChatError {
    /// Worth trying again (rate limit, overload, timeout, 5xx), after `retry_after` if given.
    #[error("temporary model failure: {message}")]
    Retryable {
        message: String,
        retry_after: Option<Duration>,
    },
    /// Trying again will not help (bad key, unknown model, refused request).
    #[error("model failure: {0}")]
    Fatal(String),
}

#[async_trait]
pub trait ChatModel: Send + Sync {
    /// Sends one request. MUST report token usage as the provider counts it (or an estimate,
    /// flagged in `name`, where the provider does not). MUST classify failures as retryable or
    /// not; it MAY retry internally, but then returns only the final outcome.
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError>;

    /// The model identifier, as shown to users and in usage records.
    fn name(&self) -> &str;

    /// Whether the answers are written in a real language, so that language identification
    /// can judge them. Only the offline engine's pseudo-translation (accented source text,
    /// in no language at all) says no.
    fn writes_language(&self) -> bool {
        true
    }

    /// Whether it runs on a server the operator chose rather than its provider's own (a local
    /// model behind an OpenAI-compatible API, a proxy): the model behind it is then unknown,
    /// and the pipeline asks it as a small model first (`booktr_translate::profile`).
    fn on_operators_server(&self) -> bool {
        false
    }
}

/// A model lent (`&M`, to a wrapper that records or spoils its answers), boxed or shared is the
/// model.
macro_rules! forward_chat_model {
    ($($holder:ty),+) => {$(
        #[async_trait]
        impl<M: ChatModel + ?Sized> ChatModel for $holder {
            async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
                (**self).complete(request).await
            }

            fn name(&self) -> &str {
                (**self).name()
            }

            fn writes_language(&self) -> bool {
                (**self).writes_language()
            }

            fn on_operators_server(&self) -> bool {
                (**self).on_operators_server()
            }
        }
    )+};
}

forward_chat_model!(&M, Box<M>, std::sync::Arc<M>);
