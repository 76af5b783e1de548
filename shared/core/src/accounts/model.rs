//! What accounts speak: a user, an API key, a caller and how they proved who they are.

use chrono::{DateTime, Utc};

use crate::types::{Email, Plan, Role, Scope};

/// The fixed prefix of every API key, so keys are recognisable in code, logs and secret scanners.
pub const API_KEY_PREFIX: &str = "bt_";

/// The name of the session cookie (the spec's).
pub const SESSION_COOKIE: &str = "auth.session-token";

/// The public profile of a user (the spec's UserProfile, plus `preferredLanguage`).
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub id: String,
    pub name: Option<String>,
    pub email: Email,
    pub image: Option<String>,
    pub role: Role,
    pub plan: Plan,
    pub email_verified: bool,
    pub two_factor_enabled: bool,
    pub preferred_language: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl User {
    /// API keys this user may hold at once; None is unlimited (role DEV).
    pub fn api_key_limit(&self) -> Option<usize> {
        (self.role != Role::Dev).then(|| self.plan.api_key_limit())
    }
}

/// An API key as listed: never the secret itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKey {
    pub id: String,
    pub name: String,
    pub prefix: String,
    pub scopes: Vec<Scope>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// How the caller proved who they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    ApiKey { id: String },
    Session,
}

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Principal {
    pub user: User,
    pub scopes: Vec<Scope>,
    pub credential: Credential,
}

impl Principal {
    pub fn may(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }
}

/// What is needed to create a user.
#[derive(Debug, Clone)]
pub struct NewUser {
    pub email: Email,
    pub name: Option<String>,
    pub password: Option<String>,
    pub role: Role,
    pub plan: Plan,
}

/// A freshly created key: the only time the secret exists outside the caller's hands.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub key: ApiKey,
    pub secret: String,
}
