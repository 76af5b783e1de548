//! Clients for the three provider families, each speaking its real wire format over reqwest:
//! OpenAI Chat Completions, Anthropic Messages, Google Gemini generateContent. Base URLs are
//! configurable (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `GEMINI_BASE_URL`) so tests use local
//! stand-ins and users can point at any compatible server.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::budget::{KeyBudget, RateLimits};
use crate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};

pub use booktr_ports::models::{Family, KeyCheckError};

/// The provider's own server, where a family's calls go unless its base URL is configured.
pub fn default_base_url(family: Family) -> &'static str {
    match family {
        Family::OpenAi => "https://api.openai.com/v1",
        Family::Anthropic => "https://api.anthropic.com",
        Family::Gemini => "https://generativelanguage.googleapis.com",
    }
}

/// The environment variables for a family's server key and base URL.
pub fn env_names(family: Family) -> (&'static str, &'static str) {
    match family {
        Family::OpenAi => ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
        Family::Anthropic => ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
        Family::Gemini => ("GEMINI_API_KEY", "GEMINI_BASE_URL"),
    }
}

/// The six models of the spec: (the API's name, family, the provider's model id).
pub const MODELS: &[(&str, Family, &str)] = &[
    ("gpt-4o-mini", Family::OpenAi, "gpt-4o-mini"),
    ("gpt-4o", Family::OpenAi, "gpt-4o"),
    (
        "claude-3-haiku",
        Family::Anthropic,
        "claude-3-haiku-20240307",
    ),
    (
        "claude-sonnet-4-20250514",
        Family::Anthropic,
        "claude-sonnet-4-20250514",
    ),
    ("gemini-2.0-flash", Family::Gemini, "gemini-2.0-flash"),
    ("gemini-1.5-pro", Family::Gemini, "gemini-1.5-pro"),
];

pub fn lookup(model: &str) -> Option<(Family, &'static str)> {
    MODELS
        .iter()
        .find(|(name, _, _)| *name == model)
        .map(|(_, family, id)| (*family, *id))
}

/// The provider's own key shape, checked only when `base_url` is the provider's own server:
/// behind a compatible server (`OPENAI_BASE_URL` pointing at a local model, a gateway ...) keys
/// look like anything, and that server's answer is the only judge. OpenAI keys start `sk-`
/// (`sk-proj-`, `sk-svcacct-` ...) and are not Anthropic's `sk-ant-`; Gemini keys start `AIza`.
/// Length and characters are checked by the caller for every server.
pub fn check_shape(family: Family, key: &str, base_url: &str) -> Result<(), KeyCheckError> {
    let own_server =
        base_url.trim_end_matches('/') == default_base_url(family).trim_end_matches('/');
    if !own_server {
        return Ok(());
    }
    let refused = |why: &str| Err(KeyCheckError::Refused(Some(why.to_string())));
    match family {
        Family::OpenAi if key.starts_with("sk-ant-") => {
            refused("this is an Anthropic key (sk-ant-...), not an OpenAI one")
        }
        Family::OpenAi if !key.starts_with("sk-") => refused("OpenAI keys start with 'sk-'"),
        Family::Anthropic if !key.starts_with("sk-ant-") => {
            refused("Anthropic keys start with 'sk-ant-'")
        }
        Family::Gemini if !key.starts_with("AIza") => refused("Gemini keys start with 'AIza'"),
        _ => Ok(()),
    }
}

/// Confirms a key with one cheap authenticated call: the provider's model list at `base_url`
/// (the same base the chat calls use: `{base}/models` for OpenAI, whose base carries `/v1`;
/// `{base}/v1/models` for Anthropic; `{base}/v1beta/models` for Gemini). Redirects are not
/// followed, so the key is never sent to another host.
pub async fn check_key(
    family: Family,
    key: &str,
    base_url: &str,
    timeout: Duration,
) -> Result<(), KeyCheckError> {
    check_shape(family, key, base_url)?;
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| KeyCheckError::Unreachable(format!("HTTP client: {e}")))?;
    let base = base_url.trim_end_matches('/');
    let request = match family {
        Family::OpenAi => client.get(format!("{base}/models")).bearer_auth(key),
        Family::Anthropic => client
            .get(format!("{base}/v1/models"))
            .header("x-api-key", key)
            .header("anthropic-version", "2023-06-01"),
        Family::Gemini => client
            .get(format!("{base}/v1beta/models"))
            .header("x-goog-api-key", key),
    };
    // The error's text names the URL, never a header, so it is safe to return and log.
    let response = request.send().await.map_err(|e| {
        let why = if e.is_timeout() {
            "no answer in time"
        } else if e.is_builder() {
            "the key cannot be sent in an HTTP header"
        } else {
            "could not connect"
        };
        KeyCheckError::Unreachable(format!("{} at {base}: {why}", family.label()))
    })?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    if matches!(status.as_u16(), 401 | 403) {
        return Err(KeyCheckError::Refused(None));
    }
    if family == Family::Gemini && status.as_u16() == 400 {
        // Gemini answers a bad key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
        let body = response.text().await.unwrap_or_default();
        if body.contains("API_KEY_INVALID") || body.contains("API key not valid") {
            return Err(KeyCheckError::Refused(None));
        }
    }
    Err(KeyCheckError::Unreachable(format!(
        "{} at {base} answered {}",
        family.label(),
        status.as_u16()
    )))
}

