//! Direct uploads: a form from `POST /api/uploads`, the file posted with it straight to storage
//! (this server's `/uploads` on the embedded backend, S3 on the AWS one), then the confirm.

use std::io::Write;

use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, corpus, fixture, TestApp};

const MB: usize = 1024 * 1024;

/// Asks for a form for `file_name` of `size` bytes; asserts it is given.
async fn offer(app: &TestApp, key: &str, file_name: &str, size: usize) -> Value {
    let response = app
        .send_json(
            Method::POST,
            "/api/uploads",
            key,
            json!({ "fileName": file_name, "size": size, "targetLang": "fr" }),
        )
        .await;
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

/// Posts the file with the form, as a browser would: the fields in order, the file last, no
/// credentials (the form is its own authority).
pub async fn send(offer: &Value, file_name: &str, bytes: Vec<u8>) -> reqwest::Response {
    let mut form = Form::new();
    for field in offer["fields"].as_array().unwrap() {
        form = form.text(
            field["name"].as_str().unwrap().to_string(),
            field["value"].as_str().unwrap().to_string(),
        );
    }
    let file = Part::bytes(bytes).file_name(file_name.to_string());
    form = form.part(offer["fileField"].as_str().unwrap().to_string(), file);
    reqwest::Client::new()
        .post(offer["url"].as_str().unwrap())
        .multipart(form)
        .send()
        .await
        .unwrap()
}

async fn confirm(app: &TestApp, key: &str, offer: &Value) -> reqwest::Response {
    app.request(Method::POST, offer["confirmPath"].as_str().unwrap(), key)
        .send()
        .await
        .unwrap()
}

/// A book sent straight to storage and never confirmed (an abandoned upload); its id.
pub async fn sent_unconfirmed(app: &TestApp, key: &str) -> String {
    let text = crate::helpers::sample_txt();
    let offered = offer(app, key, "abandoned.txt", text.len()).await;
    assert!(send(&offered, "abandoned.txt", text)
        .await
        .status()
        .is_success());
    offered["uploadId"].as_str().unwrap().to_string()
}

/// What is left in the upload area of every user.
async fn upload_area(app: &TestApp) -> Vec<String> {
    let keys = app.ports.blobs.list("uploads/").await.unwrap();
    keys.iter().map(|k| k.as_str().to_string()).collect()
}

/// Moby-Dick with an image-sized file it never shows, stored uncompressed: an illustrated
/// book's weight.
fn heavy_epub(size: usize) -> Vec<u8> {
    let source = corpus("moby-dick.epub");
    let copied = source.len();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(source)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        out.raw_copy_file(archive.by_index_raw(i).unwrap()).unwrap();
    }
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    out.start_file("OEBPS/images/plate.bin", stored).unwrap();
    // The copied entries weigh about what the source did.
    out.write_all(&noise(size.saturating_sub(copied + 4096)))
        .unwrap();
    out.finish().unwrap().into_inner()
}

