//! A book's review desk (`/dashboard/books/{id}/review`): every passage that needs a look
//! (`Translations::review`: flagged by the checks, of low confidence, changed by a later pass,
//! with a proposal open), the lowest confidence first, filtered by reason, chapter and whether
//! the owner has dealt with it, a page of [`REVIEW_PAGE`] at a time. Each passage shows its
//! source, its text now, why it is listed, and its proposal when one is open, with its actions:
//! edit in place (the reader's editor), keep as it is, translate again with an instruction (the
//! editor's re-translation form), accept or discard the proposal (an answer that failed a check
//! accepted only knowingly, on its own). Ticked passages are kept, or their proposals accepted,
//! at once.
//!
//! Without JavaScript every action is a form: the page's form (`POST` to the same path:
//! `csrf`, `back`, the ticked `selected` as `chapter:index:version:proposal`, and either
//! `action` = `keep` or `accept` for the ticked, or `one` = `keep:C:I:V`, `accept:P:I` or
//! `discard:P` for one passage), which comes back to the same page and filters saying what it
//! did; a passage's re-translation is its own small form, to the editor's route. Each keep and
//! each proposal accepted or discarded is the API's write, counted against the plan as the
//! editor's are (`crate::limits::count_as_api_call`); a refusal stops there and says so.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Form;
use booktr_core::books::Chapter;
use booktr_core::translation::passages::proposals::ProposalError;
use booktr_core::translation::passages::review::{
    Look, ReviewFilter, ReviewPage, ReviewRow, ReviewStatus, LOW_CONFIDENCE, REVIEW_PAGE,
};
use booktr_core::translation::passages::{Origin, PassageAt, PassageError};
use minijinja::{context, Value};
use serde::Deserialize;

use super::failure::page_error;
use super::i18n::Lang;
use super::page::page;
use super::passage::{holds_source, passage_error, preview_value};
use super::paths::{passage_href, review_path};
use super::session::{field, SignedIn};
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Routes;
use crate::state::AppState;
use crate::web::reader::chapter_label;
use crate::web::words::first_words;

pub fn router() -> Routes {
    Routes::new().route("/dashboard/books/{id}/review", get(show).post(act))
}

/// The filters and the page, as the address carries them (a select's empty value is "every").
#[derive(Deserialize, Default)]
struct Shown {
    look: Option<String>,
    chapter: Option<String>,
    status: Option<String>,
    page: Option<String>,
    /// What the last action did (see [`Said`]), with its counts.
    said: Option<String>,
    n: Option<u32>,
    left: Option<u32>,
}

impl Shown {
    /// The filters and page of a query the page wrote ([`query_of`]): names and numbers only.
    fn read(query: &str) -> Shown {
        let mut shown = Shown::default();
        for (name, value) in query.split('&').filter_map(|pair| pair.split_once('=')) {
            let value = Some(value.to_string());
            match name {
                "look" => shown.look = value,
                "chapter" => shown.chapter = value,
                "status" => shown.status = value,
                "page" => shown.page = value,
                _ => {}
            }
        }
        shown
    }

    fn filter(&self) -> ReviewFilter {
        ReviewFilter {
            look: self.look.as_deref().and_then(Look::parse),
            chapter: self.chapter.as_deref().and_then(|c| c.trim().parse().ok()),
            status: self
                .status
                .as_deref()
                .and_then(ReviewStatus::parse)
                .unwrap_or_default(),
        }
    }

    fn page(&self) -> usize {
        self.page
            .as_deref()
            .and_then(|p| p.trim().parse().ok())
            .filter(|p: &usize| *p >= 1)
            .unwrap_or(1)
    }
}

