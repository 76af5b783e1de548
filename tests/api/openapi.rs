//! The published API description: valid OpenAPI 3.1 at version 1.0.0, the same operations the
//! routers serve (none missing, none extra), and its interactive page rendering offline.

use std::collections::BTreeSet;
use std::path::Path;

use reqwest::Method;
use serde_json::Value;

use crate::checkers;
use crate::helpers::{have, TestApp, Tool};
use crate::pages::chromium;

const METHODS: [&str; 5] = ["get", "put", "post", "patch", "delete"];

async fn description(app: &TestApp) -> (Vec<u8>, Value) {
    let response = app
        .client
        .get(format!("{}/api/openapi.json", app.url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let bytes = response.bytes().await.unwrap().to_vec();
    let document = serde_json::from_slice(&bytes).unwrap();
    (bytes, document)
}

/// `(METHOD, path)` of every operation in the document.
fn operations(document: &Value) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in METHODS {
            if item.get(method).is_some() {
                found.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    found
}

#[tokio::test]
async fn the_api_description_is_valid_openapi_3_1_at_version_1_0_0_with_both_credentials() {
    if !have(Tool::Checkers) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let (bytes, document) = description(&app).await;
    assert_eq!(document["openapi"], "3.1.0");
    assert_eq!(document["info"]["version"], "1.0.0");
    assert_eq!(checkers::openapi_errors(&bytes), Vec::<String>::new());

    let schemes = &document["components"]["securitySchemes"];
    assert_eq!(schemes["apiKey"]["type"], "http");
    assert_eq!(schemes["apiKey"]["scheme"], "bearer");
    assert_eq!(schemes["session"]["in"], "cookie");
    assert_eq!(schemes["session"]["name"], "auth.session-token");
    // An authenticated operation takes either; a public one needs neither.
    let books = &document["paths"]["/api/books"]["get"];
    assert_eq!(
        books["security"],
        serde_json::json!([{"apiKey": []}, {"session": []}])
    );
    assert!(document["paths"]["/api/health"]["get"]
        .get("security")
        .is_none());
    // The spec's field names, enums and error bodies.
    let book = &document["components"]["schemas"]["Book"];
    assert!(book["properties"].get("targetLang").is_some(), "{book}");
    let statuses = &document["components"]["schemas"]["BookStatus"]["enum"];
    assert!(statuses
        .as_array()
        .unwrap()
        .contains(&Value::from("TRANSLATING")));
    assert_eq!(
        books["responses"]["401"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorBody"
    );
}

/// The headers that defend the browser, on any response of ours.
pub fn assert_defended(what: &str, headers: &reqwest::header::HeaderMap) {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(header("x-content-type-options"), "nosniff", "{what}");
    let referrer = if what.contains("/shared/") {
        "no-referrer"
    } else {
        "strict-origin-when-cross-origin"
    };
    assert_eq!(header("referrer-policy"), referrer, "{what}");
    if header("content-type").starts_with("text/html") {
        let policy = header("content-security-policy");
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{what}: {policy}"
        );
        let scripts = policy
            .split(';')
            .find(|d| d.trim().starts_with("script-src"))
            .unwrap_or_default();
        assert_eq!(scripts.trim(), "script-src 'self'", "{what}: {policy}");
        assert_eq!(header("x-frame-options"), "DENY", "{what}");
    }
}

#[tokio::test]
async fn every_documented_operation_is_served_by_the_router_with_the_browsers_defences() {
    let app = TestApp::new().with_workers().start().await;
    let (_, document) = description(&app).await;
    let operations = operations(&document);
    assert!(operations.len() > 70, "{operations:?}");
    for (method, path) in &operations {
        // Any value for a path parameter: what matters is that a route matches, not the answer.
        let concrete = path
            .split('/')
            .map(|part| if part.starts_with('{') { "probe" } else { part })
            .collect::<Vec<_>>()
            .join("/");
        let response = app
            .client
            .request(
                Method::from_bytes(method.as_bytes()).unwrap(),
                format!("{}{concrete}", app.url),
            )
            .send()
            .await
            .unwrap();
        let status = response.status();
        assert_defended(&format!("{method} {path}"), response.headers());
        let body = response.text().await.unwrap_or_default();
        assert_ne!(
            status, 405,
            "{method} {path} is documented but not served: {body}"
        );
        assert!(
            !body.contains("no route for"),
            "{method} {path} is documented but not served: {body}"
        );
    }
}

#[test]
fn every_route_the_routers_register_is_in_the_description() {
    // Routes registered through `utoipa_axum::routes!` are documented by construction (the
    // macro takes the handler's `#[utoipa::path]`); a plain `.route(` would not be. The one
    // exception is the wildcard `/files/{*key}`, which OpenAPI cannot template and which
    // `download::file_doc` documents as `/files/{key}`. The web app's pages (`web/app/`) are
    // not API: HTML forms for browsers, described in docs/web.md, so they stay out of it.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared/api/src");
    let app_pages = root.join("web/app");
    let mut plain = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path == app_pages {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for line in text
                    .lines()
                    .filter(|l| l.trim_start().starts_with(".route("))
                {
                    plain.push(format!("{}: {}", path.display(), line.trim()));
                }
            }
        }
    }
    assert_eq!(plain.len(), 1, "{plain:#?}");
    assert!(plain[0].contains(r#".route("/files/{*key}", get(file))"#));
}

#[tokio::test]
async fn every_endpoint_of_the_spec_is_in_the_description() {
    let app = TestApp::new().with_workers().start().await;
    let (_, document) = description(&app).await;
    let documented = operations(&document);
    let spec =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/spec/API.md"))
            .unwrap();
    // The spec's endpoint tables: `| METHOD | /path | ...`.
    let mut missing = Vec::new();
    let mut seen = 0;
    for line in spec.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 3 || !METHODS.contains(&cells[1].to_lowercase().as_str()) {
            continue;
        }
        if !cells[2].starts_with('/') {
            continue;
        }
        seen += 1;
        let operation = (cells[1].to_string(), cells[2].to_string());
        if !documented.contains(&operation) {
            missing.push(operation);
        }
    }
    assert!(seen > 40, "the spec's tables were not found ({seen} rows)");
    assert_eq!(missing, Vec::<(String, String)>::new());
}

#[tokio::test]
async fn the_interactive_page_renders_the_description_offline_in_a_real_browser() {
    if !have(Tool::Chromium) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let url = format!("{}/api/docs", app.url);
    let dom = tokio::task::spawn_blocking(move || chromium(&url, "api-docs.png"))
        .await
        .unwrap();
    // Swagger UI, from the binary, has read the document and listed its operations.
    assert!(dom.contains("swagger-ui"), "{dom}");
    assert!(dom.contains("opblock"), "no operations rendered: {dom}");
    assert!(dom.contains("/api/translate/status"), "{dom}");
    assert!(dom.contains("1.0.0"), "{dom}");
}