/// A provider model reached over HTTP.
pub struct HttpModel {
    family: Family,
    /// The API's model name (what users chose).
    name: String,
    /// The provider's model id.
    model_id: String,
    base_url: String,
    api_key: String,
    client: reqwest::Client,
    /// Requests in flight on this key, process-wide.
    budget: Arc<KeyBudget>,
}

/// How long one request keeps waiting out the provider's rate limits before it reports one
/// (then the pipeline's retries and the job's take over). Rate limits are the provider asking
/// for patience, not a failure of the chapter.
const RATE_LIMIT_PATIENCE: Duration = Duration::from_secs(300);
/// The wait after a 429 that names none.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// Why one request failed.
enum Failure {
    RateLimited {
        message: String,
        retry_after: Option<Duration>,
        limits: RateLimits,
    },
    Other(ChatError),
}

impl From<ChatError> for Failure {
    fn from(e: ChatError) -> Self {
        Failure::Other(e)
    }
}

impl HttpModel {
    /// `model` is one of [`MODELS`]' names; `base_url` None means the provider's own.
    pub fn new(
        model: &str,
        api_key: String,
        base_url: Option<String>,
        timeout: Duration,
    ) -> Result<HttpModel, ChatError> {
        let (family, model_id) =
            lookup(model).ok_or_else(|| ChatError::Fatal(format!("unknown model '{model}'")))?;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| ChatError::Fatal(format!("HTTP client: {e}")))?;
        let base_url = base_url
            .unwrap_or_else(|| default_base_url(family).to_string())
            .trim_end_matches('/')
            .to_string();
        Ok(HttpModel {
            family,
            name: model.to_string(),
            model_id: model_id.to_string(),
            budget: KeyBudget::for_key(&base_url, &api_key),
            base_url,
            api_key,
            client,
        })
    }

    fn request(&self, request: &ChatRequest) -> reqwest::RequestBuilder {
        match self.family {
            Family::OpenAi => self
                .client
                .post(format!("{}/chat/completions", self.base_url))
                .bearer_auth(&self.api_key)
                .json(&json!({
                    "model": self.model_id,
                    "messages": [
                        {"role": "system", "content": request.system},
                        {"role": "user", "content": request.user},
                    ],
                    "max_tokens": request.max_output_tokens,
                    "temperature": 0.3,
                })),
            Family::Anthropic => self
                .client
                .post(format!("{}/v1/messages", self.base_url))
                .header("x-api-key", &self.api_key)
                .header("anthropic-version", "2023-06-01")
                .json(&json!({
                    "model": self.model_id,
                    "max_tokens": request.max_output_tokens,
                    "system": request.system,
                    "messages": [{"role": "user", "content": request.user}],
                    "temperature": 0.3,
                })),
            Family::Gemini => self
                .client
                .post(format!("{}/v1beta/models/{}:generateContent", self.base_url, self.model_id))
                .header("x-goog-api-key", &self.api_key)
                .json(&json!({
                    "systemInstruction": {"parts": [{"text": request.system}]},
                    "contents": [{"role": "user", "parts": [{"text": request.user}]}],
                    "generationConfig": {"maxOutputTokens": request.max_output_tokens, "temperature": 0.3},
                })),
        }
    }

    fn parse(&self, body: &Value) -> Option<ChatResponse> {
        let tokens = |v: &Value| v.as_u64().unwrap_or(0);
        match self.family {
            Family::OpenAi => Some(ChatResponse {
                text: body["choices"][0]["message"]["content"]
                    .as_str()?
                    .to_string(),
                input_tokens: tokens(&body["usage"]["prompt_tokens"]),
                output_tokens: tokens(&body["usage"]["completion_tokens"]),
                truncated: body["choices"][0]["finish_reason"] == "length",
            }),
            Family::Anthropic => Some(ChatResponse {
                text: body["content"]
                    .as_array()?
                    .iter()
                    .filter(|part| part["type"] == "text")
                    .filter_map(|part| part["text"].as_str())
                    .collect(),
                input_tokens: tokens(&body["usage"]["input_tokens"]),
                output_tokens: tokens(&body["usage"]["output_tokens"]),
                truncated: body["stop_reason"] == "max_tokens",
            }),
            Family::Gemini => Some(ChatResponse {
                text: body["candidates"][0]["content"]["parts"]
                    .as_array()?
                    .iter()
                    .filter_map(|part| part["text"].as_str())
                    .collect(),
                input_tokens: tokens(&body["usageMetadata"]["promptTokenCount"]),
                output_tokens: tokens(&body["usageMetadata"]["candidatesTokenCount"]),
                truncated: body["candidates"][0]["finishReason"] == "MAX_TOKENS",
            }),
        }
    }
}

