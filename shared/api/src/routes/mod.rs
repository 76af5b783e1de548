//! One module, and one `router()`, per endpoint group of the spec.

pub mod admin_email;
pub mod auth_routes;
pub mod books;
pub mod community;
pub mod developer;
pub mod download;
pub mod glossary;
pub mod health;
pub mod keys;
pub mod memory;
pub mod notifications;
pub mod passage_terms;
pub mod passages;
pub mod preferences;
pub mod proposals;
pub mod share;
pub mod term_list;
pub mod translate;
pub mod uploads;
pub mod usage;
pub mod user;
pub mod webhooks;
pub mod xliff;

use serde::Serialize;

/// The `{success: true}` body.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Success {
    pub success: bool,
}

pub(crate) const SUCCESS: Success = Success { success: true };
