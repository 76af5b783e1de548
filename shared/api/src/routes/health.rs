//! `GET /api/health` (Public), and the Health body as the API sends it.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use booktr_core::health as domain;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::openapi::Routes;
use crate::state::AppState;

pub fn router() -> Routes {
    OpenApiRouter::new().routes(routes!(health))
}

/// Whether the service and its backends are up; 503 when it cannot serve.
#[utoipa::path(get, path = "/api/health", tag = "health", responses(
    (status = 200, description = "Healthy or degraded", body = HealthReport),
    (status = 503, description = "Unhealthy", body = HealthReport)))]
async fn health(State(state): State<AppState>) -> Response {
    let report = state.services.health.check().await;
    let status = match report.status {
        domain::Status::Unhealthy => StatusCode::SERVICE_UNAVAILABLE,
        domain::Status::Healthy | domain::Status::Degraded => StatusCode::OK,
    };
    (status, Json(HealthReport::from(report))).into_response()
}

/// The spec's two processing modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
enum QueueMode {
    /// AWS: SQS FIFO and Lambda workers.
    ManagedQueue,
    /// One process: the SQLite queue and in-process workers.
    WorkerQueue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Healthy,
    Degraded,
    Unhealthy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum CheckStatus {
    Up,
    Down,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
struct Check {
    status: CheckStatus,
    /// Milliseconds the check took.
    latency: u64,
    error: Option<String>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
struct Checks {
    database: Check,
    broker: Check,
    queue: Check,
    /// Beyond the spec: the blob store (S3 or local files).
    storage: Check,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
struct QueueCounts {
    active: u64,
    waiting: u64,
    completed: u64,
    failed: u64,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
struct Queues {
    translate: QueueCounts,
    /// Beyond the spec: the render queue (generate jobs). It shares the dead-letter queue of
    /// `translate`, so its `failed` is the same count.
    render: QueueCounts,
}

/// The spec's Health body.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct HealthReport {
    status: Status,
    timestamp: DateTime<Utc>,
    version: &'static str,
    uptime: u64,
    queue_mode: QueueMode,
    checks: Checks,
    #[serde(skip_serializing_if = "Option::is_none")]
    queues: Option<Queues>,
}

impl From<domain::HealthReport> for HealthReport {
    fn from(report: domain::HealthReport) -> Self {
        HealthReport {
            status: match report.status {
                domain::Status::Healthy => Status::Healthy,
                domain::Status::Degraded => Status::Degraded,
                domain::Status::Unhealthy => Status::Unhealthy,
            },
            timestamp: report.timestamp,
            version: report.version,
            uptime: report.uptime,
            queue_mode: match report.queue_mode {
                domain::QueueMode::ManagedQueue => QueueMode::ManagedQueue,
                domain::QueueMode::WorkerQueue => QueueMode::WorkerQueue,
            },
            checks: Checks {
                database: report.checks.database.into(),
                broker: report.checks.broker.into(),
                queue: report.checks.queue.into(),
                storage: report.checks.storage.into(),
            },
            queues: report.queues.map(|queues| Queues {
                translate: queues.translate.into(),
                render: queues.render.into(),
            }),
        }
    }
}

impl From<domain::QueueCounts> for QueueCounts {
    fn from(counts: domain::QueueCounts) -> Self {
        QueueCounts {
            active: counts.active,
            waiting: counts.waiting,
            completed: counts.completed,
            failed: counts.failed,
        }
    }
}

impl From<domain::Check> for Check {
    fn from(check: domain::Check) -> Self {
        Check {
            status: match check.status {
                domain::CheckStatus::Up => CheckStatus::Up,
                domain::CheckStatus::Down => CheckStatus::Down,
            },
            latency: check.latency,
            error: check.error,
        }
    }
}
