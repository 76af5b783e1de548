//! The app's own script, style sheet, icon and web app manifest, compiled into the binary (no
//! CDN, no build step). The script and style sheet are kept five minutes (they change with a
//! release); the icon and manifest a day. The icon is also answered at `/favicon.ico`, where
//! browsers look for one before reading a page.

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use axum::routing::get;

use super::paths::AT_THE_ROOT;
use crate::openapi::Routes;

const SCRIPT: &str = include_str!("../../../assets/app/app.js");
const STYLE: &str = include_str!("../../../assets/app/app.css");
const ICON: &str = include_str!("../../../assets/app/icon.svg");
const MANIFEST: &str = include_str!("../../../assets/app/manifest.webmanifest");

pub fn router() -> Routes {
    Routes::new()
        .route("/assets/app.js", get(script))
        .route("/assets/app.css", get(style))
        .route("/assets/icon.svg", get(icon))
        .route(AT_THE_ROOT[0], get(icon))
        .route(AT_THE_ROOT[1], get(manifest))
}

async fn script() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=300"),
        ],
        SCRIPT,
    )
}

async fn style() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/css; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=300"),
        ],
        STYLE,
    )
}

async fn icon() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "image/svg+xml"),
            (CACHE_CONTROL, "public, max-age=86400"),
        ],
        ICON,
    )
}

async fn manifest() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "application/manifest+json"),
            (CACHE_CONTROL, "public, max-age=86400"),
        ],
        MANIFEST,
    )
}
