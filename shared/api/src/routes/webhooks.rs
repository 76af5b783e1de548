//! Webhooks: `GET/POST /api/webhooks`, `DELETE /api/webhooks/{id}`, `POST /api/webhooks/{id}`
//! (a test event), and the delivery history the spec leaves open,
//! `GET /api/webhooks/{id}/deliveries`.

use axum::extract::State;
use booktr_core::events::EventsError;
use serde::{Deserialize, Serialize};

use super::{Success, SUCCESS};
use crate::error::ApiError;
use crate::extract::{Json, Path};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::events::{Delivery, TestResult, Webhook};
use crate::wire::Mirror;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(test, remove))
        .routes(routes!(deliveries))
}

impl From<EventsError> for ApiError {
    fn from(e: EventsError) -> Self {
        match e {
            EventsError::Invalid(m) => ApiError::bad_request(m),
            EventsError::NotFound => ApiError::not_found("webhook"),
            EventsError::Store(s) => s.into(),
            EventsError::Fault(f) => f.into(),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
struct WebhookList {
    webhooks: Vec<Webhook>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateWebhook {
    url: String,
    events: Vec<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Created {
    webhook: Webhook,
    /// Shown only in this answer.
    secret: String,
}

#[derive(Serialize, utoipa::ToSchema)]
struct DeliveryList {
    deliveries: Vec<Delivery>,
}

/// The caller's webhooks.
#[utoipa::path(get, path = "/api/webhooks", tag = "webhooks", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Webhooks", body = WebhookList)))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<WebhookList>, ApiError> {
    let webhooks = state.services.events.webhooks(caller.user_id()).await?;
    Ok(axum::Json(WebhookList {
        webhooks: Mirror::mirror(webhooks),
    }))
}

/// A new webhook; its signing secret is shown in this answer only.
#[utoipa::path(post, path = "/api/webhooks", tag = "webhooks", security(("apiKey" = []), ("session" = [])), request_body = CreateWebhook,
    responses((status = 200, description = "The webhook and its secret", body = Created)))]
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
        webhook: created.webhook.into(),
        secret: created.secret,
    }))
}

#[utoipa::path(delete, path = "/api/webhooks/{id}", tag = "webhooks", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The webhook's id")),
    responses((status = 200, description = "Deleted", body = super::Success),
        (status = 404, description = "No such webhook", body = ErrorBody)))]
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

/// Sends a test event now and answers with the receiver's response.
#[utoipa::path(post, path = "/api/webhooks/{id}", tag = "webhooks", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The webhook's id")),
    responses((status = 200, description = "The test delivery's outcome", body = TestResult),
        (status = 404, description = "No such webhook", body = ErrorBody)))]
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
    Ok(axum::Json(result.into()))
}

/// The webhook's recent deliveries, newest first.
#[utoipa::path(get, path = "/api/webhooks/{id}/deliveries", tag = "webhooks", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The webhook's id")),
    responses((status = 200, description = "Deliveries", body = DeliveryList),
        (status = 404, description = "No such webhook", body = ErrorBody)))]
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
    Ok(axum::Json(DeliveryList {
        deliveries: Mirror::mirror(deliveries),
    }))
}
