//! Lambda: the community (`/api/community/*`, and `/api/admin/community/*` for categories and
//! tags).

use booktr_api::community;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(community::router()).await
}
