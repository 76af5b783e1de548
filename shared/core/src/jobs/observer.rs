//! What a run's jobs tell as they go, to whoever watches the process that runs them:
//! `booktr translate` draws its progress from it and writes each chapter's text after each
//! pass (`--pass-texts`). A server watches nothing; its progress is on the book's record.

use booktr_formats::manuscript::Block;
use booktr_translate::protocol::Pass;

/// Called from inside the jobs, on the worker's task: an observer answers at once (it draws,
/// or writes a small file) and never fails the job.
pub trait RunObserver: Send + Sync {
    /// The term job stored the book's list of `found` names and terms.
    fn terms_listed(&self, book_id: &str, found: usize);
    /// Chapter `number` (from 1, in the book) starts its passes.
    fn chapter_started(&self, book_id: &str, number: u32);
    /// Chapter `number` finished `pass`; `blocks` are its blocks as the passes so far left them.
    fn pass_done(&self, book_id: &str, number: u32, pass: Pass, blocks: &[Block]);
    /// Chapter `number`'s translation is stored.
    fn chapter_done(&self, book_id: &str, number: u32);
}
