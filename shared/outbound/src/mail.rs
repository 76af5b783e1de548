//! Mailers, one chosen from configuration: [`SmtpMailer`] (lettre, for a real relay configured
//! with `BOOKTR_SMTP_URL` and `BOOKTR_MAIL_FROM`); without a relay, [`OutboxMailer`] where there
//! is a data directory (`booktr serve`: each message a file a developer can open) and
//! [`LogMailer`] where there is none (a Lambda).
//!
//! Without a relay nothing of a message reaches the log: account emails carry reset and
//! verification links, which are as good as a password to whoever reads them, and a log is read
//! by more people (and kept longer) than a mailbox.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use booktr_ports::{MailError, MailServer, Mailer, OutgoingEmail};
use lettre::message::header::{ContentTransferEncoding, ContentType};
use lettre::message::{Body, Mailbox};
use lettre::{Address, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use tracing::info;

/// Where there is no relay and no data directory (managed mode): says that a message was not
/// sent, and nothing of what it says or whom it was for.
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
        // Not the subject either: a notification's names the user's book.
        info!(
            from = %email.from_address,
            text_bytes = email.text.len(),
            "email not sent: no SMTP relay configured (set BOOKTR_SMTP_URL and BOOKTR_MAIL_FROM)"
        );
        Ok(())
    }

    async fn check(&self) -> Result<(), MailError> {
        Err(MailError::NotConfigured)
    }

    fn server(&self) -> MailServer {
        unconfigured("log", &self.domain)
    }
}

/// Where there is no relay but a data directory (worker-queue mode): writes each message, as
/// the relay would have received it, to a file of its own in the outbox folder,
/// `<UTC time>-<id>.eml`, readable by the service's user only. The log says where.
#[derive(Debug, Clone)]
pub struct OutboxMailer {
    dir: PathBuf,
    domain: String,
}

impl OutboxMailer {
    /// The outbox at `dir`, made if missing.
    pub fn open(dir: &Path, domain: impl Into<String>) -> Result<Self, MailError> {
        std::fs::create_dir_all(dir).map_err(|e| {
            MailError::Transport(format!("making the outbox {}: {e}", dir.display()))
        })?;
        Ok(OutboxMailer {
            dir: dir.to_path_buf(),
            domain: domain.into(),
        })
    }

    /// The folder the messages are written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[async_trait]
impl Mailer for OutboxMailer {
    async fn send(&self, email: OutgoingEmail) -> Result<(), MailError> {
        let bytes = message(email, Encoding::AsIs)?.formatted();
        let name = format!(
            "{}-{}.eml",
            chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ"),
            booktr_ports::ids::new_id()
        );
        let path = self.dir.join(&name);
        let written = tokio::task::spawn_blocking({
            let (dir, path) = (self.dir.clone(), path.clone());
            move || write_private(&dir, &path, &bytes)
        })
        .await
        .map_err(|e| MailError::Transport(format!("writing to the outbox: {e}")))?;
        written.map_err(|e| {
            MailError::Transport(format!("writing {} to the outbox: {e}", path.display()))
        })?;
        info!(
            path = %path.display(),
            "email written to the outbox (not sent: no SMTP relay configured)"
        );
        Ok(())
    }

    async fn check(&self) -> Result<(), MailError> {
        Err(MailError::NotConfigured)
    }

