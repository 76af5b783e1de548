//! The published API description: OpenAPI 3.1, version 1.0.0, made from the routers themselves.
//! Every route is registered through `utoipa_axum::routes!`, which takes the handler's
//! `#[utoipa::path]` together with the serde types it reads and answers, so the document cannot
//! list a route that is not served or miss one that is. Served at `GET /api/openapi.json`, with
//! an interactive page at `/api/docs` whose assets are compiled into the binary (no CDN).
//!
//! What is served is `shared/api/openapi.json`, the document `crate::router::document` makes,
//! written out and compiled in: a function that serves it (the health Lambda) then links no
//! handler of the other groups, where building the document would link them all. A test fails the moment the file and
//! the code differ, and rewrites it when asked (`BOOKTR_WRITE_OPENAPI=1`).

use axum::http::header::{ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, VARY};
use axum::http::HeaderMap;
use axum::response::{Html, IntoResponse, Response};
use booktr_formats::gzipped::Gzipped;
use serde::Serialize;
use utoipa::openapi::path::Operation;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Content, OpenApi, Ref};
use utoipa::{Modify, OpenApi as _, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::state::AppState;

/// The whole description (made where every group's routes are merged).
pub use crate::router::document;

/// A group's routes with their documentation; `finish` turns them into a served router.
pub type Routes = OpenApiRouter<AppState>;

/// Security scheme names, as the handlers' `security(...)` attributes spell them.
pub const API_KEY: &str = "apiKey";
pub const SESSION: &str = "session";

/// Every failure's body (see `error.rs`).
#[derive(Serialize, ToSchema)]
#[schema(example = json!({"error": "not_found", "message": "book not found"}))]
pub struct ErrorBody {
    /// Stable, machine-readable code (docs/api.md lists them all).
    pub error: String,
    /// For people; never contains internals.
    pub message: String,
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "booktr",
        version = "1.0.0",
        description = "Book translation: upload a book, translate it chapter by chapter in three \
                       passes with your glossary enforced, and download it as EPUB or PDF.\n\n\
                       Authenticated operations take `Authorization: Bearer bt_...` (an API key) \
                       or the `auth.session-token` cookie set by sign-in. Every error is \
                       `{error, message}`.",
        license(name = "MIT")
    ),
    components(schemas(ErrorBody)),
    modifiers(&SecuritySchemes)
)]
struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, doc: &mut OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            API_KEY,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("bt_<key>")
                    .description(Some(
                        "An API key made at POST /api/keys or printed by `booktr serve` on its \
                         first start; it starts with `bt_`.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            SESSION,
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                booktr_core::accounts::SESSION_COOKIE,
                "The session cookie POST /api/auth/signin and /api/auth/signup set.",
            ))),
        );
    }
}

