//! The review desk and a fix that can succeed, through the pages as a browser without
//! JavaScript uses them: the passages that need a look listed lowest confidence first and
//! filtered, kept one at a time and ticked together, nobody else's; a re-translation whose every
//! answer failed a check accepted knowingly, and Accept and Discard saying what they did.

use std::sync::Arc;

use async_trait::async_trait;
use booktr_core::ports::{KeyCheckError, Models};
use booktr_translate::misbehaving::{spoil, Fault};
use booktr_translate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};
use booktr_translate::offline::OfflineEngine;
use booktr_translate::providers::Family;
use serde_json::Value;

use crate::helpers::{eventually, TestApp};
use crate::passages::book;
use crate::web_app::{location, Browser};

/// Answers like the offline engine, but leaves out the block about the spleen from every
/// answer in the block protocol (the simplest prompt gets it: repaired on the last rung, of low
/// confidence) and the block about the grim mouth from every answer (flagged, its source kept).
pub(crate) struct Uneven;

#[async_trait]
impl ChatModel for Uneven {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request.clone()).await?;
        if request.user.starts_with("TASK: ") {
            let blocks = request.user.split("BLOCKS:\n").nth(1).unwrap_or_default();
            let left_out: Vec<String> = blocks
                .lines()
                .filter(|l| l.starts_with("[[") && (l.contains("spleen") || l.contains("grim")))
                .filter_map(|l| {
                    l.split_once("]] ")
                        .map(|(marker, _)| format!("{marker}]] "))
                })
                .collect();
            response.text = response
                .text
                .lines()
                .filter(|l| !left_out.iter().any(|m| l.starts_with(m.as_str())))
                .map(|l| format!("{l}\n"))
                .collect();
        } else if request.user.contains("grim") {
            response.text = String::new();
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "uneven-stand-in"
    }
}

/// Answers like the offline engine; told an owner's instruction, every answer is cut off at its
/// token limit.
struct CutWhenInstructed;

#[async_trait]
impl ChatModel for CutWhenInstructed {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request.clone()).await?;
        let instructed = request.user.contains("\nINSTRUCTION:\n")
            || request
                .system
                .contains("The book's owner asks of this text");
        if instructed {
            if let Some(cut) = spoil(Fault::Truncated, &request, &response.text) {
                response.text = cut;
                response.truncated = true;
            }
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "cut-when-instructed"
    }
}

/// Answers like the offline engine; told an owner's instruction, its translate pass ends every
/// block with a word of its own, so that a chapter translated again differs in every passage.
struct Formal;

#[async_trait]
impl ChatModel for Formal {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request.clone()).await?;
        if request.user.starts_with("TASK: translate\n")
            && request.user.contains("\nINSTRUCTION:\n")
        {
            response.text = response
                .text
                .lines()
                .map(|line| match line.starts_with("[[") {
                    true => format!("{line} ústéd\n"),
                    false => format!("{line}\n"),
                })
                .collect();
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "formal-stand-in"
    }
}

/// The app's models: one stand-in for every model name.
pub(crate) struct StandIn<M>(pub(crate) fn() -> M);

#[async_trait]
impl<M: ChatModel + 'static> Models for StandIn<M> {
    fn model(&self, _: &str, _: Option<String>) -> Result<Arc<dyn ChatModel>, ChatError> {
        Ok(Arc::new((self.0)()))
    }

    async fn check_key(&self, _: Family, _: &str) -> Result<(), KeyCheckError> {
        Ok(())
    }
}

/// A signed-up owner's [`book`], translated to COMPLETED by the app's models; its id and the
/// owner's form token.
async fn translated_book(owner: &mut Browser<'_>) -> (String, String) {
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let uploaded = owner.upload(&token, "voyage.txt", book(), "Voyage").await;
    let page = location(&uploaded).split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    owner.wait_for(&id, "EXTRACTED").await;
    let started = owner
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    owner.wait_for(&id, "COMPLETED").await;
    (id, token)
}

