//! Developer settings: `GET/PATCH /api/settings/developer`, the user's own provider keys. Open to
//! every signed-in user, on any plan (see `booktr_core::developer`).

use axum::extract::State;
use axum::routing::get;
use axum::Router;
use booktr_core::developer::{DeveloperPatch, DeveloperSettings};
use serde::Serialize;

use crate::error::ApiError;
use crate::extract::Json;
use crate::{AppState, Caller};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/settings/developer", get(read).patch(update))
}

#[derive(Serialize)]
struct Saved {
    success: bool,
    message: String,
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<DeveloperSettings>, ApiError> {
    Ok(axum::Json(
        state.services.developer.settings(caller.user_id()).await?,
    ))
}

/// `{keyOne?, keyTwo?, keyThree?}`: a string sets the key (after its provider accepts it), null
/// removes it, a field left out is unchanged.
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Json(patch): Json<DeveloperPatch>,
) -> Result<axum::Json<Saved>, ApiError> {
    let message = state
        .services
        .developer
        .update(caller.user_id(), patch)
        .await?;
    Ok(axum::Json(Saved {
        success: true,
        message,
    }))
}