fn operations(doc: &mut OpenApi) -> impl Iterator<Item = &mut Operation> {
    doc.paths.paths.values_mut().flat_map(|item| {
        [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
    })
}

/// Operation ids are the handlers' names; a name several groups use (`list`, `update`) is
/// prefixed with its tag (`books_list`), so client generators get unique, readable methods.
fn unique_operation_ids(doc: &mut OpenApi) {
    let mut uses = std::collections::HashMap::<String, usize>::new();
    for operation in operations(doc) {
        if let Some(id) = &operation.operation_id {
            *uses.entry(id.clone()).or_default() += 1;
        }
    }
    for operation in operations(doc) {
        let tag = operation.tags.as_ref().and_then(|t| t.first()).cloned();
        if let (Some(id), Some(tag)) = (&mut operation.operation_id, tag) {
            if uses.get(id.as_str()).is_some_and(|n| *n > 1) {
                *id = format!("{tag}_{id}");
            }
        }
    }
}

/// The answers every operation can give besides its own: the error model's shared statuses.
fn add_shared_responses(doc: &mut OpenApi) {
    for operation in operations(doc) {
        let secured = operation
            .security
            .as_ref()
            .is_some_and(|s| !s.is_empty() && s.iter().any(|r| r != &Default::default()));
        let takes_input = operation.request_body.is_some()
            || operation.parameters.as_ref().is_some_and(|p| !p.is_empty());
        if takes_input {
            add_error(
                operation,
                "400",
                "The request is malformed or a value is invalid.",
            );
        }
        if secured {
            add_error(operation, "401", "No credential, or one that is not valid.");
            add_error(
                operation,
                "403",
                "The credential lacks the scope (GET needs `read`, other methods `write`) or role.",
            );
        }
        add_error(
            operation,
            "414",
            "The request URI is longer than 8,192 bytes.",
        );
        add_error(
            operation,
            "429",
            "Too many requests; `Retry-After` says when to try again.",
        );
        add_error(
            operation,
            "503",
            "A backend is briefly unavailable; `Retry-After` says when to try again.",
        );
    }
}

fn add_error(operation: &mut Operation, status: &str, description: &str) {
    operation
        .responses
        .responses
        .entry(status.to_string())
        .or_insert_with(|| {
            ResponseBuilder::new()
                .description(description)
                .content(
                    "application/json",
                    Content::new(Some(Ref::from_schema_name("ErrorBody"))),
                )
                .build()
                .into()
        });
}

/// The description of `routes` on the base document (with every group's routes:
/// `crate::router::document`).
pub fn describe(routes: Routes) -> OpenApi {
    let (_, mut doc) = OpenApiRouter::<AppState>::with_openapi(ApiDoc::openapi())
        .merge(routes)
        .split_for_parts();
    unique_operation_ids(&mut doc);
    add_shared_responses(&mut doc);
    doc
}

/// The document as served: `crate::router::document`, pretty-printed, as of the last time the
/// test wrote it.
const DOCUMENT_JSON: &str = include_str!("../openapi.json");

/// `/api/openapi.json` and `/api/docs`: public, cheap (one static string each) and cached.
pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(description))
        .routes(routes!(docs_page))
        .routes(routes!(docs_script))
        .routes(routes!(docs_initializer))
        .routes(routes!(docs_style))
}

/// The API description (this document).
#[utoipa::path(get, path = "/api/openapi.json", tag = "docs",
    responses((status = 200, description = "OpenAPI 3.1 document", content_type = "application/json", body = Object)))]
async fn description() -> Response {
    (
        [
            (CONTENT_TYPE, "application/json"),
            (CACHE_CONTROL, "public, max-age=300"),
        ],
        DOCUMENT_JSON,
    )
        .into_response()
}

/// Swagger UI's files, gzipped (`assets/swagger-ui/README.md`): a quarter of the bytes in every
/// binary that serves them.
static SWAGGER_UI_JS: Asset = Asset {
    media_type: "text/javascript; charset=utf-8",
    file: Gzipped::new(include_bytes!(
        "../assets/swagger-ui/swagger-ui-bundle.js.gz"
    )),
};
static SWAGGER_UI_CSS: Asset = Asset {
    media_type: "text/css; charset=utf-8",
    file: Gzipped::new(include_bytes!("../assets/swagger-ui/swagger-ui.css.gz")),
};

/// The interactive page: Swagger UI (5.35.0, Apache-2.0, `assets/swagger-ui/`) on this document.
#[utoipa::path(get, path = "/api/docs", tag = "docs",
    responses((status = 200, description = "HTML page", content_type = "text/html", body = String)))]
async fn docs_page() -> Response {
    ([(CACHE_CONTROL, "public, max-age=300")], Html(DOCS_PAGE)).into_response()
}

/// Swagger UI's script, served from the binary.
#[utoipa::path(get, path = "/api/docs/swagger-ui-bundle.js", tag = "docs",
    responses((status = 200, description = "JavaScript", content_type = "text/javascript", body = String)))]
async fn docs_script(headers: HeaderMap) -> Response {
    SWAGGER_UI_JS.response(&headers)
}

