//! Translation: `POST /api/translate`, `/api/translate/{pause,resume,stop}`,
//! `GET /api/translate/status`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;
use booktr_core::translation::{StartRequest, TranslationError, TranslationStatus};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::{Json, Query};
use crate::{AppState, Caller};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/translate", post(start))
        .route("/api/translate/pause", post(pause))
        .route("/api/translate/resume", post(resume))
        .route("/api/translate/stop", post(stop))
        .route("/api/translate/status", get(status))
}

impl From<TranslationError> for ApiError {
    fn from(e: TranslationError) -> Self {
        match e {
            TranslationError::Invalid(m) => ApiError::bad_request(m),
            TranslationError::NotFound => ApiError::not_found("book"),
            TranslationError::QuotaExceeded(m) => {
                ApiError::new(StatusCode::BAD_REQUEST, "quota_exceeded", m)
            }
            TranslationError::Store(s) => s.into(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Start {
    book_id: String,
    model: Option<String>,
    glossary_id: Option<String>,
    target_lang: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct BookRef {
    book_id: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Started {
    success: bool,
    message: String,
    jobs_created: u32,
}

#[derive(Serialize)]
struct Done {
    success: bool,
    message: &'static str,
}

#[derive(Serialize)]
struct Resumed {
    success: bool,
    message: String,
    resumed: u32,
    total: u32,
}

async fn start(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<Start>,
) -> Result<axum::Json<Started>, ApiError> {
    let request = StartRequest {
        book_id: body.book_id,
        model: body.model,
        glossary_id: body.glossary_id,
        target_lang: body.target_lang,
    };
    let jobs = state
        .services
        .translations
        .start(&caller.0.user, request)
        .await?;
    Ok(axum::Json(Started {
        success: true,
        message: format!("translation started: {jobs} chapters queued"),
        jobs_created: jobs,
    }))
}

async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<BookRef>,
) -> Result<axum::Json<Done>, ApiError> {
    state
        .services
        .translations
        .pause(caller.user_id(), &body.book_id)
        .await?;
    Ok(axum::Json(Done {
        success: true,
        message: "translation paused; the chapter in progress will finish and be kept",
    }))
}

async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<BookRef>,
) -> Result<axum::Json<Resumed>, ApiError> {
    let (resumed, total) = state
        .services
        .translations
        .resume(caller.user_id(), &body.book_id)
        .await?;
    Ok(axum::Json(Resumed {
        success: true,
        message: format!("translation resumed: {resumed} of {total} chapters queued"),
        resumed,
        total,
    }))
}

async fn stop(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<BookRef>,
) -> Result<axum::Json<Done>, ApiError> {
    state
        .services
        .translations
        .stop(caller.user_id(), &body.book_id)
        .await?;
    Ok(axum::Json(Done {
        success: true,
        message: "translation stopped; completed chapters are kept for the next start",
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusQuery {
    book_id: Option<String>,
}

async fn status(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<StatusQuery>,
) -> Result<axum::Json<TranslationStatus>, ApiError> {
    let book_id = q
        .book_id
        .filter(|id| !id.is_empty())
        .ok_or_else(|| ApiError::bad_request("the bookId query parameter is required"))?;
    Ok(axum::Json(
        state
            .services
            .translations
            .status(caller.user_id(), &book_id)
            .await?,
    ))
}
