//! A model request tried again while the provider says it is busy.

use std::time::Duration;

use tracing::warn;

use crate::model::{ChatError, ChatModel};

/// A random wait between nothing and `most`: requests refused together come back spread out.
pub(crate) fn jitter(most: Duration) -> Duration {
    most.mul_f64(rand::random::<f64>())
}

pub(crate) async fn complete_with_retries(
    model: &dyn ChatModel,
    request: crate::model::ChatRequest,
    max_retries: u32,
) -> Result<crate::model::ChatResponse, ChatError> {
    let mut attempt = 0;
    loop {
        match model.complete(request.clone()).await {
            Err(ChatError::Retryable {
                message,
                retry_after,
            }) if attempt < max_retries => {
                attempt += 1;
                // Jittered: the requests a provider failed together (an outage, a restart) do
                // not all come back at the same instant. Never sooner than the provider asked.
                let wait = match retry_after {
                    Some(asked) => asked + jitter(asked / 4),
                    None => {
                        let backoff = Duration::from_millis(500 * 2u64.pow(attempt));
                        backoff / 2 + jitter(backoff / 2)
                    }
                }
                .min(Duration::from_secs(60));
                warn!(%message, attempt, wait_ms = wait.as_millis() as u64, "model busy; retrying");
                tokio::time::sleep(wait).await;
            }
            other => return other,
        }
    }
}
