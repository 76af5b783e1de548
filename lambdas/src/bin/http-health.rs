//! Lambda: health and the API description (`/api/health`, `/api/openapi.json`, `/api/docs`).

use booktr_api::{health, openapi};

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(health::router().merge(openapi::router())).await
}
