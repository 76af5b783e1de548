//! Lambda: webhooks (`/api/webhooks`, test events, delivery history).

use booktr_api::webhooks;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(webhooks::router()).await
}
