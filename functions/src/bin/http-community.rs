//! Lambda: the community (`/api/community/*`; `/api/admin/community/*` for categories and
//! tags, `/api/admin/comments` for moderation).

use booktr_api::community;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(community::router()).await
}
