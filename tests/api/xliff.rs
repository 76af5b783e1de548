//! A book out to a translator's tool and back as XLIFF 1.2 (issue 50, item 1): the export read
//! and changed by translate-toolkit, the translation tools' own XLIFF library (a virtualenv
//! `scripts/test.sh` makes under `target/venv-translate`), as a CAT tool would; the import's
//! report unit by unit; the book's file with the changes.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use booktr_core::jobs::runner;
use booktr_formats::markup;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, corpus, have, TestApp, TestUser, Tool};

const XLIFF: &str = "application/x-xliff+xml";

/// Runs every due job (no background workers).
async fn drain(app: &TestApp) {
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
}

/// `file` uploaded, extracted and translated by the offline engine (COMPLETED); its id.
async fn translated(app: &TestApp, user: &TestUser, name: &str, file: Vec<u8>) -> String {
    let id = app.upload_ok(&user.key, name, file).await;
    drain(app).await;
    let started = app
        .send_json(
            Method::POST,
            "/api/translate",
            &user.key,
            json!({"bookId": id}),
        )
        .await;
    assert_eq!(started.status(), 200, "{}", started.text().await.unwrap());
    drain(app).await;
    assert_eq!(app.book(&user.key, &id).await["status"], "COMPLETED");
    id
}

async fn export(app: &TestApp, user: &TestUser, path: &str) -> String {
    let response = app.get(path, &user.key).await;
    assert_eq!(response.status(), 200, "{path}");
    let headers = response.headers().clone();
    assert_eq!(
        headers["content-type"],
        "application/x-xliff+xml; charset=utf-8"
    );
    let disposition = headers["content-disposition"].to_str().unwrap();
    assert!(
        disposition.starts_with("attachment; filename=\"") && disposition.ends_with(".xlf\""),
        "{disposition}"
    );
    response.text().await.unwrap()
}

async fn import(app: &TestApp, user: &TestUser, id: &str, xliff: Vec<u8>) -> reqwest::Response {
    app.request(Method::POST, &format!("/api/books/{id}/xliff"), &user.key)
        .header("content-type", XLIFF)
        .body(xliff)
        .send()
        .await
        .unwrap()
}

async fn outcomes(response: reqwest::Response) -> Value {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    body
}

fn python() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/venv-translate/bin/python")
}

/// Runs `script` in translate-toolkit's Python with `args` and `input` on stdin; its stdout.
fn toolkit(script: &str, args: &[&str], input: &Value) -> String {
    let mut child = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Every unit of the file as translate-toolkit reads it: its id, source and target as text,
/// whether its target holds inline codes, its state, whether it is approved, its notes.
const LIST: &str = r#"
import json, sys
from translate.storage import xliff
from translate.storage.placeables import StringElem
from translate.storage.placeables.xliff import G, X

def codes(elem):
    return any(isinstance(s, (G, X)) or (isinstance(s, StringElem) and codes(s)) for s in elem.sub)

store = xliff.xlifffile.parsestring(open(sys.argv[1], "rb").read())
units = []
for unit in store.units:
    target = unit.getlanguageNode(lang=None, index=1)
    units.append({
        "id": unit.xmlelement.get("id"),
        "file": unit.getid().split("\x04")[0],
        "source": unit.source,
        "target": unit.target,
        "codes": any(codes(e) for e in unit.rich_target),
        "state": None if target is None else target.get("state"),
        "approved": unit.isapproved(),
        "notes": unit.getnotes(),
    })
print(json.dumps({"source": store.getsourcelanguage(), "target": store.gettargetlanguage(), "units": units}))
"#;

/// Changes the file in place as a translator's tool would: the targets of `texts` (by unit id)
/// replaced, and the inline codes of `dropCodes`'s target taken out.
const CHANGE: &str = r#"
import json, sys
from translate.storage import xliff
from translate.storage.placeables import StringElem
from translate.storage.placeables.xliff import G, X

change = json.load(sys.stdin)
store = xliff.xlifffile.parsestring(open(sys.argv[1], "rb").read())

def without_codes(elem):
    elem.sub = [s for s in elem.sub if not isinstance(s, X)]
    for s in elem.sub:
        if isinstance(s, StringElem):
            without_codes(s)

for unit in store.units:
    uid = unit.xmlelement.get("id")
    if uid in change["texts"]:
        unit.target = change["texts"][uid]
    if uid == change["dropCodes"]:
        rich = unit.rich_target
        for elem in rich:
            without_codes(elem)
        unit.rich_target = rich
open(sys.argv[1], "wb").write(bytes(store))
"#;

fn units(listed: &Value) -> &Vec<Value> {
    listed["units"].as_array().unwrap()
}

/// Every passage of the book's chapters, by unit-id prefix (`c<chapter>-p<index>-`).
async fn all_passages(app: &TestApp, user: &TestUser, id: &str) -> Vec<Value> {
    let chapters = app.book(&user.key, id).await["chapterCount"]
        .as_u64()
        .unwrap();
    let mut all = Vec::new();
    for chapter in 1..=chapters {
        let mut offset = 0;
        loop {
            let path =
                format!("/api/books/{id}/chapters/{chapter}/passages?offset={offset}&limit=200");
            let page: Value = app.get(&path, &user.key).await.json().await.unwrap();
            let passages = page["passages"].as_array().unwrap();
            all.extend(passages.iter().cloned());
            offset += 200;
            if offset >= page["total"].as_u64().unwrap() {
                break;
            }
        }
    }
    all
}

fn passage_of<'a>(passages: &'a [Value], unit_id: &str) -> &'a Value {
    passages
        .iter()
        .find(|p| unit_id.starts_with(&format!("c{}-p{}-", p["chapter"], p["index"])))
        .unwrap_or_else(|| panic!("no passage for {unit_id}"))
}

