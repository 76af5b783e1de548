//! The translation memory (issue 50): a book translated again, or its second edition, asks the
//! model only for what it has not translated before; the owner lists, deletes, exports and
//! imports the memory (TMX, read and written by translate-toolkit); another user never sees it.

use std::sync::Arc;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};
use crate::stand_ins::{is_term_list, StandIn};

/// Paragraphs of the book, long enough that a one-word change stays a close passage.
const PARAGRAPHS: [&str; 8] = [
    "Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, I thought I would sail about a little and see the watery part of the world.",
    "It is a way I have of driving off the spleen and regulating the circulation, whenever I find myself growing grim about the mouth and pausing before coffin warehouses.",
    "There now is your insular city of the Manhattoes, belted round by wharves as Indian isles by coral reefs, commerce surrounds it with her surf on every side.",
    "Circumambulate the city of a dreamy Sabbath afternoon, go from Corlears Hook to Coenties Slip, and from thence, by Whitehall, northward, and you will see crowds.",
    "I stuffed a shirt or two into my old carpet-bag, tucked it under my arm, and started for Cape Horn and the Pacific, quitting the good city of old Manhatto.",
    "Arriving in New Bedford, I found that the little packet for Nantucket had already sailed, and that no way of reaching that place would offer till the following Monday.",
    "As most young candidates for the pains and penalties of whaling stop at this same New Bedford, thence to embark on their voyage, it may as well be related that I for one had no idea of so doing.",
    "Now having a night, a day, and still another night following before me in New Bedford, ere I could embark for my destined port, it became a matter of concernment where I was to eat and sleep.",
];

/// The book as a TXT file, with `changed` paragraphs in place of the first edition's.
fn edition(changed: &[(usize, &str)]) -> Vec<u8> {
    let paragraph = |i: usize| {
        changed
            .iter()
            .find(|(at, _)| *at == i)
            .map_or(PARAGRAPHS[i], |(_, text)| *text)
    };
    let mut text = String::from("The Whale Book\n\nCHAPTER I. Loomings\n\n");
    for i in 0..4 {
        text.push_str(paragraph(i));
        text.push_str("\n\n");
    }
    text.push_str("CHAPTER II. The Carpet-Bag\n\n");
    for i in 4..8 {
        text.push_str(paragraph(i));
        text.push_str("\n\n");
    }
    text.into_bytes()
}

/// The JSON body of the caller's GET of `path`.
async fn get_json(app: &TestApp, path: &str, key: &str) -> Value {
    app.get(path, key).await.json().await.unwrap()
}

/// An app whose every model is a stand-in that records its requests, with the workers on.
async fn app_with_stand_in() -> (TestApp, StandIn) {
    let model = StandIn::default();
    let app = TestApp::new()
        .with_models(Arc::new(model.clone()))
        .with_workers()
        .start()
        .await;
    (app, model)
}

/// Uploads `bytes` and waits for its chapters; returns the book's id.
async fn extracted(app: &TestApp, key: &str, bytes: Vec<u8>) -> String {
    let id = app.upload_ok(key, "whale.txt", bytes).await;
    app.wait_for_status(key, &id, "EXTRACTED").await;
    id
}

/// Translates the book into Spanish to the end (`extra` joins the request); returns its status.
async fn translated(app: &TestApp, key: &str, id: &str, extra: Value) -> Value {
    let mut body = json!({"model": "gpt-4o-mini", "targetLang": "es"});
    for (name, value) in extra.as_object().into_iter().flatten() {
        body[name] = value.clone();
    }
    let book = app.translate_to_end(key, id, body).await;
    assert_eq!(book["status"], "COMPLETED", "{book}");
    get_json(app, &format!("/api/translate/status?bookId={id}"), key).await
}

