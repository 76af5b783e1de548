//! The owner's reader, which is the book's editor (`/dashboard/books/{id}/read`): the reader's
//! page ([`crate::web::reader`]) with each translated passage marked when the checks flagged it
//! and an Edit link that opens it in place (`?edit=N#p-N`, N its place in the chapter): the
//! translation's markup in a field beside its source, the marks it must keep, a preview of
//! how they render, its flags in words, where its text came from, and Save, Preview, "Keep as it
//! is" (a flagged passage), Undo and "back to the model's text". "Next flagged passage" (`/dashboard/books/{id}/flagged`) walks
//! the book's flagged passages across chapters and pages, in reading order.
//!
//! Without JavaScript each button posts the editor's form to
//! `/dashboard/books/{id}/passages/{chapter}/{index}`, which calls the service the passages'
//! API calls and comes back to the passage (303 to `#p-N`). A refused change (marks unlike the
//! source's, an empty text, a passage changed since it was opened) answers the page itself,
//! its editor holding what was typed and saying why; a passage changed elsewhere shows its
//! text now, and the form then names its version, so saving again replaces it knowingly.
//! With JavaScript (`app.js`) the same form is posted in the background with
//! [`FRAGMENT_HEADER`] and answered with the editor alone, which takes the place of the one on
//! the page; Ctrl+Enter (⌘+Enter) saves, and the preview follows the typing.
//!
//! A save that renames one of the book's terms (as the API's edit answers its `termChanges`)
//! comes back to the passage with the change in its query (`term`, `from`, `to`), and the editor
//! offers it in the whole book: a form that posts to the preview of [`super::term_rename`].
//!
//! A save, an undo, a reset or a keep is the same write as the passages' API call, and counts
//! against the plan's request limits as that call does (`crate::limits::count_as_api_call`), on
//! top of the page budget; a preview changes nothing and is only a page.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Form;
use booktr_core::books::Book;
use booktr_core::translation::passages::review::LOW_CONFIDENCE;
use booktr_core::translation::passages::{
    Origin, Passage, PassageAt, PassageError, TermChange, TermRequest,
};
use booktr_formats::markup;
use booktr_translate::protocol::Pass;
use minijinja::{context, Value};
use serde::Deserialize;

use super::failure::page_error;
use super::page::{page, render};
use super::passage::{holds_source, passage_error, preview_value};
use super::reading;
use super::session::SignedIn;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Routes;
use crate::state::AppState;
use crate::web::reader::{self, Reader, View};

pub fn router() -> Routes {
    Routes::new()
        .route("/dashboard/books/{id}/read", get(read))
        .route("/dashboard/books/{id}/flagged", get(next_flagged))
        .route(
            "/dashboard/books/{id}/passages/{chapter}/{index}",
            post(change),
        )
}

/// The header the page's script sends to be answered with the editor alone.
pub const FRAGMENT_HEADER: &str = "x-booktr-fragment";

#[derive(Deserialize)]
struct ReaderQuery {
    chapter: Option<u32>,
    page: Option<u32>,
    view: Option<String>,
    /// The passage whose editor is open; its page is shown when no page is asked for.
    edit: Option<u32>,
    /// A passage whose page to show (the editor closed).
    near: Option<u32>,
    /// What the change just made did: `saved`, `undone`, `reset` or `kept`.
    done: Option<String>,
    /// `no_flagged` (none is left) or `wrapped` (back at the book's first flagged passage).
    note: Option<String>,
}

/// The term changes a save suggests, carried to the passage it goes back to: `term`, `from`,
/// `to`, in that order, once for each.
fn renames_in(pairs: &[(String, String)]) -> Vec<TermChange> {
    let mut renames: Vec<TermChange> = Vec::new();
    for (name, value) in pairs {
        match name.as_str() {
            "term" => renames.push(TermChange {
                source: value.clone(),
                from: String::new(),
                to: String::new(),
            }),
            "from" | "to" => {
                if let Some(last) = renames.last_mut() {
                    if name == "from" {
                        last.from = value.clone();
                    } else {
                        last.to = value.clone();
                    }
                }
            }
            _ => {}
        }
    }
    renames.truncate(MAX_RENAMES);
    renames
}

/// The most term changes one save offers.
const MAX_RENAMES: usize = 5;

