//! Re-translations of a passage or a chapter, as proposals the owner accepts or discards:
//! `POST /api/books/{id}/chapters/{number}/passages/{index}/retranslate`,
//! `POST /api/books/{id}/chapters/{number}/retranslate` (each also a quote, with `"quote":
//! true`), `GET /api/books/{id}/proposals`, `GET /api/books/{id}/proposals/{proposalId}` and its
//! `accept` and `discard`. Served by the books group (its Lambda takes `/api/books/{proxy+}`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use booktr_core::translation::passages::proposals::{ProposalError, RetranslateRequest, Scope};
use booktr_core::translation::passages::PassageAt;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::passages::PassageFailure;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::proposals::{Proposal, ProposalList, RetranslationQuote};

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(retranslate_passage))
        .routes(routes!(retranslate_chapter))
        .routes(routes!(list_proposals))
        .routes(routes!(proposal))
        .routes(routes!(accept_proposal))
        .routes(routes!(discard_proposal))
}

/// A failure of a proposal's route: a passage's failure as the passage routes answer it (a
/// `409` with the passage now), a run's (`quota_exceeded`, a model the plan does not allow) as
/// a start answers it, and `409 proposal_not_ready`.
struct ProposalFailure(ProposalError);

impl From<ProposalError> for ProposalFailure {
    fn from(e: ProposalError) -> Self {
        ProposalFailure(e)
    }
}

impl IntoResponse for ProposalFailure {
    fn into_response(self) -> Response {
        match self.0 {
            ProposalError::Passage(e) => PassageFailure::from(e).into_response(),
            ProposalError::Translation(e) => ApiError::from(e).into_response(),
            e @ ProposalError::NotReady(_) => {
                ApiError::new(StatusCode::CONFLICT, "proposal_not_ready", e.to_string())
                    .into_response()
            }
        }
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Retranslate {
    /// What the owner asks of the translation ("more formal", "keep the pun", "use
    /// 'usted'"), at most 500 characters; said to the model in every pass's prompt, as text.
    #[schema(max_length = 500)]
    instruction: Option<String>,
    /// One of the plan's models; the book's model by default.
    model: Option<String>,
    /// Translate the owner's passages (edited, accepted or kept) too; they are left alone by
    /// default.
    #[serde(default)]
    include_edited: bool,
    /// Answer what it would use and cost (200), without starting it.
    #[serde(default)]
    quote: bool,
}

impl Retranslate {
    fn request(self) -> RetranslateRequest {
        RetranslateRequest {
            instruction: self.instruction,
            model: self.model,
            include_edited: self.include_edited,
        }
    }
}

/// The proposal asked for (202), or with `"quote": true` its quote (200).
async fn retranslate(
    state: AppState,
    caller: Caller,
    id: String,
    scope: Scope,
    body: Retranslate,
) -> Result<Response, ProposalFailure> {
    let translations = &state.services.translations;
    let user = &caller.0.user;
    if body.quote {
        let quote = translations
            .quote_retranslation(user, &id, scope, body.request())
            .await?;
        return Ok(axum::Json(RetranslationQuote::from(quote)).into_response());
    }
    let proposal = translations
        .retranslate(user, &id, scope, body.request())
        .await?;
    Ok((StatusCode::ACCEPTED, axum::Json(Proposal::from(proposal))).into_response())
}

/// Translates the passage again, optionally with an instruction and another model, through the
/// same checks as any translation, as a proposal to accept or discard. Charged like a run: its
/// words come out of the month's quota (given back if it fails), its model cost counts on the
/// book. It runs as a queued job: follow it with `GET /api/books/{id}/proposals/{proposalId}`.
#[utoipa::path(post, path = "/api/books/{id}/chapters/{number}/passages/{index}/retranslate", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("number" = u32, Path, description = "The chapter's number, from 1"),
        ("index" = u32, Path, description = "The passage's place in the chapter, from 0")),
    request_body = Retranslate,
    responses((status = 202, description = "The proposal, pending", body = Proposal),
        (status = 200, description = "With `\"quote\": true`: what it would use and cost", body = RetranslationQuote),
        (status = 400, description = "A bad request: an instruction too long, a model the plan does not allow, a chapter not translated yet, the owner's passage without `includeEdited`, the month's quota (`quota_exceeded`)", body = ErrorBody),
        (status = 404, description = "No such book, chapter or passage", body = ErrorBody)))]
async fn retranslate_passage(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, number, index)): Path<(String, u32, u32)>,
    Json(body): Json<Retranslate>,
) -> Result<Response, ProposalFailure> {
    let at = PassageAt {
        chapter: number,
        index,
    };
    retranslate(state, caller, id, Scope::Passage(at), body).await
}