/// Every passage of the book as the API tells it to the owner's session.
async fn all_passages(owner: &Browser<'_>, id: &str) -> Vec<Value> {
    let chapters = owner.book(id).await["chapterCount"].as_u64().unwrap();
    let mut all = Vec::new();
    for chapter in 1..=chapters {
        let path = format!("/api/books/{id}/chapters/{chapter}/passages?limit=200");
        let page: Value = owner.get(&path).await.json().await.unwrap();
        all.extend(page["passages"].as_array().unwrap().iter().cloned());
    }
    all
}

/// The passages the review should list open: the model's text flagged, of confidence under
/// 70, or changed by a later pass; the lowest confidence first, then in reading order.
fn needing_a_look(passages: &[Value]) -> Vec<(u64, u64)> {
    let mut listed: Vec<(u64, u64, u64)> = passages
        .iter()
        .filter(|p| p["origin"]["kind"] == "model")
        .filter(|p| {
            !p["flags"].as_array().unwrap().is_empty()
                || p["confidence"].as_u64().is_some_and(|c| c < 70)
                || p["origin"]["pass"] == "review"
                || p["origin"]["pass"] == "polish"
        })
        .map(|p| {
            (
                p["confidence"].as_u64().unwrap_or(1000),
                p["chapter"].as_u64().unwrap(),
                p["index"].as_u64().unwrap(),
            )
        })
        .collect();
    listed.sort();
    listed.into_iter().map(|(_, c, i)| (c, i)).collect()
}

/// The passages the review page lists, in its order (`data-passage="C:I"`).
fn listed(html: &str) -> Vec<(u64, u64)> {
    html.split("data-passage=\"")
        .skip(1)
        .map(|rest| {
            let value = rest.split('"').next().unwrap();
            let (c, i) = value.split_once(':').unwrap();
            (c.parse().unwrap(), i.parse().unwrap())
        })
        .collect()
}