/// The query that carries `renames` back to the passage.
fn renames_query(renames: &[TermChange]) -> String {
    use super::return_to::percent_encode as encode;
    renames
        .iter()
        .take(MAX_RENAMES)
        .map(|r| {
            format!(
                "&term={}&from={}&to={}",
                encode(&r.source),
                encode(&r.from),
                encode(&r.to)
            )
        })
        .collect()
}

/// What the editor says: what a change did, or why it was refused.
enum Said {
    /// `saved`, `undone`, `reset` or `kept`.
    Done(&'static str),
    /// The passage changed since the version the form named: its text now is shown.
    Stale,
    NothingToUndo,
    /// The marks are not the source's (a save refused, or a preview's warning).
    Marks(String),
    /// An empty or too long text.
    Invalid(String),
}

impl Said {
    fn done(key: &str) -> Option<Said> {
        [
            "saved",
            "undone",
            "reset",
            "kept",
            "accepted",
            "accepted_with",
            "discarded",
        ]
        .into_iter()
        .find(|k| *k == key)
        .map(Said::Done)
    }
}

/// An open editor.
struct Open {
    index: u32,
    /// The passage as it is now, when the caller has it already.
    passage: Option<Passage>,
    /// What the field holds when it is not the passage's text: what the owner typed.
    typed: Option<String>,
    /// The version the form names when it is not the passage's: the one the owner read.
    version: Option<u64>,
    said: Option<Said>,
    /// The book's terms the save renamed, offered to rename in the whole book.
    renames: Vec<TermChange>,
}

impl Open {
    fn at(index: u32, said: Option<Said>) -> Open {
        Open {
            index,
            passage: None,
            typed: None,
            version: None,
            said,
            renames: Vec::new(),
        }
    }
}

/// The owner's reader, a page of a chapter at a time; with `?edit=N`, passage N's editor open
/// on its page. The page opened is remembered as where to continue ([`reading`]).
async fn read(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Query(q): Query<ReaderQuery>,
    Query(pairs): Query<Vec<(String, String)>>,
    headers: HeaderMap,
) -> Response {
    let (view, asked) = View::chosen(q.view.as_deref(), &headers);
    let open = q.edit.map(|index| {
        let said = q.done.as_deref().and_then(Said::done);
        let saved = matches!(said, Some(Said::Done("saved")));
        Open {
            renames: if saved {
                renames_in(&pairs)
            } else {
                Vec::new()
            },
            ..Open::at(index, said)
        }
    });
    let shown = Shown {
        chapter: q.chapter.unwrap_or(1),
        page: q.page,
        near: q.edit.or(q.near),
        view,
        note: q.note,
    };
    match reader_page(&state, &me, &id, shown, open).await {
        Ok((mut response, at)) => {
            if asked {
                view.remember(&mut response);
            }
            reading::remember(&headers, reading::Scope::Owner, &id, at, &mut response);
            response
        }
        Err(response) => response,
    }
}

/// Which page of the reader.
struct Shown {
    chapter: u32,
    page: Option<u32>,
    /// Without a page: the page that shows this passage.
    near: Option<u32>,
    view: View,
    note: Option<String>,
}

/// The reader's page, with the editor `open` (its status is the editor's: 409 for a passage
/// changed since, 400 for a text refused), and the position shown.
async fn reader_page(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    shown: Shown,
    open: Option<Open>,
) -> Result<(Response, reading::Position), Response> {
    let fail = |e: ApiError| page_error(me.lang, e);
    let services = &state.services;
    let book = services
        .books
        .get(&me.user.id, id)
        .await
        .map_err(|e| fail(e.into()))?;
    let chapters = services
        .books
        .chapters(&book.id)
        .await
        .map_err(|e| fail(e.into()))?;
    let number = shown.chapter;
    let current = services
        .translations
        .side_by_side(&book, number)
        .await
        .map_err(|e| fail(e.into()))?
        .ok_or_else(|| fail(ApiError::not_found("chapter")))?;
    let translated = current.translation.as_ref().map(|t| t.blocks.as_slice());
    let page_number = match (shown.page, shown.near) {
        (Some(page), _) => page,
        (None, Some(index)) => reader::page_of(&current.source.blocks, translated, index as usize),
        (None, None) => 1,
    };
    let editions = booktr_core::books::store::editions_of(book.format);
    let prepared = reader::prepare(Reader {
        book: &book,
        base: &format!("/dashboard/books/{id}/read"),
        downloads: &format!("/dashboard/books/{id}/download"),
        private: true,
        signed_in: true,
        chapters: &chapters,
        number,
        page: page_number,
        current: &current,
        editions: &editions,
        view: shown.view,
        lang: me.lang,
        back: Some(format!("/dashboard/books/{id}")),
        continue_at: None,
        review: true,
    })
    .map_err(fail)?;
    // What is still open in the whole book, and the way to it from this page.
    let flagged = services
        .translations
        .flagged_passages(&me.user.id, id, 0, 1)
        .await
        .map_err(|e| fail(passage_error(e)))?
        .total;
    let review = context! {
        flagged,
        next => next_link(id, number, prepared.first_index.unwrap_or(0) as u32),
        retranslate => format!("/dashboard/books/{id}/retranslate"),
        desk => super::paths::review_path(id),
        chapter => number,
        note => shown.note.filter(|n| n == "no_flagged" || n == "wrapped"),
    };
    let (editor, status) = match open {
        Some(open) => match editor(state, me, &book, number, open).await.map_err(fail)? {
            Some((editor, status)) => (Some(editor), status),
            None => (None, StatusCode::OK),
        },
        None => (None, StatusCode::OK),
    };
    let data = context! { review, editor, ..prepared.data };
    let mut response = page(
        state,
        Some(me),
        me.lang,
        "app/reader.html",
        &prepared.title,
        data,
    )
    .await?;
    *response.status_mut() = status;
    let at = reading::Position {
        chapter: number,
        page: prepared.page,
    };
    Ok((response, at))
}

/// "Next flagged passage" from passage `from` of chapter `chapter` on.
fn next_link(id: &str, chapter: u32, from: u32) -> String {
    format!("/dashboard/books/{id}/flagged?chapter={chapter}&from={from}")
}

/// The editor of `open`'s passage of chapter `chapter`, as the templates show it, with the
/// page's status; None when there is no such passage or it has no translation to edit.
async fn editor(
    state: &AppState,
    me: &SignedIn,
    book: &Book,
    chapter: u32,
    open: Open,
) -> Result<Option<(Value, StatusCode)>, ApiError> {
    // A preview: what was typed shown, nothing changed.
    let preview = open.said.is_none() && open.typed.is_some();
    let passage = match open.passage {
        Some(passage) => passage,
        None => match find_passage(state, me, book, chapter, open.index).await? {
            Some(passage) => passage,
            None => return Ok(None),
        },
    };
    let Some(text) = passage.text.clone() else {
        return Ok(None);
    };
    let field = open.typed.unwrap_or(text);
    // A preview warns of marks a save would refuse.
    let said = match open.said {
        Some(said) => Some(said),
        None if preview => {
            booktr_translate::checks::marks_problem(&passage.source, &field).map(Said::Marks)
        }
        None => None,
    };
    let status = match &said {
        Some(Said::Stale | Said::NothingToUndo) => StatusCode::CONFLICT,
        Some(Said::Invalid(_)) => StatusCode::BAD_REQUEST,
        Some(Said::Marks(_)) if !preview => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    let invalid = status == StatusCode::BAD_REQUEST || (preview && said.is_some());
    let index = passage.index;
    let said = said.map(|said| said_view(said, &field, &passage));
    let flags: Vec<Value> = passage
        .flags
        .iter()
        .map(|f| context! { kind => f.kind, reason => f.reason.clone() })
        .collect();
    let low = passage.confidence.is_some_and(|c| c < LOW_CONFIDENCE);
    let marks: Vec<String> = markup::tags(&passage.source)
        .map(|tags| tags.iter().map(markup::tag_text).collect())
        .unwrap_or_default();
    let lang_tag =
        (book.target_lang != crate::web::words::UNKNOWN_LANGUAGE).then(|| book.target_lang.clone());
    let dir = if booktr_formats::render::is_rtl(&book.target_lang) {
        "rtl"
    } else {
        "ltr"
    };
    let id = &book.id;
    let editor = context! {
        index,
        action => format!("/dashboard/books/{id}/passages/{chapter}/{index}"),
        version => open.version.unwrap_or(passage.version),
        rows => (field.chars().count() / 60 + 2).clamp(3, 16),
        preview => preview_value(&field),
        text => field,
        marks,
        flags,
        origin => origin_view(&passage, me),
        undoable => passage.undoable > 0,
        // The owner's text (an edit, a re-translation accepted, the model's kept): a reset
        // gives the model's back.
        edited => !matches!(passage.origin, Some(Origin::Model { .. } | Origin::Memory) | None),
        // The model's text that needs a look (flagged, of low confidence, changed by a later
        // pass) can be kept as it is.
        keepable => !passage.flags.is_empty() || low || matches!(passage.origin, Some(Origin::Model { pass: Some(p) }) if p != Pass::Translate),
        confidence => passage.confidence,
        low,
        said,
        renames => rename_offers(&open.renames),
        rename => super::paths::rename_path(&book.id),
        invalid,
        lang_tag,
        dir,
        retranslate => format!("/dashboard/books/{id}/retranslate"),
        chapter,
        next => next_link(id, chapter, index + 1),
        close => format!("/dashboard/books/{id}/read?chapter={chapter}&near={index}#p-{index}"),
    };
    Ok(Some((editor, status)))
}

/// Passage `index` of chapter `chapter` as it is now; None when there is no such passage.
async fn find_passage(
    state: &AppState,
    me: &SignedIn,
    book: &Book,
    chapter: u32,
    index: u32,
) -> Result<Option<Passage>, ApiError> {
    let found = state
        .services
        .translations
        .passages(&me.user.id, &book.id, chapter, index as usize, 1)
        .await
        .map_err(passage_error)?;
    Ok(found.passages.into_iter().next())
}

/// The renames offered: each as a preview's form would send it (one it would refuse is not
/// offered).
fn rename_offers(renames: &[TermChange]) -> Vec<Value> {
    renames
        .iter()
        .filter(|r| TermRequest::new(&r.source, &r.from, &r.to).is_ok())
        .map(
            |r| context! { source => r.source.clone(), from => r.from.clone(), to => r.to.clone() },
        )
        .collect()
}

/// What the editor says about the last change: its message's key, the detail, whether it is an
/// alert, and for a stale version the passage's text now.
fn said_view(said: Said, field: &str, passage: &Passage) -> Value {
    let (key, detail, alert) = match said {
        Said::Done(done) => (format!("done_{done}"), None, false),
        Said::Stale => ("stale".to_string(), None, true),
        Said::NothingToUndo => ("nothing_to_undo".to_string(), None, true),
        Said::Marks(problem) => ("marks_refused".to_string(), Some(problem), true),
        Said::Invalid(_) if field.trim().is_empty() => ("empty_text".to_string(), None, true),
        Said::Invalid(problem) => ("not_saved".to_string(), Some(problem), true),
    };
    let stale = key == "stale";
    context! {
        key,
        detail,
        alert,
        current => stale.then(|| preview_value(passage.text.as_deref().unwrap_or_default())),
    }
}

/// Where the passage's text comes from: the model (or the source the model could not replace),
/// the owner's edit or keep, or a re-translation accepted.
fn origin_view(passage: &Passage, me: &SignedIn) -> Value {
    // A flagged passage that holds its source: no answer of the model passed the checks, and
    // the text is the original, not the model's.
    let source_kept = !passage.flags.is_empty() && holds_source(passage);
    match &passage.origin {
        Some(Origin::Model { .. }) if source_kept => context! { kind => "source_kept" },
        Some(Origin::Model { pass }) => {
            context! { kind => "model", pass => pass.map(|p| p.task()) }
        }
        Some(Origin::Memory) => context! { kind => "memory" },
        Some(Origin::Edited { at, by }) => context! {
            kind => "edited",
            at => at.to_rfc3339(),
            mine => *by == me.user.id,
        },
        Some(Origin::Kept { at, by }) => context! {
            kind => "kept",
            at => at.to_rfc3339(),
            mine => *by == me.user.id,
            // What was kept is the original, not the model's text.
            source => holds_source(passage),
        },
        Some(Origin::Retranslated {
            at,
            model,
            pass,
            instruction,
            accepted_with,
            ..
        }) => context! {
            kind => "retranslated",
            at => at.to_rfc3339(),
            model,
            pass => pass.task(),
            instruction,
            accepted_with => accepted_with.iter().map(|f| f.kind).collect::<Vec<_>>(),
        },
        None => context! {},
    }
}

#[derive(Deserialize)]
struct ChangeForm {
    csrf: Option<String>,
    /// The passage's version as the page showed it.
    version: Option<String>,
    text: Option<String>,
    /// `save` (what Enter and Ctrl+Enter do), `preview`, `keep` (as it is), `undo` or `reset`.
    action: Option<String>,
}

/// The editor's form: a save, a preview, an undo or a reset of the passage.
async fn change(
    State(state): State<AppState>,
    me: SignedIn,
    Path((id, chapter, index)): Path<(String, u32, u32)>,
    headers: HeaderMap,
    Form(form): Form<ChangeForm>,
) -> Response {
    if let Err(refused) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, refused);
    }
    let fragment = headers.contains_key(FRAGMENT_HEADER);
    let Some(read) = form.version.as_deref().and_then(|v| v.trim().parse().ok()) else {
        let refused = ApiError::bad_request("version: the passage's version, a whole number");
        return page_error(me.lang, refused);
    };
    // Browsers send a field's line breaks as CRLF.
    let typed = form.text.unwrap_or_default().replace("\r\n", "\n");
    let at = PassageAt { chapter, index };
    let action = form.action.as_deref().unwrap_or("save");
    if action == "preview" {
        // A preview changes nothing.
        let open = Open {
            typed: Some(typed),
            version: Some(read),
            ..Open::at(index, None)
        };
        return answer_with(&state, &me, &id, chapter, open, fragment, &headers).await;
    }
    // A change is the API's passage write, and counts as one against the plan.
    if let Err(refused) = crate::limits::count_as_api_call(&state, &me.user).await {
        return page_error(me.lang, refused);
    }
    let Some(answer) = write(&state, &me, &id, at, read, &typed, action).await else {
        let refused = ApiError::bad_request("action: save, preview, keep, undo or reset");
        return page_error(me.lang, refused);
    };
    let open = match answer {
        Ok((passage, renames)) => {
            let done = match action {
                "undo" => "undone",
                "reset" => "reset",
                "keep" => "kept",
                _ => "saved",
            };
            if !fragment {
                let renames = renames_query(&renames);
                let back = format!(
                    "/dashboard/books/{id}/read?chapter={chapter}&edit={index}&done={done}{renames}#p-{index}"
                );
                return Redirect::to(&back).into_response();
            }
            Open {
                passage: Some(passage),
                renames,
                ..Open::at(index, Said::done(done))
            }
        }
        Err(e) => match refused_open(e, typed, read, index) {
            Ok(open) => open,
            Err(e) => return page_error(me.lang, passage_error(e)),
        },
    };
    answer_with(&state, &me, &id, chapter, open, fragment, &headers).await
}