async fn quote(app: &TestApp, key: &str, id: &str, extra: &str) -> Value {
    let response = app
        .get(
            &format!("/api/translate/quote?bookId={id}&model=gpt-4o-mini&targetLang=es{extra}"),
            key,
        )
        .await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// Every block the model was asked to translate or look at: the texts of the BLOCKS and SOURCE
/// sections of `calls` (the chapters' requests, not the term list's).
fn asked_for(calls: &[String]) -> Vec<String> {
    let mut blocks = Vec::new();
    for call in calls.iter().filter(|c| !is_term_list(c)) {
        for section in ["BLOCKS:\n", "SOURCE:\n"] {
            let Some(rest) = call.split(section).nth(1) else {
                continue;
            };
            blocks.extend(
                rest.lines()
                    .take_while(|l| l.starts_with("[[")) // the section's own lines
                    .filter_map(|l| l.split_once("]] ").map(|(_, text)| text.to_string())),
            );
        }
    }
    blocks
}

/// The book's translated texts, block by block.
async fn texts(app: &TestApp, key: &str, id: &str) -> Vec<String> {
    let mut all = Vec::new();
    let chapters = app.book(key, id).await["chapterCount"].as_u64().unwrap();
    for chapter in 1..=chapters {
        let page: Value = get_json(
            app,
            &format!("/api/books/{id}/chapters/{chapter}/passages"),
            key,
        )
        .await;
        for passage in page["passages"].as_array().unwrap() {
            all.push(passage["text"].as_str().unwrap_or_default().to_string());
        }
    }
    all
}

/// The en -> es entry whose `field` is `value` (the entries of one moment come in no order).
async fn entry_where(app: &TestApp, key: &str, field: &str, value: &str) -> Value {
    let page: Value = get_json(
        app,
        "/api/memory/entries?source=en&target=es&limit=200",
        key,
    )
    .await;
    let found = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e[field] == value)
        .cloned();
    found.unwrap_or_else(|| panic!("no entry with {field} {value}: {page}"))
}

fn usage_of(status: &Value) -> (u64, u64) {
    let mut sum = (0, 0);
    for chapter in status["chapters"].as_array().unwrap() {
        for pass in ["translate", "review", "polish"] {
            sum.0 += chapter["quality"][pass]["requests"].as_u64().unwrap_or(0);
            sum.1 += chapter["quality"][pass]["outputTokens"]
                .as_u64()
                .unwrap_or(0);
        }
    }
    sum
}

