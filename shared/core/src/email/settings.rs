//! The stored sender settings and the change an administrator makes to them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};

use super::{update_settings, PK, SETTINGS_SK};
use crate::fault::DataError;
use crate::items::{parse_time, time};
use crate::ports::Ports;
use crate::ports::Update;

/// The local part of the service's sender and reply-to addresses (the spec's enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SenderPrefix {
    #[default]
    Noreply,
    Support,
    Notifications,
    Team,
    Billing,
}

impl SenderPrefix {
    pub fn as_str(self) -> &'static str {
        match self {
            SenderPrefix::Noreply => "noreply",
            SenderPrefix::Support => "support",
            SenderPrefix::Notifications => "notifications",
            SenderPrefix::Team => "team",
            SenderPrefix::Billing => "billing",
        }
    }

    fn parse(raw: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(raw.to_string())).ok()
    }
}

/// A sender's display name: 1 to 80 characters, none of them control characters (it goes into
/// a mail header).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct SenderName(String);

/// Why a text is no [`SenderName`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadSenderName {
    #[error("senderName: 1 to 80 characters")]
    Length,
    #[error("senderName: no line breaks or control characters")]
    ControlCharacter,
}

impl TryFrom<String> for SenderName {
    type Error = BadSenderName;

    fn try_from(raw: String) -> Result<Self, BadSenderName> {
        let name = raw.trim();
        if name.is_empty() || name.chars().count() > 80 {
            return Err(BadSenderName::Length);
        }
        if name.chars().any(char::is_control) {
            return Err(BadSenderName::ControlCharacter);
        }
        Ok(SenderName(name.to_string()))
    }
}

/// `PUT /api/admin/emails/config`: the fields given are set, the others kept; `replyToPrefix:
/// null` removes the reply-to address.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EmailSettingsPatch {
    #[schema(value_type = Option<String>)]
    pub sender_prefix: Option<SenderPrefix>,
    #[schema(value_type = Option<String>)]
    pub sender_name: Option<SenderName>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub reply_to_prefix: Option<Option<SenderPrefix>>,
    /// Sandbox mode: mail only to the allowed recipients (an addition to the spec's fields).
    pub sandbox: Option<bool>,
}

/// Tells a field given as `null` (Some(None)) from one left out (None).
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// The settings as stored, defaults filled in.
#[derive(Debug, Clone, Default)]
pub(super) struct Stored {
    pub sender_prefix: SenderPrefix,
    /// None: the mail server's default name.
    pub sender_name: Option<String>,
    pub reply_to_prefix: Option<SenderPrefix>,
    pub sandbox: bool,
    pub last_test_at: Option<DateTime<Utc>>,
    pub last_test_status: Option<String>,
    pub error: Option<String>,
}

pub(super) async fn read(ports: &Ports) -> Result<Stored, DataError> {
    let Some(item) = ports.table.get(PK, SETTINGS_SK).await? else {
        return Ok(Stored::default());
    };
    Ok(Stored {
        sender_prefix: item
            .str("senderPrefix")
            .and_then(SenderPrefix::parse)
            .unwrap_or_default(),
        sender_name: item.str("senderName").map(str::to_string),
        reply_to_prefix: item.str("replyToPrefix").and_then(SenderPrefix::parse),
        sandbox: item.bool("sandbox").unwrap_or(false),
        last_test_at: parse_time(&item, "lastTestAt")?,
        last_test_status: item.str("lastTestStatus").map(str::to_string),
        error: item.str("error").map(str::to_string),
    })
}

pub(super) async fn write(ports: &Ports, patch: &EmailSettingsPatch) -> Result<(), DataError> {
    let mut update = Update::default();
    if let Some(prefix) = patch.sender_prefix {
        update = update.set("senderPrefix", prefix.as_str());
    }
    if let Some(SenderName(name)) = &patch.sender_name {
        update = update.set("senderName", name.as_str());
    }
    match patch.reply_to_prefix {
        Some(Some(prefix)) => update = update.set("replyToPrefix", prefix.as_str()),
        Some(None) => update = update.remove("replyToPrefix"),
        None => {}
    }
    if let Some(sandbox) = patch.sandbox {
        update = update.set("sandbox", sandbox);
    }
    update_settings(ports, update).await
}

/// Records a test's result: `error` None for a success.
pub(super) async fn record_test(
    ports: &Ports,
    at: DateTime<Utc>,
    error: Option<&str>,
) -> Result<(), DataError> {
    let update = Update::default().set("lastTestAt", time(at));
    let update = match error {
        None => update.set("lastTestStatus", "success").remove("error"),
        Some(error) => update.set("lastTestStatus", "failure").set("error", error),
    };
    update_settings(ports, update).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_tells_a_null_reply_to_from_a_missing_one_and_refuses_unknown_prefixes() {
        let cleared: EmailSettingsPatch =
            serde_json::from_str(r#"{"replyToPrefix": null}"#).unwrap();
        assert_eq!(cleared.reply_to_prefix, Some(None));
        let untouched: EmailSettingsPatch = serde_json::from_str("{}").unwrap();
        assert_eq!(untouched.reply_to_prefix, None);
        assert!(
            serde_json::from_str::<EmailSettingsPatch>(r#"{"senderPrefix": "admin"}"#).is_err()
        );
    }

    #[test]
    fn a_sender_name_cannot_break_a_header() {
        assert!(SenderName::try_from("Books\r\nBcc: x@example.com".to_string()).is_err());
        assert!(SenderName::try_from("  ".to_string()).is_err());
        assert!(SenderName::try_from("x".repeat(81)).is_err());
        assert_eq!(
            SenderName::try_from(" booktr ".to_string()).unwrap(),
            SenderName("booktr".into())
        );
    }
}
