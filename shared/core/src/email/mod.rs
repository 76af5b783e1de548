//! Email as the service sends it: the administrator's sender settings (`GET/PUT
//! /api/admin/emails/config`), connection and message tests, the sandbox's allowed recipients,
//! and [`Postman::send`], which every email (notifications, digests, tests) goes through so
//! that a settings change applies to the next message.
//!
//! Items, all in the partition `EMAIL`:
//!
//! | item | sk | attributes |
//! |---|---|---|
//! | settings | `SETTINGS` | senderPrefix, senderName, replyToPrefix, sandbox, lastTestAt, lastTestStatus, error |
//! | allowed recipient (sandbox) | `RECIPIENT#{email}` | email, verifiedAt |
//!
//! Sandbox mode (the `sandbox` setting, off by default; for a staging instance on a real
//! relay, so that it cannot mail real users): mail goes only to allowed recipients. An address becomes one when an administrator asks to verify it
//! and the verification message to it was accepted by the relay (an SMTP relay has no click-to-
//! confirm step; the message tells its reader why they got it). Outside sandbox mode every
//! address receives mail and the list is kept but not consulted.

mod error;
mod model;
mod record;
mod recovery;
mod service;

pub use error::BadSenderName;
pub use model::{EmailConfig, EmailSettingsPatch, Outcome, SenderName, SenderPrefix};
pub use recovery::Recovery;
pub use service::Postman;
