//! Lambda: the dead-letter handler: a job that failed 4 times marks its chapter and book ERROR and tells the user.

use booktr_core::ports::QueueName;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_queue(QueueName::JobsDeadLetter).await
}