#[tokio::test]
async fn the_same_book_translated_again_asks_the_model_nothing_and_costs_nothing() {
    let (app, model) = app_with_stand_in().await;
    let user = app.user().await;
    let first = extracted(&app, &user.key, edition(&[])).await;
    let quoted = quote(&app, &user.key, &first, "").await;
    assert_eq!(quoted["memory"]["passages"], 0, "{quoted}");
    assert!(quoted["total"]["outputTokens"].as_u64().unwrap() > 0);
    translated(&app, &user.key, &first, json!({})).await;
    let asked_first = model.calls.all().len();
    assert!(asked_first > 0);

    let again = extracted(&app, &user.key, edition(&[])).await;
    let quoted = quote(&app, &user.key, &again, "").await;
    assert_eq!(quoted["memory"]["enabled"], true);
    let blocks = texts(&app, &user.key, &first).await.len() as u64;
    assert_eq!(
        quoted["memory"]["passages"].as_u64().unwrap(),
        blocks,
        "{quoted}"
    );
    assert_eq!(
        quoted["total"],
        json!({"inputTokens": 0, "outputTokens": 0, "requests": 0}),
        "{quoted}"
    );
    assert_eq!(quoted["estimatedCost"], 0.0);

    let status = translated(&app, &user.key, &again, json!({})).await;
    assert_eq!(
        model.calls.all().len(),
        asked_first,
        "asked again: {:#?}",
        &model.calls.all()[asked_first..]
    );
    assert_eq!(usage_of(&status), (0, 0), "{status}");
    assert_eq!(status["cost"]["spent"], 0.0);
    assert_eq!(status["quality"]["fromMemory"].as_u64().unwrap(), blocks);
    assert_eq!(
        texts(&app, &user.key, &again).await,
        texts(&app, &user.key, &first).await
    );
    let page: Value = app
        .get(
            &format!("/api/books/{again}/chapters/2/passages"),
            &user.key,
        )
        .await
        .json()
        .await
        .unwrap();
    let last = page["passages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["origin"]["kind"], "memory", "{page}");
    assert_eq!(last["confidence"], Value::Null);
}

#[tokio::test]
async fn a_second_edition_asks_only_for_the_paragraphs_it_changed() {
    let (app, model) = app_with_stand_in().await;
    let user = app.user().await;
    let first = extracted(&app, &user.key, edition(&[])).await;
    translated(&app, &user.key, &first, json!({})).await;
    let before = model.calls.all().len();

    // One word changed in a paragraph, another paragraph rewritten.
    let reworded = PARAGRAPHS[2].replace("coral reefs", "coral banks");
    let rewritten = "Whatever the weather, the ferry left at noon and nobody on the quay cared where it was going.";
    let second = extracted(
        &app,
        &user.key,
        edition(&[(2, reworded.as_str()), (6, rewritten)]),
    )
    .await;
    let quoted = quote(&app, &user.key, &second, "").await;
    let blocks = texts(&app, &user.key, &first).await.len() as u64;
    assert_eq!(quoted["memory"]["passages"].as_u64().unwrap(), blocks - 2);
    translated(&app, &user.key, &second, json!({})).await;

    let calls = model.calls.all()[before..].to_vec();
    let mut asked = asked_for(&calls);
    asked.sort();
    asked.dedup();
    assert_eq!(asked.len(), 2, "{asked:#?}");
    assert!(asked.iter().any(|b| b.contains("coral banks")));
    assert!(asked.iter().any(|b| b.contains("the ferry left at noon")));
    // The reworded paragraph went with its earlier version and that version's translation.
    let similar: Vec<&String> = calls
        .iter()
        .filter(|c| c.contains("\nSIMILAR:\n"))
        .collect();
    assert_eq!(similar.len(), 1, "{calls:#?}");
    assert!(similar[0].contains("coral reefs"));
    assert!(similar[0].contains("a similar passage was translated before"));
}

#[tokio::test]
async fn the_owner_lists_and_deletes_the_memory_and_another_user_neither_sees_nor_uses_it() {
    let (app, model) = app_with_stand_in().await;
    let (owner, other) = (app.user().await, app.user().await);
    let first = extracted(&app, &owner.key, edition(&[])).await;
    translated(&app, &owner.key, &first, json!({})).await;

    let pairs: Value = get_json(&app, "/api/memory", &owner.key).await;
    let pair = &pairs["pairs"][0];
    assert_eq!(
        (&pair["source"], &pair["target"]),
        (&json!("en"), &json!("es"))
    );
    let held = pair["entries"].as_u64().unwrap();
    assert_eq!(
        held,
        texts(&app, &owner.key, &first).await.len() as u64,
        "{pairs}"
    );
    assert_eq!(pair["limit"], 10_000);
    let entries = "/api/memory/entries?source=en&target=es";
    let page: Value = get_json(&app, &format!("{entries}&limit=3&offset=1"), &owner.key).await;
    assert_eq!(page["entries"].as_array().unwrap().len(), 3);
    assert_eq!(page["offset"], 1);
    let entry = page["entries"][0].clone();
    assert_eq!(entry["origin"], "model");
    assert_eq!(entry["bookId"], first.as_str());
    assert!(entry["source"].is_string() && entry["target"].is_string());
    let id = entry["id"].as_str().unwrap();
    let one = format!("/api/memory/entries/{id}?source=en&target=es");
    assert_error(
        app.get(&format!("{entries}&limit=0"), &owner.key).await,
        400,
        "bad_request",
    )
    .await;
    assert_error(
        app.get("/api/memory/entries?source=english&target=es", &owner.key)
            .await,
        400,
        "bad_request",
    )
    .await;

    // Another user: none of it, and none of it used.
    let theirs: Value = get_json(&app, "/api/memory", &other.key).await;
    assert_eq!(theirs["pairs"], json!([]));
    assert_error(app.get(entries, &other.key).await, 404, "not_found").await;
    for path in [one.as_str(), entries] {
        let response = app
            .request(Method::DELETE, path, &other.key)
            .send()
            .await
            .unwrap();
        assert_error(response, 404, "not_found").await;
    }
    assert_error(
        app.get("/api/memory/tmx?source=en&target=es", &other.key)
            .await,
        404,
        "not_found",
    )
    .await;
    let copy = extracted(&app, &other.key, edition(&[])).await;
    assert_eq!(
        quote(&app, &other.key, &copy, "").await["memory"]["passages"],
        0
    );
    let before = model.calls.all().len();
    translated(&app, &other.key, &copy, json!({})).await;
    assert!(
        model.calls.all().len() > before,
        "the other user's book asked nothing"
    );

    // One entry forgotten, then the whole pair.
    let deleted = app
        .request(Method::DELETE, &one, &owner.key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    let again = app
        .request(Method::DELETE, &one, &owner.key)
        .send()
        .await
        .unwrap();
    assert_error(again, 404, "not_found").await;
    let pairs: Value = get_json(&app, "/api/memory", &owner.key).await;
    assert_eq!(pairs["pairs"][0]["entries"].as_u64().unwrap(), held - 1);
    let all = app
        .request(Method::DELETE, entries, &owner.key)
        .send()
        .await
        .unwrap();
    assert_eq!(all.status(), 200);
    let all: Value = all.json().await.unwrap();
    assert_eq!(all["deleted"].as_u64().unwrap(), held - 1);
    assert_error(app.get(entries, &owner.key).await, 404, "not_found").await;
    let fresh = extracted(&app, &owner.key, edition(&[])).await;
    assert_eq!(
        quote(&app, &owner.key, &fresh, "").await["memory"]["passages"],
        0
    );
}

#[tokio::test]
async fn an_owners_edit_is_remembered_and_a_book_without_memory_neither_takes_nor_gives() {
    let (app, model) = app_with_stand_in().await;
    let user = app.user().await;
    let first = extracted(&app, &user.key, edition(&[])).await;
    // Without memory: nothing remembered.
    translated(&app, &user.key, &first, json!({"memory": false})).await;
    let book = app.book(&user.key, &first).await;
    assert_eq!(book["memory"], false, "{book}");
    let pairs: Value = get_json(&app, "/api/memory", &user.key).await;
    assert_eq!(pairs["pairs"], json!([]));

    // Nor is the owner's edit in it: the switch says the book gives nothing.
    let passages = format!("/api/books/{first}/chapters/2/passages");
    let page: Value = get_json(&app, &passages, &user.key).await;
    let last = page["passages"].as_array().unwrap().len() - 1;
    let edit =
        json!({"version": 0, "text": "Mi propia traducción del primer capítulo, párrafo final."});
    let edited = app
        .send_json(
            Method::PUT,
            &format!("{passages}/{last}"),
            &user.key,
            edit.clone(),
        )
        .await;
    assert_eq!(edited.status(), 200);
    let pairs: Value = get_json(&app, "/api/memory", &user.key).await;
    assert_eq!(
        pairs["pairs"],
        json!([]),
        "a book without memory gives nothing"
    );

    // A book with it: its model text and then the owner's edit are remembered, and a later
    // book takes the edit.
    let second = extracted(&app, &user.key, edition(&[])).await;
    translated(&app, &user.key, &second, json!({})).await;
    let passages = format!("/api/books/{second}/chapters/2/passages");
    let edited = app
        .send_json(Method::PUT, &format!("{passages}/{last}"), &user.key, edit)
        .await;
    assert_eq!(edited.status(), 200);
    let entry = entry_where(&app, &user.key, "origin", "edit").await;
    assert_eq!(
        entry["target"],
        "Mi propia traducción del primer capítulo, párrafo final."
    );
    let before = model.calls.all().len();
    let third = extracted(&app, &user.key, edition(&[])).await;
    translated(&app, &user.key, &third, json!({})).await;
    assert_eq!(model.calls.all().len(), before);
    let page: Value = app
        .get(
            &format!("/api/books/{third}/chapters/2/passages"),
            &user.key,
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        page["passages"][last]["text"], "Mi propia traducción del primer capítulo, párrafo final.",
        "{page}"
    );
    // And a quote without the memory prices every passage.
    let without = quote(&app, &user.key, &third, "&memory=false").await;
    assert_eq!(without["memory"]["enabled"], false);
    assert_eq!(without["memory"]["passages"], 0);
}

/// The en -> es pair's count of entries, and the books its entries came from.
async fn held(app: &TestApp, key: &str) -> (u64, Vec<String>) {
    let pairs: Value = get_json(app, "/api/memory", key).await;
    let count = pairs["pairs"][0]["entries"].as_u64().unwrap_or(0);
    let page: Value = get_json(
        app,
        "/api/memory/entries?source=en&target=es&limit=200",
        key,
    )
    .await;
    let mut books: Vec<String> = page["entries"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| e["bookId"].as_str().unwrap_or("none").to_string())
                .collect()
        })
        .unwrap_or_default();
    books.sort();
    (count, books)
}

