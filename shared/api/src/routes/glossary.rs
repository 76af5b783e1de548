//! Glossaries: `GET/POST /api/glossary`, `GET/PATCH/DELETE /api/glossary/{id}`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use booktr_core::glossaries::{EntryInput, Glossary, GlossaryError};
use serde::{Deserialize, Deserializer, Serialize};

use super::{Success, SUCCESS};
use crate::error::ApiError;
use crate::extract::Json;
use crate::{AppState, Caller};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/glossary", get(list).post(create))
        .route("/api/glossary/{id}", get(one).patch(update).delete(remove))
}

impl From<GlossaryError> for ApiError {
    fn from(e: GlossaryError) -> Self {
        match e {
            GlossaryError::Invalid(m) => ApiError::bad_request(m),
            GlossaryError::NotFound => ApiError::not_found("glossary"),
            GlossaryError::Store(s) => s.into(),
        }
    }
}

#[derive(Serialize)]
struct GlossaryList {
    glossaries: Vec<Glossary>,
}

#[derive(Serialize)]
struct Created {
    glossary: Glossary,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateGlossary {
    name: String,
    description: Option<String>,
    entries: Vec<EntryInput>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateGlossary {
    name: Option<String>,
    /// Absent: unchanged; null: cleared.
    #[serde(default, deserialize_with = "present")]
    description: Option<Option<String>>,
    entries: Option<Vec<EntryInput>>,
}

/// Tells a field set to null apart from a field left out.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<GlossaryList>, ApiError> {
    let glossaries = state.services.glossaries.list(caller.user_id()).await?;
    Ok(axum::Json(GlossaryList { glossaries }))
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<CreateGlossary>,
) -> Result<(StatusCode, axum::Json<Created>), ApiError> {
    let glossary = state
        .services
        .glossaries
        .create(caller.user_id(), &body.name, body.description, body.entries)
        .await?;
    Ok((StatusCode::CREATED, axum::Json(Created { glossary })))
}

async fn one(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Glossary>, ApiError> {
    Ok(axum::Json(
        state.services.glossaries.get(caller.user_id(), &id).await?,
    ))
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<UpdateGlossary>,
) -> Result<axum::Json<Glossary>, ApiError> {
    let glossary = state
        .services
        .glossaries
        .update(
            caller.user_id(),
            &id,
            body.name,
            body.description,
            body.entries,
        )
        .await?;
    Ok(axum::Json(glossary))
}

async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Success>, ApiError> {
    state
        .services
        .glossaries
        .delete(caller.user_id(), &id)
        .await?;
    Ok(axum::Json(SUCCESS))
}