/// The text of the book's EPUB behind its download link.
async fn downloaded_text(app: &TestApp, user: &TestUser, id: &str) -> String {
    let link: Value = app
        .get(&format!("/api/download/{id}?format=epub"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    let file = reqwest::get(link["url"].as_str().unwrap()).await.unwrap();
    assert_eq!(file.status(), 200);
    let epub = file.bytes().await.unwrap();
    crate::helpers::epubcheck(&epub);
    booktr_formats::epub::extract(&epub)
        .unwrap()
        .chapters
        .iter()
        .map(|c| c.plain_text())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_corpus_book_goes_to_a_translators_tool_and_back_with_ten_changes_a_broken_mark_and_a_conflict(
) {
    if !have(Tool::TranslateToolkit) {
        return;
    }
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = translated(&app, &user, "wasteland.epub", corpus("wasteland.epub")).await;
    let passages = all_passages(&app, &user, &id).await;

    let exported = export(&app, &user, &format!("/api/books/{id}/xliff")).await;
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("wasteland.xlf");
    std::fs::write(&file, &exported).unwrap();
    let path = file.to_str().unwrap();
    let listed: Value = serde_json::from_str(&toolkit(LIST, &[path], &json!({}))).unwrap();

    // translate-toolkit reads every passage as a unit, in the book's languages, with the
    // passage's text as its target and the model's state.
    let book = app.book(&user.key, &id).await;
    assert_eq!(listed["source"], book["originalLang"]);
    assert_eq!(listed["target"], book["targetLang"]);
    assert_eq!(units(&listed).len(), passages.len());
    for unit in units(&listed) {
        let passage = passage_of(&passages, unit["id"].as_str().unwrap());
        assert!(unit["file"]
            .as_str()
            .unwrap()
            .starts_with(&format!("booktr/{id}/chapter-")));
        assert!(
            ["translated", "needs-review-translation"].contains(&unit["state"].as_str().unwrap())
        );
        assert!(
            unit["notes"]
                .as_str()
                .unwrap()
                .contains("The model's translation"),
            "{unit}"
        );
        if !unit["codes"].as_bool().unwrap() {
            let text = passage["text"].as_str().unwrap();
            assert_eq!(unit["target"], markup::plain_text(text), "{unit}");
        }
    }

    // Eleven targets without codes changed (text a careless writer would let become markup
    // among them), one target's line number taken out; one of the eleven edited in booktr
    // meanwhile.
    let plain: Vec<&Value> = units(&listed)
        .iter()
        .filter(|u| !u["codes"].as_bool().unwrap() && u["target"].as_str().unwrap().len() > 10)
        .collect();
    assert!(plain.len() > 40, "{}", plain.len());
    let step = plain.len() / 11;
    let changed: Vec<&str> = (0..11)
        .map(|k| plain[k * step]["id"].as_str().unwrap())
        .collect();
    let texts: serde_json::Map<String, Value> = changed
        .iter()
        .enumerate()
        .map(|(n, unit)| {
            (
                unit.to_string(),
                Value::from(format!("Changement {n} & <b>gras</b> ]]> du traducteur.")),
            )
        })
        .collect();
    let numbered = units(&listed)
        .iter()
        .find(|u| {
            let passage = passage_of(&passages, u["id"].as_str().unwrap());
            u["codes"].as_bool().unwrap() && passage["source"].as_str().unwrap().contains("<num ")
        })
        .expect("a line with its number");
    let numbered_id = numbered["id"].as_str().unwrap();
    toolkit(
        CHANGE,
        &[path],
        &json!({"texts": texts, "dropCodes": numbered_id}),
    );

    let meanwhile = passage_of(&passages, changed[0]);
    let edit_path = format!(
        "/api/books/{id}/chapters/{}/passages/{}",
        meanwhile["chapter"], meanwhile["index"]
    );
    let edited = app
        .send_json(
            Method::PUT,
            &edit_path,
            &user.key,
            json!({"text": "Édité dans booktr.", "version": 0}),
        )
        .await;
    assert_eq!(edited.status(), 200);

    let back = std::fs::read(&file).unwrap();
    let report = outcomes(import(&app, &user, &id, back.clone()).await).await;
    let counts = |r: &Value| {
        ["changed", "unchanged", "conflicts", "refused", "unknown"].map(|k| r[k].as_u64().unwrap())
    };
    let total = passages.len() as u64;
    assert_eq!(counts(&report), [10, total - 12, 1, 1, 0], "{report}");
    let unit = |uid: &str| {
        report["units"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["id"] == uid)
            .unwrap()
            .clone()
    };
    let conflict = unit(changed[0]);
    assert_eq!(
        (conflict["outcome"].as_str(), conflict["version"].as_u64()),
        (Some("conflict"), Some(1))
    );
    let refused = unit(numbered_id);
    assert_eq!(refused["outcome"], "refused", "{refused}");
    assert_eq!(refused["error"], "marks_mismatch");
    assert!(
        refused["message"].as_str().unwrap().contains("<num "),
        "{refused}"
    );

    // The ten are the owner's edits now, as the tool wrote them; the conflict kept booktr's.
    let now = all_passages(&app, &user, &id).await;
    for (n, uid) in changed.iter().enumerate().skip(1) {
        let passage = passage_of(&now, uid);
        assert_eq!(
            passage["text"],
            format!("Changement {n} &amp; &lt;b&gt;gras&lt;/b&gt; ]]&gt; du traducteur."),
            "{passage}"
        );
        assert_eq!(passage["origin"]["kind"], "edited");
        assert_eq!(unit(uid)["version"], passage["version"]);
    }
    assert_eq!(passage_of(&now, changed[0])["text"], "Édité dans booktr.");
    assert_eq!(
        passage_of(&now, numbered_id)["text"],
        passage_of(&passages, numbered_id)["text"]
    );

    let book = downloaded_text(&app, &user, &id).await;
    for n in 1..11 {
        let text = format!("Changement {n} & <b>gras</b> ]]> du traducteur.");
        assert!(book.contains(&text), "the EPUB lacks {text:?}");
    }
    assert!(book.contains("Édité dans booktr."));

    // The same file again changes nothing more: the ten hold their text already.
    let again = outcomes(import(&app, &user, &id, back).await).await;
    assert_eq!(counts(&again), [0, total - 2, 1, 1, 0], "{again}");

    // Exported again, the owner's text is signed off.
    let exported = export(
        &app,
        &user,
        &format!("/api/books/{id}/xliff?chapter={}", meanwhile["chapter"]),
    )
    .await;
    std::fs::write(&file, &exported).unwrap();
    let listed: Value = serde_json::from_str(&toolkit(LIST, &[path], &json!({}))).unwrap();
    let mine = units(&listed)
        .iter()
        .find(|u| passage_of(&now, u["id"].as_str().unwrap())["origin"]["kind"] == "edited")
        .unwrap();
    assert_eq!(
        (mine["state"].as_str(), mine["approved"].as_bool()),
        (Some("signed-off"), Some(true))
    );
    assert!(mine["notes"].as_str().unwrap().contains("The owner's edit"));
}

/// The ids of the units of an export, in order.
fn unit_ids(xliff: &str) -> Vec<String> {
    xliff
        .split("<trans-unit id=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

fn file_of(book_id: &str, units: &str) -> Vec<u8> {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xliff version=\"1.2\" \
         xmlns=\"urn:oasis:names:tc:xliff:document:1.2\"><file original=\"booktr/{book_id}/chapter-2\" \
         source-language=\"en\" target-language=\"es\" datatype=\"plaintext\"><body>{units}\
         </body></file></xliff>"
    )
    .into_bytes()
}

#[tokio::test]
async fn units_that_name_no_passage_or_hold_codes_not_the_sources_are_reported_each() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = translated(&app, &user, "voyage.txt", crate::passages::book()).await;
    let exported = export(&app, &user, &format!("/api/books/{id}/xliff?chapter=2")).await;
    let ids = unit_ids(&exported);
    assert_eq!(ids.len(), 3, "{exported}");
    let unit = |uid: &str, target: &str| {
        format!("<trans-unit id=\"{uid}\"><source>s</source><target>{target}</target></trans-unit>")
    };
    let beyond = ids[0].replacen("-p0-", "-p999-", 1);
    let nowhere = ids[0].replacen("c2-", "c99-", 1);
    let units = [
        unit("hello", "Hola"),
        unit(&beyond, "Hola"),
        unit(&nowhere, "Hola"),
        unit(&ids[0], "Hola <x id=\"1\"/>"),
        unit(&ids[1], "Hola <ph id=\"1\">&lt;b&gt;</ph>"),
        unit(&ids[2], "   "),
    ]
    .concat();
    let report = outcomes(import(&app, &user, &id, file_of(&id, &units)).await).await;
    let outcome = |k: usize| {
        let unit = &report["units"][k];
        (
            unit["outcome"].as_str().unwrap().to_string(),
            unit["error"].as_str().unwrap_or_default().to_string(),
            unit["message"].as_str().unwrap_or_default().to_string(),
        )
    };
    assert_eq!(outcome(0).0, "unknown");
    assert!(outcome(0).2.contains("not one booktr gave"), "{report}");
    assert!(outcome(1).2.contains("no passage 999"), "{report}");
    assert!(outcome(2).2.contains("no chapter 99"), "{report}");
    assert_eq!(report["units"][1]["chapter"], 2);
    assert_eq!(report["units"][1]["index"], 999);
    assert_eq!(
        (outcome(3).0.as_str(), outcome(3).1.as_str()),
        ("refused", "invalid_codes")
    );
    assert!(
        outcome(3).2.contains("not one of the source's marks"),
        "{report}"
    );
    assert_eq!(
        (outcome(4).0.as_str(), outcome(4).1.as_str()),
        ("refused", "invalid_codes")
    );
    assert!(outcome(4).2.contains("<ph>"), "{report}");
    assert_eq!(
        (outcome(5).0.as_str(), outcome(5).1.as_str()),
        ("refused", "bad_request")
    );
    assert_eq!(report["changed"], 0);

    // A file of another book's: each of its units is unknown, whatever its id.
    let elsewhere = file_of("another-book", &unit(&ids[0], "Hola"));
    let report = outcomes(import(&app, &user, &id, elsewhere).await).await;
    assert_eq!(report["unknown"], 1, "{report}");
    assert!(report["units"][0]["message"]
        .as_str()
        .unwrap()
        .contains("another book"));
}

#[tokio::test]
async fn another_users_book_is_not_found_and_a_file_the_import_cannot_read_is_refused_whole() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let stranger = app.user().await;
    let id = translated(&app, &user, "voyage.txt", crate::passages::book()).await;
    let path = format!("/api/books/{id}/xliff");
    let exported = export(&app, &user, &path).await;
    assert_error(app.get(&path, &stranger.key).await, 404, "not_found").await;
    let theirs = import(&app, &stranger, &id, exported.clone().into_bytes()).await;
    assert_error(theirs, 404, "not_found").await;
    assert_eq!(
        unit_ids(&export(&app, &user, &path).await),
        unit_ids(&exported)
    );

    let chapter = |q: &str| format!("{path}?chapter={q}");
    assert_error(app.get(&chapter("99"), &user.key).await, 404, "not_found").await;
    assert_error(app.get(&chapter("x"), &user.key).await, 400, "bad_request").await;
    let untranslated = app
        .upload_ok(&user.key, "voyage.txt", crate::passages::book())
        .await;
    drain(&app).await;
    let nothing = app
        .get(&format!("/api/books/{untranslated}/xliff"), &user.key)
        .await;
    assert_error(nothing, 400, "bad_request").await;

    let plain = app
        .request(Method::POST, &path, &user.key)
        .header("content-type", "text/plain")
        .body(exported.clone())
        .send()
        .await
        .unwrap();
    assert_error(plain, 400, "bad_request").await;
    let laughs = "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">]>\
                  <xliff version=\"1.2\"><file><body><trans-unit id=\"u\"><target>&b;</target></trans-unit></body></file></xliff>";
    for (bad, says) in [
        (laughs.to_string(), "DTD"),
        ("not xml at all".to_string(), "not well-formed"),
        ("<html/>".to_string(), "not XLIFF 1.2"),
        ("<xliff version=\"2.0\"/>".to_string(), "XLIFF 2.0"),
        (
            exported[..exported.len() / 2].to_string(),
            "not well-formed",
        ),
        (
            format!(
                "<xliff version=\"1.2\">{}{}</xliff>",
                "<group>".repeat(100),
                "</group>".repeat(100)
            ),
            "nest",
        ),
    ] {
        let body = assert_error(
            import(&app, &user, &id, bad.into_bytes()).await,
            400,
            "invalid_xliff",
        )
        .await;
        assert!(body["message"].as_str().unwrap().contains(says), "{body}");
    }
    let huge = vec![b' '; booktr_core::translation::passages::xliff::MAX_XLIFF_BYTES + 1];
    assert_error(import(&app, &user, &id, huge).await, 400, "file_too_large").await;
}

#[tokio::test]
async fn book_text_never_becomes_xliff_markup() {
    if !have(Tool::TranslateToolkit) {
        return;
    }
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = translated(&app, &user, "voyage.txt", crate::passages::book()).await;
    let hostile =
        "</target></trans-unit><trans-unit id=\"evil\"><target>x]]><!DOCTYPE a> &amp;lol; \"'";
    let edit = app
        .send_json(
            Method::PUT,
            &format!("/api/books/{id}/chapters/2/passages/0"),
            &user.key,
            json!({"text": markup::escape_text(hostile), "version": 0}),
        )
        .await;
    assert_eq!(edit.status(), 200, "{}", edit.text().await.unwrap());
    let exported = export(&app, &user, &format!("/api/books/{id}/xliff")).await;
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("voyage.xlf");
    std::fs::write(&file, &exported).unwrap();
    let listed: Value =
        serde_json::from_str(&toolkit(LIST, &[file.to_str().unwrap()], &json!({}))).unwrap();
    assert_eq!(units(&listed).len(), unit_ids(&exported).len());
    assert!(units(&listed).iter().all(|u| u["id"] != "evil"));
    let edited = units(&listed)
        .iter()
        .find(|u| u["id"].as_str().unwrap().starts_with("c2-p0-"))
        .unwrap();
    assert_eq!(edited["target"], hostile);
    // Handed back as it was, it is the passage's text: nothing changes.
    let report = outcomes(import(&app, &user, &id, std::fs::read(&file).unwrap()).await).await;
    assert_eq!(report["changed"], 0, "{report}");
    assert_eq!(
        report["unchanged"],
        report["units"].as_array().unwrap().len()
    );
}

/// The first unit's target in `xliff` replaced by `text` (XML already).
fn with_first_target(xliff: &str, text: &str) -> String {
    let start = xliff.find("<target state=\"").unwrap();
    let open_end = start + xliff[start..].find('>').unwrap() + 1;
    let close = open_end + xliff[open_end..].find("</target>").unwrap();
    format!("{}{text}{}", &xliff[..open_end], &xliff[close..])
}

#[tokio::test]
async fn the_book_page_offers_the_xliff_and_an_uploads_report_shows_each_unit_inert() {
    use crate::web_app::{location, Browser};
    use reqwest::multipart::{Form, Part};

    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let uploaded = owner
        .upload(&token, "voyage.txt", crate::passages::book(), "The Voyage")
        .await;
    let page = location(&uploaded).split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    owner.wait_for(&id, "EXTRACTED").await;
    let started = owner
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    owner.wait_for(&id, "COMPLETED").await;

    let html = owner.html(&page).await;
    let action = format!("action=\"/dashboard/books/{id}/xliff\"");
    assert!(
        html.contains(&format!("href=\"/dashboard/books/{id}/xliff\"")),
        "{html}"
    );
    assert!(html.contains(&action) && html.contains("enctype=\"multipart/form-data\""));
    assert!(html.contains("<option value=\"2\">"), "{html}");
    let file = owner
        .get(&format!("/dashboard/books/{id}/xliff?chapter=2"))
        .await;
    assert_eq!(file.status(), 200);
    assert!(file.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with(XLIFF));
    let exported = file.text().await.unwrap();
    assert_eq!(unit_ids(&exported).len(), 3);

    let hostile = "<trans-unit id=\"&lt;script&gt;alert(1)&lt;/script&gt;\"><source>s</source>\
                   <target>x</target></trans-unit>";
    let changed = with_first_target(&exported, "Llamadme Ismael &amp; <x id=\"7\"/>").replacen(
        "</body>",
        &format!("{hostile}</body>"),
        1,
    );
    let send = |bytes: String, token: Option<&str>| {
        let mut form = Form::new();
        if let Some(token) = token {
            form = form.text("csrf", token.to_string());
        }
        form.part(
            "file",
            Part::bytes(bytes.into_bytes()).file_name("voyage.xlf"),
        )
    };
    let path = format!("/dashboard/books/{id}/xliff");
    let forged = owner
        .post_multipart(&path, send(changed.clone(), None))
        .await;
    assert_eq!(forged.status(), 403);
    let report = owner
        .post_multipart(&path, send(changed, Some(&token)))
        .await;
    assert_eq!(report.status(), 200);
    let html = report.text().await.unwrap();
    assert!(html.contains("No passage changed."), "{html}");
    assert!(html.contains("data-outcome=\"refused\""), "{html}");
    assert!(html.contains("data-outcome=\"unknown\""), "{html}");
    assert!(
        html.contains("<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>"),
        "{html}"
    );
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(html.contains(&format!(
        "href=\"/dashboard/books/{id}/read?chapter=2&amp;edit=0\""
    )));

    let fixed = with_first_target(&exported, "Llamadme Ismael &amp; compañía.");
    let report = owner.post_multipart(&path, send(fixed, Some(&token))).await;
    let html = report.text().await.unwrap();
    assert!(html.contains("Passages changed: 1."), "{html}");
    let passages: Value = owner
        .get(&format!("/api/books/{id}/chapters/2/passages?limit=1"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        passages["passages"][0]["text"],
        "Llamadme Ismael &amp; compañía."
    );

    let empty = owner
        .post_multipart(&path, Form::new().text("csrf", token.clone()))
        .await;
    assert_eq!(empty.status(), 400);
    assert!(empty
        .text()
        .await
        .unwrap()
        .contains("Choose an XLIFF file to upload."));
    let stranger = {
        let mut stranger = Browser::new(&app);
        stranger.sign_up().await;
        stranger
    };
    assert_eq!(stranger.get(&path).await.status(), 404);
}
