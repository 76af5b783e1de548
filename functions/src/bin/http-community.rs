//! Lambda: the community (`/api/community/*`; `/api/admin/community/*` for categories and
//! tags, `/api/admin/comments` for moderation) and the public pages (`/`, `/comunidad/*`).

use booktr_api::{community, web};

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(community::router().merge(web::router())).await
}
