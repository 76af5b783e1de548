//! Outgoing email, as a port: notification, digest and admin emails go through it (by way of
//! `booktr_core::email::Postman`, which adds the sender the administrator configured). Without a
//! relay the message is written to an outbox folder, or dropped; never logged.

use async_trait::async_trait;

/// A plain-text message to one recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingEmail {
    /// The sender's display name and address (`booktr <noreply@example.com>`).
    pub from_name: String,
    pub from_address: String,
    pub reply_to: Option<String>,
    pub to: String,
    pub subject: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailError {
    /// The recipient or the message cannot be sent as given (an invalid address).
    #[error("invalid email: {0}")]
    Invalid(String),
    /// The mail server failed or could not be reached; retrying later may succeed.
    #[error("mail transport failed: {0}")]
    Transport(String),
    /// No mail server is configured: messages go to an outbox or nowhere.
    #[error("no SMTP server is configured (set BOOKTR_SMTP_URL and BOOKTR_MAIL_FROM)")]
    NotConfigured,
}

/// Where mail goes, as the adapter was configured (for the admin's email settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailServer {
    /// False for a mailer without a relay.
    pub configured: bool,
    /// `smtp`; without a relay `outbox` (files in the data directory) or `log` (nothing kept).
    pub provider: &'static str,
    pub host: String,
    pub port: u16,
    /// The domain sender addresses are made on: `{prefix}@{domain}`.
    pub domain: String,
    /// The sender's name until an administrator sets one.
    pub default_name: String,
}

#[async_trait]
pub trait Mailer: Send + Sync {
    /// Hands the message to the mail system. MUST return `Ok` only once the message was accepted
    /// for delivery (by the relay, or kept or dropped by an adapter without one); it does not
    /// retry on its own. An adapter without a relay MUST NOT log the message's text or
    /// recipient: account emails carry links as good as a password.
    async fn send(&self, email: OutgoingEmail) -> Result<(), MailError>;

    /// Opens a connection to the mail server and closes it again: `Ok` when the server answered
    /// (and accepted the credentials), `NotConfigured` for a logging mailer.
    async fn check(&self) -> Result<(), MailError>;

    /// The server this mailer sends through.
    fn server(&self) -> MailServer;
}

/// `ana@example.com` -> `a***@example.com`: enough to tell deliveries apart in a log, not to
/// read an address out of it.
pub fn masked_email(address: &str) -> String {
    match address.rsplit_once('@') {
        Some((local, domain)) => {
            let first: String = local.chars().take(1).collect();
            format!("{first}***@{domain}")
        }
        None => "***".to_string(),
    }
}
