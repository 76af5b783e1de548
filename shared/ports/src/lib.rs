//! Ports: the traits the domain (`booktr-core`, which re-exports this crate as `ports`) owns and
//! every adapter implements. Each method documents what an adapter MUST do; the conformance
//! suites (`crate::conformance`, feature `conformance`) check it against every adapter (SQLite
//! and local files always, the AWS ones against an emulator). A crate of its own so that the
//! adapter crates depend on it alone and build beside the domain.

pub mod blobs;
pub mod chat;
pub mod clock;
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
pub use chat::{ChatError, ChatModel, ChatRequest, ChatResponse};
pub use clock::{Clock, ManualClock, SystemClock};
pub use http::{HttpAnswer, HttpOut, HttpOutError};
pub use links::{LinkCheck, Links, UploadForm};
pub use mail::{MailError, MailServer, Mailer, OutgoingEmail};
pub use models::{Family, KeyCheckError, Models};
pub use queue::{Outgoing, Queue, QueueName, QueueStats, Received};
pub use secrets::Secrets;
pub use table::{Attrs, Condition, Index, Item, Query, Table, Update, WriteOp};

use std::sync::Arc;

/// The one error type of the storage ports. Adapters translate their SDK or driver errors into it.
/// It says only that the backend failed or refused: what the domain finds wrong with what it
/// reads (a corrupt item, a missing input) is the domain's own error, never one of these.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A write's condition did not hold (DynamoDB's `ConditionalCheckFailed`, a SQLite
    /// constraint the adapter checks itself). The domain turns this into its own conflict errors.
    #[error("condition failed")]
    Conflict,
    /// An update addressed an item that does not exist.
    #[error("item not found")]
    NotFound,
    /// The request was malformed for this store (an invalid key, too many operations).
    #[error("invalid request to the store: {0}")]
    Invalid(String),
    /// The backend failed or could not be reached; retrying later may succeed.
    #[error("storage backend unavailable: {0}")]
    Unavailable(String),
}

/// The adapters, chosen once by a binary's wiring function.
#[derive(Clone)]
pub struct Ports {
    pub table: Arc<dyn Table>,
    pub queue: Arc<dyn Queue>,
    pub blobs: Arc<dyn Blobs>,
    pub clock: Arc<dyn Clock>,
    /// Outbound HTTP for webhook deliveries, behind the SSRF policy.
    pub http: Arc<dyn HttpOut>,
    pub mailer: Arc<dyn Mailer>,
    /// The translation model for a run (provider or offline engine), and provider key checks.
    pub models: Arc<dyn Models>,
    /// Time-limited download links for stored files.
    pub links: Arc<dyn Links>,
    /// Seals secrets before they are stored (users' own provider keys).
    pub secrets: Arc<dyn Secrets>,
}
