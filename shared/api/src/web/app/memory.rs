//! `/dashboard/memory`: the user's translation memory: its language pairs (counted, a full one
//! said so), a TMX file imported into a pair; and one pair's page: its passages a page at a time
//! (each forgotten with a button), the pair exported as TMX, every passage of it deleted.

use axum::extract::{FromRequest, Multipart, Request, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Form;
use booktr_core::memory::tmx::MAX_TMX_BYTES;
use booktr_core::memory::{Pair, DEFAULT_PAGE};
use minijinja::context;

use super::failure::page_error;
use super::page::page;
use super::session::{SignedIn, TokenForm};
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Routes;
use crate::routes::books::{multipart_error, read_limited, text_field};
use crate::routes::memory::tmx_file;
use crate::state::AppState;
use crate::wire::memory::{EntryPage, PairSummary};
use crate::wire::Mirror;

pub fn router() -> Routes {
    Routes::new()
        .route("/dashboard/memory", get(pairs))
        .route("/dashboard/memory/import", post(import))
        .route("/dashboard/memory/{source}/{target}", get(pair))
        .route("/dashboard/memory/{source}/{target}/export", get(export))
        .route(
            "/dashboard/memory/{source}/{target}/delete",
            post(delete_pair),
        )
        .route(
            "/dashboard/memory/{source}/{target}/{id}/delete",
            post(delete_entry),
        )
}

/// What an import said, carried to the pair's page in its address.
#[derive(serde::Deserialize)]
struct PairQuery {
    page: Option<usize>,
    offset: Option<usize>,
    remembered: Option<u32>,
    refused: Option<u32>,
    skipped: Option<u32>,
}

async fn pairs(State(state): State<AppState>, me: SignedIn) -> Response {
    match state.services.memory.pairs(&me.user.id).await {
        Ok(pairs) => {
            let pairs: Vec<PairSummary> = Mirror::mirror(pairs);
            let title = me.lang.get("memory");
            page(
                &state,
                Some(&me),
                me.lang,
                "app/memory.html",
                title,
                context! { pairs },
            )
            .await
            .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn pair(
    State(state): State<AppState>,
    me: SignedIn,
    Path((source, target)): Path<(String, String)>,
    Query(q): Query<PairQuery>,
) -> Response {
    let shown = async {
        let pair = Pair::parse(&source, &target)?;
        let number = q.page.unwrap_or(1).max(1);
        let offset = (number - 1).saturating_mul(DEFAULT_PAGE);
        let entries = state
            .services
            .memory
            .page(&me.user.id, &pair, offset, DEFAULT_PAGE)
            .await?;
        Ok::<_, ApiError>((number, EntryPage::from(entries)))
    }
    .await;
    match shown {
        Ok((number, entries)) => {
            let title = format!("{}: {source} → {target}", me.lang.get("memory"));
            let pages = entries.pair.entries.div_ceil(DEFAULT_PAGE as u64).max(1);
            let imported = q.remembered.map(|n| {
                context! { remembered => n, refused => q.refused.unwrap_or(0), skipped => q.skipped.unwrap_or(0) }
            });
            page(
                &state,
                Some(&me),
                me.lang,
                "app/memory_pair.html",
                &title,
                context! { memory => entries, number, pages, imported },
            )
            .await
            .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e),
    }
}

async fn export(
    State(state): State<AppState>,
    me: SignedIn,
    Path((source, target)): Path<(String, String)>,
    Query(q): Query<PairQuery>,
) -> Response {
    let exported = async {
        let pair = Pair::parse(&source, &target)?;
        let (tmx, next) = state
            .services
            .memory
            .export(&me.user.id, &pair, q.offset.unwrap_or(0))
            .await?;
        Ok::<_, ApiError>(tmx_file(&pair, tmx, next))
    }
    .await;
    exported.unwrap_or_else(|e| page_error(me.lang, e))
}

async fn delete_entry(
    State(state): State<AppState>,
    me: SignedIn,
    Path((source, target, id)): Path<(String, String, String)>,
    Form(form): Form<TokenForm>,
) -> Response {
    let deleted = async {
        me.check_form(form.csrf.as_deref())?;
        let pair = Pair::parse(&source, &target)?;
        state
            .services
            .memory
            .delete_entry(&me.user.id, &pair, &id)
            .await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match deleted {
        Ok(()) => Redirect::to(&format!("/dashboard/memory/{source}/{target}")).into_response(),
        Err(e) => page_error(me.lang, e),
    }
}

async fn delete_pair(
    State(state): State<AppState>,
    me: SignedIn,
    Path((source, target)): Path<(String, String)>,
    Form(form): Form<TokenForm>,
) -> Response {
    let deleted = async {
        me.check_form(form.csrf.as_deref())?;
        let pair = Pair::parse(&source, &target)?;
        state
            .services
            .memory
            .delete_pair(&me.user.id, &pair)
            .await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match deleted {
        Ok(()) => Redirect::to("/dashboard/memory").into_response(),
        Err(e) => page_error(me.lang, e),
    }
}

/// The import form: the CSRF token first, the pair's languages, the TMX file.
async fn import(State(state): State<AppState>, me: SignedIn, request: Request) -> Response {
    let imported = async {
        let mut multipart = Multipart::from_request(request, &state)
            .await
            .map_err(|e| ApiError::bad_request(e.body_text()))?;
        let (mut checked, mut source, mut target, mut file) = (false, None, None, None);
        while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
            let name = field.name().unwrap_or_default().to_string();
            if name == super::csrf::FIELD {
                me.check_form(Some(&text_field(field, &name).await?))?;
                checked = true;
                continue;
            }
            if !checked {
                me.check_form(None)?;
            }
            match name.as_str() {
                "source" => source = Some(text_field(field, &name).await?),
                "target" => target = Some(text_field(field, &name).await?),
                "file" => {
                    let bytes = read_limited(field, MAX_TMX_BYTES).await?.ok_or_else(|| {
                        ApiError::bad_request(me.lang.get("memory_tmx_file").to_string())
                    })?;
                    file = Some(bytes);
                }
                _ => {
                    text_field(field, &name).await?;
                }
            }
        }
        if !checked {
            me.check_form(None)?;
        }
        let pair = Pair::parse(
            source.as_deref().unwrap_or_default(),
            target.as_deref().unwrap_or_default(),
        )?;
        let file = file
            .filter(|f| !f.is_empty())
            .ok_or_else(|| ApiError::bad_request(me.lang.get("memory_tmx_file").to_string()))?;
        let text = String::from_utf8(file.to_vec())
            .map_err(|_| ApiError::bad_request("the TMX file must be UTF-8 text"))?;
        let done = state
            .services
            .memory
            .import(&me.user.id, &pair, &text)
            .await?;
        Ok::<_, ApiError>((pair, done))
    }
    .await;
    match imported {
        Ok((pair, done)) => Redirect::to(&format!(
            "/dashboard/memory/{}/{}?remembered={}&refused={}&skipped={}",
            pair.source, pair.target, done.recorded.remembered, done.recorded.refused, done.skipped
        ))
        .into_response(),
        Err(e) => page_error(me.lang, e),
    }
}
