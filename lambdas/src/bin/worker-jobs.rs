//! Lambda: the book worker on the jobs FIFO queue (extract, terms, chapter, re-translation, purge and digest jobs), batches in order with partial batch failures.

use booktr_core::jobs::runner::Worker;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_queue(Worker::JOBS).await
}
