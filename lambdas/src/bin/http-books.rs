//! Lambda: books, upload and sharing (`/api/books`, `/api/upload`, `/shared/...`).

use booktr_api::{books, share};

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(books::router().merge(share::router())).await
}
