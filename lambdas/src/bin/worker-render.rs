//! Lambda: the render worker on the render FIFO queue (generate jobs: a book's EPUB or PDF), batches in order with partial batch failures.

use booktr_core::jobs::runner::Worker;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_queue(Worker::RENDER).await
}
