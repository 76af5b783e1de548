//! The library (`/dashboard`: the user's books, upload) and a book's page
//! (`/dashboard/books/{id}`: chapters, the quote, start, pause, resume, stop, downloads, rename,
//! delete); the book's reader, where its owner reviews it, is [`super::editor`]'s. Each action is a form posting to the book's page's path, which calls the service
//! the API calls and comes back to the page. Stop asks first (`?stop=confirm` shows what it
//! keeps; the form then carries `confirm=yes`).
//!
//! Live progress: the library and a book's page poll `/dashboard/live` and
//! `/dashboard/books/{id}/live` (small JSON documents, one request every 3 seconds per open
//! page), counted in the pages' live budget, never the plan's API limits (`crate::limits`).
//! Polling rather than Server-Sent Events, on both backends: API Gateway does not stream a
//! Lambda's answer, and one way for both keeps the pages the same everywhere.

use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::header::CACHE_CONTROL;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Form;
use booktr_core::books::{Upload, MAX_LIST_LIMIT, MAX_UPLOAD_BYTES};
use booktr_core::translation::{QualitySummary, QuoteRequest, StartRequest};
use booktr_core::types::{BookStatus, ChapterStatus};
use minijinja::context;
use serde::{Deserialize, Serialize};

use super::failure::page_error;
use super::i18n::Lang;
use super::page::page;
use super::paths::LIBRARY_LIVE;
use super::reading;
use super::session::SignedIn;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Routes;
use crate::routes::books::{
    multipart_error, over_the_body_limit, read_limited, text_field, MULTIPART_OVERHEAD,
};
use crate::state::AppState;
use crate::web::words::plural;

pub fn router() -> Routes {
    Routes::new()
        .route("/dashboard", get(library))
        .route(
            "/dashboard/upload",
            post(upload).layer(DefaultBodyLimit::max(
                (MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD) as usize,
            )),
        )
        .route("/dashboard/books/{id}", get(book))
        .route("/dashboard/books/{id}/{action}", post(act))
        .route(LIBRARY_LIVE, get(library_live))
        .route("/dashboard/books/{id}/live", get(book_live))
}

/// A book's download links: they render a partial file on request, so on AWS they live with
/// the API's downloads, in the function that carries the renderers.
pub fn download_router() -> Routes {
    Routes::new().route("/dashboard/books/{id}/download", get(download))
}

/// A book as the library lists it.
#[derive(Serialize)]
struct Row {
    id: String,
    title: String,
    status: BookStatus,
    progress: u8,
    target_lang: String,
    created: String,
}

async fn library(State(state): State<AppState>, me: SignedIn) -> Response {
    let books = match state
        .services
        .books
        .list(&me.user.id, None, Some(MAX_LIST_LIMIT))
        .await
    {
        Ok(books) => books,
        Err(e) => return page_error(me.lang, e.into()),
    };
    let rows: Vec<Row> = books
        .into_iter()
        .map(|b| Row {
            created: b.created_at.to_rfc3339(),
            id: b.id,
            title: b.title,
            status: b.status,
            progress: b.progress,
            target_lang: b.target_lang,
        })
        .collect();
    let choices = async {
        let models = state.services.usage.report(&me.user).await?.allowed_models;
        let glossaries = state.services.glossaries.list(&me.user.id).await?;
        let preferences = state.services.translations.preferences(&me.user.id).await?;
        Ok::<_, ApiError>((models, glossaries, preferences))
    }
    .await;
    let (models, glossaries, preferences) = match choices {
        Ok(choices) => choices,
        Err(e) => return page_error(me.lang, e),
    };
    let glossaries: Vec<_> = glossaries
        .iter()
        .map(|g| context! { id => g.id.clone(), name => g.name.clone() })
        .collect();
    let title = me.lang.get("library");
    let data = context! {
        status_words => crate::web::words::status_words(me.lang),
        books => rows,
        max_mb => MAX_UPLOAD_BYTES / (1024 * 1024),
        models,
        glossaries,
        preferences,
    };
    page(&state, Some(&me), me.lang, "app/library.html", title, data)
        .await
        .unwrap_or_else(|r| r)
}

