//! Lambda: files (`/api/generate`, `/api/download/{id}`; links are presigned S3 URLs), and the
//! web app's download links (`/dashboard/books/{id}/download`), which render the same files.

use booktr_api::{download, web};

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(download::router().merge(web::app::download_router()))
        .await
}
