//! Lambda: the web app's pages (`/signin`, `/signup`, `/signout`, `/language`, `/dashboard/*`,
//! `/assets/*`).

use booktr_api::web;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(web::app::router()).await
}
