//! Lambda: the weekly digest's schedule (EventBridge, hourly): queues each subscriber's digest
//! once the week is over (see `booktr_core::jobs::digest`).

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_schedule().await
}
