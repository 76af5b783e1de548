//! Re-translation from the editor: a passage's editor and the reader's review ask for one with
//! an optional instruction (`POST /dashboard/books/{id}/retranslate`: `chapter`, `index` for a
//! passage alone, `instruction`), charged and checked as the API's (a passage alone even when it
//! is the owner's text; a chapter leaving the owner's passages alone); its page
//! (`/dashboard/books/{id}/proposals/{proposalId}`) says it is being translated until its job
//! has run, then shows each passage's text now beside the one proposed, with Accept (the
//! passages the checks passed) and Discard (`POST .../proposals/{proposalId}/accept` or
//! `discard`). A passage whose every answer failed a check shows the model's last answer and
//! what it failed, with "Accept it anyway" (the same form naming it: `passages`), which takes it
//! knowingly. Accept and Discard always say what they did: a passage's proposal comes back to the
//! passage in the reader, its editor saying so (`done=accepted`, `accepted_with`, `discarded`); a
//! chapter's, or an Accept that took nothing, comes back to the proposal's page saying so.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Form;
use booktr_core::books::Chapter;
use booktr_core::translation::passages::proposals::{
    Proposal, ProposalError, ProposalStatus, RetranslateRequest, Scope,
};
use booktr_core::translation::passages::PassageAt;
use minijinja::context;
use serde::Deserialize;

use super::failure::page_error;
use super::page::page;
use super::passage::{passage_error, preview_value};
use super::paths::passage_href;
use super::session::SignedIn;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Routes;
use crate::state::AppState;
use crate::web::reader::chapter_label;
use crate::web::words::first_words;

pub fn router() -> Routes {
    Routes::new()
        .route("/dashboard/books/{id}/retranslate", post(ask))
        .route("/dashboard/books/{id}/proposals/{proposal}", get(show))
        .route(
            "/dashboard/books/{id}/proposals/{proposal}/{action}",
            post(decide),
        )
}

#[derive(Deserialize)]
struct AskForm {
    csrf: Option<String>,
    chapter: Option<u32>,
    index: Option<u32>,
    instruction: Option<String>,
}

async fn ask(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(form): Form<AskForm>,
) -> Response {
    if let Err(refused) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, refused);
    }
    let chapter = form.chapter.unwrap_or(1);
    let scope = match form.index {
        Some(index) => Scope::Passage(PassageAt { chapter, index }),
        None => Scope::Chapter(chapter),
    };
    let request = RetranslateRequest {
        instruction: form
            .instruction
            .map(|i| i.trim().to_string())
            .filter(|i| !i.is_empty()),
        // A passage asked for from its editor is translated again even when it is the owner's
        // text; a chapter leaves the owner's passages alone.
        include_edited: matches!(scope, Scope::Passage(_)),
        ..RetranslateRequest::default()
    };
    match state
        .services
        .translations
        .retranslate(&me.user, &id, scope, request)
        .await
    {
        Ok(proposal) => Redirect::to(&format!("/dashboard/books/{id}/proposals/{}", proposal.id))
            .into_response(),
        Err(e) => page_error(me.lang, proposal_error(e)),
    }
}

#[derive(Deserialize)]
struct ShowQuery {
    /// What the last form did: `accepted` (with `n`), `discarded` or `none`.
    said: Option<String>,
    n: Option<u32>,
}

async fn show(
    State(state): State<AppState>,
    me: SignedIn,
    Path((id, proposal_id)): Path<(String, String)>,
    Query(q): Query<ShowQuery>,
) -> Response {
    let proposal = match state
        .services
        .translations
        .proposal(&me.user.id, &id, &proposal_id)
        .await
    {
        Ok(proposal) => proposal,
        Err(e) => return page_error(me.lang, proposal_error(e)),
    };
    // Each passage named as the reader names it: its chapter's title (above the passages,
    // which share it) and its first words (of its text now, else of its source), linked to it
    // in the reader.
    let named = match named_passages(&state, &me, &id, &proposal).await {
        Ok(named) => named,
        Err(e) => return page_error(me.lang, e),
    };
    let words = |index: u32, current: Option<&str>| {
        named
            .words
            .get(&index)
            .cloned()
            .or_else(|| current.map(first_words))
            .unwrap_or_default()
    };
    let passages: Vec<_> = proposal
        .passages
        .iter()
        .map(|p| {
            context! {
                index => p.index,
                words => words(p.index, p.current.as_deref()),
                href => passage_href(&id, proposal.chapter, p.index),
                current => p.current.as_deref().map(preview_value),
                proposed => preview_value(&p.proposed),
                flagged => !p.flags.is_empty(),
                flags => p.flags.iter().map(|f| f.kind).collect::<Vec<_>>(),
                rejected => p.rejected,
                accepted => p.accepted,
            }
        })
        .collect();
    let back = match proposal.index {
        Some(index) => format!(
            "/dashboard/books/{id}/read?chapter={}&edit={index}#p-{index}",
            proposal.chapter
        ),
        None => format!("/dashboard/books/{id}/read?chapter={}", proposal.chapter),
    };
    let place = context! {
        label => chapter_label(me.lang, &named.chapters, proposal.chapter),
        href => match proposal.index {
            Some(index) => passage_href(&id, proposal.chapter, index),
            None => format!("/dashboard/books/{id}/read?chapter={}", proposal.chapter),
        },
        words => proposal.index.map(|index| {
            let current = proposal
                .passages
                .iter()
                .find(|p| p.index == index)
                .and_then(|p| p.current.as_deref());
            words(index, current)
        }),
    };
    let data = context! {
        book_id => id,
        place,
        proposal => context! {
            id => proposal.id,
            chapter => proposal.chapter,
            index => proposal.index,
            instruction => proposal.instruction,
            model => proposal.model,
            status => proposal.status.as_str(),
            pending => proposal.status == ProposalStatus::Pending,
            ready => proposal.status == ProposalStatus::Ready,
            error => proposal.error,
            // Accept (all) takes something: a passage the checks passed, not accepted yet.
            acceptable => proposal.passages.iter().any(|p| p.flags.is_empty() && !p.accepted),
            passages,
        },
        back,
        said => q.said.filter(|s| ["accepted", "discarded", "none"].contains(&s.as_str())),
        n => q.n.unwrap_or(0),
    };
    let title = me.lang.get("proposal_title");
    page(&state, Some(&me), me.lang, "app/proposal.html", title, data)
        .await
        .unwrap_or_else(|r| r)
}