    fn server(&self) -> MailServer {
        unconfigured("outbox", &self.domain)
    }
}

/// Writes `bytes` to `path` whole or not at all (a temporary file renamed), readable by the
/// owner only: a message may hold a reset link.
fn write_private(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let partial = dir.join(format!(
        ".{}.partial",
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    let mut file = options.open(&partial)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&partial, path)
}

fn unconfigured(provider: &'static str, domain: &str) -> MailServer {
    MailServer {
        configured: false,
        provider,
        host: String::new(),
        port: 0,
        domain: domain.to_string(),
        default_name: "booktr".into(),
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

/// How a message's text is encoded.
#[derive(Clone, Copy)]
enum Encoding {
    /// What a relay takes: lettre's choice (quoted-printable once a line passes 76 characters,
    /// which splits a link and writes its `=` as `=3D`).
    ForRelay,
    /// The text as it is (`Content-Transfer-Encoding: binary`): a file is read by a person,
    /// who copies the link out of it.
    AsIs,
}

/// The message as a relay receives it, or as a file keeps it.
fn message(email: OutgoingEmail, encoding: Encoding) -> Result<Message, MailError> {
    let mut builder = Message::builder()
        .from(mailbox(&email.from_name, &email.from_address)?)
        .to(mailbox("", &email.to)?)
        .subject(email.subject)
        .header(ContentType::TEXT_PLAIN);
    if let Some(reply_to) = &email.reply_to {
        builder = builder.reply_to(mailbox("", reply_to)?);
    }
    let body = match encoding {
        Encoding::ForRelay => Body::new(email.text),
        Encoding::AsIs => Body::new_with_encoding(email.text, ContentTransferEncoding::Binary)
            .map_err(|_| MailError::Invalid("the text cannot be written as it is".into()))?,
    };
    builder
        .body(body)
        .map_err(|e| MailError::Invalid(e.to_string()))
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, email: OutgoingEmail) -> Result<(), MailError> {
        let message = message(email, Encoding::ForRelay)?;
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

    /// What `work` logs at INFO, as text.
    async fn logged<F: std::future::Future>(work: F) -> (F::Output, String) {
        #[derive(Clone, Default)]
        struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer({
                let buffer = buffer.clone();
                move || buffer.clone()
            })
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        let output = work.await;
        drop(guard);
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        (output, text)
    }

    fn secret_email() -> OutgoingEmail {
        OutgoingEmail {
            subject: "Reset your booktr password".into(),
            text: format!(
                "Choose a new password within an hour: https://books.example/reset?token=u1.SECRET42{}\n",
                "x".repeat(40)
            ),
            ..email("reader@example.com")
        }
    }

    #[tokio::test]
    async fn the_log_mailer_says_a_message_was_not_sent_and_nothing_of_it() {
        let mailer = LogMailer::new("booktr.example");
        let (sent, log) = logged(mailer.send(secret_email())).await;
        assert_eq!(sent, Ok(()));
        assert!(log.contains("email not sent"), "{log}");
        for secret in ["SECRET42", "reset?token", "reader", "Reset your"] {
            assert!(!log.contains(secret), "{secret} in {log}");
        }
        assert_eq!(mailer.check().await, Err(MailError::NotConfigured));
        assert!(!mailer.server().configured);
    }

    #[tokio::test]
    async fn the_outbox_mailer_writes_each_message_to_a_file_of_its_own_and_logs_only_where() {
        let data = tempfile::tempdir().unwrap();
        let outbox = data.path().join("outbox");
        let mailer = OutboxMailer::open(&outbox, "booktr.example").unwrap();
        let (sent, log) = logged(async {
            mailer.send(secret_email()).await.unwrap();
            mailer.send(email("other@example.com")).await
        })
        .await;
        assert_eq!(sent, Ok(()));
        let mut files: Vec<_> = std::fs::read_dir(&outbox)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        assert_eq!(files.len(), 2, "{files:?}");
        for file in &files {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            assert!(name.ends_with(".eml") && !name.starts_with('.'), "{name}");
            assert!(log.contains(&name), "{log}");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(file).unwrap().permissions().mode();
                assert_eq!(mode & 0o077, 0, "{name} is readable by others");
            }
        }
        let reset = files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .find(|m| m.contains("To: reader@example.com"))
            .expect("the reset message");
        assert!(
            reset.contains("Subject: Reset your booktr password"),
            "{reset}"
        );
        // Whole, as it was written: a long line is not folded, an `=` not escaped.
        assert!(
            reset.contains(&format!("reset?token=u1.SECRET42{}", "x".repeat(40))),
            "{reset}"
        );
        for secret in ["SECRET42", "reader@", "Reset your"] {
            assert!(!log.contains(secret), "{secret} in {log}");
        }
        assert_eq!(mailer.server().provider, "outbox");
        assert_eq!(mailer.check().await, Err(MailError::NotConfigured));
        let refused = mailer.send(email("nobody")).await;
        assert!(matches!(refused, Err(MailError::Invalid(_))), "{refused:?}");
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
