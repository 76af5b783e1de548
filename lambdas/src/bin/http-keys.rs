//! Lambda: API keys (`/api/keys`).

use booktr_api::keys;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(keys::router()).await
}
