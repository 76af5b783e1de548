//! Lambda: in-app notifications (`/api/notifications`) and their settings.

use booktr_api::notifications;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(notifications::router()).await
}
