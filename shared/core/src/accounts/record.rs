//! How accounts map onto table items (the layout is documented in docs/operations.md's data layout):
//!
//! | item | pk | sk | gsi1pk / gsi1sk |
//! |---|---|---|---|
//! | user | `USER#<id>` | `PROFILE` | |
//! | email claim | `EMAIL#<email>` | `EMAIL` | |
//! | API key | `APIKEY#<sha256 of key>` | `APIKEY` | `USER#<id>#APIKEYS` / `<createdAt>#<keyId>` |
//! | session | `SESSION#<sha256 of token>` | `SESSION` | `USER#<id>#SESSIONS` / `<createdAt>` |
//!
//! Keys and sessions are addressed by the hash of their secret so that authentication is one
//! strongly consistent read and a revocation (a delete) is effective at once. Also here: the
//! `SYSTEM` / `BOOTSTRAP` marker of the first admin, and the account links mailed to a user
//! (`USER#<id>` / `<purpose>#<sha256 of secret>`: `expiresAt`, `ttl`, `passwordGeneration`).
//!
//! This is the one module that names these items' attributes: the service reads and changes
//! them through the functions below.

use serde_json::Value;

use chrono::{DateTime, Utc};

use super::{ApiKey, User};
use crate::fault::{DataError, Fault};
pub use crate::items::{
    corrupt, opt_string, opt_time, parse_time, parsed, required_str, required_time, time, time_text,
};
use crate::ports::{Condition, Item, Update};
use crate::types::{Email, Scope};

pub const PROFILE: &str = "PROFILE";
pub const EMAIL_SK: &str = "EMAIL";
pub const SESSION_SK: &str = "SESSION";
pub const API_KEY_SK: &str = "APIKEY";
const SYSTEM_PK: &str = "SYSTEM";
const BOOTSTRAP_SK: &str = "BOOTSTRAP";

/// The profile's count of password changes (absent until the first, read as 0). A reset link
/// records it when it is mailed and sets a password only while it has not moved, so one change
/// ends every other link.
pub const PASSWORD_GENERATION: &str = "passwordGeneration";

pub use crate::items::user_pk;

/// A password reset link in the user's partition, by the hash of its secret.
pub fn reset_link_sk(secret_hash: &str) -> String {
    format!("RESET#{secret_hash}")
}

/// An email verification link in the user's partition, by the hash of its secret.
pub fn verify_link_sk(secret_hash: &str) -> String {
    format!("VERIFY#{secret_hash}")
}

pub fn email_pk(email: &Email) -> String {
    format!("EMAIL#{email}")
}

pub fn api_key_pk(key_hash: &str) -> String {
    format!("APIKEY#{key_hash}")
}

pub fn user_api_keys(user_id: &str) -> String {
    format!("USER#{user_id}#APIKEYS")
}

/// The index partition of a user's sessions (so account deletion finds them).
pub fn user_sessions(user_id: &str) -> String {
    format!("USER#{user_id}#SESSIONS")
}

pub fn session_pk(token_hash: &str) -> String {
    format!("SESSION#{token_hash}")
}

pub fn user_item(user: &User, password_hash: Option<&str>) -> Item {
    Item::new(user_pk(&user.id), PROFILE)
        .with("id", user.id.clone())
        .with("email", user.email.as_str())
        .with("name", user.name.clone())
        .with("image", user.image.clone())
        .with("role", user.role.as_str())
        .with("plan", user.plan.as_str())
        .with("emailVerified", user.email_verified)
        .with("twoFactorEnabled", user.two_factor_enabled)
        .with("preferredLanguage", user.preferred_language.clone())
        .with("passwordHash", password_hash)
        .with("createdAt", time(user.created_at))
}

/// The user with this id, if their account exists (a closed account's profile is gone).
pub async fn find_user(
    ports: &crate::ports::Ports,
    user_id: &str,
) -> Result<Option<User>, DataError> {
    let item = ports.table.get(&user_pk(user_id), PROFILE).await?;
    item.as_ref().map(user_from).transpose()
}

pub fn user_from(item: &Item) -> Result<User, DataError> {
    Ok(User {
        id: required_str(item, "id")?.to_string(),
        name: opt_string(item, "name"),
        email: Email::parse(required_str(item, "email")?).map_err(|_| corrupt(item, "email"))?,
        image: opt_string(item, "image"),
        role: parsed(item, "role")?,
        plan: parsed(item, "plan")?,
        email_verified: item.bool("emailVerified").unwrap_or(false),
        two_factor_enabled: item.bool("twoFactorEnabled").unwrap_or(false),
        preferred_language: opt_string(item, "preferredLanguage"),
        created_at: required_time(item, "createdAt")?,
    })
}

#[derive(Clone)]
pub struct StoredKey {
    pub key: ApiKey,
    pub user_id: String,
}

pub fn api_key_item(key_hash: &str, user_id: &str, key: &ApiKey) -> Item {
    let scopes: Vec<Value> = key.scopes.iter().map(|s| Value::from(s.as_str())).collect();
    Item::new(api_key_pk(key_hash), API_KEY_SK)
        .with("id", key.id.clone())
        .with("userId", user_id)
        .with("name", key.name.clone())
        .with("prefix", key.prefix.clone())
        .with("scopes", scopes)
        .with("lastUsedAt", opt_time(key.last_used_at))
        .with("expiresAt", opt_time(key.expires_at))
        .with("createdAt", time(key.created_at))
        .with("gsi1pk", user_api_keys(user_id))
        .with(
            "gsi1sk",
            format!("{}#{}", time_text(key.created_at), key.id),
        )
}

