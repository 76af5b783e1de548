//! A local SMTP server for the email tests: it speaks enough of RFC 5321 for a real client
//! (lettre, as the service uses it) to connect, test the connection and send, keeps every
//! message it is given, and delivers nothing.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use crate::helpers::eventually;

/// One message as the sink received it.
#[derive(Debug, Clone)]
pub struct Delivered {
    /// The envelope's sender and recipients.
    pub mail_from: String,
    pub rcpt_to: Vec<String>,
    /// The message: headers, a blank line, the body (dot-stuffing undone).
    pub data: String,
}

impl Delivered {
    /// The value of the first header of that name (unfolded).
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.data.split("\r\n\r\n").next()?;
        let mut value: Option<String> = None;
        for line in head.split("\r\n") {
            if let Some(v) = value.as_mut() {
                if line.starts_with([' ', '\t']) {
                    v.push_str(line.trim_start());
                    continue;
                }
                break;
            }
            if let Some((n, v)) = line.split_once(':') {
                if n.eq_ignore_ascii_case(name) {
                    value = Some(v.trim().to_string());
                }
            }
        }
        value
    }

    /// The body as the reader sees it: quoted-printable decoded when the message is sent so
    /// (lettre chooses it for long lines).
    pub fn body(&self) -> String {
        let Some((head, body)) = self.data.split_once("\r\n\r\n") else {
            return String::new();
        };
        let quoted = head
            .to_ascii_lowercase()
            .contains("content-transfer-encoding: quoted-printable");
        let body = body.replace("\r\n", "\n");
        if !quoted {
            return body;
        }
        let bytes = body.replace("=\n", "").into_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            let escaped = (bytes[i] == b'=')
                .then(|| bytes.get(i + 1..i + 3))
                .flatten()
                .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
            match escaped {
                Some(byte) => {
                    out.push(byte);
                    i += 3;
                }
                None => {
                    out.push(bytes[i]);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[derive(Clone)]
pub struct SmtpSink {
    /// `smtp://127.0.0.1:{port}`: plain SMTP, no authentication.
    pub url: String,
    received: Arc<Mutex<Vec<Delivered>>>,
}

impl SmtpSink {
    pub async fn start() -> SmtpSink {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("smtp://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let store = received.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(session(stream, store.clone()));
            }
        });
        SmtpSink { url, received }
    }

    pub fn received(&self) -> Vec<Delivered> {
        self.received.lock().unwrap().clone()
    }

    /// Waits (up to 20 s) for a message to `to` whose subject contains `subject`.
    pub async fn wait_for(&self, to: &str, subject: &str) -> Delivered {
        eventually(Duration::from_secs(20), || async {
            let received = self.received();
            let found = received.iter().find(|m| {
                m.rcpt_to.iter().any(|r| r == to)
                    && m.header("subject").is_some_and(|s| s.contains(subject))
            });
            match found {
                Some(message) => Ok(message.clone()),
                None => Err(format!(
                    "no message to {to} about {subject:?}; received {received:#?}"
                )),
            }
        })
        .await
    }
}

fn address(argument: &str) -> String {
    argument
        .split_once('<')
        .and_then(|(_, rest)| rest.split_once('>'))
        .map(|(address, _)| address.to_string())
        .unwrap_or_default()
}

async fn session(stream: TcpStream, store: Arc<Mutex<Vec<Delivered>>>) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let _ = write.write_all(b"220 sink ESMTP ready\r\n").await;
    let mut mail_from = String::new();
    let mut rcpt_to = Vec::new();
    while let Ok(Some(line)) = lines.next_line().await {
        let verb = line
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_ascii_uppercase();
        let answer: &str = match verb.as_str() {
            "EHLO" => "250-sink\r\n250 8BITMIME\r\n",
            "HELO" | "NOOP" => "250 OK\r\n",
            "RSET" => {
                mail_from.clear();
                rcpt_to.clear();
                "250 OK\r\n"
            }
            "MAIL" => {
                mail_from = address(&line);
                "250 OK\r\n"
            }
            "RCPT" => {
                rcpt_to.push(address(&line));
                "250 OK\r\n"
            }
            "DATA" => {
                let _ = write.write_all(b"354 end with <CRLF>.<CRLF>\r\n").await;
                let mut data = Vec::new();
                while let Ok(Some(line)) = lines.next_line().await {
                    if line == "." {
                        break;
                    }
                    data.push(line.strip_prefix('.').map_or(line.clone(), str::to_string));
                }
                store.lock().unwrap().push(Delivered {
                    mail_from: std::mem::take(&mut mail_from),
                    rcpt_to: std::mem::take(&mut rcpt_to),
                    data: data.join("\r\n"),
                });
                "250 OK queued\r\n"
            }
            "QUIT" => {
                let _ = write.write_all(b"221 bye\r\n").await;
                return;
            }
            _ => "502 command not implemented\r\n",
        };
        if write.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}