/// The values of the page's `selected` boxes, in order.
fn tick_values(html: &str) -> Vec<String> {
    html.split("name=\"selected\" value=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

/// The review's card of passage `at` (`C:I`), up to the next card.
fn card(html: &str, at: (u64, u64)) -> &str {
    let start = format!("data-passage=\"{}:{}\"", at.0, at.1);
    let rest = html
        .split(&start)
        .nth(1)
        .unwrap_or_else(|| panic!("{at:?}: {html}"));
    rest.split("</li>").next().unwrap()
}

/// A piece of a page as it reads: its markup left out, the characters it escapes back.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out.replace("&#x27;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Text as the pages write it, escaped.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#x27;")
}

/// How the pages name a passage: its chapter's title (else "Chapter N") and its first words (of
/// its text, else of its source).
async fn name_of(owner: &Browser<'_>, id: &str, passage: &Value) -> (String, String) {
    let chapter = passage["chapter"].as_u64().unwrap();
    let book = owner.book(id).await;
    let label = book["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["number"] == chapter)
        .and_then(|c| c["title"].as_str())
        .map_or_else(|| format!("Chapter {chapter}"), str::to_string);
    let text = passage["text"]
        .as_str()
        .unwrap_or_else(|| passage["source"].as_str().unwrap());
    (label, booktr_api::web::words::first_words(text))
}

/// The owner's reader at passage `index` of chapter `chapter`, as a page's link writes it.
fn reader_link(id: &str, chapter: &Value, index: &Value) -> String {
    format!("href=\"/dashboard/books/{id}/read?chapter={chapter}&amp;near={index}#p-{index}\"")
}

fn passage(passages: &[Value], at: (u64, u64)) -> &Value {
    passages
        .iter()
        .find(|p| p["chapter"] == at.0 && p["index"] == at.1)
        .unwrap()
}

#[tokio::test]
async fn the_review_lists_what_needs_a_look_lowest_confidence_first_and_keeps_it_without_javascript(
) {
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(StandIn(|| Uneven)))
        .start()
        .await;
    let mut owner = Browser::new(&app);
    let (id, token) = translated_book(&mut owner).await;
    let review = format!("/dashboard/books/{id}/review");

    // What the API says needs a look: a flagged passage and one of low confidence at least.
    let passages = all_passages(&owner, &id).await;
    let expected = needing_a_look(&passages);
    let flagged: Vec<(u64, u64)> = expected
        .iter()
        .copied()
        .filter(|at| {
            !passage(&passages, *at)["flags"]
                .as_array()
                .unwrap()
                .is_empty()
        })
        .collect();
    let low_only: Vec<(u64, u64)> = expected
        .iter()
        .copied()
        .filter(|at| !flagged.contains(at))
        .filter(|at| passage(&passages, *at)["confidence"].as_u64().unwrap() < 70)
        .collect();
    assert!(!flagged.is_empty(), "{passages:#?}");
    assert!(!low_only.is_empty(), "{passages:#?}");

    // The book's page leads there by its counts, and names no API route.
    let book_page = owner.html(&format!("/dashboard/books/{id}")).await;
    assert!(
        book_page.contains(&format!("href=\"{review}?look=flagged\"")),
        "{book_page}"
    );
    assert!(
        book_page.contains(&format!("href=\"{review}?look=lowConfidence\"")),
        "{book_page}"
    );
    assert!(!book_page.contains("/api/"), "{book_page}");
    // So does the completion's notification.
    let notifications = owner.html("/dashboard/notifications").await;
    assert!(
        notifications.contains(&format!("{review}\">Review them</a>")),
        "{notifications}"
    );
    assert!(!notifications.contains("/api/"), "{notifications}");
    // And the reader.
    let reader = owner.html(&format!("/dashboard/books/{id}/read")).await;
    assert!(reader.contains(&format!("href=\"{review}\"")), "{reader}");

    // Every passage that needs a look, lowest confidence first, with its source and text.
    let html = owner.html(&review).await;
    assert_eq!(listed(&html), expected, "{html}");
    let first = passage(&passages, expected[0]);
    assert!(html.contains("Confidence: 0/100 (low)"), "{html}");
    assert!(
        html.contains("the model did not return this passage."),
        "{html}"
    );
    assert!(html.contains("Edit in place"), "{html}");
    let edit = format!(
        "/dashboard/books/{id}/read?chapter={}&amp;edit={}#p-{}",
        first["chapter"], first["index"], first["index"]
    );
    assert!(html.contains(&edit), "{html}");
    assert!(html.contains("Translate this passage again"), "{html}");
    // Each named as the reader shows it: its chapter's title and its first words, linked to it
    // in the reader; never "Passage N", which matches nothing the reader shows.
    for at in &expected {
        let shown = passage(&passages, *at);
        let card = card(&html, *at);
        let heading = card.split("class=\"item-title\"").nth(1).unwrap();
        let heading = heading.split("</h2>").next().unwrap();
        let (label, words) = name_of(&owner, &id, shown).await;
        assert_eq!(
            text_of(&heading[heading.find('>').unwrap() + 1..]),
            format!("{label} · “{words}”"),
            "{card}"
        );
        assert!(
            heading.contains(&reader_link(&id, &shown["chapter"], &shown["index"])),
            "{card}"
        );
    }
    assert!(!html.contains("· Passage "), "{html}");
    // The model's text says its confidence; a kept text does not (below).
    assert!(html.contains("review-item low"), "{html}");

    // Filtered by reason and chapter.
    let html = owner.html(&format!("{review}?look=flagged")).await;
    assert_eq!(listed(&html), flagged, "{html}");
    let (chapter, _) = low_only[0];
    let html = owner
        .html(&format!("{review}?look=lowConfidence&chapter={chapter}"))
        .await;
    let in_chapter: Vec<(u64, u64)> = expected
        .iter()
        .copied()
        .filter(|at| at.0 == chapter)
        .filter(|at| passage(&passages, *at)["confidence"].as_u64().unwrap() < 70)
        .collect();
    assert_eq!(listed(&html), in_chapter, "{html}");
    assert!(
        html.contains("<option value=\"lowConfidence\" selected>"),
        "{html}"
    );

    // Kept one at a time: back to the same filter, saying so; the passage is the owner's.
    let at = low_only[0];
    let kept = passage(&passages, at);
    let one = format!("keep:{}:{}:{}", at.0, at.1, kept["version"]);
    let response = owner
        .post_form(
            &review,
            &[
                ("csrf", &token),
                ("back", "look=lowConfidence"),
                ("one", &one),
            ],
        )
        .await;
    assert_eq!(response.status(), 303);
    assert_eq!(
        location(&response),
        format!("{review}?look=lowConfidence&said=kept&n=1")
    );
    let html = owner.html(&location(&response)).await;
    assert!(html.contains("Passages kept as they are: 1."), "{html}");
    assert!(!listed(&html).contains(&at), "{html}");
    let now = passage(&all_passages(&owner, &id).await, at).clone();
    assert_eq!(now["origin"]["kind"], "kept", "{now}");

    // The same keep again names a version the passage is no longer at: nothing changes.
    let again = owner
        .post_form(&review, &[("csrf", &token), ("one", &one)])
        .await;
    assert_eq!(location(&again), format!("{review}?said=stale"));
    let html = owner.html(&location(&again)).await;
    assert!(html.contains("role=\"alert\""), "{html}");

    // Nothing ticked: said, nothing changed.
    let none = owner
        .post_form(&review, &[("csrf", &token), ("action", "keep")])
        .await;
    assert_eq!(location(&none), format!("{review}?said=none_selected"));

    // The rest ticked and kept at once: nothing is left open, and the reviewed list has them.
    let html = owner.html(&review).await;
    let ticked = tick_values(&html);
    assert_eq!(ticked.len(), expected.len() - 1);
    let mut fields = vec![("csrf", token.as_str()), ("action", "keep")];
    fields.extend(ticked.iter().map(|v| ("selected", v.as_str())));
    let response = owner.post_form(&review, &fields).await;
    assert_eq!(
        location(&response),
        format!("{review}?said=kept&n={}", ticked.len())
    );
    let html = owner.html(&review).await;
    assert!(html.contains("No passage here needs a look."), "{html}");
    let done = owner.html(&format!("{review}?status=done")).await;
    let mut reviewed = listed(&done);
    reviewed.sort();
    let mut all = expected.clone();
    all.sort();
    assert_eq!(reviewed, all, "{done}");
    // Each says what was kept: the model's text, or the original where the flagged passage
    // held its source (no answer passed the checks).
    let (mut sources, mut models) = (0, 0);
    for at in &expected {
        let shown = passage(&passages, *at);
        let card = text_of(card(&done, *at));
        if shown["text"] == shown["source"] {
            sources += 1;
            assert!(card.contains("The original text, kept as it is"), "{card}");
            assert!(!card.contains("The model's text"), "{card}");
        } else {
            models += 1;
            assert!(card.contains("The model's text, kept as it is"), "{card}");
        }
    }
    assert!(sources > 0 && models > 0, "{passages:#?}");
    // The owner's text now: no confidence (the model's) said of it, nor marked low.
    assert!(!done.contains("Confidence:"), "{done}");
    assert!(!done.contains("review-item low"), "{done}");
    assert!(!done.contains("class=\"confidence"), "{done}");

    // A form without its token changes nothing; another person finds no such page.
    let forged = owner.post_form(&review, &[("one", &one)]).await;
    assert_eq!(forged.status(), 403);
    let mut other = Browser::new(&app);
    other.sign_up().await;
    assert_eq!(other.get(&review).await.status(), 404);
    let theirs = other.token("/dashboard").await;
    let posted = other
        .post_form(&review, &[("csrf", &theirs), ("one", &one)])
        .await;
    assert_eq!(posted.status(), 404);
}

#[tokio::test]
async fn a_fix_whose_every_answer_failed_a_check_is_accepted_knowingly_and_accept_and_discard_say_what_they_did(
) {
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(StandIn(|| CutWhenInstructed)))
        .start()
        .await;
    let mut owner = Browser::new(&app);
    let (id, token) = translated_book(&mut owner).await;
    let page = format!("/dashboard/books/{id}");
    let ask = |instruction: &'static str| {
        [
            ("chapter", "2"),
            ("index", "1"),
            ("instruction", instruction),
        ]
    };

    // Every answer to the instructed re-translation is cut off: the proposal holds the last.
    let mut fields = vec![("csrf", token.as_str())];
    fields.extend(ask("more formal"));
    let asked = owner
        .post_form(&format!("{page}/retranslate"), &fields)
        .await;
    assert_eq!(asked.status(), 303);
    let proposal = location(&asked);
    let shown = eventually(std::time::Duration::from_secs(60), || async {
        let html = owner.html(&proposal).await;
        match html.contains("Accept it anyway") {
            true => Ok(html),
            false => Err(format!("not ready: {html}")),
        }
    })
    .await;
    assert!(
        shown.contains("this is the last one, which the answer was cut off."),
        "{shown}"
    );
    let proposal_id = proposal.rsplit('/').next().unwrap();
    let api: Value = owner
        .get(&format!("/api/books/{id}/proposals/{proposal_id}"))
        .await
        .json()
        .await
        .unwrap();
    let proposed = &api["passages"][0];
    assert_eq!(proposed["rejected"], true, "{api}");
    assert_eq!(proposed["flags"][0]["kind"], "truncated", "{api}");
    assert_eq!(
        proposed["flags"][0]["reason"],
        "the answer was cut off; accepting it takes it as it is"
    );
    let before: Value = owner
        .get(&format!(
            "/api/books/{id}/chapters/2/passages?offset=1&limit=1"
        ))
        .await
        .json()
        .await
        .unwrap();
    let source = before["passages"][0]["source"].as_str().unwrap();
    assert_ne!(proposed["proposed"].as_str().unwrap(), source, "{api}");
    // The proposal names its passage as the reader shows it, above and in its row: its
    // chapter's title and its first words, linked to it in the reader; never "Passage 2".
    let (label, words) = name_of(&owner, &id, &before["passages"][0]).await;
    let place = shown.split("<p class=\"place\">").nth(1).unwrap();
    let place = place.split("</p>").next().unwrap();
    assert!(
        text_of(place).starts_with(&format!("{label} · “{words}” · Model: ")),
        "{place}"
    );
    let link = reader_link(&id, &Value::from(2), &Value::from(1));
    assert!(place.contains(&link), "{place}");
    let row = shown.split("<tbody>").nth(1).unwrap();
    assert!(
        row.contains(&format!("{link}>“{}”</a>", escaped(&words))),
        "{row}"
    );
    assert!(!shown.contains("Passage 2"), "{shown}");

    // Accept (everything the checks passed) takes nothing, and says so.
    let nothing = owner
        .post_form(&format!("{proposal}/accept"), &[("csrf", &token)])
        .await;
    assert_eq!(nothing.status(), 303);
    assert_eq!(location(&nothing), format!("{proposal}?said=none"));
    let html = owner.html(&location(&nothing)).await;
    assert!(html.contains("Nothing was accepted"), "{html}");

    // Accepted knowingly: back at the passage, its editor saying so and what it failed.
    let accepted = owner
        .post_form(
            &format!("{proposal}/accept"),
            &[("csrf", &token), ("passages", "1")],
        )
        .await;
    assert_eq!(accepted.status(), 303);
    assert_eq!(
        location(&accepted),
        format!("{page}/read?chapter=2&edit=1&done=accepted_with#p-1")
    );
    let html = owner.html(&location(&accepted)).await;
    assert!(html.contains("Accepted knowingly"), "{html}");
    assert!(
        html.contains("Accepted with:</strong> the answer was cut off"),
        "{html}"
    );
    let now: Value = owner
        .get(&format!(
            "/api/books/{id}/chapters/2/passages?offset=1&limit=1"
        ))
        .await
        .json()
        .await
        .unwrap();
    let now = &now["passages"][0];
    assert_eq!(now["text"], proposed["proposed"], "{now}");
    assert_eq!(now["origin"]["kind"], "retranslated", "{now}");
    assert_eq!(
        now["origin"]["acceptedWith"][0]["kind"], "truncated",
        "{now}"
    );

    // Asked again, it waits in the review; discarded from there, the review says so.
    let mut fields = vec![("csrf", token.as_str())];
    fields.extend(ask("shorter"));
    let asked = owner
        .post_form(&format!("{page}/retranslate"), &fields)
        .await;
    let second = location(&asked);
    let second_id = second.rsplit('/').next().unwrap().to_string();
    eventually(std::time::Duration::from_secs(60), || async {
        let html = owner.html(&second).await;
        match html.contains("Accept it anyway") {
            true => Ok(()),
            false => Err(format!("not ready: {html}")),
        }
    })
    .await;
    let review = format!("{page}/review");
    let html = owner.html(&format!("{review}?look=proposal")).await;
    assert_eq!(listed(&html), vec![(2, 1)], "{html}");
    assert!(html.contains("New translation waiting"), "{html}");
    assert!(
        html.contains(&format!("value=\"accept:{second_id}:1\"")),
        "{html}"
    );
    let discarded = owner
        .post_form(
            &review,
            &[
                ("csrf", &token),
                ("back", "look=proposal"),
                ("one", &format!("discard:{second_id}")),
            ],
        )
        .await;
    assert_eq!(
        location(&discarded),
        format!("{review}?look=proposal&said=discarded")
    );
    let html = owner.html(&location(&discarded)).await;
    assert!(
        html.contains("Discarded: the passage is as it was."),
        "{html}"
    );
    assert!(listed(&html).is_empty(), "{html}");

    // A third, discarded from its own page: back at the passage, saying so.
    let mut fields = vec![("csrf", token.as_str())];
    fields.extend(ask("plainer"));
    let asked = owner
        .post_form(&format!("{page}/retranslate"), &fields)
        .await;
    let third = location(&asked);
    let gone = owner
        .post_form(&format!("{third}/discard"), &[("csrf", &token)])
        .await;
    assert_eq!(
        location(&gone),
        format!("{page}/read?chapter=2&edit=1&done=discarded#p-1")
    );
    let html = owner.html(&location(&gone)).await;
    assert!(
        html.contains("Discarded: the passage is as it was."),
        "{html}"
    );
}