/// The query of the review's address for `filter` at page `page` (the defaults left out).
fn query_of(filter: &ReviewFilter, page: usize) -> String {
    let mut parts = Vec::new();
    if let Some(look) = filter.look {
        parts.push(format!("look={}", look.name()));
    }
    if let Some(chapter) = filter.chapter {
        parts.push(format!("chapter={chapter}"));
    }
    if filter.status != ReviewStatus::Open {
        parts.push(format!("status={}", filter.status.name()));
    }
    if page > 1 {
        parts.push(format!("page={page}"));
    }
    parts.join("&")
}

/// The review at `filter` and `page`, with `query` (its own, and any more) after the path.
fn address(id: &str, query: &str) -> String {
    match query.is_empty() {
        true => review_path(id),
        false => format!("{}?{query}", review_path(id)),
    }
}

async fn show(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Query(q): Query<Shown>,
) -> Response {
    match review_page(&state, &me, &id, &q).await {
        Ok(response) => response,
        Err(response) => response,
    }
}

async fn review_page(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    q: &Shown,
) -> Result<Response, Response> {
    let fail = |e: ApiError| page_error(me.lang, e);
    let book = state
        .services
        .books
        .get(&me.user.id, id)
        .await
        .map_err(|e| fail(e.into()))?;
    let filter = q.filter();
    let mut number = q.page();
    let translations = &state.services.translations;
    let at = |number: usize| {
        translations.review(
            &me.user.id,
            id,
            &filter,
            (number - 1) * REVIEW_PAGE,
            REVIEW_PAGE,
        )
    };
    let mut review = at(number).await.map_err(|e| fail(passage_error(e)))?;
    let pages = (review.total as usize).div_ceil(REVIEW_PAGE).max(1);
    if number > pages {
        // Back from a form that emptied the last page: its page before. Asked for, no such page.
        if q.said.is_none() {
            return Err(fail(ApiError::not_found("page")));
        }
        number = pages;
        review = at(number).await.map_err(|e| fail(passage_error(e)))?;
    }
    let lang_tag =
        (book.target_lang != crate::web::words::UNKNOWN_LANGUAGE).then(|| book.target_lang.clone());
    let source_tag = (book.original_lang != crate::web::words::UNKNOWN_LANGUAGE)
        .then(|| book.original_lang.clone());
    let dir = |lang: &str| {
        if booktr_formats::render::is_rtl(lang) {
            "rtl"
        } else {
            "ltr"
        }
    };
    let chapter_list = state
        .services
        .books
        .chapters(&book.id)
        .await
        .map_err(|e| fail(e.into()))?;
    let rows: Vec<Value> = review
        .rows
        .iter()
        .map(|r| row(id, r, me.lang, &chapter_list))
        .collect();
    let here = query_of(&filter, number);
    let paging = context! {
        page => number,
        pages,
        previous => (number > 1).then(|| address(id, &query_of(&filter, number - 1))),
        next => (number < pages).then(|| address(id, &query_of(&filter, number + 1))),
    };
    let data = context! {
        book => context! { id => book.id.clone(), title => book.title.clone() },
        rows,
        looks => look_options(&review, &filter),
        chapters => chapter_options(&review, &filter),
        filter => context! {
            look => filter.look.map(Look::name),
            chapter => filter.chapter,
            status => filter.status.name(),
        },
        total => review.total,
        open => review.open,
        done => review.done,
        low_bar => LOW_CONFIDENCE,
        paging,
        back => here,
        action => review_path(id),
        said => said_view(q),
        lang_tag,
        source_tag,
        dir => dir(&book.target_lang),
        source_dir => dir(&book.original_lang),
    };
    let title = format!("{} · {}", me.lang.get("review_title"), book.title);
    page(state, Some(me), me.lang, "app/review.html", &title, data).await
}

/// The kinds of passages to look at, each with how many there are, for the filter's choice.
fn look_options(review: &ReviewPage, filter: &ReviewFilter) -> Vec<Value> {
    Look::ALL
        .into_iter()
        .map(|look| {
            context! {
                value => look.name(),
                count => review.counts.get(&look).copied().unwrap_or(0),
                chosen => filter.look == Some(look),
            }
        })
        .collect()
}

