//! The HTTP API: one router per endpoint group, authentication, and the one error model.
//! `booktr serve` merges every group on one socket; each Lambda serves its own group.

mod auth;
mod error;
mod extract;
mod limits;
mod middleware;
pub mod openapi;
mod routes;
pub mod web;
pub mod wire;

use std::sync::Arc;

use axum::Router;
use booktr_core::Services;
pub use openapi::Routes;

pub use auth::{Caller, OptionalCaller};
pub use error::ApiError;
pub use limits::ClientIp;
pub use routes::{
    admin_email, auth_routes, books, community, developer, download, glossary, health, keys,
    notifications, preferences, share, translate, uploads, usage, user, webhooks,
};

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

/// Every endpoint group's routes, with their documentation.
pub fn all_routes() -> Routes {
    Routes::new()
        .merge(health::router())
        .merge(openapi::router())
        .merge(auth_routes::router())
        .merge(keys::router())
        .merge(user::router())
        .merge(books::router())
        .merge(uploads::router())
        .merge(community::router())
        .merge(admin_email::router())
        .merge(web::router())
        .merge(web::app::router())
        .merge(share::router())
        .merge(preferences::router())
        .merge(developer::router())
        .merge(translate::router())
        .merge(usage::router())
        .merge(download::router())
        .merge(glossary::router())
        .merge(webhooks::router())
        .merge(notifications::router())
}

/// Every endpoint group on one router, with 404/405 answers (JSON, or a page for a browser)
/// and request logging.
pub fn router(state: AppState) -> Router {
    finish(all_routes(), state)
}

/// Adds what every served router needs: the fallbacks, the error-catching and logging layers.
/// Lambda binaries call this on their own group's router.
pub fn finish(routes: Routes, state: AppState) -> Router {
    let (routes, _) = routes.split_for_parts();
    routes
        .fallback(error::no_route)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(axum::middleware::from_fn(middleware::catch_panics))
        .layer(axum::extract::DefaultBodyLimit::max(
            extract::JSON_BODY_LIMIT,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            limits::limit_requests,
        ))
        .layer(axum::middleware::from_fn(middleware::refuse_long_uris))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            web::app::pages_for_browsers,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::defend_the_browser,
        ))
        .layer(axum::middleware::from_fn(middleware::trace_requests))
        .with_state(state)
}