/// Translates the chapter's passages again (the owner's own left alone unless
/// `includeEdited`), optionally with an instruction and another model, as a proposal to accept
/// or discard: see the passage's `retranslate`.
#[utoipa::path(post, path = "/api/books/{id}/chapters/{number}/retranslate", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("number" = u32, Path, description = "The chapter's number, from 1")),
    request_body = Retranslate,
    responses((status = 202, description = "The proposal, pending", body = Proposal),
        (status = 200, description = "With `\"quote\": true`: what it would use and cost", body = RetranslationQuote),
        (status = 400, description = "A bad request: an instruction too long, a model the plan does not allow, a chapter not translated yet or all the owner's, the month's quota (`quota_exceeded`)", body = ErrorBody),
        (status = 404, description = "No such book or chapter", body = ErrorBody)))]
async fn retranslate_chapter(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, number)): Path<(String, u32)>,
    Json(body): Json<Retranslate>,
) -> Result<Response, ProposalFailure> {
    retranslate(state, caller, id, Scope::Chapter(number), body).await
}

/// The book's proposals, newest first, without their passages.
#[utoipa::path(get, path = "/api/books/{id}/proposals", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id")),
    responses((status = 200, description = "The proposals", body = ProposalList),
        (status = 404, description = "No such book", body = ErrorBody)))]
async fn list_proposals(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<ProposalList>, ProposalFailure> {
    let proposals = state
        .services
        .translations
        .proposals(caller.user_id(), &id)
        .await?;
    Ok(axum::Json(ProposalList {
        proposals: proposals.into_iter().map(Proposal::from).collect(),
    }))
}

/// The proposal, with its passages once it is ready.
#[utoipa::path(get, path = "/api/books/{id}/proposals/{proposalId}", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("proposalId" = String, Path, description = "The proposal's id")),
    responses((status = 200, description = "The proposal", body = Proposal),
        (status = 404, description = "No such book or proposal", body = ErrorBody)))]
async fn proposal(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, proposal_id)): Path<(String, String)>,
) -> Result<axum::Json<Proposal>, ProposalFailure> {
    let proposal = state
        .services
        .translations
        .proposal(caller.user_id(), &id, &proposal_id)
        .await?;
    Ok(axum::Json(proposal.into()))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Accept {
    /// The passages to accept, by their place in the chapter, whatever their flags; left out,
    /// every passage not accepted yet whose proposed text nothing was found wrong with.
    passages: Option<Vec<u32>>,
}

/// Accepts the proposal's passages: each becomes the owner's text (origin `retranslated`),
/// kept through later runs, undoable, its flags cleared; written only while the passage is at
/// the version the proposal was made against.
#[utoipa::path(post, path = "/api/books/{id}/proposals/{proposalId}/accept", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("proposalId" = String, Path, description = "The proposal's id")),
    request_body = Accept,
    responses((status = 200, description = "The proposal now (its passages marked accepted)", body = Proposal),
        (status = 400, description = "A passage that is not in the proposal", body = ErrorBody),
        (status = 404, description = "No such book or proposal", body = ErrorBody),
        (status = 409, description = "A passage changed since the proposal was made (`version_conflict`, with the passage now; the passages before it are accepted), or a proposal that is not ready (`proposal_not_ready`)", body = ErrorBody)))]
async fn accept_proposal(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, proposal_id)): Path<(String, String)>,
    Json(body): Json<Accept>,
) -> Result<axum::Json<Proposal>, ProposalFailure> {
    let proposal = state
        .services
        .translations
        .accept_proposal(caller.user_id(), &id, &proposal_id, body.passages)
        .await?;
    Ok(axum::Json(proposal.into()))
}

/// Discards the proposal: nothing of it is written; one still pending is dropped by its job.
#[utoipa::path(post, path = "/api/books/{id}/proposals/{proposalId}/discard", tag = "passages",
    security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The book's id"),
        ("proposalId" = String, Path, description = "The proposal's id")),
    responses((status = 200, description = "The proposal, discarded", body = Proposal),
        (status = 404, description = "No such book or proposal", body = ErrorBody)))]
async fn discard_proposal(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, proposal_id)): Path<(String, String)>,
) -> Result<axum::Json<Proposal>, ProposalFailure> {
    let proposal = state
        .services
        .translations
        .discard_proposal(caller.user_id(), &id, &proposal_id)
        .await?;
    Ok(axum::Json(proposal.into()))
}
