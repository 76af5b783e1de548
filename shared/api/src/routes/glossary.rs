//! Glossaries: `GET/POST /api/glossary`, `GET/PATCH/DELETE /api/glossary/{id}`.

use axum::extract::State;
use axum::http::StatusCode;
use booktr_core::glossaries::GlossaryError;
use serde::{Deserialize, Serialize};

use super::{Success, SUCCESS};
use crate::error::ApiError;
use crate::extract::{Json, Path};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::glossaries::{EntryInput, Glossary};
use crate::wire::{present, Mirror};

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(one, update, remove))
}

impl From<GlossaryError> for ApiError {
    fn from(e: GlossaryError) -> Self {
        match e {
            GlossaryError::Invalid(m) => ApiError::bad_request(m),
            GlossaryError::NotFound => ApiError::not_found("glossary"),
            GlossaryError::Store(s) => s.into(),
            GlossaryError::Fault(f) => f.into(),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
struct GlossaryList {
    glossaries: Vec<Glossary>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Created {
    glossary: Glossary,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateGlossary {
    name: String,
    description: Option<String>,
    entries: Vec<EntryInput>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateGlossary {
    name: Option<String>,
    /// Absent: unchanged; null: cleared.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    description: Option<Option<String>>,
    entries: Option<Vec<EntryInput>>,
}

/// The caller's glossaries.
#[utoipa::path(get, path = "/api/glossary", tag = "glossaries", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Glossaries", body = GlossaryList)))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<GlossaryList>, ApiError> {
    let glossaries = state.services.glossaries.list(caller.user_id()).await?;
    Ok(axum::Json(GlossaryList {
        glossaries: Mirror::mirror(glossaries),
    }))
}

#[utoipa::path(post, path = "/api/glossary", tag = "glossaries", security(("apiKey" = []), ("session" = [])), request_body = CreateGlossary,
    responses((status = 201, description = "Created", body = Created)))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<CreateGlossary>,
) -> Result<(StatusCode, axum::Json<Created>), ApiError> {
    let glossary = state
        .services
        .glossaries
        .create(
            caller.user_id(),
            &body.name,
            body.description,
            Mirror::mirror(body.entries),
        )
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(Created {
            glossary: glossary.into(),
        }),
    ))
}

#[utoipa::path(get, path = "/api/glossary/{id}", tag = "glossaries", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The glossary's id")),
    responses((status = 200, description = "The glossary", body = Glossary),
        (status = 404, description = "No such glossary", body = ErrorBody)))]
async fn one(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Glossary>, ApiError> {
    Ok(axum::Json(
        state
            .services
            .glossaries
            .get(caller.user_id(), &id)
            .await?
            .into(),
    ))
}

/// Any subset of name, description (null clears it) and entries (replaces them all).
#[utoipa::path(patch, path = "/api/glossary/{id}", tag = "glossaries", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The glossary's id")), request_body = UpdateGlossary,
    responses((status = 200, description = "The glossary now", body = Glossary),
        (status = 404, description = "No such glossary", body = ErrorBody)))]
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
            Mirror::mirror(body.entries),
        )
        .await?;
    Ok(axum::Json(glossary.into()))
}

#[utoipa::path(delete, path = "/api/glossary/{id}", tag = "glossaries", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The glossary's id")),
    responses((status = 200, description = "Deleted", body = super::Success),
        (status = 404, description = "No such glossary", body = ErrorBody)))]
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