/// A PDF of a few pages of prose with a large unreferenced stream (a scan's weight).
fn heavy_pdf(size: usize) -> Vec<u8> {
    let page_text = |n: usize| {
        format!(
            "BT /F1 12 Tf 72 700 Td (Page {n}. Call me Ishmael. Some years ago, never mind how \
             long precisely, having little or no money in my purse.) Tj ET"
        )
    };
    let stream = |data: &[u8]| {
        let mut s = format!("<< /Length {} >>\nstream\n", data.len()).into_bytes();
        s.extend_from_slice(data);
        s.extend_from_slice(b"\nendstream");
        s
    };
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [6 0 R 8 0 R] /Count 2 >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
        stream(&noise(size.saturating_sub(4096))),
    ];
    for n in 0..2 {
        objects.push(stream(page_text(n + 1).as_bytes()));
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
                 /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
                5 + 2 * n
            )
            .into_bytes(),
        );
    }
    let mut out = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (n, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", n + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// Incompressible bytes (xorshift), as an image's are.
fn noise(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[tokio::test]
async fn a_30_mb_pdf_and_a_45_mb_epub_sent_straight_to_storage_are_extracted() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    for (name, bytes, chapter) in [
        ("scan.pdf", heavy_pdf(30 * MB), None),
        ("illustrated.epub", heavy_epub(45 * MB), Some("Loomings")),
    ] {
        let size = bytes.len();
        let offered = offer(&app, &user.key, name, size).await;
        assert_eq!(offered["method"], "POST");
        assert_eq!(offered["maxBytes"], size);
        let sent = send(&offered, name, bytes).await;
        assert!(sent.status().is_success(), "{name}: {}", sent.status());
        let confirmed = confirm(&app, &user.key, &offered).await;
        assert_eq!(confirmed.status(), 200, "{name}");
        let body: Value = confirmed.json().await.unwrap();
        let book = &body["book"];
        assert_eq!(book["fileSize"], size, "{name}");
        assert_eq!(book["fileName"], name);
        assert_eq!(book["targetLang"], "fr");
        let detail = app
            .wait_for_status(&user.key, book["id"].as_str().unwrap(), "EXTRACTED")
            .await;
        assert!(
            detail["wordCount"].as_u64().unwrap() > 40,
            "{name}: {detail}"
        );
        if let Some(title) = chapter {
            assert!(detail["chapters"].to_string().contains(title), "{name}");
        }
    }
    assert_eq!(upload_area(&app).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_51_mb_file_never_becomes_a_book_and_leaves_nothing_behind() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    // Asked for by its size: refused before a byte moves.
    let response = app
        .send_json(
            Method::POST,
            "/api/uploads",
            &user.key,
            json!({ "fileName": "big.epub", "size": 51 * MB }),
        )
        .await;
    assert_error(response, 400, "file_too_large").await;
    // Sent anyway with a form for a smaller file: storage refuses it (S3 and `/uploads` hold the
    // form's limit), or the confirm does where an emulator stores it regardless.
    let offered = offer(&app, &user.key, "big.epub", 10 * MB).await;
    let sent = send(&offered, "big.epub", heavy_epub(51 * MB)).await;
    if sent.status().is_success() {
        assert_error(
            confirm(&app, &user.key, &offered).await,
            400,
            "file_too_large",
        )
        .await;
    } else {
        assert_error(sent, 400, "file_too_large").await;
    }
    assert_eq!(upload_area(&app).await, Vec::<String>::new());
    let books: Value = app.get("/api/books", &user.key).await.json().await.unwrap();
    assert_eq!(books["books"], json!([]));
}

#[tokio::test]
async fn a_file_that_is_not_a_book_is_refused_at_the_confirm_and_removed() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let offered = offer(&app, &user.key, "novel.epub", 4096).await;
    let sent = send(&offered, "novel.epub", noise(4096)).await;
    assert!(sent.status().is_success());
    assert_eq!(upload_area(&app).await.len(), 1);
    let refused = assert_error(
        confirm(&app, &user.key, &offered).await,
        400,
        "unsupported_file",
    )
    .await;
    assert!(refused["message"].as_str().unwrap().contains("novel.epub"));
    assert_eq!(upload_area(&app).await, Vec::<String>::new());
    // The upload is spent: a second confirm finds nothing.
    assert_error(confirm(&app, &user.key, &offered).await, 404, "not_found").await;
    let usage: Value = app.get("/api/usage", &user.key).await.json().await.unwrap();
    assert_eq!(usage["books"]["used"], 0, "a refused file costs no book");
}

#[tokio::test]
async fn an_upload_is_its_owners_alone_and_confirms_once() {
    let app = TestApp::new().with_workers().start().await;
    let (owner, other) = (app.user().await, app.user().await);
    let offered = offer(&app, &owner.key, "wasteland.pdf", 1000).await;
    let early = assert_error(
        confirm(&app, &owner.key, &offered).await,
        400,
        "bad_request",
    )
    .await;
    assert!(early["message"]
        .as_str()
        .unwrap()
        .contains("no file has arrived"));
    let pdf = fixture("wasteland.pdf");
    let offered = offer(&app, &owner.key, "wasteland.pdf", pdf.len()).await;
    assert!(send(&offered, "wasteland.pdf", pdf)
        .await
        .status()
        .is_success());
    assert_error(confirm(&app, &other.key, &offered).await, 404, "not_found").await;
    assert_eq!(confirm(&app, &owner.key, &offered).await.status(), 200);
    assert_error(confirm(&app, &owner.key, &offered).await, 404, "not_found").await;
    assert_eq!(
        books_used(&app, &owner.key).await,
        2,
        "the book, and the first offer's reservation while it is open"
    );
    app.clock.advance(offer_lifetime());
    assert_eq!(
        books_used(&app, &owner.key).await,
        1,
        "the offer that was never used gave its book back"
    );
}

/// Books counted this month, as `GET /api/usage` reports them.
async fn books_used(app: &TestApp, key: &str) -> u64 {
    let usage: Value = app.get("/api/usage", key).await.json().await.unwrap();
    usage["books"]["used"].as_u64().unwrap()
}

/// Past the end of an offer made now: its form's 15 minutes, then the hour to confirm. (S3
/// dates a form by the real clock, which runs on while the test's clock stands still: a few
/// minutes more cover the test's own run.)
fn offer_lifetime() -> chrono::Duration {
    chrono::Duration::minutes(15 + 60 + 5)
}

#[tokio::test]
async fn a_free_user_with_three_books_left_holds_at_most_three_offers_and_books() {
    let app = TestApp::new().with_workers().start().await;
    let user = app
        .user_with(
            booktr_core::types::Plan::Free,
            booktr_core::types::Role::User,
        )
        .await;
    let text = crate::helpers::sample_txt();
    let mut offers = Vec::new();
    for n in 0..3 {
        offers.push(offer(&app, &user.key, &format!("book{n}.txt"), 50 * MB).await);
    }
    assert_eq!(
        books_used(&app, &user.key).await,
        3,
        "each offer holds a book"
    );
    let fourth = app
        .send_json(
            Method::POST,
            "/api/uploads",
            &user.key,
            json!({ "fileName": "book3.txt", "size": 50 * MB }),
        )
        .await;
    assert_error(fourth, 400, "quota_exceeded").await;
    let form = Form::new().part("file", Part::bytes(text.clone()).file_name("direct.txt"));
    assert_error(
        app.post_upload_form(&user.key, form).await,
        400,
        "quota_exceeded",
    )
    .await;

    // The confirm turns an offer's book into the book: counted once.
    assert!(send(&offers[0], "book0.txt", text.clone())
        .await
        .status()
        .is_success());
    assert_eq!(confirm(&app, &user.key, &offers[0]).await.status(), 200);
    assert_eq!(books_used(&app, &user.key).await, 3);

    // The two offers never used give their books back once they are over, and may not be
    // confirmed after that.
    assert!(send(&offers[1], "book1.txt", text.clone())
        .await
        .status()
        .is_success());
    app.clock.advance(offer_lifetime());
    assert_eq!(books_used(&app, &user.key).await, 1);
    let late = assert_error(
        confirm(&app, &user.key, &offers[1]).await,
        400,
        "bad_request",
    )
    .await;
    assert!(
        late["message"].as_str().unwrap().contains("in time"),
        "{late}"
    );
    assert_eq!(upload_area(&app).await, Vec::<String>::new());
    let again = offer(&app, &user.key, "book4.txt", text.len()).await;
    assert!(send(&again, "book4.txt", text).await.status().is_success());
    assert_eq!(confirm(&app, &user.key, &again).await.status(), 200);
    assert_eq!(books_used(&app, &user.key).await, 2);
}

#[tokio::test]
async fn a_form_posted_again_stores_nothing_that_the_clean_up_does_not_remove() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let text = crate::helpers::sample_txt();
    let offered = offer(&app, &user.key, "voyage.txt", text.len()).await;
    assert!(send(&offered, "voyage.txt", text.clone())
        .await
        .status()
        .is_success());
    let twice = send(&offered, "voyage.txt", text.clone()).await;
    if app.aws.is_none() {
        // This server takes a form once; S3 cannot be told, and stores the file again under
        // the same key (one file either way).
        assert_error(twice, 409, "form_used").await;
    }
    assert_eq!(upload_area(&app).await.len(), 1);
    assert_eq!(confirm(&app, &user.key, &offered).await.status(), 200);
    assert_eq!(upload_area(&app).await, Vec::<String>::new());

    let after = send(&offered, "voyage.txt", text.clone()).await;
    if app.aws.is_none() {
        let body = assert_error(after, 409, "form_used").await;
        assert!(
            body["message"].as_str().unwrap().contains("confirmed"),
            "{body}"
        );
        assert_eq!(upload_area(&app).await, Vec::<String>::new());
    } else {
        // S3 stored it: no offer is open for that key, so the owner's next offer removes it
        // (and the bucket's lifecycle rule would within a day).
        assert!(after.status().is_success(), "{}", after.status());
        assert_eq!(upload_area(&app).await.len(), 1);
    }
    offer(&app, &user.key, "next.txt", text.len()).await;
    assert_eq!(upload_area(&app).await, Vec::<String>::new());
    assert_error(confirm(&app, &user.key, &offered).await, 404, "not_found").await;
    assert_eq!(
        books_used(&app, &user.key).await,
        2,
        "the book and the open offer, nothing for the file posted again"
    );
}