/// The provider's own error message, wherever its format puts it.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    parsed
        .as_ref()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
                .or_else(|| v["message"].as_str())
        })
        .map(str::to_string)
        .unwrap_or_else(|| body.chars().take(300).collect())
}

#[async_trait]
impl ChatModel for HttpModel {
    /// Sends the request within the key's budget; waits out rate limits (up to
    /// [`RATE_LIMIT_PATIENCE`]) rather than reporting them. Each refused request waits its own
    /// `Retry-After` (jittered, so a burst does not come back as one) on the place it holds;
    /// the budget decides whether the key sends fewer. A server error or a timeout is reported
    /// with when to try again while the key answers most requests (see [`KeyBudget`]).
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let started = tokio::time::Instant::now();
        let mut permit = self.budget.acquire().await;
        loop {
            match self.send(&request).await {
                Ok((response, limits)) => {
                    permit.answered(&limits, response.input_tokens + response.output_tokens);
                    return Ok(response);
                }
                Err(Failure::RateLimited {
                    message,
                    retry_after,
                    limits,
                }) => {
                    permit.rate_limited(&limits);
                    if started.elapsed() >= RATE_LIMIT_PATIENCE {
                        return Err(ChatError::Retryable {
                            message,
                            retry_after,
                        });
                    }
                    let wait = retry_after.unwrap_or(DEFAULT_RETRY_AFTER);
                    tokio::time::sleep(wait + crate::retry::jitter(wait / 4)).await;
                    permit.again().await;
                }
                Err(Failure::Other(ChatError::Retryable {
                    message,
                    retry_after,
                })) => {
                    let soon = permit.failed();
                    return Err(ChatError::Retryable {
                        message,
                        retry_after: retry_after.or(soon),
                    });
                }
                // A refusal (a bad key, an unknown model) says nothing about the key's health.
                Err(Failure::Other(e)) => return Err(e),
            }
        }
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn on_operators_server(&self) -> bool {
        self.base_url != default_base_url(self.family)
    }
}

/// Requests sent to model providers (the `metrics` facade; see `booktr_core::metrics`). No
/// label: the error-rate alarm divides by it (tokens and cost are counted per model).
pub const MODEL_REQUESTS: &str = "model_requests";
/// Failed provider requests, by class: `rate_limited` (429), `timeout` (no answer in time, 408,
/// 504), `refused` (any other 4xx: a bad key, an unknown model, a refused request) and
/// `unavailable` (5xx, overload, an unreadable answer).
pub const MODEL_ERRORS: &str = "model_errors";

impl HttpModel {
    async fn send(&self, request: &ChatRequest) -> Result<(ChatResponse, RateLimits), Failure> {
        metrics::counter!(MODEL_REQUESTS).increment(1);
        let mut timed_out = false;
        let result = self.exchange(request, &mut timed_out).await;
        if let Err(failure) = &result {
            let class = match failure {
                Failure::RateLimited { .. } => "rate_limited",
                _ if timed_out => "timeout",
                Failure::Other(ChatError::Fatal(_)) => "refused",
                Failure::Other(ChatError::Retryable { .. }) => "unavailable",
            };
            metrics::counter!(MODEL_ERRORS, "class" => class).increment(1);
        }
        result
    }