/// The chapters with passages to review, for the filter's choice.
fn chapter_options(review: &ReviewPage, filter: &ReviewFilter) -> Vec<Value> {
    review
        .chapters
        .iter()
        .map(|(number, title)| {
            context! { number, title, chosen => filter.chapter == Some(*number) }
        })
        .collect()
}

/// What the page's form did, as the address says it.
fn said_view(q: &Shown) -> Option<Value> {
    q.said.as_deref().and_then(Said::parse).map(|said| {
        context! {
            key => said.key(),
            alert => said.alert(),
            n => q.n.unwrap_or(0),
            left => q.left.unwrap_or(0),
        }
    })
}

/// One passage of the review, as the template shows it: named as the reader names it (its
/// chapter's title and its first words, linked to it in the reader); the model's text with its
/// confidence, the owner's with where it came from instead (the confidence is the model's).
fn row(id: &str, r: &ReviewRow, lang: Lang, chapters: &[Chapter]) -> Value {
    let p = &r.passage;
    let (chapter, index) = (p.chapter, p.index);
    let origin = match &p.origin {
        Some(Origin::Model { pass }) => {
            context! { kind => "model", pass => pass.map(|p| p.task()) }
        }
        Some(Origin::Memory) => context! { kind => "memory" },
        Some(Origin::Edited { .. }) => context! { kind => "edited" },
        // What was kept is the original when the passage holds its source.
        Some(Origin::Kept { .. }) => context! { kind => "kept", source => holds_source(p) },
        Some(Origin::Retranslated { accepted_with, .. }) => context! {
            kind => "retranslated",
            accepted_with => accepted_with.iter().map(|f| f.kind).collect::<Vec<_>>(),
        },
        None => context! {},
    };
    let proposal = r.proposal.as_ref().map(|o| {
        context! {
            id => o.id.clone(),
            pending => o.pending,
            alone => o.alone,
            instruction => o.instruction.clone(),
            proposed => o.proposed.as_deref().map(preview_value),
            flags => o.flags.iter().map(|f| f.kind).collect::<Vec<_>>(),
            rejected => o.rejected,
            page => format!("/dashboard/books/{id}/proposals/{}", o.id),
        }
    });
    let model_text = matches!(p.origin, Some(Origin::Model { .. } | Origin::Memory));
    let confidence = r.confidence.filter(|_| model_text);
    // Why it is listed, but its low confidence (said with the confidence, and the model's, not
    // the owner's text's) and its flag when its flags say it in words.
    let reasons: Vec<&str> = r
        .looks
        .iter()
        .filter(|l| **l != Look::LowConfidence && (**l != Look::Flagged || p.flags.is_empty()))
        .map(|l| l.name())
        .collect();
    context! {
        chapter,
        index,
        label => chapter_label(lang, chapters, chapter),
        words => first_words(p.text.as_deref().unwrap_or(&p.source)),
        words_of_source => p.text.is_none(),
        href => passage_href(id, chapter, index),
        key => format!("{chapter}-{index}"),
        selected => format!(
            "{chapter}:{index}:{}:{}",
            p.version,
            r.proposal.as_ref().filter(|o| !o.pending).map_or("", |o| o.id.as_str())
        ),
        version => p.version,
        source => preview_value(&p.source),
        text => p.text.as_deref().map(preview_value),
        confidence,
        low => confidence.is_some_and(|c| c < LOW_CONFIDENCE),
        reasons,
        flags => p.flags.iter().map(|f| f.kind).collect::<Vec<_>>(),
        done => r.done,
        owners => !model_text && p.origin.is_some(),
        origin,
        keepable => model_text && p.text.is_some() && !r.done,
        proposal,
        edit => format!("/dashboard/books/{id}/read?chapter={chapter}&edit={index}#p-{index}"),
        retranslate => format!("/dashboard/books/{id}/retranslate"),
    }
}

