//! A page of the app: rendered from its template in the user's language, in the layout that
//! shows who is signed in.

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use minijinja::{context, Value};
use serde::Serialize;

use super::failure::page_error;
use super::i18n::Lang;
use super::session::SignedIn;
use crate::error::ApiError;
use crate::state::AppState;
use crate::web::templates::templates;

/// What the layout shows of the signed-in user.
#[derive(Serialize)]
struct Viewer<'a> {
    name: &'a str,
    email: &'a str,
    unread: usize,
    /// Sees the moderation pages.
    admin: bool,
}

/// Renders a page of the app in the user's language, never cached (it is theirs alone).
pub async fn page(
    state: &AppState,
    me: Option<&SignedIn>,
    lang: Lang,
    template: &str,
    title: &str,
    data: Value,
) -> Result<Response, Response> {
    let viewer = match me {
        Some(me) => {
            let unread = state
                .services
                .events
                .unread_count(&me.user.id)
                .await
                .map_err(|e| page_error(lang, e.into()))?;
            Some(Viewer {
                name: me.user.name.as_deref().unwrap_or(me.user.email.as_str()),
                email: me.user.email.as_str(),
                unread,
                admin: matches!(
                    me.user.role,
                    booktr_core::types::Role::Admin | booktr_core::types::Role::SuperAdmin
                ),
            })
        }
        None => None,
    };
    render(
        template,
        context! {
            lang => lang.code(),
            t => lang.messages(),
            title => title,
            viewer => viewer,
            csrf => me.map(|m| m.csrf.clone()),
            ..data
        },
    )
    .map_err(|e| page_error(lang, e))
}

pub(super) fn render(template: &str, context: Value) -> Result<Response, ApiError> {
    let template = templates()
        .get_template(template)
        .map_err(|e| ApiError::internal(&e))?;
    let html = template
        .render(context)
        .map_err(|e| ApiError::internal(&e))?;
    Ok((
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "private, no-store"),
        ],
        html,
    )
        .into_response())
}
