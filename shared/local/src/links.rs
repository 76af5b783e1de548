//! The link port in worker-queue mode: download links and upload forms that point at this
//! server (`GET /files/{key}`, `POST /uploads`), signed with HMAC-SHA256 under a secret only the
//! server knows (the data directory's link key).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use booktr_ports::{BlobKey, Clock, LinkCheck, Links, StoreError, UploadForm};
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Links to this server, signed with a secret only the server knows.
pub struct SignedLinks {
    public_url: String,
    secret: Vec<u8>,
    clock: Arc<dyn Clock>,
}

impl SignedLinks {
    pub fn new(public_url: &str, secret: Vec<u8>, clock: Arc<dyn Clock>) -> Self {
        SignedLinks {
            public_url: public_url.trim_end_matches('/').to_string(),
            secret,
            clock,
        }
    }

    fn mac(&self, key: &str, name: &str, expires: i64) -> Hmac<Sha256> {
        self.mac_of(&["download", key, name, &expires.to_string()])
    }

    fn upload_mac(&self, key: &str, max_bytes: u64, expires: i64) -> Hmac<Sha256> {
        self.mac_of(&["upload", key, &max_bytes.to_string(), &expires.to_string()])
    }

    /// The purpose comes first, so a download link's signature never passes for an upload
    /// form's (or the reverse).
    fn mac_of(&self, parts: &[&str]) -> Hmac<Sha256> {
        // A key of any length is accepted by HMAC; this cannot fail.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.secret)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        // Length-prefixed fields, so no two lists of fields sign the same bytes.
        for part in parts {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        mac
    }

    fn check(&self, mac: Hmac<Sha256>, expires: i64, signature: &str) -> LinkCheck {
        let Ok(given) = hex::decode(signature) else {
            return LinkCheck::Invalid;
        };
        // Constant-time comparison, so the signature cannot be found byte by byte.
        if mac.verify_slice(&given).is_err() {
            return LinkCheck::Invalid;
        }
        let now: DateTime<Utc> = self.clock.now();
        if now.timestamp() > expires {
            LinkCheck::Expired
        } else {
            LinkCheck::Valid
        }
    }
}

#[async_trait]
impl Links for SignedLinks {
    async fn download_url(
        &self,
        key: &BlobKey,
        file_name: &str,
        ttl: Duration,
    ) -> Result<String, StoreError> {
        let ttl = chrono::Duration::from_std(ttl)
            .map_err(|e| StoreError::Invalid(format!("link lifetime: {e}")))?;
        let expires = (self.clock.now() + ttl).timestamp();
        let signature = hex::encode(
            self.mac(key.as_str(), file_name, expires)
                .finalize()
                .into_bytes(),
        );
        Ok(format!(
            "{}/files/{}?name={}&expires={expires}&signature={signature}",
            self.public_url,
            key.as_str(),
            percent_encode(file_name),
        ))
    }

    fn verify(&self, key: &str, name: &str, expires: i64, signature: &str) -> LinkCheck {
        self.check(self.mac(key, name, expires), expires, signature)
    }

    async fn upload_form(
        &self,
        key: &BlobKey,
        max_bytes: u64,
        ttl: Duration,
    ) -> Result<UploadForm, StoreError> {
        let ttl = chrono::Duration::from_std(ttl)
            .map_err(|e| StoreError::Invalid(format!("form lifetime: {e}")))?;
        let expires_at = self.clock.now() + ttl;
        let expires = expires_at.timestamp();
        let signature = hex::encode(
            self.upload_mac(key.as_str(), max_bytes, expires)
                .finalize()
                .into_bytes(),
        );
        Ok(UploadForm {
            url: format!("{}/uploads", self.public_url),
            fields: vec![
                ("key".into(), key.as_str().into()),
                ("maxBytes".into(), max_bytes.to_string()),
                ("expires".into(), expires.to_string()),
                ("signature".into(), signature),
            ],
            expires_at,
        })
    }

    fn verify_upload(&self, key: &str, max_bytes: u64, expires: i64, signature: &str) -> LinkCheck {
        self.check(self.upload_mac(key, max_bytes, expires), expires, signature)
    }
}

/// Percent-encodes everything but unreserved characters (RFC 3986), for a query value.
fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use booktr_ports::ManualClock;

    use super::*;

    fn parts(url: &str) -> (String, String, i64, String) {
        let (path, query) = url.split_once('?').unwrap();
        let key = path.split_once("/files/").unwrap().1.to_string();
        let get = |name: &str| {
            query
                .split('&')
                .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
                .unwrap()
                .to_string()
        };
        (
            key,
            get("name"),
            get("expires").parse().unwrap(),
            get("signature"),
        )
    }

    #[tokio::test]
    async fn a_signed_link_is_valid_for_an_hour_and_refuses_any_change() {
        let clock = Arc::new(ManualClock::new(Utc::now()));
        let links = SignedLinks::new("http://host/", b"secret".to_vec(), clock.clone());
        let key = BlobKey::parse("books/b1/output/book.epub").unwrap();
        let url = links
            .download_url(&key, "book.epub", Duration::from_secs(3600))
            .await
            .unwrap();
        assert!(url.starts_with("http://host/files/books/b1/output/book.epub?"));
        let (k, name, expires, sig) = parts(&url);
        assert_eq!(links.verify(&k, &name, expires, &sig), LinkCheck::Valid);
        assert_eq!(
            links.verify("books/b2/output/book.epub", &name, expires, &sig),
            LinkCheck::Invalid
        );
        assert_eq!(
            links.verify(&k, &name, expires + 3600, &sig),
            LinkCheck::Invalid
        );
        assert_eq!(
            links.verify(&k, "x.epub", expires, &sig),
            LinkCheck::Invalid
        );
        assert_eq!(links.verify(&k, &name, expires, "zz"), LinkCheck::Invalid);
        clock.advance(chrono::Duration::minutes(61));
        assert_eq!(links.verify(&k, &name, expires, &sig), LinkCheck::Expired);
    }

    #[tokio::test]
    async fn an_upload_form_is_valid_for_its_key_size_and_time_and_is_no_download_link() {
        let clock = Arc::new(ManualClock::new(Utc::now()));
        let links = SignedLinks::new("http://host/", b"secret".to_vec(), clock.clone());
        let key = BlobKey::parse("uploads/u1/x1").unwrap();
        let form = links
            .upload_form(&key, 1000, Duration::from_secs(900))
            .await
            .unwrap();
        assert_eq!(form.url, "http://host/uploads");
        let field = |name: &str| {
            form.fields
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        let (expires, sig) = (field("expires").parse().unwrap(), field("signature"));
        assert_eq!(field("key"), "uploads/u1/x1");
        assert_eq!(field("maxBytes"), "1000");
        assert_eq!(expires, form.expires_at.timestamp());
        let verify = |k: &str, max: u64, e: i64| links.verify_upload(k, max, e, &sig);
        assert_eq!(verify("uploads/u1/x1", 1000, expires), LinkCheck::Valid);
        assert_eq!(verify("uploads/u2/x1", 1000, expires), LinkCheck::Invalid);
        assert_eq!(verify("uploads/u1/x1", 1001, expires), LinkCheck::Invalid);
        assert_eq!(
            verify("uploads/u1/x1", 1000, expires + 60),
            LinkCheck::Invalid
        );
        assert_eq!(
            links.verify("uploads/u1/x1", "1000", expires, &sig),
            LinkCheck::Invalid
        );
        clock.advance(chrono::Duration::minutes(16));
        assert_eq!(verify("uploads/u1/x1", 1000, expires), LinkCheck::Expired);
    }
}
