//! Mailers: [`LogMailer`] (the local default, it only logs) and [`SmtpMailer`] (lettre, for a
//! real relay configured with `BOOKTR_SMTP_URL` and `BOOKTR_MAIL_FROM`).

use std::time::Duration;

use async_trait::async_trait;
use booktr_ports::{MailError, MailServer, Mailer, OutgoingEmail};
use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::{Address, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use tracing::info;

/// Logs each message instead of sending it: without an SMTP relay a developer still sees what
/// would have been mailed.
#[derive(Debug, Clone)]
pub struct LogMailer {
    /// The site's host: sender addresses are shown on it.
    domain: String,
}

impl LogMailer {
    pub fn new(domain: impl Into<String>) -> Self {
        LogMailer {
            domain: domain.into(),
        }
    }
}

#[async_trait]
impl Mailer for LogMailer {
    async fn send(&self, email: OutgoingEmail) -> Result<(), MailError> {
        info!(from = %email.from_address, to = %booktr_ports::mail::masked_email(&email.to), subject = %email.subject, text = %email.text, "email (not sent: no SMTP relay configured)");
        Ok(())
    }

    async fn check(&self) -> Result<(), MailError> {
        Err(MailError::NotConfigured)
    }

    fn server(&self) -> MailServer {
        MailServer {
            configured: false,
            provider: "log",
            host: String::new(),
            port: 0,
            domain: self.domain.clone(),
            default_name: "booktr".into(),
        }
    }
}

/// Sends through an SMTP relay.
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    server: MailServer,
}

impl SmtpMailer {
    /// `url` as lettre reads it: `smtps://user:pass@host:465` (implicit TLS) or
    /// `smtp://user:pass@host:587?tls=required` (STARTTLS). `from` is the default sender, a
    /// mailbox such as `booktr <noreply@example.com>`: its domain is the one sender addresses are
    /// made on, its name the sender's name until an administrator sets one. Nothing connects
    /// until the first send or check.
    pub fn new(url: &str, from: &str) -> Result<Self, MailError> {
        let from: Mailbox = from
            .parse()
            .map_err(|e| MailError::Invalid(format!("sender '{from}': {e}")))?;
        // lettre's errors would echo the URL, which carries the password.
        let unreadable = || MailError::Invalid("the SMTP URL cannot be parsed".into());
        let parsed = url::Url::parse(url).map_err(|_| unreadable())?;
        let host = parsed.host_str().ok_or_else(unreadable)?.to_string();
        let tls = parsed
            .query_pairs()
            .find(|(k, _)| k == "tls")
            .map(|(_, v)| v.into_owned());
        // lettre's defaults: implicit TLS on 465, STARTTLS on 587, plain SMTP on 25.
        let port = parsed
            .port()
            .unwrap_or(match (parsed.scheme(), tls.as_deref()) {
                ("smtps", _) => 465,
                (_, Some("required" | "opportunistic")) => 587,
                _ => 25,
            });
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|_| unreadable())?
            // A stuck relay must not hold up the job that emits the event for long.
            .timeout(Some(Duration::from_secs(20)))
            .build();
        Ok(SmtpMailer {
            transport,
            server: MailServer {
                configured: true,
                provider: "smtp",
                host,
                port,
                domain: from.email.domain().to_string(),
                default_name: from.name.unwrap_or_else(|| "booktr".into()),
            },
        })
    }
}

fn mailbox(name: &str, address: &str) -> Result<Mailbox, MailError> {
    let address: Address = address
        .parse()
        .map_err(|e| MailError::Invalid(format!("address '{address}': {e}")))?;
    Ok(Mailbox::new(
        (!name.is_empty()).then(|| name.to_string()),
        address,
    ))
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, email: OutgoingEmail) -> Result<(), MailError> {
        let mut builder = Message::builder()
            .from(mailbox(&email.from_name, &email.from_address)?)
            .to(mailbox("", &email.to)?)
            .subject(email.subject)
            .header(ContentType::TEXT_PLAIN);
        if let Some(reply_to) = &email.reply_to {
            builder = builder.reply_to(mailbox("", reply_to)?);
        }
        let message = builder
            .body(email.text)
            .map_err(|e| MailError::Invalid(e.to_string()))?;
        self.transport
            .send(message)
            .await
            .map_err(|e| MailError::Transport(e.to_string()))?;
        Ok(())
    }

    async fn check(&self) -> Result<(), MailError> {
        match self.transport.test_connection().await {
            Ok(true) => Ok(()),
            Ok(false) => Err(MailError::Transport(
                "the server did not answer NOOP".into(),
            )),
            Err(e) => Err(MailError::Transport(e.to_string())),
        }
    }

    fn server(&self) -> MailServer {
        self.server.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn email(to: &str) -> OutgoingEmail {
        OutgoingEmail {
            from_name: "booktr".into(),
            from_address: "noreply@example.com".into(),
            reply_to: None,
            to: to.into(),
            subject: "Done".into(),
            text: "Your book is ready.".into(),
        }
    }

    #[tokio::test]
    async fn the_log_mailer_accepts_every_message_and_reports_itself_unconfigured() {
        let mailer = LogMailer::new("booktr.example");
        assert_eq!(mailer.send(email("reader@example.com")).await, Ok(()));
        assert_eq!(mailer.check().await, Err(MailError::NotConfigured));
        assert!(!mailer.server().configured);
    }

    #[test]
    fn an_smtp_mailer_is_built_from_a_url_without_connecting() {
        let mailer = SmtpMailer::new(
            "smtps://user:pass@mail.example.com",
            "Books <noreply@example.com>",
        )
        .unwrap();
        let server = mailer.server();
        assert_eq!(
            (server.host.as_str(), server.port),
            ("mail.example.com", 465)
        );
        assert_eq!(server.domain, "example.com");
        assert_eq!(server.default_name, "Books");
        assert!(matches!(
            SmtpMailer::new("smtps://user:pass@mail.example.com:465", "not an address"),
            Err(MailError::Invalid(_))
        ));
    }

    #[tokio::test]
    async fn an_invalid_recipient_is_refused_before_sending() {
        let mailer =
            SmtpMailer::new("smtp://mail.example.com:2525", "noreply@example.com").expect("mailer");
        let result = mailer.send(email("nobody")).await;
        assert!(matches!(result, Err(MailError::Invalid(_))));
    }
}
