//! The `Ports` bundle: one adapter of each port, as a binary's wiring chose them.

use std::sync::Arc;

use crate::blobs::Blobs;
use crate::clock::Clock;
use crate::http::HttpOut;
use crate::links::Links;
use crate::mail::Mailer;
use crate::models::Models;
use crate::queue::Queue;
use crate::secrets::Secrets;
use crate::table::Table;

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