/// The upload form: the CSRF token is its first field, so a forged form is refused before its
/// file is read; the file is bounded as `POST /api/upload` bounds it.
async fn upload(State(state): State<AppState>, me: SignedIn, request: Request) -> Response {
    match receive(&state, &me, request).await {
        // The book's page quotes the model and glossary chosen with the file.
        Ok((book_id, choice)) => {
            Redirect::to(&format!("/dashboard/books/{book_id}{choice}")).into_response()
        }
        Err(e) => page_error(me.lang, e),
    }
}

/// The new book's id, and the query that carries the model and glossary chosen to its page.
async fn receive(
    state: &AppState,
    me: &SignedIn,
    request: Request,
) -> Result<(String, String), ApiError> {
    let too_large = || match state.settings.body_limit {
        Some(limit) => over_the_body_limit(limit),
        None => ApiError::file_too_large(),
    };
    let file_limit = state
        .settings
        .body_limit
        .map_or(MAX_UPLOAD_BYTES, |l| l.min(MAX_UPLOAD_BYTES));
    let mut multipart = Multipart::from_request(request, state)
        .await
        .map_err(|e| ApiError::bad_request(e.body_text()))?;
    let (mut checked, mut file, mut title, mut target_lang) = (false, None, None, None);
    let mut choice = String::new();
    while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
        let name = field.name().unwrap_or_default().to_string();
        if name == super::csrf::FIELD {
            let token = text_field(field, &name).await?;
            me.check_form(Some(&token))?;
            checked = true;
            continue;
        }
        if !checked {
            me.check_form(None)?;
        }
        match name.as_str() {
            "file" => {
                let file_name = field.file_name().unwrap_or_default().to_string();
                let bytes = read_limited(field, file_limit as usize)
                    .await?
                    .ok_or_else(too_large)?;
                file = Some((file_name, bytes));
            }
            "title" => title = Some(text_field(field, &name).await?),
            "targetLang" => target_lang = Some(text_field(field, &name).await?),
            "model" | "glossaryId" => {
                let value = text_field(field, &name).await?;
                if !value.trim().is_empty() {
                    let encoded = super::return_to::percent_encode(value.trim());
                    choice.push(if choice.is_empty() { '?' } else { '&' });
                    choice.push_str(&format!("{name}={encoded}"));
                }
            }
            _ => {
                read_limited(field, 4 * 1024).await?;
            }
        }
    }
    if !checked {
        me.check_form(None)?;
    }
    let (file_name, bytes) = file
        .filter(|(name, _)| !name.trim().is_empty())
        .ok_or_else(|| super::failure::refused(me.lang.get("file_missing")))?;
    let target_lang = super::session::language_field(me.lang, target_lang.as_deref())?;
    let book = state
        .services
        .books
        .upload(
            &me.user,
            Upload {
                file_name,
                title,
                target_lang,
                bytes,
            },
        )
        .await?;
    Ok((book.id, choice))
}

/// A live update's answer: JSON, never cached.
fn live(body: serde_json::Value) -> Response {
    ([(CACHE_CONTROL, "private, no-store")], axum::Json(body)).into_response()
}

