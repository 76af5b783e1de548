//! Lambda: the web app's pages (`/signin`, `/signup`, `/signout`, `/language`, `/forgot`,
//! `/reset`, `/verify`, `/dashboard/*` but the community's, `/assets/*`).

use booktr_api::web;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(web::app::pages_router()).await
}