    async fn exchange(
        &self,
        request: &ChatRequest,
        timed_out: &mut bool,
    ) -> Result<(ChatResponse, RateLimits), Failure> {
        let response = self.request(request).send().await.map_err(|e| {
            *timed_out = e.is_timeout();
            ChatError::Retryable {
                message: format!("{} unreachable: {e}", self.name),
                retry_after: None,
            }
        })?;
        let status = response.status();
        *timed_out = matches!(status.as_u16(), 408 | 504);
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let limits = rate_limits(self.family, response.headers(), chrono::Utc::now());
        let body = response.text().await.map_err(|e| {
            *timed_out = e.is_timeout();
            ChatError::Retryable {
                message: format!("{}: reading the answer failed: {e}", self.name),
                retry_after: None,
            }
        })?;
        if !status.is_success() {
            let message = format!(
                "{} answered {}: {}",
                self.name,
                status.as_u16(),
                error_message(&body)
            );
            if status.as_u16() == 429 {
                return Err(Failure::RateLimited {
                    message,
                    retry_after,
                    limits,
                });
            }
            // Overload (Anthropic's 529), timeouts and server errors pass; the rest will not.
            let retryable = status.as_u16() == 408 || status.is_server_error();
            return Err(Failure::Other(if retryable {
                ChatError::Retryable {
                    message,
                    retry_after,
                }
            } else {
                ChatError::Fatal(message)
            }));
        }
        let value: Value = serde_json::from_str(&body).map_err(|e| ChatError::Retryable {
            message: format!("{}: unreadable answer: {e}", self.name),
            retry_after: None,
        })?;
        let response = self.parse(&value).ok_or_else(|| {
            Failure::Other(ChatError::Retryable {
                message: format!("{}: the answer has no text", self.name),
                retry_after: None,
            })
        })?;
        Ok((response, limits))
    }
}

/// What the provider's headers say is left of the key's limits: OpenAI's
/// `x-ratelimit-{remaining,reset}-{requests,tokens}` (resets as durations, `6m0s`, `20ms`),
/// Anthropic's `anthropic-ratelimit-{requests,tokens}-{remaining,reset}` (resets as RFC 3339
/// times). Gemini sends none.
fn rate_limits(
    family: Family,
    headers: &reqwest::header::HeaderMap,
    now: chrono::DateTime<chrono::Utc>,
) -> RateLimits {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let number = |name: &str| text(name).and_then(|v| v.parse::<u64>().ok());
    match family {
        Family::OpenAi => RateLimits {
            requests_remaining: number("x-ratelimit-remaining-requests"),
            requests_reset: text("x-ratelimit-reset-requests").and_then(go_duration),
            tokens_remaining: number("x-ratelimit-remaining-tokens"),
            tokens_reset: text("x-ratelimit-reset-tokens").and_then(go_duration),
        },
        Family::Anthropic => {
            let reset = |name: &str| {
                let at = chrono::DateTime::parse_from_rfc3339(text(name)?).ok()?;
                (at.with_timezone(&chrono::Utc) - now).to_std().ok()
            };
            RateLimits {
                requests_remaining: number("anthropic-ratelimit-requests-remaining"),
                requests_reset: reset("anthropic-ratelimit-requests-reset"),
                tokens_remaining: number("anthropic-ratelimit-tokens-remaining"),
                tokens_reset: reset("anthropic-ratelimit-tokens-reset"),
            }
        }
        Family::Gemini => RateLimits::default(),
    }
}

/// A duration as OpenAI writes it (Go's format): `1s`, `6m0s`, `1h2m3.5s`, `20ms`.
fn go_duration(text: &str) -> Option<Duration> {
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            "us" | "µs" => 0.000_001,
            "ns" => 0.000_000_001,
            _ => return None,
        };
        total += value * seconds;
        rest = &rest[unit_len..];
    }
    Duration::try_from_secs_f64(total).ok()
}

