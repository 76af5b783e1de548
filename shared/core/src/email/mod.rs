//! Email as the service sends it: the administrator's sender settings (`GET/PUT
//! /api/admin/emails/config`), connection and message tests, the sandbox's allowed recipients,
//! and [`Postman::send`], which every email (notifications, digests, tests) goes through so
//! that a settings change applies to the next message.
//!
//! Items, all in the partition `EMAIL`:
//!
//! | item | sk | attributes |
//! |---|---|---|
//! | settings | `SETTINGS` | senderPrefix, senderName, replyToPrefix, sandbox, lastTestAt, lastTestStatus, error |
//! | allowed recipient (sandbox) | `RECIPIENT#{email}` | email, verifiedAt |
//!
//! Sandbox mode (the `sandbox` setting, off by default; for a staging instance on a real
//! relay, so that it cannot mail real users): mail goes only to allowed recipients. An address becomes one when an administrator asks to verify it
//! and the verification message to it was accepted by the relay (an SMTP relay has no click-to-
//! confirm step; the message tells its reader why they got it). Outside sandbox mode every
//! address receives mail and the list is kept but not consulted.

mod record;
mod recovery;
mod settings;

use chrono::{DateTime, Utc};

use tracing::{info, warn};

pub use recovery::Recovery;
pub use settings::{EmailSettingsPatch, SenderName, SenderPrefix};

use crate::fault::DataError;
use crate::ports::Ports;
use crate::ports::{
    Condition, Item, MailError, MailServer, OutgoingEmail, Query, StoreError, Update,
};
use crate::types::Email;

const PK: &str = "EMAIL";
const SETTINGS_SK: &str = "SETTINGS";
const RECIPIENT: &str = "RECIPIENT#";

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

/// Sends the service's email with the configured sender. Cheap to clone.
#[derive(Clone)]
pub struct Postman {
    ports: Ports,
}

impl Postman {
    pub fn new(ports: Ports) -> Self {
        Postman { ports }
    }

    /// Sends one plain-text message from the configured sender. In sandbox mode a recipient who
    /// is not allowed gets nothing (`Invalid`).
    pub async fn send(&self, to: &str, subject: &str, text: &str) -> Result<(), MailError> {
        let stored = record::read(&self.ports)
            .await
            .map_err(|e| MailError::Transport(format!("email settings: {e}")))?;
        if stored.sandbox {
            let allowed = self
                .is_allowed(to)
                .await
                .map_err(|e| MailError::Transport(format!("allowed recipients: {e}")))?;
            if !allowed {
                return Err(MailError::Invalid(format!(
                    "{to} is not an allowed recipient in sandbox mode"
                )));
            }
        }
        self.send_unchecked(stored, to, subject, text).await
    }

    /// Sends with the given settings, without the sandbox's check.
    async fn send_unchecked(
        &self,
        stored: settings::Stored,
        to: &str,
        subject: &str,
        text: &str,
    ) -> Result<(), MailError> {
        let server = self.ports.mailer.server();
        let email = OutgoingEmail {
            from_address: address(stored.sender_prefix, &server),
            reply_to: stored.reply_to_prefix.map(|p| address(p, &server)),
            from_name: stored.sender_name.unwrap_or(server.default_name),
            to: to.to_string(),
            subject: subject.to_string(),
            text: text.to_string(),
        };
        self.ports.mailer.send(email).await
    }

    pub async fn config(&self) -> Result<EmailConfig, DataError> {
        let stored = record::read(&self.ports).await?;
        let server = self.ports.mailer.server();
        let allowed_recipients = self
            .ports
            .table
            .query(Query::partition(PK).prefix(RECIPIENT))
            .await?
            .iter()
            .filter_map(record::recipient_of)
            .collect();
        let sender_email = address(stored.sender_prefix, &server);
        let reply_to_email = stored.reply_to_prefix.map(|p| address(p, &server));
        Ok(EmailConfig {
            configured: server.configured,
            connected: stored.last_test_status.as_deref() == Some("success"),
            error: stored.error,
            provider: server.provider.to_string(),
            smtp_host: server.host,
            smtp_port: server.port,
            sender_email,
            sender_name: stored.sender_name.unwrap_or(server.default_name),
            last_test_at: stored.last_test_at,
            last_test_status: stored.last_test_status,
            sender_prefix: stored.sender_prefix,
            reply_to_email,
            sandbox: stored.sandbox,
            allowed_recipients,
        })
    }