/// The stored memory entries and book items that name `book` (its account's notifications
/// and events may still name it).
async fn memory_or_book_items(app: &TestApp, book: &str) -> Vec<String> {
    let mut left = app.stored_mentions(&[book]).await;
    left.retain(|item| item.starts_with("MEMORY") || item.starts_with("BOOK#"));
    left
}

#[tokio::test]
async fn a_deleted_book_takes_what_it_gave_the_memory_and_leaves_what_another_book_gave() {
    let (app, _model) = app_with_stand_in().await;
    let user = app.user().await;
    let first = extracted(&app, &user.key, edition(&[])).await;
    translated(&app, &user.key, &first, json!({})).await;
    let blocks = texts(&app, &user.key, &first).await.len() as u64;
    assert_eq!(held(&app, &user.key).await.0, blocks);

    // A second edition gives its rewritten paragraph, and its owner's edit of a passage the
    // memory supplied replaces the first book's entry for that source.
    let rewritten = "Whatever the weather, the ferry left at noon and nobody on the quay cared where it was going.";
    let second = extracted(&app, &user.key, edition(&[(6, rewritten)])).await;
    translated(&app, &user.key, &second, json!({})).await;
    let passages = format!("/api/books/{second}/chapters/2/passages");
    let page: Value = get_json(&app, &passages, &user.key).await;
    let last = page["passages"].as_array().unwrap().len() - 1;
    let edit = json!({"version": 0, "text": "Mi propia traducción del último párrafo."});
    let edited = app
        .send_json(Method::PUT, &format!("{passages}/{last}"), &user.key, edit)
        .await;
    assert_eq!(edited.status(), 200);
    assert_eq!(held(&app, &user.key).await.0, blocks + 1);

    let deleted = app
        .request(Method::DELETE, &format!("/api/books/{first}"), &user.key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert_eq!(
        held(&app, &user.key).await,
        (2, vec![second.clone(), second.clone()])
    );
    assert_eq!(
        memory_or_book_items(&app, &first).await,
        Vec::<String>::new()
    );
    let entry = entry_where(&app, &user.key, "origin", "edit").await;
    assert_eq!(entry["target"], "Mi propia traducción del último párrafo.");

    let deleted = app
        .request(Method::DELETE, &format!("/api/books/{second}"), &user.key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert_eq!(held(&app, &user.key).await, (0, vec![]));
    assert_eq!(
        memory_or_book_items(&app, &second).await,
        Vec::<String>::new()
    );
}

/// The Python of translate-toolkit's virtualenv, when it is there (`scripts/test-tools.sh`
/// makes it).
fn translate_toolkit() -> Option<std::path::PathBuf> {
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/venv-translate/bin/python");
    let found = std::process::Command::new(&python)
        .args(["-c", "import translate.storage.tmx"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("skipped: translate-toolkit is not installed (scripts/test-tools.sh)");
    }
    found.then_some(python)
}

/// Runs `script` with translate-toolkit; its standard output.
fn python(python: &std::path::Path, script: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn the_memory_as_tmx_reads_in_translate_toolkit_and_its_tmx_comes_back_in() {
    let Some(tt) = translate_toolkit() else {
        return;
    };
    let (app, model) = app_with_stand_in().await;
    let user = app.user().await;
    let first = extracted(&app, &user.key, edition(&[])).await;
    translated(&app, &user.key, &first, json!({})).await;

    let response = app
        .get("/api/memory/tmx?source=en&target=es", &user.key)
        .await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .contains("booktr-memory-en-es.tmx"));
    assert!(response.headers().get("x-next-offset").is_none());
    let dir = tempfile::TempDir::new().unwrap();
    let exported = dir.path().join("exported.tmx");
    std::fs::write(&exported, response.bytes().await.unwrap()).unwrap();
    let read = python(
        &tt,
        "import json, sys\n\
         from translate.storage import tmx\n\
         units = tmx.tmxfile.parsefile(sys.argv[1]).units\n\
         print(json.dumps([[u.source, u.target] for u in units]))",
        &[exported.to_str().unwrap()],
    );
    let units: Vec<(String, String)> = serde_json::from_str(&read).unwrap();
    let page: Value = app
        .get(
            "/api/memory/entries?source=en&target=es&limit=200",
            &user.key,
        )
        .await
        .json()
        .await
        .unwrap();
    let entries = page["entries"].as_array().unwrap();
    assert_eq!(units.len(), entries.len());
    // The toolkit reads a segment's inline codes as their text: our marks, unescaped.
    for entry in entries {
        let source = entry["source"].as_str().unwrap().replace("&amp;", "&");
        let target = entry["target"].as_str().unwrap().replace("&amp;", "&");
        assert!(
            units.contains(&(source.clone(), target)),
            "{source} not read back from the TMX file"
        );
    }

    // A file the toolkit writes (its DOCTYPE names the DTD, which is never fetched).
    let made = dir.path().join("made.tmx");
    python(
        &tt,
        "import sys\n\
         from translate.storage import tmx\n\
         f = tmx.tmxfile(sourcelanguage='en', targetlanguage='es')\n\
         f.addtranslation('The ferry left at noon & nobody cared.', 'en', 'El ferry salió a mediodía y a nadie le importó.', 'es')\n\
         f.addtranslation('A passage in French only.', 'en', 'Un passage.', 'fr')\n\
         open(sys.argv[1], 'wb').write(bytes(f))",
        &[made.to_str().unwrap()],
    );
    let file = std::fs::read(&made).unwrap();
    assert!(String::from_utf8_lossy(&file).contains("<!DOCTYPE"));
    let imported = app
        .request(
            Method::POST,
            "/api/memory/tmx?source=en&target=es",
            &user.key,
        )
        .header("content-type", "application/x-tmx+xml")
        .body(file)
        .send()
        .await
        .unwrap();
    assert_eq!(imported.status(), 200);
    let imported: Value = imported.json().await.unwrap();
    assert_eq!(
        imported,
        json!({"remembered": 1, "refused": 0, "skipped": 1}),
        "{imported}"
    );
    let entry = entry_where(&app, &user.key, "origin", "import").await;
    assert_eq!(
        entry["source"],
        "The ferry left at noon &amp; nobody cared."
    );
    assert_eq!(entry["bookId"], Value::Null);

    // The imported passage is a later book's, without a model call.
    let before = model.calls.all().len();
    let second = extracted(
        &app,
        &user.key,
        edition(&[(6, "The ferry left at noon & nobody cared.")]),
    )
    .await;
    translated(&app, &user.key, &second, json!({})).await;
    assert_eq!(model.calls.all().len(), before);

    // Files it refuses: declared entities, broken XML, too large.
    let bomb = "<?xml version=\"1.0\"?><!DOCTYPE tmx [<!ENTITY a \"aaaa\">]><tmx><body/></tmx>";
    for bad in [bomb, "<tmx><body><tu>"] {
        let refused = app
            .request(
                Method::POST,
                "/api/memory/tmx?source=en&target=es",
                &user.key,
            )
            .body(bad.to_string())
            .send()
            .await
            .unwrap();
        assert_error(refused, 400, "bad_request").await;
    }
    let huge = app
        .request(
            Method::POST,
            "/api/memory/tmx?source=en&target=es",
            &user.key,
        )
        .body(vec![b' '; 4 * 1024 * 1024 + 1])
        .send()
        .await
        .unwrap();
    assert_error(huge, 413, "payload_too_large").await;
}

#[tokio::test]
async fn the_memory_is_in_the_account_export() {
    let (app, _model) = app_with_stand_in().await;
    let user = app.user().await;
    let first = extracted(&app, &user.key, edition(&[])).await;
    translated(&app, &user.key, &first, json!({})).await;
    let export: Value = get_json(&app, "/api/user/export", &user.key).await;
    let memory = &export["translationMemory"][0];
    assert_eq!(memory["pair"]["source"], "en");
    let held = memory["pair"]["entries"].as_u64().unwrap();
    assert_eq!(memory["entries"].as_array().unwrap().len() as u64, held);
    assert_eq!(memory["entries"][0]["bookId"], first.as_str());
}

#[tokio::test]
async fn the_memory_pages_list_import_forget_export_and_delete_with_every_text_inert() {
    use reqwest::multipart::{Form, Part};
    let app = TestApp::new().start().await;
    let mut browser = crate::web_app::Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard/memory").await;
    let empty = browser.html("/dashboard/memory").await;
    assert!(empty.contains("Your translation memory is empty"));

    let tmx = r#"<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4"><header srclang="en"/><body>
<tu><tuv xml:lang="en"><seg>Beware &lt;script&gt;alert(1)&lt;/script&gt; of the whale.</seg></tuv><tuv xml:lang="es"><seg>Cuidado con la ballena.</seg></tuv></tu>
<tu><tuv xml:lang="en"><seg>Call me Ishmael.</seg></tuv><tuv xml:lang="es"><seg>Llámame Ismael.</seg></tuv></tu>
</body></tmx>"#;
    let form = Form::new()
        .text("csrf", token.clone())
        .text("source", "en")
        .text("target", "es")
        .part(
            "file",
            Part::bytes(tmx.as_bytes().to_vec()).file_name("memory.tmx"),
        );
    let imported = browser
        .post_multipart("/dashboard/memory/import", form)
        .await;
    assert_eq!(imported.status(), 303);
    let to = imported.headers()["location"].to_str().unwrap().to_string();
    assert!(
        to.starts_with("/dashboard/memory/en/es?remembered=2"),
        "{to}"
    );
    let pair = browser.html(&to).await;
    assert!(pair.contains("Imported: 2 passages remembered"), "{pair}");
    assert!(!pair.contains("<script>alert"), "a passage's text is inert");
    assert!(pair.contains("Llámame Ismael."));
    let list = browser.html("/dashboard/memory").await;
    assert!(list.contains("href=\"/dashboard/memory/en/es\""), "{list}");

    let exported = browser.get("/dashboard/memory/en/es/export").await;
    assert_eq!(exported.status(), 200);
    assert!(exported.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/x-tmx+xml"));
    assert!(exported
        .text()
        .await
        .unwrap()
        .contains("<seg>Call me Ishmael.</seg>"));

    // Forget one passage, by its form; a form without the token is refused.
    let id = booktr_core::memory::passage_id("Call me Ishmael.");
    let forget = format!("/dashboard/memory/en/es/{id}/delete");
    assert_eq!(browser.post_form(&forget, &[]).await.status(), 403);
    let forgotten = browser.post_form(&forget, &[("csrf", &token)]).await;
    assert_eq!(forgotten.status(), 303);
    assert!(!browser
        .html("/dashboard/memory/en/es")
        .await
        .contains("Llámame Ismael."));

    let deleted = browser
        .post_form("/dashboard/memory/en/es/delete", &[("csrf", &token)])
        .await;
    assert_eq!(deleted.status(), 303);
    assert!(browser
        .html("/dashboard/memory")
        .await
        .contains("Your translation memory is empty"));
    assert_eq!(browser.get("/dashboard/memory/en/es").await.status(), 404);
    assert_eq!(
        browser.get("/dashboard/memory/english/es").await.status(),
        400
    );
}