/// The change the form's action names: a save (with the renames of the book's terms it
/// suggests), an undo, a reset or a keep. None for another action.
async fn write(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    at: PassageAt,
    read: u64,
    typed: &str,
    action: &str,
) -> Option<Result<(Passage, Vec<TermChange>), PassageError>> {
    let translations = &state.services.translations;
    let user = &me.user.id;
    let alone = |passage| (passage, Vec::new());
    Some(match action {
        "save" => {
            translations
                .edit_passage_suggesting(user, id, at, read, typed)
                .await
        }
        "undo" => translations
            .undo_passage(user, id, at, read)
            .await
            .map(alone),
        "reset" => translations
            .reset_passage(user, id, at, read)
            .await
            .map(alone),
        "keep" => translations
            .keep_passage(user, id, at, read)
            .await
            .map(alone),
        _ => return None,
    })
}

/// The editor again after a change was refused: what the owner typed stays in the field, and
/// the form names the passage's version now (or the one read, when the text was refused). A
/// failure the editor does not show comes back as it is.
fn refused_open(
    e: PassageError,
    typed: String,
    read: u64,
    index: u32,
) -> Result<Open, PassageError> {
    Ok(match e {
        PassageError::Stale { current, .. } => Open {
            passage: Some(*current),
            typed: Some(typed),
            ..Open::at(index, Some(Said::Stale))
        },
        PassageError::NothingToUndo(current) => Open {
            passage: Some(*current),
            typed: Some(typed),
            ..Open::at(index, Some(Said::NothingToUndo))
        },
        PassageError::Marks(problem) => Open {
            typed: Some(typed),
            version: Some(read),
            ..Open::at(index, Some(Said::Marks(problem)))
        },
        PassageError::Invalid(problem)
        | PassageError::TooLong(problem)
        | PassageError::Characters(problem) => Open {
            typed: Some(typed),
            version: Some(read),
            ..Open::at(index, Some(Said::Invalid(problem)))
        },
        e => return Err(e),
    })
}

