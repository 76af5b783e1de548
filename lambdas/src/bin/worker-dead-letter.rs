//! Lambda: the dead-letter handler: a job that failed 4 times marks its chapter and book ERROR and tells the user.

use booktr_core::jobs::runner::Worker;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_queue(Worker::DEAD_LETTER).await
}
