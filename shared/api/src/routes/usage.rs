//! The caller's plan usage this month: `GET /api/usage` (the spec's Usage).

use axum::extract::State;

use crate::error::ApiError;
use crate::wire::usage::UsageReport;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{AppState, Caller, Routes};

pub fn router() -> Routes {
    OpenApiRouter::new().routes(routes!(usage))
}

/// This month's usage against the caller's plan.
#[utoipa::path(get, path = "/api/usage", tag = "account", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Usage and limits", body = UsageReport)))]
async fn usage(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<UsageReport>, ApiError> {
    Ok(axum::Json(
        state.services.usage.report(&caller.0.user).await?.into(),
    ))
}
