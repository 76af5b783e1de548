//! The email settings an administrator reads and changes.

use booktr_core::email as domain;
use booktr_core::email::{SenderName, SenderPrefix as DomainPrefix};
use chrono::{DateTime, Utc};

use super::{as_themselves, present, wire, wire_enum};

as_themselves!(DomainPrefix, SenderName);

wire! {
    /// The email settings as the admin API shows them: the spec's EmailConfig, plus `senderPrefix`,
    /// `replyToEmail`, `sandbox` and `allowedRecipients`.
    #[serde(rename_all = "camelCase")]
    pub struct EmailConfig from domain::EmailConfig {
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
}

wire_enum! {
    /// The local part of the service's sender and reply-to addresses (the spec's enum).
    #[serde(rename_all = "lowercase")]
    pub enum SenderPrefix from DomainPrefix { Noreply, Support, Notifications, Team, Billing }
}

wire! {
    /// `PUT /api/admin/emails/config`: the fields given are set, the others kept; `replyToPrefix:
    /// null` removes the reply-to address.
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct EmailSettingsPatch into domain::EmailSettingsPatch {
        #[schema(value_type = Option<String>)]
        pub sender_prefix: Option<DomainPrefix>,
        #[schema(value_type = Option<String>)]
        pub sender_name: Option<SenderName>,
        #[serde(default, deserialize_with = "present")]
        #[schema(value_type = Option<String>)]
        pub reply_to_prefix: Option<Option<DomainPrefix>>,
        /// Sandbox mode: mail only to the allowed recipients (an addition to the spec's fields).
        pub sandbox: Option<bool>,
    }
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
}
