//! Lambda: the community (`/api/community/*`; `/api/admin/community/*` for categories and
//! tags, `/api/admin/comments` for moderation) the public pages (`/`, `/comunidad/*`) and the SEO files
//! (`/robots.txt`, `/sitemap.xml`, `/comunidad/feed.xml`), and the web app's community and
//! administration pages (`/dashboard/posts*`, `/dashboard/community/*`, `/admin*`).

use booktr_api::{community, web};

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(
        community::router()
            .merge(web::router())
            .merge(web::app::community_router()),
    )
    .await
}
