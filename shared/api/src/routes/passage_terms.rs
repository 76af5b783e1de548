//! Terms from edits: `POST /api/books/{id}/terms/preview` lists the passages a term's new
//! rendering would change, `POST /api/books/{id}/terms/apply` changes the passages named and
//! puts the term in the book's glossary. (The edit's own answer suggests the changes:
//! `routes::passages`.) Served by the books group.

use axum::extract::State;
use booktr_core::translation::passages::{self as domain, PassageAt, TermRequest};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::passages::PassageFailure;
use crate::auth::Caller;
use crate::extract::{Json, Path};
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::passage_terms::{NamedPassage, TermApplied, TermPreview};

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(preview))
        .routes(routes!(apply))
}

/// Where a preview starts.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PreviewStart {
    /// The chapter's number, from 1.
    chapter: u32,
    /// The passage's place in the chapter, from 0.
    index: u32,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Preview {
    /// The term in the source language: only passages whose source has it are changed.
    source: String,
    /// The rendering the passages hold now.
    from: String,
    /// The new rendering.
    to: String,
    /// Where to start: the `next` of the previous page (default: the book's first passage).
    start: Option<PreviewStart>,
    /// Passages listed at most, both lists together: 1 to 200 (default 50).
    #[schema(minimum = 1, maximum = 200)]
    limit: Option<u32>,
}

/// The passages a term's new rendering would change, from `start` on: those holding the model's
/// text, and apart those the owner edited. A page lists at most `limit` passages and reads at
/// most 20 chapters; `next` says where the next page starts.
#[utoipa::path(post, path = "/api/books/{id}/terms/preview", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id")),
    request_body = Preview,
    responses((status = 200, description = "A page of the preview", body = TermPreview),
        (status = 400, description = "An empty or too long term or rendering, the same rendering, a rendering with a character the book cannot hold (`invalid_character`), a bad start or limit", body = ErrorBody),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn preview(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<Preview>,
) -> Result<axum::Json<TermPreview>, PassageFailure> {
    let request = TermRequest::new(&body.source, &body.from, &body.to)?;
    let start = body.start.map_or(
        PassageAt {
            chapter: 1,
            index: 0,
        },
        |s| PassageAt {
            chapter: s.chapter,
            index: s.index,
        },
    );
    let limit = body.limit.map_or(domain::DEFAULT_PAGE, |l| l as usize);
    let preview = state
        .services
        .translations
        .preview_term(caller.user_id(), &id, &request, start, limit)
        .await?;
    Ok(axum::Json(preview.into()))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Apply {
    /// The term in the source language.
    source: String,
    /// The rendering the passages hold now.
    from: String,
    /// The new rendering.
    to: String,
    /// The passages to change (1 to 200), each with the version the preview showed. A passage
    /// the owner edited is changed only when named here.
    passages: Vec<NamedPassage>,
}

/// Changes the passages named to the term's new rendering, each as the owner's edit written only
/// while it is at the version named (one changed since is skipped with `version_conflict` and
/// the passage now, never overwritten), and puts the term in the book's glossary (a new one
/// when the book has none), which later runs use. The glossary is written only when at least
/// one passage takes the rendering: when none does, `applied` is empty and `glossary` null. A
/// rendering the book cannot hold (a character XML 1.0 forbids, a bidirectional control the
/// term's source has not) is refused whole (400 `invalid_character`); a passage whose text
/// with it would be refused as an edit is skipped. The book's files are made again on the next
/// download.
#[utoipa::path(post, path = "/api/books/{id}/terms/apply", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id")),
    request_body = Apply,
    responses((status = 200, description = "What was changed and what was skipped", body = TermApplied),
        (status = 400, description = "An empty or too long term or rendering, the same rendering, a rendering with a character the book cannot hold (`invalid_character`, naming its place and code point), no passages or more than 200, a passage named twice, a glossary that cannot take the term", body = ErrorBody),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn apply(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<Apply>,
) -> Result<axum::Json<TermApplied>, PassageFailure> {
    let request = TermRequest::new(&body.source, &body.from, &body.to)?;
    let named: Vec<(PassageAt, u64)> = body
        .passages
        .iter()
        .map(|p| {
            let at = PassageAt {
                chapter: p.chapter,
                index: p.index,
            };
            (at, p.version)
        })
        .collect();
    let applied = state
        .services
        .translations
        .apply_term(caller.user_id(), &id, &request, &named)
        .await?;
    Ok(axum::Json(applied.into()))
}