#[tokio::test]
async fn the_review_goes_a_bounded_page_at_a_time_and_a_page_emptied_by_its_form_falls_back_to_the_last(
) {
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(crate::passages::Refusing))
        .start()
        .await;
    let mut owner = Browser::new(&app);
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    // Every passage refused, so flagged: more than a page of them.
    let text: String = (1..=25)
        .map(|n| format!("Paragraph number {n} of the long voyage goes here.\n\n"))
        .collect();
    let uploaded = owner
        .upload(&token, "long.txt", text.into_bytes(), "Long")
        .await;
    let page = location(&uploaded).split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    owner.wait_for(&id, "EXTRACTED").await;
    let started = owner
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    owner.wait_for(&id, "COMPLETED").await;
    let review = format!("{page}/review");

    let first = owner.html(&review).await;
    let total = needing_a_look(&all_passages(&owner, &id).await).len();
    assert!(total > 20, "{total}");
    assert_eq!(listed(&first).len(), 20, "{first}");
    assert!(
        first.contains(&format!("href=\"{review}?page=2\"")),
        "{first}"
    );
    let second = owner.html(&format!("{review}?page=2")).await;
    assert_eq!(listed(&second).len(), total - 20, "{second}");
    assert_eq!(owner.get(&format!("{review}?page=3")).await.status(), 404);

    // The second page's passages ticked and kept: back to the first, saying so.
    let ticked = tick_values(&second);
    let mut fields = vec![
        ("csrf", token.as_str()),
        ("action", "keep"),
        ("back", "page=2"),
    ];
    fields.extend(ticked.iter().map(|v| ("selected", v.as_str())));
    let response = owner.post_form(&review, &fields).await;
    let back = location(&response);
    assert_eq!(back, format!("{review}?page=2&said=kept&n={}", total - 20));
    let html = owner.html(&back).await;
    assert!(
        html.contains(&format!("Passages kept as they are: {}.", total - 20)),
        "{html}"
    );
    assert_eq!(listed(&html).len(), 20, "{html}");
}

