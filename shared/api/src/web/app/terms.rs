//! A book's term list (`/dashboard/books/{id}/terms`): every term its chapters keep to, each
//! with its rendering and where it came from (the model's term pass, the glossary the run was
//! started with, the owner), as a table of fields. The owner changes renderings, removes terms
//! and adds one, in one form posted to the same path, which calls the service the API's
//! `PUT` calls; the glossary's terms are shown, and changed in the glossary. A run that paused
//! with its list ready (started with "stop when the term list is ready") is continued from
//! here with the book page's Resume.
//!
//! A change refused (a rendering the book cannot hold, a term the glossary fixes ...) answers
//! the page itself (400), saying why, with what was typed still in the fields.

use std::collections::{HashMap, HashSet};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Form;
use booktr_core::translation::{TermListChanges, TranslationError};
use booktr_translate::terms::TermOrigin;
use minijinja::context;
use serde::Deserialize;

use super::failure::page_error;
use super::page::page;
use super::session::SignedIn;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Routes;
use crate::state::AppState;

pub fn router() -> Routes {
    Routes::new().route("/dashboard/books/{id}/terms", get(show).post(save))
}

#[derive(Deserialize)]
struct ShownQuery {
    /// `1` after a change was saved.
    saved: Option<String>,
}

async fn show(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Query(q): Query<ShownQuery>,
) -> Response {
    let said = q.saved.is_some().then_some(Said::Saved);
    terms_page(&state, &me, &id, said, None)
        .await
        .unwrap_or_else(|r| r)
}

/// What the page says above the table.
enum Said {
    Saved,
    /// The change refused: the service's words (in English), or the page's own.
    Refused {
        text: String,
        ours: bool,
    },
}

/// What the owner typed in a form the service refused, shown again in its fields.
#[derive(Default)]
struct Typed {
    /// Rendering typed, by term.
    targets: HashMap<String, String>,
    /// Terms ticked for removal.
    removed: HashSet<String>,
    new_source: String,
    new_target: String,
}

/// The page: the list as it is now (with `typed` over it when a change was refused).
async fn terms_page(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    said: Option<Said>,
    typed: Option<Typed>,
) -> Result<Response, Response> {
    let fail = |e: ApiError| page_error(me.lang, e);
    let services = &state.services;
    let book = services
        .books
        .get(&me.user.id, id)
        .await
        .map_err(|e| fail(e.into()))?;
    let list = services
        .translations
        .term_list(&me.user.id, id)
        .await
        .map_err(|e| fail(e.into()))?;
    let status = services
        .translations
        .status(&me.user.id, id)
        .await
        .map_err(|e| fail(e.into()))?;
    let typed = typed.unwrap_or_default();
    let mut glossary = Vec::new();
    let mut terms = Vec::new();
    for entry in list.terms {
        let origin = match entry.origin {
            TermOrigin::Model => "model",
            TermOrigin::Glossary => "glossary",
            TermOrigin::Owner => "owner",
        };
        if entry.origin == TermOrigin::Glossary {
            glossary.push(context! { source => entry.source, target => entry.target });
            continue;
        }
        let shown = typed
            .targets
            .get(&entry.source)
            .cloned()
            .unwrap_or_else(|| entry.target.clone());
        terms.push(context! {
            removed => typed.removed.contains(&entry.source),
            source => entry.source,
            was => entry.target,
            target => shown,
            origin,
            occurrences => entry.occurrences,
        });
    }
    let (saved, refused) = match said {
        Some(Said::Saved) => (true, None),
        Some(Said::Refused { text, ours }) => (false, Some(context! { text, ours })),
        None => (false, None),
    };
    let status_code = if refused.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    let data = context! {
        book => context! { id => book.id.clone(), title => book.title.clone() },
        ready => list.ready,
        glossary,
        glossary_id => book.glossary_id.clone(),
        terms,
        new_source => typed.new_source,
        new_target => typed.new_target,
        paused_at_terms => status.paused_at_terms,
        saved,
        refused,
        max_chars => booktr_core::translation::MAX_TERM_CHARS,
    };
    let title = format!("{}: {}", me.lang.get("term_list"), book.title);
    let mut response = page(state, Some(me), me.lang, "app/terms.html", &title, data).await?;
    *response.status_mut() = status_code;
    Ok(response)
}