/// Accept (the passages the checks passed, or those the form names: `passages`, each taken
/// whatever its flags) or Discard; either comes back saying what it did.
async fn decide(
    State(state): State<AppState>,
    me: SignedIn,
    Path((id, proposal_id, action)): Path<(String, String, String)>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(refused) = me.check_fields(&fields) {
        return page_error(me.lang, refused);
    }
    let translations = &state.services.translations;
    let user = &me.user.id;
    let named: Vec<u32> = fields
        .iter()
        .filter(|(name, _)| name == "passages")
        .filter_map(|(_, value)| value.trim().parse().ok())
        .collect();
    let here = format!("/dashboard/books/{id}/proposals/{proposal_id}");
    let (answer, before) = match action.as_str() {
        "accept" => {
            let before = match translations.proposal(user, &id, &proposal_id).await {
                Ok(proposal) => accepted_of(&proposal),
                Err(e) => return page_error(me.lang, proposal_error(e)),
            };
            let only = (!named.is_empty()).then_some(named);
            let answer = translations
                .accept_proposal(user, &id, &proposal_id, only)
                .await;
            (answer, Some(before))
        }
        "discard" => (
            translations.discard_proposal(user, &id, &proposal_id).await,
            None,
        ),
        _ => return page_error(me.lang, ApiError::not_found("action")),
    };
    let proposal = match answer {
        Ok(proposal) => proposal,
        Err(e) => return page_error(me.lang, proposal_error(e)),
    };
    let passage = |done: &str| {
        proposal.index.map(|index| {
            format!(
                "/dashboard/books/{id}/read?chapter={}&edit={index}&done={done}#p-{index}",
                proposal.chapter
            )
        })
    };
    let to = match before {
        None => passage("discarded").unwrap_or_else(|| format!("{here}?said=discarded")),
        Some(before) => {
            let newly: Vec<_> = proposal
                .passages
                .iter()
                .filter(|p| p.accepted && !before.contains(&p.index))
                .collect();
            let knowingly = newly.iter().any(|p| !p.flags.is_empty());
            match (
                newly.len(),
                passage(if knowingly {
                    "accepted_with"
                } else {
                    "accepted"
                }),
            ) {
                (0, _) => format!("{here}?said=none"),
                (_, Some(passage)) => passage,
                (n, None) => format!("{here}?said=accepted&n={n}"),
            }
        }
    };
    Redirect::to(&to).into_response()
}

/// What names a proposal's passages: the book's chapters, and the first words of each
/// passage's text now (else of its source).
struct Named {
    chapters: Vec<Chapter>,
    words: BTreeMap<u32, String>,
}

async fn named_passages(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    proposal: &Proposal,
) -> Result<Named, ApiError> {
    let chapters = state.services.books.chapters(id).await?;
    let indexes: Vec<u32> = proposal
        .passages
        .iter()
        .map(|p| p.index)
        .chain(proposal.index)
        .collect();
    let mut words = BTreeMap::new();
    if let (Some(&first), Some(&last)) = (indexes.iter().min(), indexes.iter().max()) {
        let page = state
            .services
            .translations
            .passages(
                &me.user.id,
                id,
                proposal.chapter,
                first as usize,
                (last - first) as usize + 1,
            )
            .await
            .map_err(passage_error)?;
        words = page
            .passages
            .iter()
            .filter(|p| indexes.contains(&p.index))
            .map(|p| (p.index, first_words(p.text.as_deref().unwrap_or(&p.source))))
            .collect();
    }
    Ok(Named { chapters, words })
}

/// The passages of `proposal` accepted so far.
fn accepted_of(proposal: &Proposal) -> Vec<u32> {
    proposal
        .passages
        .iter()
        .filter(|p| p.accepted)
        .map(|p| p.index)
        .collect()
}

fn proposal_error(e: ProposalError) -> ApiError {
    match e {
        ProposalError::Passage(e) => passage_error(e),
        ProposalError::Translation(e) => e.into(),
        e @ ProposalError::NotReady(_) => ApiError::new(
            axum::http::StatusCode::CONFLICT,
            "proposal_not_ready",
            e.to_string(),
        ),
    }
}