#[tokio::test]
async fn the_ticked_passages_new_translations_are_accepted_at_once_and_one_without_a_proposal_is_left(
) {
    // The offline engine: its re-translations pass the checks.
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    let (id, token) = translated_book(&mut owner).await;
    let page = format!("/dashboard/books/{id}");
    for index in ["1", "2"] {
        let asked = owner
            .post_form(
                &format!("{page}/retranslate"),
                &[
                    ("csrf", &token),
                    ("chapter", "2"),
                    ("index", index),
                    ("instruction", "more formal"),
                ],
            )
            .await;
        assert_eq!(asked.status(), 303);
    }
    let review = format!("{page}/review");
    let html = eventually(std::time::Duration::from_secs(60), || async {
        let html = owner.html(&format!("{review}?look=proposal")).await;
        match html.matches("name=\"one\" value=\"accept:").count() {
            2 => Ok(html),
            _ => Err(format!("not ready: {html}")),
        }
    })
    .await;
    assert_eq!(listed(&html), vec![(2, 1), (2, 2)], "{html}");
    let mut ticked = tick_values(&html);
    // A passage with no proposal ticked with them is left, and counted.
    let passages = all_passages(&owner, &id).await;
    let plain = passage(&passages, (2, 0));
    ticked.push(format!("2:0:{}:", plain["version"]));
    let mut fields = vec![
        ("csrf", token.as_str()),
        ("action", "accept"),
        ("back", "look=proposal"),
    ];
    fields.extend(ticked.iter().map(|v| ("selected", v.as_str())));
    let response = owner.post_form(&review, &fields).await;
    assert_eq!(
        location(&response),
        format!("{review}?look=proposal&said=accepted&n=2&left=1")
    );
    let html = owner.html(&location(&response)).await;
    assert!(html.contains("New translations accepted: 2."), "{html}");
    assert!(html.contains("Left as they were: 1"), "{html}");
    assert!(listed(&html).is_empty(), "{html}");
    let passages = all_passages(&owner, &id).await;
    for index in [1, 2] {
        let now = passage(&passages, (2, index));
        assert_eq!(now["origin"]["kind"], "retranslated", "{now}");
        assert!(now["origin"].get("acceptedWith").is_none(), "{now}");
    }
}

