//! The caller's plan usage this month: `GET /api/usage` (the spec's Usage).

use axum::extract::State;
use axum::routing::get;
use axum::Router;
use booktr_core::usage::UsageReport;

use crate::error::ApiError;
use crate::{AppState, Caller};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/usage", get(usage))
}

async fn usage(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<UsageReport>, ApiError> {
    Ok(axum::Json(
        state.services.usage.report(&caller.0.user).await?,
    ))
}
