//! A model's raw answers, kept: [`Recording`] writes every request and the answer it got as a
//! JSON line (`booktr translate --record-answers FILE`), and [`Replay`] (with the `stand-ins`
//! feature) answers the same requests with the same answers, so that a real model's
//! misbehaviour, recorded once, is part of the regular test suite.

use std::io::Write as _;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};

/// One request and its answer, as a line of the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exchange {
    pub system: String,
    pub user: String,
    pub text: String,
    pub truncated: bool,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A file of exchanges, opened for appending once and shared by every [`Recording`] that
/// writes to it (a run's chapters each get their own client), so lines never interleave.
#[derive(Clone)]
pub struct AnswerLog(Arc<Mutex<std::fs::File>>);

impl AnswerLog {
    pub fn open(path: &std::path::Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(AnswerLog(Arc::new(Mutex::new(file))))
    }
}

/// Passes requests to `inner` and appends each exchange to an [`AnswerLog`].
pub struct Recording<M> {
    inner: M,
    log: AnswerLog,
}

impl<M: ChatModel> Recording<M> {
    pub fn new(inner: M, log: AnswerLog) -> Self {
        Recording { inner, log }
    }
}

#[async_trait]
impl<M: ChatModel> ChatModel for Recording<M> {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let response = self.inner.complete(request.clone()).await?;
        let exchange = Exchange {
            system: request.system,
            user: request.user,
            text: response.text.clone(),
            truncated: response.truncated,
            input_tokens: response.input_tokens,
            output_tokens: response.output_tokens,
        };
        let line = serde_json::to_string(&exchange).unwrap_or_default();
        let mut file = self.log.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = writeln!(file, "{line}") {
            tracing::warn!(error = %e, "could not record an answer");
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn writes_language(&self) -> bool {
        self.inner.writes_language()
    }

    fn on_operators_server(&self) -> bool {
        self.inner.on_operators_server()
    }
}

/// Answers each request with the answer recorded for the same request (the same system and
/// user text; repeated requests get their answers in the order recorded). A request never
/// recorded fails, fatally: the prompts have changed since the recording, which must then be
/// made again.
#[cfg(any(test, feature = "stand-ins"))]
pub struct Replay {
    answers:
        Mutex<std::collections::HashMap<(String, String), std::collections::VecDeque<Exchange>>>,
}

#[cfg(any(test, feature = "stand-ins"))]
impl Replay {
    /// From the JSON lines [`Recording`] wrote.
    pub fn from_lines(text: &str) -> Result<Replay, serde_json::Error> {
        let mut answers: std::collections::HashMap<_, std::collections::VecDeque<Exchange>> =
            Default::default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let exchange: Exchange = serde_json::from_str(line)?;
            answers
                .entry((exchange.system.clone(), exchange.user.clone()))
                .or_default()
                .push_back(exchange);
        }
        Ok(Replay {
            answers: Mutex::new(answers),
        })
    }
}

#[cfg(any(test, feature = "stand-ins"))]
#[async_trait]
impl ChatModel for Replay {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        let queue = answers
            .get_mut(&(request.system, request.user.clone()))
            .ok_or_else(|| {
                ChatError::Fatal(format!(
                    "no recorded answer for this request (the prompts changed since the recording?): {}",
                    request.user.chars().take(120).collect::<String>()
                ))
            })?;
        // The last answer of a request stays for any further ask of it.
        let exchange = if queue.len() > 1 {
            queue.pop_front()
        } else {
            queue.front().cloned()
        }
        .ok_or_else(|| ChatError::Fatal("an empty recording".into()))?;
        Ok(ChatResponse {
            text: exchange.text,
            input_tokens: exchange.input_tokens,
            output_tokens: exchange.output_tokens,
            truncated: exchange.truncated,
        })
    }

    fn name(&self) -> &str {
        "replay"
    }
}
