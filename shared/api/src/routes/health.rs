//! `GET /api/health` (Public).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use booktr_core::health::Status;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{AppState, Routes};

pub fn router() -> Routes {
    OpenApiRouter::new().routes(routes!(health))
}

/// Whether the service and its backends are up; 503 when it cannot serve.
#[utoipa::path(get, path = "/api/health", tag = "health", responses(
    (status = 200, description = "Healthy or degraded", body = booktr_core::health::HealthReport),
    (status = 503, description = "Unhealthy", body = booktr_core::health::HealthReport)))]
async fn health(State(state): State<AppState>) -> Response {
    let report = state.services.health.check().await;
    let status = match report.status {
        Status::Unhealthy => StatusCode::SERVICE_UNAVAILABLE,
        Status::Healthy | Status::Degraded => StatusCode::OK,
    };
    (status, Json(report)).into_response()
}
