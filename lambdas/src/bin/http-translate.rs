//! Lambda: translation runs (`/api/translate`, pause, resume, stop, status).

use booktr_api::translate;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(translate::router()).await
}
