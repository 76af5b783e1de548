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
//! strongly consistent read and a revocation (a delete) is effective at once.

use serde_json::Value;

use super::{ApiKey, User};
use crate::fault::DataError;
pub use crate::items::{
    corrupt, opt_string, opt_time, parse_time, parsed, required_str, required_time, time, time_text,
};
use crate::ports::Item;
use crate::types::{Email, Scope};

pub const PROFILE: &str = "PROFILE";

/// The profile's count of password changes (absent until the first, read as 0). A reset link
/// records it when it is mailed and sets a password only while it has not moved, so one change
/// ends every other link.
pub const PASSWORD_GENERATION: &str = "passwordGeneration";

pub fn user_pk(user_id: &str) -> String {
    format!("USER#{user_id}")
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
    Item::new(api_key_pk(key_hash), "APIKEY")
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
