//! `GET /api/health` (Public).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use booktr_core::health::Status;

use crate::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/health", get(health))
}

async fn health(State(state): State<AppState>) -> Response {
    let report = state.services.health.check().await;
    let status = match report.status {
        Status::Unhealthy => StatusCode::SERVICE_UNAVAILABLE,
        Status::Healthy | Status::Degraded => StatusCode::OK,
    };
    (status, Json(report)).into_response()
}