    /// Applies the patch; returns the sender address as it now is.
    pub async fn update(&self, patch: EmailSettingsPatch) -> Result<String, DataError> {
        record::write(&self.ports, &patch).await?;
        let stored = record::read(&self.ports).await?;
        info!(
            sender_prefix = stored.sender_prefix.as_str(),
            "email settings changed"
        );
        Ok(address(stored.sender_prefix, &self.ports.mailer.server()))
    }

    /// Without `to`: connects to the SMTP server and reports. With `to`: sends a test message
    /// there. Either way the result is recorded as the last test.
    pub async fn test(&self, to: Option<&Email>) -> Result<Outcome, DataError> {
        let result = match to {
            None => self.ports.mailer.check().await.map(|()| {
                let server = self.ports.mailer.server();
                format!("Connected to {}:{}.", server.host, server.port)
            }),
            Some(to) => self
                .send(
                    to.as_str(),
                    "booktr test message",
                    "This is a test message from booktr's email settings.\n\nIf you can read it, the service's email works.\n",
                )
                .await
                .map(|()| format!("A test message was sent to {to}.")),
        };
        let now = self.ports.clock.now();
        let outcome = match result {
            Ok(message) => {
                record::record_test(&self.ports, now, None).await?;
                Outcome {
                    success: true,
                    message,
                }
            }
            Err(e) => {
                warn!(error = %e, "email test failed");
                record::record_test(&self.ports, now, Some(&e.to_string())).await?;
                Outcome {
                    success: false,
                    message: e.to_string(),
                }
            }
        };
        Ok(outcome)
    }

    /// Sends `email` a verification message; once the relay accepted it, the address is an
    /// allowed recipient in sandbox mode.
    pub async fn verify(&self, email: &Email) -> Result<Outcome, DataError> {
        let text = format!(
            "This address ({email}) was added by an administrator of booktr to the recipients \
             allowed to receive its email while it runs in sandbox mode.\n\nIf you did not expect \
             this, you can ignore this message.\n"
        );
        // The message must reach the address before it is allowed, yet in sandbox mode only
        // allowed addresses get mail: the verification message itself goes straight out.
        let stored = record::read(&self.ports).await?;
        let sent = self
            .send_unchecked(stored, email.as_str(), "booktr: verify this address", &text)
            .await;
        if let Err(e) = sent {
            return Ok(Outcome {
                success: false,
                message: format!("The verification message could not be sent: {e}"),
            });
        }
        let item = record::recipient_item(email, self.ports.clock.now());
        self.ports.table.put(item, Condition::Always).await?;
        Ok(Outcome {
            success: true,
            message: format!(
                "A verification message was sent to {email}; it is now an allowed recipient in sandbox mode."
            ),
        })
    }

    /// Removes `email` from the allowed recipients (the deprecated verification removal).
    pub async fn unverify(&self, email: &Email) -> Result<Outcome, DataError> {
        self.ports
            .table
            .delete(PK, &recipient_sk(email), Condition::Always)
            .await?;
        Ok(Outcome {
            success: true,
            message: format!(
                "Deprecated: the SMTP provider needs no address verification. {email} is no longer an allowed recipient in sandbox mode."
            ),
        })
    }

    async fn is_allowed(&self, to: &str) -> Result<bool, DataError> {
        let Ok(email) = Email::parse(to) else {
            return Ok(false);
        };
        Ok(self
            .ports
            .table
            .get(PK, &recipient_sk(&email))
            .await?
            .is_some())
    }
}

/// `{prefix}@{domain}` on the mail server's domain.
fn address(prefix: SenderPrefix, server: &MailServer) -> String {
    format!("{}@{}", prefix.as_str(), server.domain)
}

fn recipient_sk(email: &Email) -> String {
    format!("{RECIPIENT}{email}")
}

/// Makes sure the settings item exists, so that partial updates have something to update.
async fn ensure_settings_item(ports: &Ports) -> Result<(), DataError> {
    match ports
        .table
        .put(Item::new(PK, SETTINGS_SK), Condition::NotExists)
        .await
    {
        Ok(()) | Err(StoreError::Conflict) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

async fn update_settings(ports: &Ports, update: Update) -> Result<(), DataError> {
    ensure_settings_item(ports).await?;
    ports
        .table
        .update(PK, SETTINGS_SK, update, Condition::Always)
        .await?;
    Ok(())
}