/// The model for a run: the provider's when a key for its family is configured (the user's own,
/// else the server's), else the offline engine. `env` looks up environment variables.
pub fn choose_model(
    model: &str,
    user_key: Option<String>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Box<dyn ChatModel>, ChatError> {
    let (family, _) =
        lookup(model).ok_or_else(|| ChatError::Fatal(format!("unknown model '{model}'")))?;
    let (key_var, url_var) = env_names(family);
    match user_key
        .or_else(|| env(key_var))
        .filter(|k| !k.trim().is_empty())
    {
        Some(key) => Ok(Box::new(HttpModel::new(
            model,
            key,
            env(url_var),
            model_timeout(&env),
        )?)),
        None => Ok(Box::new(crate::offline::OfflineEngine)),
    }
}

/// How long one model request may take: `BOOKTR_MODEL_TIMEOUT_SECS` (1 to 3600), else 180 s,
/// which a hosted model's longest answer fits. A small model on a CPU writes a chunk's answer
/// in minutes, and a local server answers one request at a time while the others queue.
fn model_timeout(env: &impl Fn(&str) -> Option<String>) -> Duration {
    env("BOOKTR_MODEL_TIMEOUT_SECS")
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|s| (1..=3600).contains(s))
        .map_or(Duration::from_secs(180), Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::extract::{Request, State};
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;

    use super::*;

    #[test]
    fn without_a_key_the_offline_engine_is_used() {
        let model = choose_model("gpt-4o-mini", None, |_| None).unwrap();
        assert_eq!(model.name(), crate::offline::NAME);
        let model = choose_model("claude-3-haiku", None, |v| {
            (v == "ANTHROPIC_API_KEY").then(|| "sk".into())
        })
        .unwrap();
        assert_eq!(model.name(), "claude-3-haiku");
        let model = choose_model("gemini-2.0-flash", Some("user-key".into()), |_| None).unwrap();
        assert_eq!(
            model.name(),
            "gemini-2.0-flash",
            "the user's own key counts"
        );
        assert!(choose_model("gpt-9", None, |_| None).is_err());
    }

    #[derive(Debug, Clone)]
    struct Seen {
        path: String,
        headers: HeaderMap,
        body: Value,
    }

    /// Status, Retry-After seconds, JSON body.
    type Canned = (u16, Option<&'static str>, Value);

    #[derive(Clone)]
    struct StandIn {
        seen: Arc<Mutex<Vec<Seen>>>,
        answers: Arc<Mutex<Vec<Canned>>>,
    }

    /// A local server that records each request and gives the next canned answer.
    async fn stand_in(answers: Vec<Canned>) -> (String, StandIn) {
        let state = StandIn {
            seen: Arc::default(),
            answers: Arc::new(Mutex::new(answers)),
        };
        async fn handle(State(state): State<StandIn>, request: Request) -> impl IntoResponse {
            let path = request.uri().path().to_string();
            let headers = request.headers().clone();
            let bytes = axum::body::to_bytes(request.into_body(), 1 << 20)
                .await
                .unwrap_or_default();
            let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            state.seen.lock().unwrap().push(Seen {
                path,
                headers,
                body,
            });
            let (status, retry_after, answer) = state.answers.lock().unwrap().remove(0);
            let mut response =
                (StatusCode::from_u16(status).unwrap(), axum::Json(answer)).into_response();
            if let Some(seconds) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", seconds.parse().unwrap());
            }
            response
        }
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        (url, state)
    }

    fn request() -> ChatRequest {
        ChatRequest {
            system: "be a translator".into(),
            user: "[[1]] Hello".into(),
            max_output_tokens: 500,
        }
    }

    fn model(name: &str, url: &str) -> HttpModel {
        HttpModel::new(
            name,
            "sk-test".into(),
            Some(url.to_string()),
            Duration::from_secs(5),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn openai_chat_completions_request_and_answer() {
        let answer = json!({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "[[1]] Hola"}, "finish_reason": "stop"}],
                            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}});
        let (url, stand_in) = stand_in(vec![(200, None, answer)]).await;
        let response = model("gpt-4o-mini", &format!("{url}/v1"))
            .complete(request())
            .await
            .unwrap();
        assert_eq!(
            response,
            ChatResponse {
                text: "[[1]] Hola".into(),
                input_tokens: 12,
                output_tokens: 3,
                truncated: false,
            }
        );
        let seen = stand_in.seen.lock().unwrap()[0].clone();
        assert_eq!(seen.path, "/v1/chat/completions");
        assert_eq!(seen.headers["authorization"], "Bearer sk-test");
        assert_eq!(seen.body["model"], "gpt-4o-mini");
        assert_eq!(
            seen.body["messages"][0],
            json!({"role": "system", "content": "be a translator"})
        );
        assert_eq!(
            seen.body["messages"][1],
            json!({"role": "user", "content": "[[1]] Hello"})
        );
        assert_eq!(seen.body["max_tokens"], 500);
    }

    #[tokio::test]
    async fn anthropic_messages_request_and_answer() {
        let answer = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-3-haiku-20240307",
                            "content": [{"type": "text", "text": "[[1]] Hola"}], "stop_reason": "end_turn",
                            "usage": {"input_tokens": 20, "output_tokens": 4}});
        let (url, stand_in) = stand_in(vec![(200, None, answer)]).await;
        let response = model("claude-3-haiku", &url)
            .complete(request())
            .await
            .unwrap();
        assert_eq!(
            response,
            ChatResponse {
                text: "[[1]] Hola".into(),
                input_tokens: 20,
                output_tokens: 4,
                truncated: false,
            }
        );
        let seen = stand_in.seen.lock().unwrap()[0].clone();
        assert_eq!(seen.path, "/v1/messages");
        assert_eq!(seen.headers["x-api-key"], "sk-test");
        assert_eq!(seen.headers["anthropic-version"], "2023-06-01");
        assert!(seen.headers.get("authorization").is_none());
        assert_eq!(seen.body["model"], "claude-3-haiku-20240307");
        assert_eq!(seen.body["system"], "be a translator");
        assert_eq!(
            seen.body["messages"],
            json!([{"role": "user", "content": "[[1]] Hello"}])
        );
        assert_eq!(seen.body["max_tokens"], 500);
    }

    #[tokio::test]
    async fn gemini_generate_content_request_and_answer() {
        let answer = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "[[1]] "}, {"text": "Hola"}]}, "finishReason": "STOP"}],
                            "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 2, "totalTokenCount": 11}});
        let (url, stand_in) = stand_in(vec![(200, None, answer)]).await;
        let response = model("gemini-2.0-flash", &url)
            .complete(request())
            .await
            .unwrap();
        assert_eq!(
            response,
            ChatResponse {
                text: "[[1]] Hola".into(),
                input_tokens: 9,
                output_tokens: 2,
                truncated: false,
            }
        );
        let seen = stand_in.seen.lock().unwrap()[0].clone();
        assert_eq!(seen.path, "/v1beta/models/gemini-2.0-flash:generateContent");
        assert_eq!(seen.headers["x-goog-api-key"], "sk-test");
        assert_eq!(
            seen.body["systemInstruction"],
            json!({"parts": [{"text": "be a translator"}]})
        );
        assert_eq!(
            seen.body["contents"],
            json!([{"role": "user", "parts": [{"text": "[[1]] Hello"}]}])
        );
        assert_eq!(seen.body["generationConfig"]["maxOutputTokens"], 500);
    }

    #[tokio::test]
    async fn a_rate_limit_is_waited_out_on_a_smaller_budget_and_overload_is_retryable() {
        let limited = json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}});
        let ok = json!({"choices": [{"message": {"content": "[[1]] Hola"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}});
        let (url, limiting) = stand_in(vec![(429, Some("1"), limited), (200, None, ok)]).await;
        let gpt = Arc::new(model("gpt-4o", &url));
        let started = std::time::Instant::now();
        let waiting = tokio::spawn({
            let gpt = gpt.clone();
            async move { gpt.complete(request()).await }
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            gpt.budget.in_flight(),
            1,
            "the refused request keeps its place while it waits"
        );
        let response = waiting.await.unwrap().unwrap();
        assert_eq!(response.text, "[[1]] Hola");
        assert!(started.elapsed() >= Duration::from_secs(1), "Retry-After");
        assert_eq!(limiting.seen.lock().unwrap().len(), 2);
        assert_eq!(
            gpt.budget.limit(),
            9,
            "the key's budget was halved (and the answer won back one: below where it was cut)"
        );
        let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        let (url, _) = stand_in(vec![(529, None, overloaded)]).await;
        let error = model("claude-sonnet-4-20250514", &url)
            .complete(request())
            .await
            .unwrap_err();
        assert!(
            matches!(error, ChatError::Retryable { ref message, retry_after } if message.contains("Overloaded") && retry_after == Some(crate::budget::ISOLATED_RETRY)),
            "a first failure on a key is isolated, tried again soon: {error:?}"
        );
    }

    #[tokio::test]
    async fn a_server_error_is_retryable_and_leaves_the_budget_as_it_was() {
        let broken = json!({"error": {"message": "internal error", "type": "server_error"}});
        let (url, _) = stand_in(vec![(500, None, broken.clone()), (503, None, broken)]).await;
        let gpt = model("gpt-4o-mini", &url);
        for _ in 0..2 {
            let error = gpt.complete(request()).await.unwrap_err();
            assert!(matches!(error, ChatError::Retryable { .. }), "{error:?}");
        }
        assert_eq!(gpt.budget.limit(), crate::budget::START as usize);
    }

    #[test]
    fn the_rate_limit_headers_of_openai_and_anthropic_are_read() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = reqwest::header::HeaderMap::new();
            for (name, value) in pairs {
                map.insert(*name, value.parse().unwrap());
            }
            map
        };
        let openai = headers(&[
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "1m2.5s"),
            ("x-ratelimit-remaining-tokens", "1200"),
            ("x-ratelimit-reset-tokens", "20ms"),
        ]);
        assert_eq!(
            rate_limits(Family::OpenAi, &openai, now),
            RateLimits {
                requests_remaining: Some(0),
                requests_reset: Some(Duration::from_millis(62_500)),
                tokens_remaining: Some(1200),
                tokens_reset: Some(Duration::from_millis(20)),
            }
        );
        let anthropic = headers(&[
            ("anthropic-ratelimit-requests-remaining", "49"),
            ("anthropic-ratelimit-requests-reset", "2026-01-01T00:00:07Z"),
            ("anthropic-ratelimit-tokens-remaining", "0"),
            ("anthropic-ratelimit-tokens-reset", "2026-01-01T00:00:30Z"),
        ]);
        assert_eq!(
            rate_limits(Family::Anthropic, &anthropic, now),
            RateLimits {
                requests_remaining: Some(49),
                requests_reset: Some(Duration::from_secs(7)),
                tokens_remaining: Some(0),
                tokens_reset: Some(Duration::from_secs(30)),
            }
        );
        assert_eq!(
            rate_limits(Family::Gemini, &openai, now),
            RateLimits::default()
        );
        assert_eq!(go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(go_duration("soon"), None);
    }

    #[tokio::test]
    async fn bad_keys_and_bad_requests_are_not_retried() {
        let denied = json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}});
        let (url, _) = stand_in(vec![(400, None, denied)]).await;
        let error = model("gemini-1.5-pro", &url)
            .complete(request())
            .await
            .unwrap_err();
        assert_eq!(
            error,
            ChatError::Fatal(
                "gemini-1.5-pro answered 400: API key not valid. Please pass a valid API key."
                    .into()
            )
        );
        let unauthorized = json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
        let (url, _) = stand_in(vec![(401, None, unauthorized)]).await;
        assert!(matches!(
            model("claude-3-haiku", &url).complete(request()).await,
            Err(ChatError::Fatal(_))
        ));
    }

    #[tokio::test]
    async fn the_pipeline_waits_out_a_rate_limit_and_carries_on() {
        let limited = json!({"error": {"message": "slow down"}});
        let ok = json!({"choices": [{"message": {"content": "[[1]] Hola"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}});
        let (url, stand_in) = stand_in(vec![(429, Some("1"), limited), (200, None, ok)]).await;
        let started = std::time::Instant::now();
        let response =
            crate::retry::complete_with_retries(&model("gpt-4o-mini", &url), request(), 3)
                .await
                .unwrap();
        assert_eq!(response.text, "[[1]] Hola");
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After was honoured"
        );
        assert_eq!(stand_in.seen.lock().unwrap().len(), 2);
    }

    const OPENAI_KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwxyz";

    #[tokio::test]
    async fn a_key_check_lists_the_models_where_the_chat_calls_go() {
        let models = json!({"object": "list", "data": []});
        let (url, stand_in) = stand_in(vec![
            (200, None, models.clone()),
            (200, None, models.clone()),
            (200, None, models),
        ])
        .await;
        let timeout = Duration::from_secs(5);
        check_key(Family::OpenAi, OPENAI_KEY, &format!("{url}/v1/"), timeout)
            .await
            .unwrap();
        check_key(Family::Anthropic, "sk-ant-api03-key", &url, timeout)
            .await
            .unwrap();
        check_key(Family::Gemini, "AIzaSyKey", &url, timeout)
            .await
            .unwrap();
        let seen = stand_in.seen.lock().unwrap().clone();
        assert_eq!(seen[0].path, "/v1/models");
        assert_eq!(
            seen[0].headers["authorization"],
            format!("Bearer {OPENAI_KEY}")
        );
        assert_eq!(seen[1].path, "/v1/models");
        assert_eq!(seen[1].headers["x-api-key"], "sk-ant-api03-key");
        assert_eq!(seen[1].headers["anthropic-version"], "2023-06-01");
        assert!(seen[1].headers.get("authorization").is_none());
        assert_eq!(seen[2].path, "/v1beta/models");
        assert_eq!(seen[2].headers["x-goog-api-key"], "AIzaSyKey");
    }

    #[tokio::test]
    async fn a_key_the_provider_turns_away_is_refused() {
        let denied = json!({"error": {"message": "Incorrect API key provided"}});
        let invalid = json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                        "status": "INVALID_ARGUMENT", "details": [{"reason": "API_KEY_INVALID"}]}});
        let (url, _) = stand_in(vec![
            (401, None, denied.clone()),
            (403, None, denied),
            (400, None, invalid),
        ])
        .await;
        let timeout = Duration::from_secs(5);
        for family in [Family::OpenAi, Family::Anthropic, Family::Gemini] {
            assert_eq!(
                check_key(family, "any-key-at-all", &url, timeout).await,
                Err(KeyCheckError::Refused(None)),
                "{family:?}"
            );
        }
    }

    #[tokio::test]
    async fn no_verdict_from_the_provider_is_unreachable_not_refused() {
        let error = json!({"error": {"message": "try later"}});
        let (url, _) = stand_in(vec![
            (500, None, error.clone()),
            (429, None, error.clone()),
            (404, None, error.clone()),
            (400, None, error),
        ])
        .await;
        let timeout = Duration::from_secs(5);
        for family in [
            Family::OpenAi,
            Family::Anthropic,
            Family::OpenAi,
            Family::Gemini,
        ] {
            let result = check_key(family, "any-key-at-all", &url, timeout).await;
            assert!(
                matches!(result, Err(KeyCheckError::Unreachable(ref m)) if m.contains("answered")),
                "{result:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_closed_port_or_a_silent_server_is_unreachable_in_time() {
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}", listener.local_addr().unwrap())
        };
        let result = check_key(Family::OpenAi, OPENAI_KEY, &closed, Duration::from_secs(5)).await;
        assert!(
            matches!(result, Err(KeyCheckError::Unreachable(_))),
            "{result:?}"
        );

        // Accepts connections and never answers.
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", silent.local_addr().unwrap());
        let started = std::time::Instant::now();
        let result = check_key(
            Family::Gemini,
            "AIzaSyKey",
            &url,
            Duration::from_millis(300),
        )
        .await;
        assert!(
            matches!(result, Err(KeyCheckError::Unreachable(ref m)) if m.contains("in time") && !m.contains("AIzaSyKey")),
            "{result:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(3));
        drop(silent);
    }

    #[test]
    fn on_the_providers_own_servers_keys_must_have_the_providers_shape() {
        let own = |family: Family| default_base_url(family);
        let ok = |family, key| check_shape(family, key, own(family)).is_ok();
        assert!(ok(Family::OpenAi, "sk-proj-abc"));
        assert!(ok(Family::OpenAi, "sk-svcacct-abc"));
        assert!(!ok(Family::OpenAi, "sk-ant-api03-abc"));
        assert!(!ok(Family::OpenAi, "AIzaSyabc"));
        assert!(ok(Family::Anthropic, "sk-ant-api03-abc"));
        assert!(!ok(Family::Anthropic, "sk-proj-abc"));
        assert!(ok(Family::Gemini, "AIzaSyabc"));
        assert!(!ok(Family::Gemini, "sk-abc"));
        assert!(
            check_shape(Family::OpenAi, "sk-x", "https://api.openai.com/v1/").is_ok(),
            "a trailing slash is still the provider's own server"
        );
    }

    #[test]
    fn behind_a_compatible_server_any_key_shape_passes() {
        for family in [Family::OpenAi, Family::Anthropic, Family::Gemini] {
            assert!(check_shape(family, "local-llm-token", "http://127.0.0.1:8000/v1").is_ok());
        }
    }

    #[test]
    fn a_model_on_another_server_than_its_providers_says_so() {
        let timeout = Duration::from_secs(1);
        let own = HttpModel::new("gpt-4o-mini", "k".into(), None, timeout).unwrap();
        assert!(!own.on_operators_server());
        let spelled = Some("https://api.openai.com/v1/".to_string());
        let own_spelled = HttpModel::new("gpt-4o-mini", "k".into(), spelled, timeout).unwrap();
        assert!(!own_spelled.on_operators_server());
        let local = Some("http://127.0.0.1:8080/v1".to_string());
        let local = HttpModel::new("gpt-4o-mini", "k".into(), local, timeout).unwrap();
        assert!(local.on_operators_server());
    }

    #[test]
    fn unknown_models_are_refused() {
        assert!(HttpModel::new("gpt-5-ultra", "k".into(), None, Duration::from_secs(1)).is_err());
    }
}
