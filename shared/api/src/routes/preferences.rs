//! Translation preferences: `GET/PATCH /api/settings/preferences` (the defaults a translation
//! start falls back on).

use axum::extract::State;
use serde::Deserialize;

use crate::error::ApiError;
use crate::extract::Json;
use crate::wire::preferences::Preferences;
use crate::wire::present;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::Routes;
use crate::state::AppState;

pub fn router() -> Routes {
    OpenApiRouter::new().routes(routes!(read, update))
}

/// Any subset of the fields; `defaultGlossaryId: null` clears the default glossary.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Changes {
    default_model: Option<String>,
    default_target_language: Option<String>,
    preserve_formatting: Option<bool>,
    auto_start_translation: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    default_glossary_id: Option<Option<String>>,
}

/// The defaults a translation start falls back on.
#[utoipa::path(get, path = "/api/settings/preferences", tag = "preferences", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Preferences", body = Preferences)))]
async fn read(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<Preferences>, ApiError> {
    Ok(axum::Json(
        state
            .services
            .translations
            .preferences(caller.user_id())
            .await?
            .into(),
    ))
}

#[utoipa::path(patch, path = "/api/settings/preferences", tag = "preferences", security(("apiKey" = []), ("session" = [])),
    request_body = Changes,
    responses((status = 200, description = "The preferences now", body = Preferences)))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Json(changes): Json<Changes>,
) -> Result<axum::Json<Preferences>, ApiError> {
    let translations = &state.services.translations;
    let mut preferences = translations.preferences(caller.user_id()).await?;
    if let Some(model) = changes.default_model {
        preferences.default_model = model;
    }
    if let Some(language) = changes.default_target_language {
        preferences.default_target_language = language;
    }
    if let Some(value) = changes.preserve_formatting {
        preferences.preserve_formatting = value;
    }
    if let Some(value) = changes.auto_start_translation {
        preferences.auto_start_translation = value;
    }
    if let Some(glossary) = changes.default_glossary_id {
        preferences.default_glossary_id = glossary;
    }
    Ok(axum::Json(
        translations
            .set_preferences(caller.user_id(), preferences)
            .await?
            .into(),
    ))
}
