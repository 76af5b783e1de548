//! The stored sender settings and the change an administrator makes to them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::BadSenderName;

/// The local part of the service's sender and reply-to addresses (the spec's enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
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

    pub(super) fn parse(raw: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(raw.to_string())).ok()
    }
}

/// A sender's display name: 1 to 80 characters, none of them control characters (it goes into
/// a mail header).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct SenderName(String);

impl SenderName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
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

/// A change to the sender settings: the fields given are set, the others kept;
/// `reply_to_prefix: Some(None)` removes the reply-to address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmailSettingsPatch {
    pub sender_prefix: Option<SenderPrefix>,
    pub sender_name: Option<SenderName>,
    pub reply_to_prefix: Option<Option<SenderPrefix>>,
    /// Sandbox mode: mail only to the allowed recipients.
    pub sandbox: Option<bool>,
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

/// The email settings as the admin API shows them: the spec's EmailConfig, plus `senderPrefix`,
/// `replyToEmail`, `sandbox` and `allowedRecipients`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailConfig {
    /// A real SMTP server is configured (else mail goes to the outbox, or nowhere).
    pub configured: bool,
    /// The last connection or message test succeeded.
    pub connected: bool,
    /// What the last test failed with.
    pub error: Option<String>,
    pub provider: String,
    pub smtp_host: String,
    pub smtp_port: u16,
    pub sender_email: String,
    pub sender_name: String,
    pub last_test_at: Option<DateTime<Utc>>,
    /// `success` or `failure`.
    pub last_test_status: Option<String>,
    pub sender_prefix: SenderPrefix,
    pub reply_to_email: Option<String>,
    pub sandbox: bool,
    pub allowed_recipients: Vec<String>,
}

/// The answer to a test or verification: whether it worked, and what happened, for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub success: bool,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

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
