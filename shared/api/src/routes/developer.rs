//! Developer settings: `GET/PATCH /api/settings/developer`, the user's own provider keys. Open to
//! every signed-in user, on any plan (see `booktr_core::developer`).

use axum::extract::State;
use serde::Serialize;

use crate::error::ApiError;
use crate::extract::Json;
use crate::wire::developer::{DeveloperPatch, DeveloperSettings};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::Routes;
use crate::state::AppState;

pub fn router() -> Routes {
    OpenApiRouter::new().routes(routes!(read, update))
}

#[derive(Serialize, utoipa::ToSchema)]
struct Saved {
    success: bool,
    message: String,
}

/// The caller's own provider keys, masked.
#[utoipa::path(get, path = "/api/settings/developer", tag = "developer", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Masked keys", body = DeveloperSettings)))]
async fn read(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<DeveloperSettings>, ApiError> {
    Ok(axum::Json(
        state
            .services
            .developer
            .settings(caller.user_id())
            .await?
            .into(),
    ))
}

/// `{keyOne?, keyTwo?, keyThree?}`: a string sets the key (after its provider accepts it), null
/// removes it, a field left out is unchanged.
#[utoipa::path(patch, path = "/api/settings/developer", tag = "developer", security(("apiKey" = []), ("session" = [])),
    request_body = DeveloperPatch,
    responses((status = 200, description = "Saved", body = Saved)))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Json(patch): Json<DeveloperPatch>,
) -> Result<axum::Json<Saved>, ApiError> {
    let message = state
        .services
        .developer
        .update(caller.user_id(), patch.into())
        .await?;
    Ok(axum::Json(Saved {
        success: true,
        message,
    }))
}
