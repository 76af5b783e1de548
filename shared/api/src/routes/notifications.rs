//! In-app notifications: `GET /api/notifications`, `GET /api/notifications/unread-count`,
//! `POST /api/notifications/read`, `POST /api/notifications/read-all`; and the settings that
//! decide which are made, `GET/PATCH /api/settings/notifications`.

use axum::body::Bytes;
use axum::extract::State;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::{Json, Query};
use crate::wire::events::{Notification, NotificationSettings, NotificationSettingsPatch};
use crate::wire::Mirror;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::Routes;
use crate::state::AppState;

/// The spec's default page size.
const DEFAULT_LIMIT: usize = 20;
/// The largest page (the spec leaves it open).
const MAX_LIMIT: usize = 100;
/// Ids one mark-read request may name.
const MAX_IDS: usize = 1000;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(unread_count))
        .routes(routes!(mark_read))
        .routes(routes!(mark_all_read))
        .routes(routes!(settings, update_settings))
}

/// Raw, so that a bad value is our 400 with a clear message rather than a parser's.
#[derive(Deserialize)]
struct ListQuery {
    page: Option<String>,
    limit: Option<String>,
    unread: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Pagination {
    page: usize,
    limit: usize,
    total: usize,
    total_pages: usize,
}

#[derive(Serialize, utoipa::ToSchema)]
struct NotificationList {
    notifications: Vec<Notification>,
    pagination: Pagination,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Count {
    count: usize,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MarkRead {
    notification_ids: Option<Vec<String>>,
}

#[derive(Serialize, utoipa::ToSchema)]
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

/// The caller's notifications, newest first, a page at a time.
#[utoipa::path(get, path = "/api/notifications", tag = "notifications", security(("apiKey" = []), ("session" = [])),
    params(("page" = Option<u32>, Query, minimum = 1, description = "From 1 (default 1)"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "1-100 (default 20)"),
        ("unread" = Option<bool>, Query, description = "Only unread ones")),
    responses((status = 200, description = "A page of notifications", body = NotificationList)))]
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
        notifications: Mirror::mirror(found.notifications),
        pagination: Pagination {
            page,
            limit,
            total: found.total,
            total_pages: found.total.div_ceil(limit),
        },
    }))
}

#[utoipa::path(get, path = "/api/notifications/unread-count", tag = "notifications", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Unread notifications", body = Count)))]
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
#[utoipa::path(post, path = "/api/notifications/read", tag = "notifications", security(("apiKey" = []), ("session" = [])),
    request_body(content = Option<MarkRead>, description = "Empty or `{}` marks every notification"),
    responses((status = 200, description = "Marked", body = Marked)))]
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

#[utoipa::path(post, path = "/api/notifications/read-all", tag = "notifications", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Marked", body = Marked)))]
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

/// Which notifications are made.
#[utoipa::path(get, path = "/api/settings/notifications", tag = "notifications", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Settings", body = NotificationSettings)))]
async fn settings(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<NotificationSettings>, ApiError> {
    let settings = state
        .services
        .events
        .notification_settings(caller.user_id())
        .await?;
    Ok(axum::Json(settings.into()))
}

/// Any subset of the six booleans; other fields or non-boolean values are a 400.
#[utoipa::path(patch, path = "/api/settings/notifications", tag = "notifications", security(("apiKey" = []), ("session" = [])),
    request_body = NotificationSettingsPatch,
    responses((status = 200, description = "The settings now", body = NotificationSettings)))]
async fn update_settings(
    State(state): State<AppState>,
    caller: Caller,
    Json(patch): Json<NotificationSettingsPatch>,
) -> Result<axum::Json<NotificationSettings>, ApiError> {
    let settings = state
        .services
        .events
        .update_notification_settings(caller.user_id(), patch.into())
        .await?;
    Ok(axum::Json(settings.into()))
}
