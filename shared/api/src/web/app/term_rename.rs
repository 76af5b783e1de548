//! Renaming a term in the whole book, from the passage editor: a save that changes how one of
//! the book's terms is rendered (`Translations::edit_passage_suggesting`, as the API's edit
//! answers its `termChanges`) offers it in the editor, whose form posts here.
//!
//! `POST /dashboard/books/{id}/terms/rename` (`csrf`, `source`, `from`, `to`, `chapter` and
//! `index` of the passage edited, for the way back, and `startChapter`, `startIndex` for a page
//! after the first) shows the preview (`Translations::preview_term`): every passage whose text
//! holds the old rendering, before and after, the model's ticked and the owner's own edits
//! apart and not ticked, a page at a time. Its form posts the passages ticked (`p`, each
//! `chapter.index.version` as the preview read it) to `.../terms/rename/apply`, which applies
//! them (`Translations::apply_term`: each written only at the version shown, and the term put
//! in the book's glossary) and answers the preview again from the same place, saying what
//! changed, what was left and why, and where the term is kept. Nothing changes before the
//! apply, and the apply counts against the plan as the API's call does.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use axum::Form;
use booktr_core::books::Book;
use booktr_core::translation::passages::{
    occurrences, PassageAt, Skip, TermApplied, TermPassage, TermRequest,
};
use minijinja::{context, Value};

use super::failure::page_error;
use super::page::page;
use super::passage::{passage_error, preview_value};
use super::paths::passage_href;
use super::session::{field, SignedIn};
use crate::error::ApiError;
use crate::extract::Path;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::web::reader::chapter_label;

/// Passages a preview page lists at most (the model's and the owner's together): one apply
/// takes them all.
const PREVIEW_PAGE: usize = 100;

pub fn router() -> Routes {
    Routes::new()
        .route("/dashboard/books/{id}/terms/rename", post(preview))
        .route("/dashboard/books/{id}/terms/rename/apply", post(apply))
}

/// What a form of these pages carries: the term change, the passage edited, where the page
/// starts.
struct Asked {
    request: TermRequest,
    back: PassageAt,
    start: PassageAt,
}

fn number(fields: &[(String, String)], name: &str) -> Option<u32> {
    field(fields, name).and_then(|v| v.trim().parse().ok())
}

fn asked(fields: &[(String, String)]) -> Result<Asked, ApiError> {
    let text = |name: &str| field(fields, name).unwrap_or_default();
    let request =
        TermRequest::new(&text("source"), &text("from"), &text("to")).map_err(passage_error)?;
    let back = PassageAt {
        chapter: number(fields, "chapter").unwrap_or(1),
        index: number(fields, "index").unwrap_or(0),
    };
    let start = PassageAt {
        chapter: number(fields, "startChapter").unwrap_or(1).max(1),
        index: number(fields, "startIndex").unwrap_or(0),
    };
    Ok(Asked {
        request,
        back,
        start,
    })
}

async fn preview(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(refused) = me.check_fields(&fields) {
        return page_error(me.lang, refused);
    }
    match asked(&fields) {
        Ok(asked) => rename_page(&state, &me, &id, &asked, None)
            .await
            .unwrap_or_else(|r| r),
        Err(e) => page_error(me.lang, e),
    }
}

/// What the page says above the preview.
enum Said {
    /// What an apply did.
    Applied(TermApplied),
    /// An apply with no passage ticked.
    NoneTicked,
}

/// The passages ticked: `chapter.index.version` each.
fn ticked(fields: &[(String, String)]) -> Result<Vec<(PassageAt, u64)>, ApiError> {
    fields
        .iter()
        .filter(|(name, _)| name == "p")
        .map(|(_, value)| {
            one_ticked(value)
                .ok_or_else(|| ApiError::bad_request("p: a passage as chapter.index.version"))
        })
        .collect()
}

