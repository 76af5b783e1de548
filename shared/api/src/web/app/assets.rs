//! The app's own script and style sheets (the app's and the reader's), compiled into the binary (no CDN, no build step).

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::Routes;

const SCRIPT: &str = include_str!("../../../assets/app/app.js");
const STYLE: &str = include_str!("../../../assets/app/app.css");
/// The reader's own sheet: the shared reader is on the site's layout, not the app's.
const READER_STYLE: &str = include_str!("../../../assets/app/reader.css");

pub fn router() -> Routes {
    Routes::new()
        .route("/assets/app.js", get(script))
        .route("/assets/app.css", get(style))
        .route("/assets/reader.css", get(reader_style))
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

async fn reader_style() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/css; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=300"),
        ],
        READER_STYLE,
    )
}