/// What starts Swagger UI on the description: a file, since the pages' policy runs no inline
/// script.
#[utoipa::path(get, path = "/api/docs/swagger-initializer.js", tag = "docs",
    responses((status = 200, description = "JavaScript", content_type = "text/javascript", body = String)))]
async fn docs_initializer() -> Response {
    (
        [
            (CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=300"),
        ],
        DOCS_INITIALIZER,
    )
        .into_response()
}

const DOCS_INITIALIZER: &str = "window.ui = SwaggerUIBundle({ url: \"/api/openapi.json\", dom_id: \"#swagger-ui\", deepLinking: true });\n";

/// Swagger UI's style sheet, served from the binary.
#[utoipa::path(get, path = "/api/docs/swagger-ui.css", tag = "docs",
    responses((status = 200, description = "CSS", content_type = "text/css", body = String)))]
async fn docs_style(headers: HeaderMap) -> Response {
    SWAGGER_UI_CSS.response(&headers)
}

/// A static file kept gzipped: sent as it is to clients that accept gzip (every browser), and
/// unzipped once per process for the others.
struct Asset {
    media_type: &'static str,
    file: Gzipped,
}

impl Asset {
    fn response(&'static self, request: &HeaderMap) -> Response {
        let headers = [
            (CONTENT_TYPE, self.media_type),
            (CACHE_CONTROL, "public, max-age=86400"),
            (VARY, "accept-encoding"),
        ];
        if accepts_gzip(request) {
            return (headers, [(CONTENT_ENCODING, "gzip")], self.file.gzipped()).into_response();
        }
        match self.file.plain() {
            Some(plain) => (headers, plain).into_response(),
            None => {
                ApiError::internal(&std::io::Error::other("a compiled-in asset does not unzip"))
                    .into_response()
            }
        }
    }
}

/// Whether `Accept-Encoding` lists gzip without refusing it (`gzip;q=0`).
fn accepts_gzip(request: &HeaderMap) -> bool {
    request
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

const DOCS_PAGE: &str = r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>booktr API</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/swagger-initializer.js"></script>
</body>
</html>
"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_is_built_from_every_group() {
        let doc = document();
        assert!(doc.paths.paths.contains_key("/api/books/{id}"));
    }

    /// The served file is the code's document. `BOOKTR_WRITE_OPENAPI=1 cargo test -p booktr-api
    /// openapi` writes it after an API change.
    #[test]
    fn the_served_description_is_the_one_the_code_makes() {
        // Pretty, with a final newline: an API change shows in review as a readable diff.
        let mut made = serde_json::to_string_pretty(&document()).unwrap();
        made.push('\n');
        if std::env::var_os("BOOKTR_WRITE_OPENAPI").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json");
            std::fs::write(path, &made).unwrap();
            return;
        }
        assert!(
            made == DOCUMENT_JSON,
            "shared/api/openapi.json is not what the code describes: \
             run `BOOKTR_WRITE_OPENAPI=1 cargo test -p booktr-api openapi` and review its diff"
        );
    }

    #[test]
    fn the_docs_assets_unzip_to_swagger_ui() {
        let script = std::str::from_utf8(SWAGGER_UI_JS.file.plain().unwrap()).unwrap();
        assert!(script.contains("SwaggerUIBundle"), "{}", script.len());
        let style = std::str::from_utf8(SWAGGER_UI_CSS.file.plain().unwrap()).unwrap();
        assert!(style.contains(".swagger-ui"), "{}", style.len());
    }

    #[test]
    fn gzip_is_sent_only_to_clients_that_accept_it() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT_ENCODING, value.parse().unwrap());
            accepts_gzip(&headers)
        };
        assert!(with("gzip, deflate, br"));
        assert!(with("br;q=1.0, GZIP;q=0.5"));
        assert!(with("*"));
        assert!(!with("gzip;q=0, br"));
        assert!(!with("identity"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }
}
