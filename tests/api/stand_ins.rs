//! Stand-in models: the offline engine's answers, with every request recorded, an optional gate
//! that holds a call until the test lets it go, and optional failures. In-process (a `Models`
//! port) and over HTTP in OpenAI's wire format (for the `booktr` binary).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::routing::post;
use booktr_core::ports::Models;
use booktr_translate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};
use booktr_translate::offline::OfflineEngine;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

/// What a stand-in model was asked, in order (the prompt's user part).
#[derive(Clone, Default)]
pub struct Calls(Arc<Mutex<Vec<String>>>);

impl Calls {
    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Requests of the translate pass whose text contains `marker`.
    pub fn translate_calls_with(&self, marker: &str) -> usize {
        self.all()
            .iter()
            .filter(|u| u.starts_with("TASK: translate") && u.contains(marker))
            .count()
    }

    fn record(&self, user: &str) {
        self.0.lock().unwrap().push(user.to_string());
    }
}

/// Answers like the offline engine and records every call.
#[derive(Clone, Default)]
pub struct StandIn {
    pub calls: Calls,
    /// Requests containing this text fail (retryably, with no wait) while it is set.
    pub fail_when: Arc<Mutex<Option<String>>>,
    /// When set, each call first takes a permit: the test holds calls by giving none.
    pub gate: Option<Arc<Semaphore>>,
    /// Told (a permit added) as each call starts.
    pub entered: Option<Arc<Semaphore>>,
}

impl StandIn {
    pub fn failing_on(self, marker: &str) -> Self {
        *self.fail_when.lock().unwrap() = Some(marker.to_string());
        self
    }

    pub fn heal(&self) {
        *self.fail_when.lock().unwrap() = None;
    }
}

#[async_trait]
impl ChatModel for StandIn {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        if let Some(entered) = &self.entered {
            entered.add_permits(1);
        }
        if let Some(gate) = &self.gate {
            gate.acquire().await.unwrap().forget();
        }
        self.calls.record(&request.user);
        let failing = self.fail_when.lock().unwrap().clone();
        if failing.is_some_and(|m| request.user.contains(&m)) {
            return Err(ChatError::Retryable {
                message: "stand-in overloaded".into(),
                retry_after: Some(Duration::ZERO),
            });
        }
        OfflineEngine.complete(request).await
    }

    fn name(&self) -> &str {
        "stand-in"
    }
}

impl Models for StandIn {
    fn model(
        &self,
        _model: &str,
        _user_key: Option<String>,
    ) -> Result<Arc<dyn ChatModel>, ChatError> {
        Ok(Arc::new(self.clone()))
    }
}

/// An OpenAI Chat Completions stand-in on a local port that answers like the offline engine
/// after `delay`; returns its base URL (for `OPENAI_BASE_URL`) and the calls it saw. It lives in
/// the test process, so it outlives a `booktr` server the test kills.
pub async fn openai_stand_in(delay: Duration) -> (String, Calls) {
    let calls = Calls::default();
    let seen = calls.clone();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |axum::Json(body): axum::Json<Value>| {
            let seen = seen.clone();
            async move {
                let message = |role: &str| {
                    body["messages"]
                        .as_array()
                        .and_then(|m| m.iter().find(|m| m["role"] == role))
                        .and_then(|m| m["content"].as_str())
                        .unwrap_or_default()
                        .to_string()
                };
                let request = ChatRequest {
                    system: message("system"),
                    user: message("user"),
                    max_output_tokens: 4000,
                };
                seen.record(&request.user);
                tokio::time::sleep(delay).await;
                let answer = OfflineEngine.complete(request).await.unwrap();
                axum::Json(json!({
                    "id": "chatcmpl-standin",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": answer.text}}],
                    "usage": {"prompt_tokens": answer.input_tokens,
                              "completion_tokens": answer.output_tokens,
                              "total_tokens": answer.input_tokens + answer.output_tokens}
                }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(std::future::IntoFuture::into_future(axum::serve(
        listener, app,
    )));
    (url, calls)
}
