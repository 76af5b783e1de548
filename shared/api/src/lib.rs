//! The HTTP API: one router per endpoint group, authentication, and the one error model.
//! `booktr serve` merges every group on one socket; each Lambda serves its own group.
//!
//! The modules stand in layers: `state` (what every handler shares) at the bottom, then the
//! error model, extractors, authentication, rate limits and the OpenAPI plumbing, then the
//! endpoint groups (`routes`) and the pages (`web`), and `router`, which merges them all, on
//! top. This file only declares them and names the crate's public paths.

mod auth;
mod error;
mod extract;
mod limits;
mod middleware;
pub mod openapi;
mod router;
mod routes;
mod state;
pub mod web;
pub mod wire;

pub use auth::{Caller, OptionalCaller};
pub use error::ApiError;
pub use limits::ClientIp;
pub use openapi::Routes;
pub use router::{all_routes, finish, router};
pub use routes::{
    admin_email, auth_routes, books, community, developer, download, glossary, health, keys,
    memory, notifications, preferences, share, translate, uploads, usage, user, webhooks,
};
pub use state::{AppState, Settings, LAMBDA_BODY_LIMIT};