pub fn api_key_from(item: &Item) -> Result<StoredKey, DataError> {
    let scopes = item
        .attrs
        .get("scopes")
        .and_then(Value::as_array)
        .ok_or_else(|| corrupt(item, "scopes"))?
        .iter()
        .map(|v| v.as_str().and_then(|s| s.parse::<Scope>().ok()))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| corrupt(item, "scopes"))?;
    Ok(StoredKey {
        user_id: required_str(item, "userId")?.to_string(),
        key: ApiKey {
            id: required_str(item, "id")?.to_string(),
            name: required_str(item, "name")?.to_string(),
            prefix: required_str(item, "prefix")?.to_string(),
            scopes,
            last_used_at: parse_time(item, "lastUsedAt")?,
            expires_at: parse_time(item, "expiresAt")?,
            created_at: required_time(item, "createdAt")?,
        },
    })
}

/// The item an email address is claimed by, so that two accounts cannot share it.
pub fn email_claim(email: &Email, user_id: &str) -> Item {
    Item::new(email_pk(email), EMAIL_SK).with("userId", user_id)
}

/// The account an email claim (or a session) belongs to.
pub fn owner_of(item: &Item) -> Result<&str, Fault> {
    required_str(item, "userId")
}

/// The claim, key or session belongs to the user.
pub fn owned_by(user_id: &str) -> Condition {
    Condition::equals("userId", user_id)
}

/// Where the first admin's creation is recorded, so it happens once.
pub fn bootstrap_key() -> (&'static str, &'static str) {
    (SYSTEM_PK, BOOTSTRAP_SK)
}

pub fn bootstrap_marker(now: DateTime<Utc>) -> Item {
    Item::new(SYSTEM_PK, BOOTSTRAP_SK).with("at", time(now))
}

/// A profile's password: its hash (none for an account made by the CLI until one is set) and
/// its generation (see [`PASSWORD_GENERATION`]).
pub struct StoredPassword {
    pub hash: Option<String>,
    pub generation: i64,
}

pub fn password_of(profile: &Item) -> StoredPassword {
    StoredPassword {
        hash: opt_string(profile, "passwordHash"),
        generation: profile.i64(PASSWORD_GENERATION).unwrap_or(0),
    }
}

/// Sets a new password hash and moves the generation on.
pub fn password_changed(password_hash: String, now: DateTime<Utc>) -> Update {
    Update::default()
        .set("passwordHash", password_hash)
        .add(PASSWORD_GENERATION, 1)
        .set("updatedAt", time(now))
}

/// The password has not changed since `generation` was read (it only grows).
pub fn password_unchanged_since(generation: i64) -> Condition {
    Condition::AtMost(PASSWORD_GENERATION.to_string(), generation)
}

/// A change of the profile's details.
#[derive(Default)]
pub struct ProfileChange {
    pub name: Option<String>,
    pub preferred_language: Option<String>,
}

impl ProfileChange {
    pub fn into_update(self, now: DateTime<Utc>) -> Update {
        let mut update = Update::default();
        if let Some(name) = self.name {
            update = update.set("name", name);
        }
        if let Some(lang) = self.preferred_language {
            update = update.set("preferredLanguage", lang);
        }
        update.set("updatedAt", time(now))
    }
}

/// A session's item, under the hash of its token.
pub fn session_item(
    token_hash: &str,
    user_id: &str,
    now: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> Item {
    Item::new(session_pk(token_hash), SESSION_SK)
        .with("userId", user_id)
        .with("gsi1pk", user_sessions(user_id))
        .with("gsi1sk", time(now))
        .with("createdAt", time(now))
        .with("expiresAt", time(expires_at))
}

pub fn session_expires_at(item: &Item) -> Result<DateTime<Utc>, Fault> {
    required_time(item, "expiresAt")
}

/// The key was used now.
pub fn key_used(now: DateTime<Utc>) -> Update {
    Update::default().set("lastUsedAt", time(now))
}

/// The email address was verified.
pub fn email_verified() -> Update {
    Update::default().set("emailVerified", true)
}

/// An account link (a password reset, an email verification) under the hash of its secret;
/// a reset link records the password generation it was mailed in.
pub fn account_link_item(
    user_id: &str,
    sk: String,
    expires_at: DateTime<Utc>,
    generation: Option<i64>,
) -> Item {
    let mut item = Item::new(user_pk(user_id), sk)
        .with("expiresAt", time(expires_at))
        // DynamoDB removes it once past; the embedded store leaves it to the account's purge.
        .with("ttl", expires_at.timestamp());
    if let Some(generation) = generation {
        item = item.with(PASSWORD_GENERATION, generation);
    }
    item
}

/// An account link as stored.
pub struct AccountLink {
    pub expires_at: DateTime<Utc>,
    /// The password generation it was mailed in; a reset link mailed before generations were
    /// recorded (and every verification link) is of the first one.
    pub generation: i64,
}

pub fn account_link_from(item: &Item) -> Result<AccountLink, Fault> {
    Ok(AccountLink {
        expires_at: required_time(item, "expiresAt")?,
        generation: item.i64(PASSWORD_GENERATION).unwrap_or(0),
    })
}
