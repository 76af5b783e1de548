//! `/dashboard/glossaries`: the user's glossaries, a new one (empty or from a CSV file), and one
//! glossary's page: its name, its entries as a table of fields (rows added three at a time),
//! a CSV file imported in place of the entries, the CSV exported, deletion.

use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Form;
use booktr_core::glossaries::{csv, EntryInput};
use minijinja::context;

use super::failure::page_error;
use super::page::page;
use super::session::{field, SignedIn, TokenForm};
use crate::error::ApiError;
use crate::extract::Path;
use crate::openapi::Routes;
use crate::routes::books::{multipart_error, read_limited, text_field};
use crate::state::AppState;
use crate::wire::glossaries::Glossary;
use crate::wire::Mirror;

/// The largest CSV file taken (2,000 entries of long terms fit well within).
const MAX_CSV_BYTES: usize = 2 * 1024 * 1024;
/// Empty rows offered below the entries, for new ones.
const BLANK_ROWS: usize = 3;

pub fn router() -> Routes {
    Routes::new()
        .route("/dashboard/glossaries", get(list).post(create))
        .route("/dashboard/glossaries/{id}", get(glossary))
        .route("/dashboard/glossaries/{id}/save", post(save))
        .route("/dashboard/glossaries/{id}/import", post(import))
        .route("/dashboard/glossaries/{id}/export", get(export))
        .route("/dashboard/glossaries/{id}/delete", post(delete))
}

async fn list(State(state): State<AppState>, me: SignedIn) -> Response {
    match state.services.glossaries.list(&me.user.id).await {
        Ok(glossaries) => {
            let glossaries: Vec<Glossary> = Mirror::mirror(glossaries);
            let title = me.lang.get("glossaries");
            page(
                &state,
                Some(&me),
                me.lang,
                "app/glossaries.html",
                title,
                context! { glossaries },
            )
            .await
            .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e.into()),
    }
}

/// A multipart form of ours: the CSRF token first, then text fields and at most one CSV file.
struct CsvForm {
    fields: Vec<(String, String)>,
    csv: Option<String>,
}

async fn csv_form(state: &AppState, me: &SignedIn, request: Request) -> Result<CsvForm, ApiError> {
    let mut multipart = Multipart::from_request(request, state)
        .await
        .map_err(|e| ApiError::bad_request(e.body_text()))?;
    let (mut checked, mut form) = (
        false,
        CsvForm {
            fields: Vec::new(),
            csv: None,
        },
    );
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
        if name == "file" {
            let picked = field.file_name().is_some_and(|n| !n.is_empty());
            let bytes = read_limited(field, MAX_CSV_BYTES)
                .await?
                .ok_or_else(|| ApiError::bad_request("the CSV file is larger than 2 MB"))?;
            if picked && !bytes.is_empty() {
                let text = String::from_utf8(bytes.to_vec())
                    .map_err(|_| ApiError::bad_request("the CSV file must be UTF-8 text"))?;
                form.csv = Some(text);
            }
        } else {
            let value = text_field(field, &name).await?;
            form.fields.push((name, value));
        }
    }
    if !checked {
        me.check_form(None)?;
    }
    Ok(form)
}

fn entries_of(csv_text: &str) -> Result<Vec<EntryInput>, ApiError> {
    Ok(csv::rows(csv_text)
        .map_err(|e| ApiError::bad_request(e.to_string()))?
        .into_iter()
        .map(|(_, entry)| entry)
        .collect())
}

