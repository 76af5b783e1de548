//! Mailers: [`LogMailer`] (the local default, it only logs) and [`SmtpMailer`] (lettre, for a
//! real relay configured with `BOOKTR_SMTP_URL` and `BOOKTR_MAIL_FROM`).

use std::time::Duration;

use async_trait::async_trait;
use booktr_core::ports::{MailError, Mailer, OutgoingEmail};
use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use tracing::info;

/// Logs each message instead of sending it: without an SMTP relay a developer still sees what
/// would have been mailed.
#[derive(Debug, Default, Clone, Copy)]
pub struct LogMailer;

#[async_trait]
impl Mailer for LogMailer {
    async fn send(&self, email: OutgoingEmail) -> Result<(), MailError> {
        info!(to = %email.to, subject = %email.subject, text = %email.text, "email (not sent: no SMTP relay configured)");
        Ok(())
    }
}

/// Sends through an SMTP relay.
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl SmtpMailer {
    /// `url` as lettre reads it: `smtps://user:pass@host:465` (implicit TLS) or
    /// `smtp://user:pass@host:587?tls=required` (STARTTLS). `from` is a mailbox such as
    /// `booktr <noreply@example.com>`. Nothing connects until the first send.
    pub fn new(url: &str, from: &str) -> Result<Self, MailError> {
        let from: Mailbox = from
            .parse()
            .map_err(|e| MailError::Invalid(format!("sender '{from}': {e}")))?;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            // lettre's error would echo the URL, which carries the password.
            .map_err(|_| MailError::Invalid("the SMTP URL cannot be parsed".into()))?
            // A stuck relay must not hold up the job that emits the event for long.
            .timeout(Some(Duration::from_secs(20)))
            .build();
        Ok(SmtpMailer { transport, from })
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, email: OutgoingEmail) -> Result<(), MailError> {
        let to: Mailbox = email
            .to
            .parse()
            .map_err(|e| MailError::Invalid(format!("recipient '{}': {e}", email.to)))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(email.subject)
            .header(ContentType::TEXT_PLAIN)
            .body(email.text)
            .map_err(|e| MailError::Invalid(e.to_string()))?;
        self.transport
            .send(message)
            .await
            .map_err(|e| MailError::Transport(e.to_string()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_log_mailer_accepts_every_message() {
        let email = OutgoingEmail {
            to: "reader@example.com".into(),
            subject: "Done".into(),
            text: "Your book is ready.".into(),
        };
        assert_eq!(LogMailer.send(email).await, Ok(()));
    }

    #[test]
    fn an_smtp_mailer_is_built_from_a_url_without_connecting() {
        assert!(SmtpMailer::new(
            "smtps://user:pass@mail.example.com:465",
            "booktr <noreply@example.com>"
        )
        .is_ok());
        assert!(matches!(
            SmtpMailer::new("smtps://user:pass@mail.example.com:465", "not an address"),
            Err(MailError::Invalid(_))
        ));
    }

    #[tokio::test]
    async fn an_invalid_recipient_is_refused_before_sending() {
        let mailer =
            SmtpMailer::new("smtp://mail.example.com:2525", "noreply@example.com").expect("mailer");
        let result = mailer
            .send(OutgoingEmail {
                to: "nobody".into(),
                subject: "x".into(),
                text: "y".into(),
            })
            .await;
        assert!(matches!(result, Err(MailError::Invalid(_))));
    }
}