/// What the page's form did, said at the top of the page it comes back to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Said {
    /// Passages kept as they are (`n`), and those left as they were (`left`).
    Kept,
    /// Proposals' passages accepted (`n`), and those left (`left`: a failed check, or changed
    /// since).
    Accepted,
    /// One passage accepted with the check its text failed.
    AcceptedWith,
    Discarded,
    /// Nothing ticked.
    NoneSelected,
    /// The passage changed since the page was shown: nothing written.
    Stale,
    /// The proposal was no longer ready (discarded, or the book is now in another language).
    NotReady,
    /// Keep refused: the passage needs no look (or has no text).
    NotKept,
    /// The plan's limit stopped the changes after `n`.
    Limited,
}

impl Said {
    const ALL: [(Said, &'static str); 9] = [
        (Said::Kept, "kept"),
        (Said::Accepted, "accepted"),
        (Said::AcceptedWith, "accepted_with"),
        (Said::Discarded, "discarded"),
        (Said::NoneSelected, "none_selected"),
        (Said::Stale, "stale"),
        (Said::NotReady, "not_ready"),
        (Said::NotKept, "not_kept"),
        (Said::Limited, "limited"),
    ];

    fn parse(name: &str) -> Option<Said> {
        Said::ALL.iter().find(|(_, n)| *n == name).map(|(s, _)| *s)
    }

    fn name(self) -> &'static str {
        Said::ALL
            .iter()
            .find(|(s, _)| *s == self)
            .map_or("", |(_, n)| n)
    }

    /// Its message's key.
    fn key(self) -> String {
        format!("review_said_{}", self.name())
    }

    fn alert(self) -> bool {
        matches!(
            self,
            Said::NoneSelected | Said::Stale | Said::NotReady | Said::NotKept | Said::Limited
        )
    }
}

/// A ticked passage: `chapter:index:version:proposal` (the proposal's id empty when it has
/// none).
struct Ticked {
    at: PassageAt,
    version: u64,
    proposal: Option<String>,
}

impl Ticked {
    fn parse(value: &str) -> Option<Ticked> {
        let mut parts = value.splitn(4, ':');
        let chapter = parts.next()?.parse().ok()?;
        let index = parts.next()?.parse().ok()?;
        let version = parts.next()?.parse().ok()?;
        let proposal = parts.next().filter(|p| !p.is_empty()).map(str::to_string);
        Some(Ticked {
            at: PassageAt { chapter, index },
            version,
            proposal,
        })
    }
}

/// How an action came out: what to say, with its counts.
struct Outcome {
    said: Said,
    n: u32,
    left: u32,
}

impl Outcome {
    fn said(said: Said) -> Outcome {
        Outcome {
            said,
            n: 0,
            left: 0,
        }
    }
}

async fn act(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(refused) = me.check_fields(&fields) {
        return page_error(me.lang, refused);
    }
    // Back to the same filters and page, whatever else the field holds.
    let back = field(&fields, "back").map_or_else(Shown::default, |b| Shown::read(&b));
    let outcome = match field(&fields, "one") {
        Some(one) => act_on_one(&state, &me, &id, &one).await,
        None => {
            let ticked: Vec<Ticked> = fields
                .iter()
                .filter(|(name, _)| name == "selected")
                .filter_map(|(_, value)| Ticked::parse(value))
                .collect();
            match field(&fields, "action").as_deref() {
                _ if ticked.is_empty() => Ok(Outcome::said(Said::NoneSelected)),
                Some("keep") => Ok(keep_ticked(&state, &me, &id, &ticked).await),
                Some("accept") => accept_ticked(&state, &me, &id, &ticked).await,
                _ => Err(ApiError::bad_request("action: keep or accept")),
            }
        }
    };
    match outcome {
        Ok(outcome) => {
            let mut query = query_of(&back.filter(), back.page());
            if !query.is_empty() {
                query.push('&');
            }
            query.push_str(&format!("said={}", outcome.said.name()));
            if outcome.n > 0 {
                query.push_str(&format!("&n={}", outcome.n));
            }
            if outcome.left > 0 {
                query.push_str(&format!("&left={}", outcome.left));
            }
            Redirect::to(&address(&id, &query)).into_response()
        }
        Err(e) => page_error(me.lang, e),
    }
}

