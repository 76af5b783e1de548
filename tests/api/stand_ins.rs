//! Stand-in models: the offline engine's answers, with every request recorded, an optional gate
//! that holds a call until the test lets it go, and optional failures. In-process (a `Models`
//! port) and over HTTP in OpenAI's wire format (for the `booktr` binary); and the three
//! providers' model lists, which check keys, for the developer settings.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use booktr_core::ports::{KeyCheckError, Models};
use booktr_translate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};
use booktr_translate::offline::{pseudo, OfflineEngine};
use booktr_translate::providers::Family;
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
    /// Chapter translate-pass calls whose blocks contain `marker` (not the term list's).
    pub fn translate_calls_with(&self, marker: &str) -> usize {
        self.all()
            .iter()
            .filter(|u| u.starts_with("TASK: translate") && !is_term_list(u) && u.contains(marker))
            .count()
    }

    fn record(&self, user: &str) {
        self.0.lock().unwrap().push(user.to_string());
    }
}

/// Whether a request is the book's term list (the term pass), not a chapter's.
pub fn is_term_list(user: &str) -> bool {
    user.contains("\nCONTEXT:\n")
}

/// Answers like the offline engine and records every call.
#[derive(Clone, Default)]
pub struct StandIn {
    pub calls: Calls,
    /// Requests containing this text fail (retryably, with no wait) while it is set.
    pub fail_when: Arc<Mutex<Option<String>>>,
    /// When set, each chapter call first takes a permit: the test holds calls by giving none.
    /// The book's term-list requests are never held.
    pub gate: Option<Arc<Semaphore>>,
    /// Told (a permit added) as each chapter call starts.
    pub entered: Option<Arc<Semaphore>>,
    /// Names this stand-in renders differently in every chapter call (a model left to choose,
    /// call after call), unless the prompt's glossary gives their translation.
    pub drifting: Vec<String>,
    pub drift: Arc<AtomicU32>,
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
        if !is_term_list(&request.user) {
            if let Some(entered) = &self.entered {
                entered.add_permits(1);
            }
            if let Some(gate) = &self.gate {
                gate.acquire().await.unwrap().forget();
            }
        }
        self.calls.record(&request.user);
        let failing = self.fail_when.lock().unwrap().clone();
        if failing.is_some_and(|m| request.user.contains(&m)) {
            return Err(ChatError::Retryable {
                message: "stand-in overloaded".into(),
                retry_after: Some(Duration::ZERO),
            });
        }
        let glossary = request
            .user
            .split("GLOSSARY:\n")
            .nth(1)
            .map(|rest| {
                rest.split("BLOCKS:\n")
                    .next()
                    .unwrap_or_default()
                    .to_string()
            })
            .unwrap_or_default();
        let drift = self.drift.fetch_add(1, Ordering::Relaxed);
        let mut response = OfflineEngine.complete(request.clone()).await?;
        if !is_term_list(&request.user) {
            for name in &self.drifting {
                if !glossary.contains(&format!("\"{name}\"")) {
                    let usual = pseudo(name, &[]);
                    response.text = response.text.replace(&usual, &format!("{usual}{drift}"));
                }
            }
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "stand-in"
    }
}

#[async_trait]
impl Models for StandIn {
    fn model(
        &self,
        _model: &str,
        _user_key: Option<String>,
    ) -> Result<Arc<dyn ChatModel>, ChatError> {
        Ok(Arc::new(self.clone()))
    }

    /// Takes every key: these tests are about translation, not about providers' answers.
    async fn check_key(&self, _family: Family, _key: &str) -> Result<(), KeyCheckError> {
        Ok(())
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
                let request = chat_request(&body);
                seen.record(&request.user);
                tokio::time::sleep(delay).await;
                axum::Json(chat_completion(&body, request).await)
            }
        }),
    );
    let url = format!("{}/v1", serve(app).await);
    (url, calls)
}

/// What a rate-limiting stand-in saw of one request: how many were in flight (this one
/// included) when it arrived, and whether any 429 had been answered before it.
#[derive(Debug, Clone, Copy)]
pub struct Arrival {
    pub in_flight: usize,
    pub limited_before: usize,
}

