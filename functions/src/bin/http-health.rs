//! Lambda: health (`/api/health`).

use booktr_api::health;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(health::router()).await
}
