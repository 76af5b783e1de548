//! The served router: every endpoint group merged, and the layers every served router carries.

use axum::Router;
use utoipa::openapi::OpenApi;

use crate::openapi::{self, Routes};
use crate::routes::{
    admin_email, auth_routes, books, community, developer, download, glossary, health, keys,
    memory, notifications, preferences, share, translate, uploads, usage, user, webhooks,
};
use crate::state::AppState;
use crate::{error, extract, limits, middleware, web};

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
        .merge(memory::router())
        .merge(webhooks::router())
        .merge(notifications::router())
}

/// The whole API description: every group's routes on the base document.
pub fn document() -> OpenApi {
    openapi::describe(all_routes())
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
