//! The postman: the sender settings, the tests, the sandbox's recipients, and every email sent.

use tracing::{info, warn};

use super::model::Stored;
use super::record::{self, recipient_sk, PK, RECIPIENT};
use super::{EmailConfig, EmailSettingsPatch, Outcome, SenderPrefix};

use crate::fault::DataError;
use crate::ports::Ports;
use crate::ports::{Condition, MailError, MailServer, OutgoingEmail, Query};
use crate::types::Email;

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
        stored: Stored,
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