#[tokio::test]
async fn what_can_be_checked_before_the_file_moves_is_refused_at_once() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    for (body, code) in [
        (
            json!({ "fileName": "notes.odt", "size": 10 }),
            "unsupported_file",
        ),
        (json!({ "fileName": "book.epub", "size": 0 }), "bad_request"),
        (
            json!({ "fileName": "book.epub", "size": 10, "targetLang": "xx-nope-!" }),
            "bad_request",
        ),
        (json!({ "fileName": "book.epub" }), "bad_request"),
    ] {
        let response = app
            .send_json(Method::POST, "/api/uploads", &user.key, body.clone())
            .await;
        assert_error(response, 400, code).await;
    }
}

#[tokio::test]
async fn a_form_of_this_server_refuses_another_key_a_larger_size_and_no_signature() {
    let app = TestApp::new().with_workers().start().await;
    if app.aws.is_some() {
        return; // Forms post to S3 there, which checks its own policy.
    }
    let user = app.user().await;
    let offered = offer(&app, &user.key, "book.txt", 100).await;
    for (field, value) in [("key", "uploads/someone-else/x"), ("maxBytes", "52428800")] {
        let mut altered = offered.clone();
        for f in altered["fields"].as_array_mut().unwrap() {
            if f["name"] == field {
                f["value"] = value.into();
            }
        }
        assert_error(
            send(&altered, "book.txt", b"x".repeat(100)).await,
            403,
            "forbidden",
        )
        .await;
    }
    let mut unsigned = offered.clone();
    unsigned["fields"] = json!([]);
    let sent = send(&unsigned, "book.txt", b"x".repeat(100)).await;
    assert_eq!(
        sent.status(),
        403,
        "unsigned: {}",
        sent.text().await.unwrap()
    );
    assert_error(
        send(&offered, "book.txt", b"x".repeat(101)).await,
        400,
        "file_too_large",
    )
    .await;
    assert_eq!(upload_area(&app).await, Vec::<String>::new());
}