fn one_ticked(value: &str) -> Option<(PassageAt, u64)> {
    let mut parts = value.split('.');
    let chapter = parts.next()?.trim().parse().ok()?;
    let index = parts.next()?.trim().parse().ok()?;
    let version = parts.next()?.trim().parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    Some((PassageAt { chapter, index }, version))
}

async fn apply(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(refused) = me.check_fields(&fields) {
        return page_error(me.lang, refused);
    }
    let (asked, named) = match asked(&fields).and_then(|a| Ok((a, ticked(&fields)?))) {
        Ok(read) => read,
        Err(e) => return page_error(me.lang, e),
    };
    if named.is_empty() {
        return rename_page(&state, &me, &id, &asked, Some(Said::NoneTicked))
            .await
            .unwrap_or_else(|r| r);
    }
    // The API's apply, and counted as one against the plan.
    if let Err(refused) = crate::limits::count_as_api_call(&state, &me.user).await {
        return page_error(me.lang, refused);
    }
    match state
        .services
        .translations
        .apply_term(&me.user.id, &id, &asked.request, &named)
        .await
    {
        Ok(applied) => rename_page(&state, &me, &id, &asked, Some(Said::Applied(applied)))
            .await
            .unwrap_or_else(|r| r),
        Err(e) => page_error(me.lang, passage_error(e)),
    }
}

/// The preview from `asked.start`, with what an apply did (or why it did nothing) above it.
async fn rename_page(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    asked: &Asked,
    said: Option<Said>,
) -> Result<Response, Response> {
    let fail = |e: ApiError| page_error(me.lang, e);
    let translations = &state.services.translations;
    let book = state
        .services
        .books
        .get(&me.user.id, id)
        .await
        .map_err(|e| fail(e.into()))?;
    let preview = translations
        .preview_term(&me.user.id, id, &asked.request, asked.start, PREVIEW_PAGE)
        .await
        .map_err(|e| fail(passage_error(e)))?;
    let chapters = state
        .services
        .books
        .chapters(&book.id)
        .await
        .map_err(|e| fail(e.into()))?;
    let request = &asked.request;
    // Each passage named as the reader shows it: its chapter's title, its first words, and a
    // link to it in the reader.
    let shown = |passages: &[TermPassage]| -> Vec<Value> {
        passages
            .iter()
            .map(|p| {
                context! {
                    chapter => p.chapter,
                    index => p.index,
                    label => chapter_label(me.lang, &chapters, p.chapter),
                    words => crate::web::words::first_words(&p.text),
                    href => passage_href(id, p.chapter, p.index),
                    value => format!("{}.{}.{}", p.chapter, p.index, p.version),
                    before => marked(&p.text, &request.from),
                    after => marked(&p.after, &request.to),
                }
            })
            .collect()
    };
    let (status, result) = match said {
        None => (StatusCode::OK, None),
        Some(Said::NoneTicked) => (
            StatusCode::BAD_REQUEST,
            Some(context! { none_ticked => true }),
        ),
        Some(Said::Applied(applied)) => (
            StatusCode::OK,
            Some(result(applied, |chapter, index| {
                context! {
                    label => chapter_label(me.lang, &chapters, chapter),
                    href => passage_href(id, chapter, index),
                }
            })),
        ),
    };
    let back = asked.back;
    let data = context! {
        book_id => id,
        term => context! { source => request.source.clone(), from => request.from.clone(), to => request.to.clone() },
        back => context! {
            chapter => back.chapter,
            index => back.index,
            href => passage_href(id, back.chapter, back.index),
        },
        start => context! { chapter => asked.start.chapter, index => asked.start.index },
        passages => shown(&preview.passages),
        edited => shown(&preview.edited),
        next => preview.next.map(|n| context! { chapter => n.chapter, index => n.index }),
        first_page => asked.start == PassageAt { chapter: 1, index: 0 },
        result,
        langs => languages(&book),
    };
    let title = me.lang.get("rename_title");
    let mut response = page(
        state,
        Some(me),
        me.lang,
        "app/term_rename.html",
        title,
        data,
    )
    .await?;
    *response.status_mut() = status;
    Ok(response)
}

