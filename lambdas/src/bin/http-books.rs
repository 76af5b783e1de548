//! Lambda: books, uploads and sharing (`/api/books`, `/api/upload`, `/api/uploads`, `/shared/...`).

use booktr_api::{books, share, uploads};

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(
        books::router()
            .merge(uploads::router())
            .merge(share::router()),
    )
    .await
}
