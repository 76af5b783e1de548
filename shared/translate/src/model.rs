//! The `ChatModel` port (owned by `booktr-ports`, re-exported here for the pipeline's modules),
//! and the token estimate every budget uses.

pub use booktr_ports::chat::{ChatError, ChatModel, ChatRequest, ChatResponse};

/// A rough token count (4 characters a token), for budgets and estimates only.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}
