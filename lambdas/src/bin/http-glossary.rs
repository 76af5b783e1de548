//! Lambda: glossaries (`/api/glossary`) and the translation memory (`/api/memory`).

use booktr_api::{glossary, memory};

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(glossary::router().merge(memory::router())).await
}
