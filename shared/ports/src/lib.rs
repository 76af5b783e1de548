//! Ports: the traits the domain (`booktr-core`, which re-exports this crate as `ports`) owns and
//! every adapter implements. Each method documents what an adapter MUST do; the conformance
//! suites (`crate::conformance`, feature `conformance`) check it against every adapter (SQLite
//! and local files always, the AWS ones against an emulator). A crate of its own so that the
//! adapter crates depend on it alone and build beside the domain.

pub mod blobs;
mod bundle;
pub mod chat;
pub mod clock;
mod error;
pub mod http;
pub mod ids;
pub mod links;
pub mod mail;
pub mod models;
pub mod queue;
pub mod secrets;
pub mod table;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use blobs::{BlobKey, Blobs};
pub use bundle::Ports;
pub use chat::{ChatError, ChatModel, ChatRequest, ChatResponse};
pub use clock::{Clock, ManualClock, SystemClock};
pub use error::StoreError;
pub use http::{HttpAnswer, HttpOut, HttpOutError};
pub use links::{LinkCheck, Links, UploadForm};
pub use mail::{MailError, MailServer, Mailer, OutgoingEmail};
pub use models::{Family, KeyCheckError, Models};
pub use queue::{Outgoing, Queue, QueueName, QueueStats, Received};
pub use secrets::Secrets;
pub use table::{Attrs, Condition, Index, Item, Query, Table, Update, WriteOp};