/// The form's changes: a row's rendering changed (and not ticked for removal) is set, a row
/// ticked is removed, and so is a row whose rendering was emptied; the new row, when either
/// of its fields is filled, is set. Rows are read in page order: `source`, `was`, `target` each.
fn changes(fields: &[(String, String)]) -> (TermListChanges, Typed) {
    let mut typed = Typed::default();
    let mut rows: Vec<[String; 3]> = Vec::new();
    for (name, value) in fields {
        match name.as_str() {
            "source" => rows.push([value.clone(), String::new(), String::new()]),
            "was" | "target" => {
                if let Some(row) = rows.last_mut() {
                    row[if name == "was" { 1 } else { 2 }] = value.clone();
                }
            }
            "remove" => {
                typed.removed.insert(value.clone());
            }
            "newSource" => typed.new_source = value.clone(),
            "newTarget" => typed.new_target = value.clone(),
            _ => {}
        }
    }
    let mut changes = TermListChanges::default();
    let mut removed: Vec<String> = Vec::new();
    for [source, was, target] in rows {
        if typed.removed.contains(&source) || target.trim().is_empty() {
            removed.push(source.clone());
        } else if target.trim() != was.trim() {
            changes.set.push((source.clone(), target.clone()));
        }
        typed.targets.insert(source, target);
    }
    // Ticked terms in the order the page lists them, each once.
    for source in &removed {
        if !changes.remove.contains(source) {
            changes.remove.push(source.clone());
        }
    }
    if !typed.new_source.trim().is_empty() || !typed.new_target.trim().is_empty() {
        changes
            .set
            .push((typed.new_source.clone(), typed.new_target.clone()));
    }
    (changes, typed)
}

async fn save(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(refused) = me.check_fields(&fields) {
        return page_error(me.lang, refused);
    }
    let (changes, typed) = changes(&fields);
    if changes.set.is_empty() && changes.remove.is_empty() {
        return Redirect::to(&format!("/dashboard/books/{id}/terms")).into_response();
    }
    // A new term needs both its fields.
    if !typed.new_source.trim().is_empty() && typed.new_target.trim().is_empty()
        || typed.new_source.trim().is_empty() && !typed.new_target.trim().is_empty()
    {
        let said = Said::Refused {
            text: me.lang.get("term_new_both").to_string(),
            ours: true,
        };
        return terms_page(&state, &me, &id, Some(said), Some(typed))
            .await
            .unwrap_or_else(|r| r);
    }
    match state
        .services
        .translations
        .change_term_list(&me.user.id, &id, changes)
        .await
    {
        Ok(_) => Redirect::to(&format!("/dashboard/books/{id}/terms?saved=1")).into_response(),
        Err(TranslationError::Invalid(text)) => {
            let said = Said::Refused { text, ours: false };
            terms_page(&state, &me, &id, Some(said), Some(typed))
                .await
                .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn only_changed_rows_are_set_ticked_or_emptied_ones_removed_and_the_new_row_added() {
        let (changes, typed) = changes(&form(&[
            ("csrf", "t"),
            ("source", "Queequeg"),
            ("was", "Quiqueg"),
            ("target", " Kwikweg "),
            ("source", "Ishmael"),
            ("was", "Ismael"),
            ("target", "Ismael"),
            ("source", "Pequod"),
            ("was", "Pecod"),
            ("target", "Pequod"),
            ("remove", "Pequod"),
            ("source", "Ahab"),
            ("was", "Acab"),
            ("target", "  "),
            ("newSource", "Starbuck"),
            ("newTarget", "Estarbuck"),
        ]));
        assert_eq!(
            changes.set,
            [
                ("Queequeg".to_string(), " Kwikweg ".to_string()),
                ("Starbuck".to_string(), "Estarbuck".to_string())
            ]
        );
        assert_eq!(changes.remove, ["Pequod", "Ahab"]);
        assert_eq!(typed.targets["Queequeg"], " Kwikweg ");
        assert!(typed.removed.contains("Pequod"));
    }

    #[test]
    fn a_form_with_nothing_changed_changes_nothing() {
        let (changes, _) = changes(&form(&[
            ("source", "Ishmael"),
            ("was", "Ismael"),
            ("target", "Ismael"),
            ("newSource", ""),
            ("newTarget", " "),
        ]));
        assert!(changes.set.is_empty() && changes.remove.is_empty());
    }
}