/// The answer to the editor's form that does not go back to the passage: the editor alone (for
/// the page's script) or the reader's page with it.
async fn answer_with(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    chapter: u32,
    open: Open,
    fragment: bool,
    headers: &HeaderMap,
) -> Response {
    if !fragment {
        let shown = Shown {
            chapter,
            page: None,
            near: Some(open.index),
            view: View::chosen(None, headers).0,
            note: None,
        };
        return match reader_page(state, me, id, shown, Some(open)).await {
            Ok((response, _)) => response,
            Err(response) => response,
        };
    }
    let shown = async {
        let book = state.services.books.get(&me.user.id, id).await?;
        let editor = editor(state, me, &book, chapter, open)
            .await?
            .ok_or_else(|| ApiError::not_found("passage"))?;
        Ok::<_, ApiError>(editor)
    }
    .await;
    let (editor, status) = match shown {
        Ok(shown) => shown,
        Err(e) => return page_error(me.lang, e),
    };
    // The reader's count of what is still open in the book follows the change.
    let open_flagged = match state
        .services
        .translations
        .flagged_passages(&me.user.id, id, 0, 1)
        .await
    {
        Ok(page) => page.total,
        Err(e) => return page_error(me.lang, passage_error(e)),
    };
    let editor = context! { open_flagged, ..editor };
    let data = context! {
        lang => me.lang.code(),
        ui => me.lang.code(),
        t => me.lang.messages(),
        csrf => me.csrf.clone(),
        editor,
    };
    match render("app/passage_editor.html", data) {
        Ok(mut response) => {
            *response.status_mut() = status;
            response
        }
        Err(e) => page_error(me.lang, e),
    }
}

