//! Lambda: the caller's plan usage (`/api/usage`).

use booktr_api::usage;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(usage::router()).await
}
