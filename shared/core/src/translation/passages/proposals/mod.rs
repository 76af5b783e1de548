//! A passage or a chapter translated again at the owner's request, optionally with an
//! instruction ("more formal", "keep the pun") and another model, as a *proposal*: per passage
//! its text when asked and the text proposed, with what the checks found. The owner accepts it
//! (all, or the passages they choose) or discards it.
//!
//! Asking for one is quoted and charged like a run: the words of its passages come out of the
//! month's quota when it is asked for (400 `quota_exceeded` when they do not fit; given back if
//! it fails), and its model passes reserve and settle their cost on the book
//! (`crate::jobs::retranslate`), which runs it through the same pipeline, checks and repair
//! ladder as a chapter of a run, with the instruction in every prompt. It leaves the owner's
//! passages (edited, accepted, kept) alone unless asked to include them.
//!
//! Accepting a passage is a change like an edit, made from the version the passage had when
//! the proposal was asked for: a passage changed since (by the owner, or by a new run of the
//! model) answers [`PassageError::Stale`] with the passage as it is now, never a lost update.
//! Its origin says it came from the re-translation (model, pass, instruction).

mod error;
mod model;
mod record;
mod service;

pub use error::ProposalError;
pub use model::*;
pub use record::ProposalStatus;