#[derive(Deserialize)]
struct FromQuery {
    chapter: Option<u32>,
    from: Option<u32>,
}

/// The book's next flagged passage from passage `from` of chapter `chapter` on, in reading
/// order (after the last, the first again), opened in its editor.
async fn next_flagged(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Query(q): Query<FromQuery>,
) -> Response {
    let from = (q.chapter.unwrap_or(1), q.from.unwrap_or(0));
    match next_after(&state, &me, &id, from).await {
        Ok(to) => Redirect::to(&to).into_response(),
        Err(e) => page_error(me.lang, e),
    }
}

async fn next_after(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    from: (u32, u32),
) -> Result<String, ApiError> {
    let translations = &state.services.translations;
    let at = |offset: usize| async move {
        translations
            .flagged_passages(&me.user.id, id, offset, 1)
            .await
            .map(|page| (page.total as usize, page.passages.into_iter().next()))
            .map_err(passage_error)
    };
    let (total, first) = at(0).await?;
    let Some(first) = first else {
        return Ok(format!(
            "/dashboard/books/{id}/read?chapter={}&note=no_flagged",
            from.0
        ));
    };
    // The list is in reading order: the first at or after `from`, found by halving (a probe
    // reads one passage, so a book with thousands flagged costs a dozen).
    let (mut low, mut high) = (0, total);
    while low < high {
        let middle = low + (high - low) / 2;
        match at(middle).await?.1 {
            Some(p) if (p.chapter, p.index) < from => low = middle + 1,
            _ => high = middle,
        }
    }
    let found = if low < total { at(low).await?.1 } else { None };
    let (passage, wrapped) = match found {
        Some(passage) => (passage, false),
        None => (first, true),
    };
    let (chapter, index) = (passage.chapter, passage.index);
    let note = if wrapped { "&note=wrapped" } else { "" };
    Ok(format!(
        "/dashboard/books/{id}/read?chapter={chapter}&edit={index}{note}#p-{index}"
    ))
}
