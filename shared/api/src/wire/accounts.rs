//! Accounts: a user's profile and their API keys as listed.

use booktr_core::accounts as domain;
use booktr_core::types::{Plan, Role, Scope};
use chrono::{DateTime, Utc};

use super::types::Email;
use super::wire;

wire! {
    /// The public profile of a user (the spec's UserProfile, plus `preferredLanguage`).
    #[serde(rename_all = "camelCase")]
    pub struct User from domain::User {
        pub id: String,
        pub name: Option<String>,
        pub email: Email,
        pub image: Option<String>,
        #[schema(value_type = super::types::Role)]
        pub role: Role,
        #[schema(value_type = super::types::Plan)]
        pub plan: Plan,
        pub email_verified: bool,
        pub two_factor_enabled: bool,
        pub preferred_language: Option<String>,
        pub created_at: DateTime<Utc>,
    }
}

wire! {
    /// An API key as listed: never the secret itself.
    #[serde(rename_all = "camelCase")]
    pub struct ApiKey from domain::ApiKey {
        pub id: String,
        pub name: String,
        pub prefix: String,
        #[schema(value_type = Vec<super::types::Scope>)]
        pub scopes: Vec<Scope>,
        pub last_used_at: Option<DateTime<Utc>>,
        pub expires_at: Option<DateTime<Utc>>,
        pub created_at: DateTime<Utc>,
    }
}
