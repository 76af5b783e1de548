//! Events: what the service tells a user when one of their books completes or fails. One
//! [`Occurrence`] fans out to an in-app notification, a signed webhook delivery per subscribed
//! webhook (sent by a worker of the `webhooks` queue, retried after 1, 5 and 30 minutes) and an
//! email, each as the user's settings ask.
//!
//! Layout (docs/operations.md's data layout repeats it):
//!
//! | item | pk | sk |
//! |---|---|---|
//! | webhook | `USER#<userId>` | `WEBHOOK#<id>` |
//! | delivery | `WEBHOOK#<webhookId>` | `DELIVERY#<id>` |
//! | notification | `USER#<userId>` | `NOTIFICATION#<id>` |
//! | notification settings | `USER#<userId>` | `SETTINGS#NOTIFICATIONS` |
//! | emitted marker | `USER#<userId>` | `EVENT#<sha256 of the occurrence key>` |
//!
//! Webhooks live in their owner's partition, so another user's webhook id is simply not found.
//! Ids are UUID v7, so a descending query lists newest first. The emitted marker makes
//! [`Events::emit`] idempotent: it is written in the same transaction as the notification and
//! the deliveries, on the condition that it does not exist yet.

mod error;
mod model;
pub mod notifications;
pub(crate) mod record;
mod service;
mod webhooks;

pub use error::EventsError;
pub use model::*;
pub use service::Events;
