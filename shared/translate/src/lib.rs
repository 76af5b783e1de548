//! Translation of a book chapter by chapter, in three passes (translate, consistency review,
//! polish), with the user's glossary in every pass and a book-wide term list (`terms`).
//!
//! Here: the OpenAI, Anthropic and Gemini clients of the `ChatModel` port (owned by `booktr-ports`), the offline engine,
//! glossary matching, chunking, the prompt protocol, the strict reading of answers, the checks
//! every block passes, the repair ladder, and the chapter pipeline. The book jobs that run it per chapter are in `booktr-core` (`jobs::chapter`).

pub mod adequacy;
pub mod agreement;
pub mod budget;
pub mod checks;
pub mod estimate;
pub mod fallback;
pub mod glossary;
pub mod ladder;
pub mod memory;
#[cfg(any(test, feature = "stand-ins"))]
pub mod misbehaving;
pub mod model;
pub mod neighbours;
pub mod offline;
pub mod pipeline;
pub mod profile;
pub mod protocol;
pub mod providers;
pub mod reading;
pub mod recorded;
pub mod retry;
pub mod split;
pub mod terms;