/// One passage's button: `keep:C:I:V`, `accept:P:I` or `discard:P`.
async fn act_on_one(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    one: &str,
) -> Result<Outcome, ApiError> {
    let translations = &state.services.translations;
    let user = &me.user.id;
    let (verb, rest) = one.split_once(':').unwrap_or((one, ""));
    match verb {
        "keep" => {
            let ticked =
                Ticked::parse(rest).ok_or_else(|| ApiError::bad_request("one: keep:C:I:V"))?;
            crate::limits::count_as_api_call(state, &me.user).await?;
            match translations
                .keep_passage(user, id, ticked.at, ticked.version)
                .await
            {
                Ok(_) => Ok(Outcome {
                    n: 1,
                    ..Outcome::said(Said::Kept)
                }),
                Err(PassageError::Stale { .. }) => Ok(Outcome::said(Said::Stale)),
                Err(PassageError::Invalid(_)) => Ok(Outcome::said(Said::NotKept)),
                Err(e) => Err(passage_error(e)),
            }
        }
        "accept" => {
            let (proposal, index) = rest
                .split_once(':')
                .and_then(|(p, i)| Some((p, i.parse::<u32>().ok()?)))
                .ok_or_else(|| ApiError::bad_request("one: accept:P:I"))?;
            crate::limits::count_as_api_call(state, &me.user).await?;
            match translations
                .accept_proposal(user, id, proposal, Some(vec![index]))
                .await
            {
                Ok(accepted) => {
                    let knowingly = accepted
                        .passages
                        .iter()
                        .any(|p| p.index == index && !p.flags.is_empty());
                    Ok(match knowingly {
                        true => Outcome::said(Said::AcceptedWith),
                        false => Outcome {
                            n: 1,
                            ..Outcome::said(Said::Accepted)
                        },
                    })
                }
                Err(e) => proposal_outcome(e),
            }
        }
        "discard" => {
            crate::limits::count_as_api_call(state, &me.user).await?;
            match translations.discard_proposal(user, id, rest).await {
                Ok(_) => Ok(Outcome::said(Said::Discarded)),
                Err(e) => proposal_outcome(e),
            }
        }
        _ => Err(ApiError::bad_request("one: keep, accept or discard")),
    }
}

/// A proposal's refusal as what the page says, or the error page.
fn proposal_outcome(e: ProposalError) -> Result<Outcome, ApiError> {
    match e {
        ProposalError::Passage(PassageError::Stale { .. }) => Ok(Outcome::said(Said::Stale)),
        ProposalError::NotReady(_) => Ok(Outcome::said(Said::NotReady)),
        ProposalError::Passage(e) => Err(passage_error(e)),
        ProposalError::Translation(e) => Err(e.into()),
    }
}

/// Keeps the ticked passages as they are, each at the version the page showed; those changed
/// since, or needing no look, are left as they are and counted.
async fn keep_ticked(state: &AppState, me: &SignedIn, id: &str, ticked: &[Ticked]) -> Outcome {
    let mut outcome = Outcome::said(Said::Kept);
    for (at, one) in ticked.iter().enumerate() {
        if crate::limits::count_as_api_call(state, &me.user)
            .await
            .is_err()
        {
            return Outcome {
                said: Said::Limited,
                left: (ticked.len() - at) as u32,
                ..outcome
            };
        }
        match state
            .services
            .translations
            .keep_passage(&me.user.id, id, one.at, one.version)
            .await
        {
            Ok(_) => outcome.n += 1,
            Err(_) => outcome.left += 1,
        }
    }
    outcome
}