/// An OpenAI stand-in that answers every other request 429 with `Retry-After: 1` from its
/// `calm`-th request to its `calm + limited`-th, and like the offline engine after `delay`
/// otherwise; returns its base URL and what it saw of each request.
pub async fn rate_limiting_openai_stand_in(
    calm: usize,
    limited: usize,
    delay: Duration,
) -> (String, Arc<Mutex<Vec<Arrival>>>) {
    #[derive(Default)]
    struct Seen {
        arrivals: Vec<Arrival>,
        in_flight: usize,
        answered_429: usize,
    }
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let arrivals: Arc<Mutex<Vec<Arrival>>> = Arc::default();
    let (state, shown) = (seen.clone(), arrivals.clone());
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |axum::Json(body): axum::Json<Value>| {
            let (state, shown) = (state.clone(), shown.clone());
            async move {
                let n = {
                    let mut s = state.lock().unwrap();
                    s.in_flight += 1;
                    let arrival = Arrival {
                        in_flight: s.in_flight,
                        limited_before: s.answered_429,
                    };
                    s.arrivals.push(arrival);
                    shown.lock().unwrap().push(arrival);
                    s.arrivals.len() - 1
                };
                let refuse = (calm..calm + limited).contains(&n) && n % 2 == 1;
                let response = if refuse {
                    state.lock().unwrap().answered_429 += 1;
                    (
                        StatusCode::TOO_MANY_REQUESTS,
                        [("retry-after", "1")],
                        axum::Json(json!({"error": {"message": "Rate limit reached"}})),
                    )
                        .into_response()
                } else {
                    tokio::time::sleep(delay).await;
                    axum::Json(chat_completion(&body, chat_request(&body)).await).into_response()
                };
                state.lock().unwrap().in_flight -= 1;
                response
            }
        }),
    );
    (format!("{}/v1", serve(app).await), arrivals)
}

/// The system and user messages of an OpenAI Chat Completions request.
fn chat_request(body: &Value) -> ChatRequest {
    let message = |role: &str| {
        body["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["role"] == role))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    ChatRequest {
        system: message("system"),
        user: message("user"),
        max_output_tokens: 4000,
    }
}

/// The offline engine's answer in OpenAI's Chat Completions format.
async fn chat_completion(body: &Value, request: ChatRequest) -> Value {
    let answer = OfflineEngine.complete(request).await.unwrap();
    json!({
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": answer.text}}],
        "usage": {"prompt_tokens": answer.input_tokens,
                  "completion_tokens": answer.output_tokens,
                  "total_tokens": answer.input_tokens + answer.output_tokens}
    })
}

/// Serves `app` on a free local port for as long as the test process lives; returns its URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(std::future::IntoFuture::into_future(axum::serve(
        listener, app,
    )));
    url
}

/// The three providers on one local port, each under its own base URL: their model lists
/// (`GET`, authenticated as each provider does) answer 200 to the keys in `accepted` and 401 to
/// any other; OpenAI's Chat Completions answers like the offline engine. Records the credential
/// of every request.
#[derive(Clone)]
pub struct Providers {
    /// Base URLs, as `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL` and `GEMINI_BASE_URL` take them.
    pub openai: String,
    pub anthropic: String,
    pub gemini: String,
    /// (path, credential) of every model-list request.
    pub key_checks: Arc<Mutex<Vec<(String, String)>>>,
    /// The `Authorization` header of every chat request.
    pub chat_credentials: Arc<Mutex<Vec<String>>>,
}

