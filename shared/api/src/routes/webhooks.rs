//! Webhooks: `GET/POST /api/webhooks`, `DELETE /api/webhooks/{id}`, `POST /api/webhooks/{id}`
//! (a test event), and the delivery history the spec leaves open,
//! `GET /api/webhooks/{id}/deliveries`.

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::Router;
use booktr_core::events::{Delivery, EventsError, TestResult, Webhook};
use serde::{Deserialize, Serialize};

use super::{Success, SUCCESS};
use crate::error::ApiError;
use crate::extract::Json;
use crate::{AppState, Caller};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/webhooks", get(list).post(create))
        .route("/api/webhooks/{id}", post(test).delete(remove))
        .route("/api/webhooks/{id}/deliveries", get(deliveries))
}

impl From<EventsError> for ApiError {
    fn from(e: EventsError) -> Self {
        match e {
            EventsError::Invalid(m) => ApiError::bad_request(m),
            EventsError::NotFound => ApiError::not_found("webhook"),
            EventsError::Store(s) => s.into(),
        }
    }
}

#[derive(Serialize)]
struct WebhookList {
    webhooks: Vec<Webhook>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateWebhook {
    url: String,
    events: Vec<String>,
}

#[derive(Serialize)]
struct Created {
    webhook: Webhook,
    /// Shown only in this answer.
    secret: String,
}

#[derive(Serialize)]
struct DeliveryList {
    deliveries: Vec<Delivery>,
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<WebhookList>, ApiError> {
    let webhooks = state.services.events.webhooks(caller.user_id()).await?;
    Ok(axum::Json(WebhookList { webhooks }))
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<CreateWebhook>,
) -> Result<axum::Json<Created>, ApiError> {
    let created = state
        .services
        .events
        .create_webhook(caller.user_id(), &body.url, &body.events)
        .await?;
    Ok(axum::Json(Created {
        webhook: created.webhook,
        secret: created.secret,
    }))
}

async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Success>, ApiError> {
    state
        .services
        .events
        .delete_webhook(caller.user_id(), &id)
        .await?;
    Ok(axum::Json(SUCCESS))
}

async fn test(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<TestResult>, ApiError> {
    let result = state
        .services
        .events
        .test_webhook(caller.user_id(), &id)
        .await?;
    Ok(axum::Json(result))
}

async fn deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<DeliveryList>, ApiError> {
    let deliveries = state
        .services
        .events
        .deliveries(caller.user_id(), &id)
        .await?;
    Ok(axum::Json(DeliveryList { deliveries }))
}
