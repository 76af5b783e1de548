//! API keys: `GET/POST /api/keys`, `DELETE /api/keys/{id}`.

use axum::extract::{Path, State};
use axum::routing::{delete, get};
use axum::Router;
use booktr_core::accounts::ApiKey;
use booktr_core::types::Scope;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Success, SUCCESS};
use crate::error::ApiError;
use crate::extract::Json;
use crate::{AppState, Caller};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/keys", get(list).post(create))
        .route("/api/keys/{id}", delete(revoke))
}

#[derive(Serialize)]
struct KeyList {
    keys: Vec<ApiKey>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateKey {
    name: String,
    scopes: Option<Vec<Scope>>,
    expires_at: Option<DateTime<Utc>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreatedKey {
    key: ApiKey,
    secret_key: String,
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<KeyList>, ApiError> {
    let keys = state.services.accounts.list_keys(caller.user_id()).await?;
    Ok(axum::Json(KeyList { keys }))
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<CreateKey>,
) -> Result<axum::Json<CreatedKey>, ApiError> {
    let created = state
        .services
        .accounts
        .create_key(&caller.0.user, &body.name, body.scopes, body.expires_at)
        .await?;
    Ok(axum::Json(CreatedKey {
        key: created.key,
        secret_key: created.secret,
    }))
}

async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Success>, ApiError> {
    state
        .services
        .accounts
        .revoke_key(caller.user_id(), &id)
        .await
        .map_err(|e| match e {
            booktr_core::accounts::AccountsError::NotFound => ApiError::not_found("API key"),
            e => e.into(),
        })?;
    Ok(axum::Json(SUCCESS))
}