#[tokio::test]
async fn the_multipart_endpoint_answers_a_body_over_the_functions_limit_with_our_400() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let mut text = b"CHAPTER I. Loomings\n\n".to_vec();
    text.extend(b"Call me Ishmael. ".repeat(7 * MB / 17));
    // The multipart endpoint itself (`TestApp::upload` takes the direct flow for this size).
    let form = Form::new().part("file", Part::bytes(text).file_name("long.txt"));
    let response = app.post_upload_form(&user.key, form).await;
    if app.aws.is_some() {
        // What reaches a Lambda behind API Gateway is at most 6 MB, base64-encoded.
        let body = assert_error(response, 400, "file_too_large").await;
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("POST /api/uploads"),
            "{body}"
        );
    } else {
        assert_eq!(
            response.status(),
            200,
            "worker-queue mode takes the spec's 50 MB"
        );
    }
}

#[tokio::test]
async fn the_hourly_clean_up_removes_the_files_of_offers_that_are_over_for_users_who_never_return()
{
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let text = crate::helpers::sample_txt();
    let offered = offer(&app, &user.key, "left.txt", text.len()).await;
    assert!(send(&offered, "left.txt", text).await.status().is_success());
    let books = &app.services.books;
    assert_eq!(books.clean_up_upload_area().await.unwrap(), 0, "still open");
    assert_eq!(upload_area(&app).await.len(), 1);
    app.clock.advance(offer_lifetime());
    assert_eq!(books.clean_up_upload_area().await.unwrap(), 1);
    assert_eq!(upload_area(&app).await, Vec::<String>::new());
    assert_eq!(books_used(&app, &user.key).await, 0);
    assert_error(confirm(&app, &user.key, &offered).await, 404, "not_found").await;
}
