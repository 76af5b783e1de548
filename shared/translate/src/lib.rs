//! Translation of a book chapter by chapter, in three passes (translate, consistency review,
//! polish), with the user's glossary in every pass and a book-wide term ledger.
//!
//! Work in progress (issue 4): the model port and its OpenAI, Anthropic and Gemini clients,
//! glossary matching, chunking, the prompt and answer protocol with its checks, the offline
//! engine and the chapter pipeline are here; the glossaries API, model selection from
//! configuration, the chunk-parallelism benchmark and `booktr translate` are not yet.

pub mod book;
pub mod glossary;
pub mod model;
pub mod offline;
pub mod pipeline;
pub mod protocol;
pub mod providers;
