//! Lambda: glossaries (`/api/glossary`).

use booktr_api::glossary;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(glossary::router()).await
}