impl Providers {
    pub async fn start(accepted: &[&str]) -> Providers {
        let accepted: Arc<Vec<String>> = Arc::new(accepted.iter().map(|k| k.to_string()).collect());
        let key_checks = Arc::new(Mutex::new(Vec::new()));
        let chat_credentials = Arc::new(Mutex::new(Vec::new()));
        let models = |header: &'static str| {
            let accepted = accepted.clone();
            let key_checks = key_checks.clone();
            get(move |uri: Uri, headers: HeaderMap| async move {
                let credential = headers
                    .get(header)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                let key = credential.strip_prefix("Bearer ").unwrap_or(credential);
                key_checks
                    .lock()
                    .unwrap()
                    .push((uri.path().to_string(), key.to_string()));
                if accepted.iter().any(|a| a == key) {
                    (
                        StatusCode::OK,
                        axum::Json(json!({"object": "list", "data": []})),
                    )
                } else {
                    (
                        StatusCode::UNAUTHORIZED,
                        axum::Json(json!({"error": {"message": "Incorrect API key provided"}})),
                    )
                }
            })
        };
        let chats = chat_credentials.clone();
        let app = axum::Router::new()
            .route("/openai/v1/models", models("authorization"))
            .route("/anthropic/v1/models", models("x-api-key"))
            .route("/gemini/v1beta/models", models("x-goog-api-key"))
            .route(
                "/openai/v1/chat/completions",
                post(
                    move |headers: HeaderMap, axum::Json(body): axum::Json<Value>| async move {
                        let credential = headers
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default()
                            .to_string();
                        chats.lock().unwrap().push(credential);
                        axum::Json(chat_completion(&body, chat_request(&body)).await)
                    },
                ),
            );
        let url = serve(app).await;
        Providers {
            openai: format!("{url}/openai/v1"),
            anthropic: format!("{url}/anthropic"),
            gemini: format!("{url}/gemini"),
            key_checks,
            chat_credentials,
        }
    }

    /// The variables that point the service's three families here.
    pub fn vars(&self) -> Vec<(String, String)> {
        vec![
            ("OPENAI_BASE_URL".into(), self.openai.clone()),
            ("ANTHROPIC_BASE_URL".into(), self.anthropic.clone()),
            ("GEMINI_BASE_URL".into(), self.gemini.clone()),
        ]
    }
}

/// One request a failing stand-in saw: the prompt's user part, when it arrived and was
/// answered (None: its client went away first), and its status (200 is a request the provider
/// would bill, answered or not).
#[derive(Debug, Clone)]
pub struct Seen {
    pub user: String,
    pub arrived: std::time::Instant,
    pub answered: Option<std::time::Instant>,
    pub status: u16,
}

/// What a failing stand-in saw, and how many requests it is answering right now.
#[derive(Default)]
pub struct FailingLog {
    pub requests: Vec<Seen>,
    pub in_flight: usize,
}

/// An OpenAI stand-in that fails 3 requests in 10 (two with a 500, one with a 429 and
/// `Retry-After: 0`) and answers the others like the offline engine after `delay`.
pub async fn failing_openai_stand_in(delay: Duration) -> (String, Arc<Mutex<FailingLog>>) {
    let log: Arc<Mutex<FailingLog>> = Arc::default();
    let state = log.clone();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |axum::Json(body): axum::Json<Value>| {
            let state = state.clone();
            async move {
                let request = chat_request(&body);
                let n = {
                    let mut log = state.lock().unwrap();
                    let n = log.requests.len();
                    log.in_flight += 1;
                    log.requests.push(Seen {
                        user: request.user.clone(),
                        arrived: std::time::Instant::now(),
                        answered: None,
                        status: match n % 10 {
                            1 | 4 => 500,
                            7 => 429,
                            _ => 200,
                        },
                    });
                    n
                };
                // Counted out even when the client goes away during the wait (the future is
                // dropped then).
                let _in_flight = InFlight(state.clone());
                tokio::time::sleep(delay).await;
                let status = state.lock().unwrap().requests[n].status;
                let response = match status {
                    500 => (
                        StatusCode::INTERNAL_SERVER_ERROR,
                        axum::Json(json!({"error": {"message": "The server had an error"}})),
                    )
                        .into_response(),
                    429 => (
                        StatusCode::TOO_MANY_REQUESTS,
                        [("retry-after", "0")],
                        axum::Json(json!({"error": {"message": "Rate limit reached"}})),
                    )
                        .into_response(),
                    _ => axum::Json(chat_completion(&body, request).await).into_response(),
                };
                state.lock().unwrap().requests[n].answered = Some(std::time::Instant::now());
                response
            }
        }),
    );
    (format!("{}/v1", serve(app).await), log)
}

/// Takes a request off the failing stand-in's in-flight count when dropped.
struct InFlight(Arc<Mutex<FailingLog>>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut log) = self.0.lock() {
            log.in_flight -= 1;
        }
    }
}
