//! Lambda: files (`/api/generate`, `/api/download/{id}`; links are presigned S3 URLs).

use booktr_api::download;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(download::router()).await
}
