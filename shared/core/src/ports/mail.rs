//! Outgoing email, as a port: notification emails go through it; locally it only logs.

use async_trait::async_trait;

/// A plain-text message to one recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingEmail {
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
}

#[async_trait]
pub trait Mailer: Send + Sync {
    /// Hands the message to the mail system. MUST return `Ok` only once the message was accepted
    /// for delivery (by the relay, or logged by a logging adapter); it does not retry on its own.
    async fn send(&self, email: OutgoingEmail) -> Result<(), MailError>;
}
