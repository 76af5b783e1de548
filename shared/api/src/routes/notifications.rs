//! In-app notifications: `GET /api/notifications`, `GET /api/notifications/unread-count`,
//! `POST /api/notifications/read`, `POST /api/notifications/read-all`; and the settings that
//! decide which are made, `GET/PATCH /api/settings/notifications`.

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::{get, post};
use axum::Router;
use booktr_core::events::{Notification, NotificationSettings, NotificationSettingsPatch};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::{Json, Query};
use crate::{AppState, Caller};

/// The spec's default page size.
const DEFAULT_LIMIT: usize = 20;
/// The largest page (the spec leaves it open).
const MAX_LIMIT: usize = 100;
/// Ids one mark-read request may name.
const MAX_IDS: usize = 1000;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/notifications", get(list))
        .route("/api/notifications/unread-count", get(unread_count))
        .route("/api/notifications/read", post(mark_read))
        .route("/api/notifications/read-all", post(mark_all_read))
        .route(
            "/api/settings/notifications",
            get(settings).patch(update_settings),
        )
}

/// Raw, so that a bad value is our 400 with a clear message rather than a parser's.
#[derive(Deserialize)]
struct ListQuery {
    page: Option<String>,
    limit: Option<String>,
    unread: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Pagination {
    page: usize,
    limit: usize,
    total: usize,
    total_pages: usize,
}

#[derive(Serialize)]
struct NotificationList {
    notifications: Vec<Notification>,
    pagination: Pagination,
}

#[derive(Serialize)]
struct Count {
    count: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MarkRead {
    notification_ids: Option<Vec<String>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Marked {
    success: bool,
    marked_count: usize,
}

fn number(raw: Option<String>, name: &str, default: usize, max: usize) -> Result<usize, ApiError> {
    let Some(raw) = raw else {
        return Ok(default);
    };
    match raw.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(ApiError::bad_request(format!(
            "{name} must be a whole number from 1 to {max}"
        ))),
    }
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<NotificationList>, ApiError> {
    let page = number(q.page, "page", 1, usize::MAX)?;
    let limit = number(q.limit, "limit", DEFAULT_LIMIT, MAX_LIMIT)?;
    let unread = match q.unread.as_deref() {
        None => false,
        Some("true") => true,
        Some("false") => false,
        Some(_) => return Err(ApiError::bad_request("unread must be true or false")),
    };
    let found = state
        .services
        .events
        .notifications(caller.user_id(), page, limit, unread)
        .await?;
    Ok(axum::Json(NotificationList {
        notifications: found.notifications,
        pagination: Pagination {
            page,
            limit,
            total: found.total,
            total_pages: found.total.div_ceil(limit),
        },
    }))
}

async fn unread_count(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<Count>, ApiError> {
    let count = state.services.events.unread_count(caller.user_id()).await?;
    Ok(axum::Json(Count { count }))
}

/// Marks the named notifications read. Without `notificationIds` (an empty body or `{}`) every
/// notification of the caller is marked, as `read-all` does; an empty list marks none. Ids that
/// are not the caller's are ignored.
async fn mark_read(
    State(state): State<AppState>,
    caller: Caller,
    body: Bytes,
) -> Result<axum::Json<Marked>, ApiError> {
    let ids = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        let parsed: MarkRead = serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad_request(format!("invalid body: {e}")))?;
        parsed.notification_ids
    };
    let events = &state.services.events;
    let marked_count = match ids {
        None => events.mark_all_read(caller.user_id()).await?,
        Some(ids) if ids.len() > MAX_IDS => {
            return Err(ApiError::bad_request(format!(
                "at most {MAX_IDS} notificationIds per request"
            )))
        }
        Some(ids) => events.mark_read(caller.user_id(), &ids).await?,
    };
    Ok(axum::Json(Marked {
        success: true,
        marked_count,
    }))
}

async fn mark_all_read(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<Marked>, ApiError> {
    let marked_count = state
        .services
        .events
        .mark_all_read(caller.user_id())
        .await?;
    Ok(axum::Json(Marked {
        success: true,
        marked_count,
    }))
}

async fn settings(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<NotificationSettings>, ApiError> {
    let settings = state
        .services
        .events
        .notification_settings(caller.user_id())
        .await?;
    Ok(axum::Json(settings))
}

/// Any subset of the six booleans; other fields or non-boolean values are a 400.
async fn update_settings(
    State(state): State<AppState>,
    caller: Caller,
    Json(patch): Json<NotificationSettingsPatch>,
) -> Result<axum::Json<NotificationSettings>, ApiError> {
    let settings = state
        .services
        .events
        .update_notification_settings(caller.user_id(), patch)
        .await?;
    Ok(axum::Json(settings))
}