async fn library_live(State(state): State<AppState>, me: SignedIn) -> Response {
    match state
        .services
        .books
        .list(&me.user.id, None, Some(MAX_LIST_LIMIT))
        .await
    {
        Ok(books) => {
            let books: Vec<_> = books
                .iter()
                .map(|b| serde_json::json!({ "id": b.id, "status": b.status, "progress": b.progress }))
                .collect();
            live(serde_json::json!({ "books": books }))
        }
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// A book's live update: its status, progress, the note of a pause still finishing, and each
/// chapter's status and passes.
async fn book_live(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
) -> Response {
    match state.services.books.detail(&me.user.id, &id).await {
        Ok(detail) => {
            let chapters: Vec<_> = detail
                .chapters
                .iter()
                .map(|c| serde_json::json!({ "number": c.number, "status": c.status, "passesDone": c.passes_done }))
                .collect();
            let pausing = pausing(detail.book.status, &detail.chapters);
            live(serde_json::json!({
                "status": detail.book.status,
                "progress": detail.book.progress,
                "pausing": pausing,
                "note": if pausing { Some(me.lang.get("pausing")) } else { None },
                "chapters": chapters,
            }))
        }
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// Paused, but chapters taken before the pause are still being translated (they finish and
/// are kept).
fn pausing(status: BookStatus, chapters: &[booktr_core::books::Chapter]) -> bool {
    status == BookStatus::Paused
        && chapters
            .iter()
            .any(|c| c.status == ChapterStatus::Translating)
}

#[derive(Deserialize)]
struct QuoteQuery {
    model: Option<String>,
    #[serde(rename = "glossaryId")]
    glossary_id: Option<String>,
    #[serde(rename = "targetLang")]
    target_lang: Option<String>,
    /// A second model for what the first leaves flagged or of low confidence (empty: none).
    #[serde(rename = "fallbackModel")]
    fallback_model: Option<String>,
    /// `yes` or `no`: whether the run would use the owner's translation memory (absent: the
    /// book's choice).
    memory: Option<String>,
    /// `confirm`: the page asks whether to stop the translation; `done`: it says what the stop
    /// kept.
    stop: Option<String>,
}

fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

/// A form's `yes` or `no`; anything else is no choice.
fn yes_or_no(value: Option<&str>) -> Option<bool> {
    match value {
        Some("yes") => Some(true),
        Some("no") => Some(false),
        _ => None,
    }
}

async fn book(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Query(q): Query<QuoteQuery>,
    headers: HeaderMap,
) -> Response {
    let continue_at = reading::of(&headers, &id);
    match book_page(&state, &me, &id, q, continue_at).await {
        Ok(response) => response,
        Err(e) => page_error(me.lang, e),
    }
}

async fn book_page(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    q: QuoteQuery,
    continue_at: Option<reading::Position>,
) -> Result<Response, ApiError> {
    let services = &state.services;
    let detail = services.books.detail(&me.user.id, id).await?;
    let book = &detail.book;
    let startable = matches!(
        book.status,
        BookStatus::Extracted | BookStatus::Completed | BookStatus::Error
    );
    let offer = if startable {
        start_offer(state, me, book, &q).await?
    } else {
        context! {
            can_start => false,
            cover => None::<u8>,
            glossaries => Vec::<u8>::new(),
            models => Vec::<u8>::new(),
            quote_minutes => None::<u64>,
            quote => None::<u8>,
            quote_error => None::<String>,
        }
    };
    let has_translation = detail
        .chapters
        .iter()
        .any(|c| c.status == booktr_core::types::ChapterStatus::Completed);
    // What the answer checks found: the book's summary, and each chapter's flagged blocks.
    let status = services.translations.status(&me.user.id, id).await?;
    // What needs a look, and the way to it: the review's open passages, flagged and of low
    // confidence; the run's warning of flagged blocks leads there too.
    let review = services
        .translations
        .review_counts(&me.user.id, id)
        .await
        .map_err(super::passage::passage_error)?;
    let data = context! {
        status_words => crate::web::words::status_words(me.lang),
        book => crate::wire::books::Book::from(book.clone()),
        warnings => warning_views(me.lang, book, &status.quality),
        chapters => chapter_views(&status),
        quality => quality_view(id, &status.quality, review.low_confidence),
        translated_any => has_translation,
        startable,
        paused_at_terms => status.paused_at_terms,
        terms => term_list_view(&status),
        pausing => pausing(book.status, &detail.chapters),
        confirm_stop => q.stop.as_deref() == Some("confirm") && matches!(book.status, BookStatus::Translating | BookStatus::Paused),
        stopped => q.stop.as_deref() == Some("done"),
        kept_chapters => status.chapters_completed,
        run_cost => (book.run > 0).then_some(status.cost.spent),
        has_translation,
        chosen => context! { model => q.model, glossary_id => q.glossary_id, target_lang => q.target_lang, fallback_model => q.fallback_model, memory => q.memory.as_deref().map(|m| m == "yes").unwrap_or(book.memory) },
        share_url => book.share_token.as_ref().map(|t| format!("{}/shared/{t}", state.settings.public_url)),
        continue_at => continue_at.map(|at| continue_view(me.lang, id, &detail.chapters, at)),
        ..context! { ..run_state(book.status), ..offer },
    };
    page(state, Some(me), me.lang, "app/book.html", &book.title, data)
        .await
        .or_else(Ok)
}

/// What the form to start a run shows: the user's glossaries, the plan's models, and the quote
/// for the choices in the address (or why there is none) with what the quota does not cover.
async fn start_offer(
    state: &AppState,
    me: &SignedIn,
    book: &booktr_core::books::Book,
    q: &QuoteQuery,
) -> Result<minijinja::Value, ApiError> {
    let services = &state.services;
    let glossaries = services.glossaries.list(&me.user.id).await?;
    let usage = services.usage.report(&me.user).await?;
    let (quote, quote_error, cover) = match quote(state, me, book, q).await {
        Ok(quote) => {
            let cover = services.usage.cover(&me.user, &usage, quote.words);
            (Some(quote), None, cover)
        }
        // A quote for choices the user just made may be refused (a model of another
        // plan): the page says why, and the form stays.
        Err(e) => (None, Some(super::failure::for_people(me.lang, &e)), None),
    };
    let glossaries: Vec<_> = glossaries
        .iter()
        .map(|g| context! { id => g.id.clone(), name => g.name.clone() })
        .collect();
    Ok(context! {
        // Start is offered only when it can start: something to translate, within the quota.
        can_start => quote.as_ref().is_some_and(|q| q.chapters > 0) && cover.is_none(),
        cover,
        glossaries,
        models => usage.allowed_models,
        quote_minutes => quote.as_ref().map(|q| q.estimated_seconds.div_ceil(60)),
        quote => quote.map(crate::wire::translation::Quote::from),
        quote_error,
    })
}

/// The quote for the choices in the address. The language is typed by its name or its code;
/// one that names no language is said where the quote would be, and the form keeps what was
/// typed.
async fn quote(
    state: &AppState,
    me: &SignedIn,
    book: &booktr_core::books::Book,
    q: &QuoteQuery,
) -> Result<booktr_core::translation::Quote, ApiError> {
    let target_lang = super::session::language_field(me.lang, q.target_lang.as_deref())?;
    let request = QuoteRequest {
        book_id: book.id.clone(),
        model: non_empty(q.model.clone()),
        glossary_id: non_empty(q.glossary_id.clone()),
        target_lang,
        fallback_model: non_empty(q.fallback_model.clone()),
        memory: yes_or_no(q.memory.as_deref()),
    };
    state
        .services
        .translations
        .quote(&me.user, request)
        .await
        .map_err(ApiError::from)
}

/// Where a run stands, as the page's buttons and notes need it.
fn run_state(status: BookStatus) -> minijinja::Value {
    context! {
        translating => matches!(status, BookStatus::Translating | BookStatus::Extracting | BookStatus::Uploaded | BookStatus::Generating),
        paused => status == BookStatus::Paused,
        stoppable => matches!(status, BookStatus::Translating | BookStatus::Paused),
        // While a run goes on (or waits, paused), what it has spent so far, never "free".
        run_going => matches!(status, BookStatus::Translating | BookStatus::Paused),
        shareable => matches!(status, BookStatus::Translated | BookStatus::Generating | BookStatus::Completed),
        finished => status == BookStatus::Completed,
    }
}

/// Each chapter with its flagged blocks.
fn chapter_views(status: &booktr_core::translation::TranslationStatus) -> Vec<minijinja::Value> {
    status
        .chapters
        .iter()
        .map(|c| {
            let flagged = c
                .quality
                .as_ref()
                .map(|q| QualitySummary::of([q]).flagged_blocks);
            let chapter = crate::wire::books::Chapter::from(c.chapter.clone());
            context! { chapter, flagged }
        })
        .collect()
}

/// The book's warnings; the run's warning of flagged blocks is said in the web's words from
/// the book's counts (passages, as everywhere in the app; none left, no warning), and leads to
/// the review.
fn warning_views(
    lang: Lang,
    book: &booktr_core::books::Book,
    quality: &QualitySummary,
) -> Vec<minijinja::Value> {
    book.warnings
        .iter()
        .filter_map(|w| match flagged_warning(w) {
            true => flagged_sentence(lang, quality).map(|text| context! { text, review => true }),
            false => Some(context! { text => w, review => false }),
        })
        .collect()
}

/// What the answer checks found, with the way to the review. Flagged passages are counted by
/// their main flag (each once: the counts add up), each kind named in the interface's words
/// (`flag_<kind>`, in the singular for one).
fn quality_view(id: &str, quality: &QualitySummary, low_confidence: u32) -> minijinja::Value {
    let flags: Vec<_> = booktr_core::translation::MAIN_ORDER
        .iter()
        .filter_map(|kind| {
            let count = quality.main_flags.get(kind.name())?;
            Some(context! { key => format!("flag_{}", kind.name()), count })
        })
        .collect();
    context! {
        flags,
        repaired => quality.repaired_blocks,
        removed => quality.removed_lines,
        flagged => quality.flagged_blocks,
        changed => quality.changed,
        not_kept => quality.changes_not_kept,
        low_confidence,
        profile => quality.profile,
        review => super::paths::review_path(id),
    }
}

/// The run's term list, once its term pass has made it: its page is offered, and leads when
/// the run paused there for the owner to check it.
fn term_list_view(
    status: &booktr_core::translation::TranslationStatus,
) -> Option<minijinja::Value> {
    status
        .terms
        .as_ref()
        .filter(|t| t.status == "COMPLETED")
        .map(|t| context! { found => t.found })
}

/// Where the owner left off reading: the chapter as the reader names it (its title, else its
/// number), the page, and the link back there.
fn continue_view(
    lang: Lang,
    id: &str,
    chapters: &[booktr_core::books::Chapter],
    at: reading::Position,
) -> minijinja::Value {
    context! {
        chapter => at.chapter,
        label => crate::web::reader::chapter_label(lang, chapters, at.chapter),
        page => at.page,
        href => format!("/dashboard/books/{id}/read?chapter={}&page={}", at.chapter, at.page),
    }
}

/// Whether `warning` is the run's warning of flagged blocks (`QualitySummary::warnings`).
fn flagged_warning(warning: &str) -> bool {
    warning.starts_with(booktr_core::translation::WARNING_PREFIX)
        && QualitySummary::ends_with_sentence(warning)
}

/// The run's warning of flagged blocks as the web app says it, from the book's counts: "6
/// passages flagged (6 not returned); they keep their source text.", each passage counted once
/// under its main flag. None when none is flagged.
fn flagged_sentence(lang: Lang, quality: &QualitySummary) -> Option<String> {
    if quality.flagged_blocks == 0 {
        return None;
    }
    let kinds: Vec<String> = booktr_core::translation::MAIN_ORDER
        .iter()
        .filter_map(|kind| {
            let count = quality.main_flags.get(kind.name())?;
            Some(plural(
                lang,
                i64::from(*count),
                &format!("flag_{}", kind.name()),
            ))
        })
        .collect();
    Some(
        plural(lang, i64::from(quality.flagged_blocks), "warning_flagged")
            .replace("{kinds}", &kinds.join(", ")),
    )
}

#[derive(Deserialize)]
struct ActionForm {
    csrf: Option<String>,
    model: Option<String>,
    #[serde(rename = "glossaryId")]
    glossary_id: Option<String>,
    #[serde(rename = "targetLang")]
    target_lang: Option<String>,
    #[serde(rename = "maxCost")]
    max_cost: Option<String>,
    /// The start form's checkbox: present (`yes`) when ticked.
    #[serde(rename = "pauseAtTerms")]
    pause_at_terms: Option<String>,
    #[serde(rename = "fallbackModel")]
    fallback_model: Option<String>,
    /// `yes` or `no`: whether the run uses the owner's translation memory (the quote's choice).
    memory: Option<String>,
    title: Option<String>,
    confirm: Option<String>,
    /// Share links: days until the link expires (empty: never), and `yes` to list it publicly.
    days: Option<String>,
    public: Option<String>,
}

/// The book page's forms: start, pause, resume, stop, rename, delete.
async fn act(
    State(state): State<AppState>,
    me: SignedIn,
    Path((id, action)): Path<(String, String)>,
    Form(form): Form<ActionForm>,
) -> Response {
    if let Err(refused) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, refused);
    }
    match perform(&state, &me, &id, &action, form).await {
        Ok(to) => Redirect::to(&to).into_response(),
        Err(e) => page_error(me.lang, e),
    }
}

/// Where to go afterwards.
async fn perform(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    action: &str,
    form: ActionForm,
) -> Result<String, ApiError> {
    let services = &state.services;
    let user = &me.user;
    let max_cost = non_empty(form.max_cost)
        .map(|c| {
            c.trim()
                .parse::<f64>()
                .map_err(|_| super::failure::refused(me.lang.get("err_max_cost")))
        })
        .transpose()?;
    match action {
        "start" => {
            let request = StartRequest {
                book_id: id.to_string(),
                model: non_empty(form.model),
                glossary_id: non_empty(form.glossary_id),
                target_lang: super::session::language_field(me.lang, form.target_lang.as_deref())?,
                max_cost,
                pause_at_terms: form.pause_at_terms.is_some(),
                fallback_model: non_empty(form.fallback_model),
                memory: yes_or_no(form.memory.as_deref()),
            };
            services.translations.start(user, request).await?;
        }
        "pause" => services.translations.pause(&user.id, id).await?,
        "resume" => {
            services.translations.resume(&user.id, id, max_cost).await?;
        }
        "stop" => {
            // The page's Stop asks first (`?stop=confirm`), saying what is kept.
            if form.confirm.as_deref() != Some("yes") {
                return Ok(format!("/dashboard/books/{id}?stop=confirm"));
            }
            services.translations.stop(&user.id, id).await?;
            return Ok(format!("/dashboard/books/{id}?stop=done"));
        }
        "rename" => {
            services
                .books
                .update(&user.id, id, non_empty(form.title), None)
                .await?;
        }
        "share" => {
            let days = non_empty(form.days)
                .map(|d| {
                    d.trim()
                        .parse::<i64>()
                        .map_err(|_| super::failure::refused(me.lang.get("err_share_days")))
                })
                .transpose()?;
            services
                .books
                .share(&user.id, id, days, form.public.as_deref() == Some("yes"))
                .await?;
        }
        "unshare" => services.books.unshare(&user.id, id).await?,
        "delete" => {
            if form.confirm.as_deref() != Some("yes") {
                return Err(super::failure::refused(me.lang.get("delete_confirm")));
            }
            services.books.delete(&user.id, id).await?;
            return Ok("/dashboard".into());
        }
        _ => return Err(ApiError::not_found("action")),
    }
    Ok(format!("/dashboard/books/{id}"))
}

#[derive(Deserialize)]
struct DownloadQuery {
    format: Option<String>,
    layout: Option<String>,
}

/// A download link's target: the signed link the API would answer, followed at once.
async fn download(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Query(q): Query<DownloadQuery>,
) -> Response {
    let link = async {
        let edition = crate::routes::download::edition(q.format.as_deref(), q.layout.as_deref())?;
        Ok::<_, ApiError>(
            state
                .services
                .translations
                .download(&me.user.id, &id, edition)
                .await?,
        )
    }
    .await;
    match link {
        Ok(download) => Redirect::to(&download.url).into_response(),
        Err(e) => page_error(me.lang, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_warning_of_flagged_blocks_counts_passages_in_the_interfaces_words() {
        let api = "Translation: 6 blocks flagged (6 not returned); they keep their source text.";
        assert!(flagged_warning(api));
        assert!(!flagged_warning(
            "PDF file: 2 images left out; they keep their source text."
        ));
        let mut quality = QualitySummary {
            flagged_blocks: 6,
            ..QualitySummary::default()
        };
        quality.main_flags.insert("missing".into(), 4);
        quality.main_flags.insert("refusal".into(), 2);
        let six = flagged_sentence(Lang::En, &quality).unwrap();
        assert!(
            six.starts_with("Translation: 6 passages flagged ("),
            "{six}"
        );
        assert!(six.contains("4 not returned"), "{six}");
        assert!(six.ends_with("); they keep their source text."), "{six}");
        let mut one = QualitySummary {
            flagged_blocks: 1,
            ..QualitySummary::default()
        };
        one.main_flags.insert("missing".into(), 1);
        assert_eq!(
            flagged_sentence(Lang::En, &one).unwrap(),
            "Translation: 1 passage flagged (1 not returned); it keeps its source text."
        );
        assert_eq!(
            flagged_sentence(Lang::Es, &one).unwrap(),
            "Traducción: 1 pasaje señalado (1 no devuelto); conserva su texto original."
        );
        assert_eq!(flagged_sentence(Lang::En, &QualitySummary::default()), None);
    }
}
