//! The caller's plan usage this month: `GET /api/usage` (the spec's Usage), with what their
//! edits of their books' passages keep stored (`storedEdits`).

use axum::extract::State;

use crate::error::ApiError;
use crate::wire::usage::UsageAnswer;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::Routes;
use crate::state::AppState;

pub fn router() -> Routes {
    OpenApiRouter::new().routes(routes!(usage))
}

/// This month's usage against the caller's plan, and what the caller's edits keep stored
/// (`storedEdits`: the changes their books' passages keep for undo, and their bytes).
#[utoipa::path(get, path = "/api/usage", tag = "account", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Usage and limits", body = UsageAnswer)))]
async fn usage(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<UsageAnswer>, ApiError> {
    let user = &caller.0.user;
    let report = state.services.usage.report(user).await?.into();
    let stored_edits = state.services.books.stored_edits(&user.id).await?.into();
    Ok(axum::Json(UsageAnswer {
        report,
        stored_edits,
    }))
}