#[tokio::test]
async fn a_chapters_new_translation_says_how_many_passages_it_accepted_in_the_singular_for_one() {
    // A stand-in whose re-translations with an instruction differ from the text now in every
    // passage, and pass the checks.
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(StandIn(|| Formal)))
        .start()
        .await;
    let mut owner = Browser::new(&app);
    let (id, token) = translated_book(&mut owner).await;
    let page = format!("/dashboard/books/{id}");
    let asked = owner
        .post_form(
            &format!("{page}/retranslate"),
            &[
                ("csrf", &token),
                ("chapter", "2"),
                ("instruction", "more formal"),
            ],
        )
        .await;
    assert_eq!(asked.status(), 303);
    let proposal = location(&asked);
    let shown = eventually(std::time::Duration::from_secs(60), || async {
        let html = owner.html(&proposal).await;
        match html.contains("Discard") && html.contains("<tbody>") {
            true => Ok(html),
            false => Err(format!("not ready: {html}")),
        }
    })
    .await;
    // A chapter's proposal names its chapter above, linked to it in the reader, and each
    // passage by its first words, linked to it.
    let place = shown.split("<p class=\"place\">").nth(1).unwrap();
    let place = place.split("</p>").next().unwrap();
    assert!(
        place.contains(&format!("href=\"{page}/read?chapter=2\">")),
        "{place}"
    );
    let passages = all_passages(&owner, &id).await;
    for p in passages.iter().filter(|p| p["chapter"] == 2) {
        assert!(
            shown.contains(&reader_link(&id, &p["chapter"], &p["index"])),
            "{shown}"
        );
    }

    // One passage taken alone: said in the singular.
    let one = owner
        .post_form(
            &format!("{proposal}/accept"),
            &[("csrf", &token), ("passages", "1")],
        )
        .await;
    assert_eq!(location(&one), format!("{proposal}?said=accepted&n=1"));
    let html = owner.html(&location(&one)).await;
    assert!(
        html.contains("Accepted: 1 passage now holds the new translation."),
        "{html}"
    );
    // The rest at once: in the plural.
    let rest = owner
        .post_form(&format!("{proposal}/accept"), &[("csrf", &token)])
        .await;
    let to = location(&rest);
    let n: u32 = to
        .split("&n=")
        .nth(1)
        .unwrap_or_else(|| panic!("{to}"))
        .parse()
        .unwrap();
    assert!(n > 1, "{to}");
    let html = owner.html(&to).await;
    assert!(
        html.contains(&format!(
            "Accepted: {n} passages now hold the new translation."
        )),
        "{html}"
    );
}