async fn create(State(state): State<AppState>, me: SignedIn, request: Request) -> Response {
    let created = async {
        let form = csv_form(&state, &me, request).await?;
        let field = |name: &str| {
            form.fields
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let entries = form
            .csv
            .as_deref()
            .map(entries_of)
            .transpose()?
            .unwrap_or_default();
        let glossary = state
            .services
            .glossaries
            .create(
                &me.user.id,
                &field("name").unwrap_or_default(),
                field("description"),
                entries,
            )
            .await?;
        Ok::<_, ApiError>(glossary.id)
    }
    .await;
    match created {
        Ok(id) => Redirect::to(&format!("/dashboard/glossaries/{id}")).into_response(),
        Err(e) => page_error(me.lang, e),
    }
}

async fn glossary(State(state): State<AppState>, me: SignedIn, Path(id): Path<String>) -> Response {
    match state.services.glossaries.get(&me.user.id, &id).await {
        Ok(glossary) => {
            let blanks: Vec<usize> = (0..BLANK_ROWS).collect();
            let title = glossary.name.clone();
            page(
                &state,
                Some(&me),
                me.lang,
                "app/glossary.html",
                &title,
                context! { glossary => Glossary::from(glossary), blanks },
            )
            .await
            .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e.into()),
    }
}

/// The table's fields in page order: each row is `id` (empty for a new row), `source`,
/// `target`, `context`; a row left empty is dropped, and so is the entry it held. Every field
/// is sent as written, so an emptied context clears it and an emptied term is refused.
fn table(fields: &[(String, String)]) -> Vec<EntryInput> {
    let mut rows: Vec<[String; 4]> = Vec::new();
    for (name, value) in fields {
        let column = match name.as_str() {
            "id" => {
                rows.push(Default::default());
                0
            }
            "source" => 1,
            "target" => 2,
            "context" => 3,
            _ => continue,
        };
        if let Some(row) = rows.last_mut() {
            row[column] = value.trim().to_string();
        }
    }
    rows.into_iter()
        .filter(|[_, source, target, context]| {
            !(source.is_empty() && target.is_empty() && context.is_empty())
        })
        .map(|[id, source, target, context]| EntryInput {
            id: Some(id).filter(|id| !id.is_empty()),
            source: Some(source),
            target: Some(target),
            context: Some(context),
        })
        .collect()
}

async fn save(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(e) = me.check_fields(&fields) {
        return page_error(me.lang, e);
    }
    let name = field(&fields, "name");
    match state
        .services
        .glossaries
        .update(&me.user.id, &id, name, None, Some(table(&fields)))
        .await
    {
        Ok(_) => Redirect::to(&format!("/dashboard/glossaries/{id}")).into_response(),
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn import(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let imported = async {
        let form = csv_form(&state, &me, request).await?;
        let text = form
            .csv
            .ok_or_else(|| ApiError::bad_request(me.lang.get("csv_missing")))?;
        let entries = entries_of(&text)?;
        state
            .services
            .glossaries
            .update(&me.user.id, &id, None, None, Some(entries))
            .await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match imported {
        Ok(()) => Redirect::to(&format!("/dashboard/glossaries/{id}")).into_response(),
        Err(e) => page_error(me.lang, e),
    }
}

async fn export(State(state): State<AppState>, me: SignedIn, Path(id): Path<String>) -> Response {
    match state.services.glossaries.get(&me.user.id, &id).await {
        Ok(glossary) => {
            // The name as a file name: letters, digits and dashes.
            let stem: String = glossary
                .name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            (
                [
                    (CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                    (
                        CONTENT_DISPOSITION,
                        format!("attachment; filename=\"{}.csv\"", stem.trim_matches('-')),
                    ),
                    (CACHE_CONTROL, "private, no-store".to_string()),
                ],
                csv::write(&glossary.entries),
            )
                .into_response()
        }
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn delete(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(form): Form<TokenForm>,
) -> Response {
    if let Err(e) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, e);
    }
    match state.services.glossaries.delete(&me.user.id, &id).await {
        Ok(()) => Redirect::to("/dashboard/glossaries").into_response(),
        Err(e) => page_error(me.lang, e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_keeps_rows_in_order_with_their_ids_and_drops_empty_ones() {
        let fields: Vec<(String, String)> = [
            ("csrf", "t"),
            ("name", "Sea"),
            ("id", "e1"),
            ("source", "whale"),
            ("target", "ballena"),
            ("context", ""),
            ("id", "e2"),
            ("source", ""),
            ("target", ""),
            ("context", ""),
            ("id", ""),
            ("source", "Ahab"),
            ("target", "Acab"),
            ("context", "the captain"),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
        let rows = table(&fields);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].id.as_deref(), Some("e1"));
        assert_eq!(
            rows[0].context.as_deref(),
            Some(""),
            "an emptied context clears it"
        );
        assert_eq!(rows[1].id, None);
        assert_eq!(rows[1].context.as_deref(), Some("the captain"));
    }
}