/// Accepts the ticked passages' proposals, one request per proposal; a passage whose proposed
/// text failed a check is left (it is accepted only on its own, knowingly), as is one without
/// a ready proposal, or changed since.
async fn accept_ticked(
    state: &AppState,
    me: &SignedIn,
    id: &str,
    ticked: &[Ticked],
) -> Result<Outcome, ApiError> {
    let translations = &state.services.translations;
    let user = &me.user.id;
    let mut outcome = Outcome::said(Said::Accepted);
    let mut by_proposal: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for one in ticked {
        match &one.proposal {
            Some(proposal) => by_proposal
                .entry(proposal.as_str())
                .or_default()
                .push(one.at.index),
            None => outcome.left += 1,
        }
    }
    for (proposal, indexes) in by_proposal {
        let shown = match translations.proposal(user, id, proposal).await {
            Ok(shown) => shown,
            Err(ProposalError::Passage(PassageError::NotFound(_))) => {
                outcome.left += indexes.len() as u32;
                continue;
            }
            Err(e) => return proposal_outcome(e).map(|_| outcome),
        };
        let clean: Vec<u32> = indexes
            .iter()
            .copied()
            .filter(|i| {
                shown
                    .passages
                    .iter()
                    .any(|p| p.index == *i && p.flags.is_empty() && !p.accepted)
            })
            .collect();
        outcome.left += (indexes.len() - clean.len()) as u32;
        if clean.is_empty() {
            continue;
        }
        if crate::limits::count_as_api_call(state, &me.user)
            .await
            .is_err()
        {
            outcome.said = Said::Limited;
            outcome.left += clean.len() as u32;
            continue;
        }
        match translations
            .accept_proposal(user, id, proposal, Some(clean.clone()))
            .await
        {
            Ok(_) => outcome.n += clean.len() as u32,
            Err(
                ProposalError::Passage(PassageError::Stale { .. }) | ProposalError::NotReady(_),
            ) => {
                outcome.left += clean.len() as u32;
            }
            Err(e) => return proposal_outcome(e).map(|_| outcome),
        }
    }
    if outcome.n == 0 && outcome.said == Said::Accepted && outcome.left == 0 {
        outcome.said = Said::NoneSelected;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticked_passage_reads_back_with_or_without_its_proposal() {
        let with = Ticked::parse("3:12:2:p-1").unwrap();
        assert_eq!((with.at.chapter, with.at.index, with.version), (3, 12, 2));
        assert_eq!(with.proposal.as_deref(), Some("p-1"));
        assert_eq!(Ticked::parse("3:12:0:").unwrap().proposal, None);
        assert!(Ticked::parse("3:x:0:").is_none());
        assert!(Ticked::parse("3").is_none());
    }

    #[test]
    fn the_address_keeps_the_filters_but_the_defaults() {
        let filter = ReviewFilter {
            look: Some(Look::LowConfidence),
            chapter: Some(2),
            status: ReviewStatus::Done,
        };
        assert_eq!(
            query_of(&filter, 3),
            "look=lowConfidence&chapter=2&status=done&page=3"
        );
        assert_eq!(query_of(&ReviewFilter::default(), 1), "");
        let shown = Shown::read(&query_of(&filter, 3));
        assert_eq!(shown.filter(), filter);
        assert_eq!(shown.page(), 3);
        for (said, name) in Said::ALL {
            assert_eq!(Said::parse(name), Some(said));
        }
    }

    #[test]
    fn every_reason_and_every_outcome_is_said_in_both_languages() {
        use crate::web::app::i18n::Lang;
        for lang in [Lang::En, Lang::Es] {
            for look in Look::ALL {
                let key = format!("look_{}", look.name());
                assert!(lang.find(&key).is_some(), "{key}");
            }
            for (said, _) in Said::ALL {
                assert!(lang.find(&said.key()).is_some(), "{}", said.key());
            }
        }
    }
}
