//! The caller's profile: `GET/PATCH /api/user`.

use axum::extract::State;
use axum::routing::get;
use axum::Router;
use booktr_core::accounts::User;
use serde::Deserialize;

use crate::error::ApiError;
use crate::extract::Json;
use crate::{AppState, Caller};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/user", get(profile).patch(update))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UpdateProfile {
    name: Option<String>,
    preferred_language: Option<String>,
}

async fn profile(caller: Caller) -> axum::Json<User> {
    axum::Json(caller.0.user)
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<UpdateProfile>,
) -> Result<axum::Json<User>, ApiError> {
    let user = state
        .services
        .accounts
        .update_profile(caller.user_id(), body.name, body.preferred_language)
        .await?;
    Ok(axum::Json(user))
}
