//! The black-box suite: the HTTP API over a real socket (and the `booktr` binary), on the
//! embedded backend. One test binary for the whole suite keeps link time down.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod admin_email;
mod answers;
mod auth;
mod aws;
mod books;
mod browser;
mod builds;
mod checkers;
mod cli;
mod community;
mod cost;
mod crash;
mod developer;
mod direct_upload;
mod editions;
mod errors;
mod fallback;
mod glossary;
mod health;
mod helpers;
mod hostile;
mod keys;
mod limits;
mod metrics;
mod notifications;
mod openapi;
mod pages;
mod passages;
mod privacy;
mod proposals;
mod reader;
mod sign_in_attack;
mod smtp_sink;
mod stand_ins;
mod store_calls;
mod term_list;
mod terms_from_edits;
mod translation;
mod upload;
mod user;
mod web_app;
mod web_editor;
mod web_traps;
mod webhooks;
