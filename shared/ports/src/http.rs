//! Outbound HTTP, as a port: webhook deliveries go through it so that the SSRF policy lives in one
//! adapter and tests can point deliveries at local receivers.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

/// The most of a response body an adapter keeps: enough to show a receiver's error message in the
/// delivery history without storing arbitrary payloads.
pub const MAX_ANSWER_BODY: usize = 2048;

/// What the destination answered, whatever the status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAnswer {
    pub status: u16,
    /// The first [`MAX_ANSWER_BODY`] bytes of the body, decoded as lossy UTF-8.
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpOutError {
    /// The URL, or an address it resolves to, is refused by the adapter's SSRF policy.
    #[error("destination refused: {0}")]
    Blocked(String),
    /// No complete answer within the timeout.
    #[error("request timed out")]
    Timeout,
    /// Could not connect, TLS failed, the URL was malformed, or the transfer broke.
    #[error("request failed: {0}")]
    Failed(String),
}

#[async_trait]
pub trait HttpOut: Send + Sync {
    /// Whether the SSRF policy is off (plain http and private addresses allowed: local
    /// development and tests). Webhook registration uses it to decide whether `http` URLs are
    /// accepted. MUST be false in production.
    fn allows_private(&self) -> bool;

    /// POSTs `body` to `url` with exactly these headers. MUST refuse (with `Blocked`, before any
    /// connection is made) a destination its SSRF policy forbids, checking every resolved address,
    /// not only the host name. MUST NOT follow redirects: a 3xx is returned as the answer. MUST give
    /// up after `timeout` with `Timeout`. Any HTTP status, 4xx and 5xx included, is `Ok`.
    async fn post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: Bytes,
        timeout: Duration,
    ) -> Result<HttpAnswer, HttpOutError>;
}
