//! The app's own script and style sheet, compiled into the binary (no CDN, no build step).

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::Routes;

const SCRIPT: &str = include_str!("../../../assets/app/app.js");
const STYLE: &str = include_str!("../../../assets/app/app.css");

pub fn router() -> Routes {
    Routes::new()
        .route("/assets/app.js", get(script))
        .route("/assets/app.css", get(style))
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
