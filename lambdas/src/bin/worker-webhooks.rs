//! Lambda: webhook deliveries (signed POSTs; retries 1, 5 and 30 minutes later through the message's visibility).

use booktr_core::jobs::runner::Worker;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_queue(Worker::WEBHOOKS).await
}
