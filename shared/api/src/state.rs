//! What every handler shares: the services and the HTTP-level settings.

use std::sync::Arc;

use booktr_core::Services;

/// What every handler shares. Every request clones it (axum's `State`), so both halves sit
/// behind one `Arc` each: a clone is two reference counts, not one per port of every service.
#[derive(Clone)]
pub struct AppState {
    pub services: Arc<Services>,
    pub settings: Arc<Settings>,
}

/// HTTP-level settings, from the process configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where users reach the service, without a trailing slash.
    pub public_url: String,
    /// Whether the last `X-Forwarded-For` address is the client's (a trusted proxy in front).
    pub trust_forwarded_for: bool,
    /// The largest request body the platform lets reach the service, where it is below the
    /// spec's 50 MB upload (a Lambda behind API Gateway: [`LAMBDA_BODY_LIMIT`]). Larger uploads
    /// then go through the direct flow (`POST /api/uploads`).
    pub body_limit: Option<u64>,
    /// Where direct uploads are posted when that is another origin (the S3 bucket on AWS): the
    /// pages' script may connect there too.
    pub upload_origin: Option<String>,
}

/// What a Lambda behind API Gateway can receive: an invocation carries at most 6 MB, and a
/// binary body arrives base64-encoded in it (4/3 of its size), beside the request's headers.
/// 4 MiB of body leaves room for both.
pub const LAMBDA_BODY_LIMIT: u64 = 4 * 1024 * 1024;

impl Settings {
    pub fn is_https(&self) -> bool {
        self.public_url.starts_with("https://")
    }
}

impl AppState {
    pub fn new(services: Services, settings: Settings) -> Self {
        AppState {
            services: Arc::new(services),
            settings: Arc::new(settings),
        }
    }
}