/// The book's languages as the page marks its texts: the source's and the translation's
/// (`lang`, none when not recognised) and the translation's direction.
fn languages(book: &Book) -> Value {
    let known = |code: &str| {
        (!code.is_empty() && code != crate::web::words::UNKNOWN_LANGUAGE).then(|| code.to_string())
    };
    let dir = if booktr_formats::render::is_rtl(&book.target_lang) {
        "rtl"
    } else {
        "ltr"
    };
    context! {
        source => known(&book.original_lang),
        target => known(&book.target_lang),
        dir,
    }
}

/// What an apply did, as the page says it; `place` names a passage and links to it.
fn result(applied: TermApplied, place: impl Fn(u32, u32) -> Value) -> Value {
    let skipped: Vec<Value> = applied
        .skipped
        .iter()
        .map(|s| {
            let (key, detail) = match &s.reason {
                Skip::Changed(_) => ("skip_changed", None),
                Skip::NotFound => ("skip_not_found", None),
                Skip::NotHeld => ("skip_not_held", None),
                Skip::Refused(e) => ("skip_refused", Some(e.to_string())),
            };
            context! { place => place(s.chapter, s.index), key, detail }
        })
        .collect();
    context! {
        applied => applied.applied.len(),
        skipped,
        glossary => applied.glossary.map(|g| context! { id => g.id, name => g.name, created => g.created }),
    }
}

/// Private-use characters that stand for the start and end of a highlight until the text is
/// rendered (a text that has either is shown without highlights).
const MARK_START: char = '\u{E000}';
const MARK_END: char = '\u{E001}';

/// The passage's text as the editor's preview renders it, with each whole-word occurrence of
/// `rendering` highlighted (`<mark>`).
fn marked(text: &str, rendering: &str) -> Value {
    if text.contains([MARK_START, MARK_END]) {
        return preview_value(text);
    }
    let found = occurrences(text, rendering);
    if found.is_empty() {
        return preview_value(text);
    }
    let mut with_marks = String::with_capacity(text.len() + found.len() * 6);
    let mut last = 0;
    for (start, end) in found {
        with_marks.push_str(&text[last..start]);
        with_marks.push(MARK_START);
        with_marks.push_str(&text[start..end]);
        with_marks.push(MARK_END);
        last = end;
    }
    with_marks.push_str(&text[last..]);
    let shown = preview_value(&with_marks);
    if !shown.is_safe() {
        // Markup that does not parse is shown as the text, without highlights.
        return preview_value(text);
    }
    let html = shown
        .as_str()
        .unwrap_or_default()
        .replace(MARK_START, "<mark>")
        .replace(MARK_END, "</mark>");
    Value::from_safe_string(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendering_is_highlighted_in_the_words_of_the_text_and_the_rest_escaped() {
        let shown = marked("<i>Tirésias</i> &amp; Tirésias &lt;b&gt;", "Tirésias");
        assert!(shown.is_safe());
        assert_eq!(
            shown.as_str().unwrap(),
            "<em><mark>Tirésias</mark></em> &amp; <mark>Tirésias</mark> &lt;b&gt;"
        );
        let plain = marked("no such name", "Tirésias");
        assert_eq!(plain.as_str().unwrap(), "no such name");
        let broken = marked("<i>Tirésias", "Tirésias");
        assert!(!broken.is_safe(), "markup that does not parse is text");
    }

    #[test]
    fn ticked_passages_are_read_as_chapter_index_and_version() {
        let fields: Vec<(String, String)> = [("p", "2.0.3"), ("csrf", "t"), ("p", "3.14.0")]
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let read = ticked(&fields).unwrap();
        assert_eq!(
            read,
            [
                (
                    PassageAt {
                        chapter: 2,
                        index: 0
                    },
                    3
                ),
                (
                    PassageAt {
                        chapter: 3,
                        index: 14
                    },
                    0
                )
            ]
        );
        let bad = [("p".to_string(), "2.x.3".to_string())];
        assert!(ticked(&bad).is_err());
    }
}
