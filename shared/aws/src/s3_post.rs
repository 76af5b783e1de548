//! Browser-based uploads to S3: a POST form whose policy S3 checks (the key, a size range, an
//! expiry), signed with Signature Version 4. The SDK presigns requests but not POST policies, so
//! the policy is built and signed here, from the same credentials the client uses.

use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The signing identity of one form.
pub struct Signer<'a> {
    pub access_key_id: &'a str,
    pub secret_access_key: &'a str,
    pub session_token: Option<&'a str>,
    pub region: &'a str,
}

/// The form's fields, in the order S3 wants them before the file: the key first, the
/// signature last.
pub fn fields(
    signer: &Signer<'_>,
    bucket: &str,
    key: &str,
    max_bytes: u64,
    now: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> Vec<(String, String)> {
    let date = now.format("%Y%m%d").to_string();
    let credential = format!(
        "{}/{date}/{}/s3/aws4_request",
        signer.access_key_id, signer.region
    );
    let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
    let mut signed = vec![
        (
            "x-amz-algorithm".to_string(),
            "AWS4-HMAC-SHA256".to_string(),
        ),
        ("x-amz-credential".to_string(), credential),
        ("x-amz-date".to_string(), amz_date),
    ];
    if let Some(token) = signer.session_token {
        signed.push(("x-amz-security-token".to_string(), token.to_string()));
    }
    let mut conditions = vec![
        serde_json::json!({ "bucket": bucket }),
        serde_json::json!({ "key": key }),
        // An empty file is no book either; S3 refuses both ends with EntityTooSmall/Large.
        serde_json::json!(["content-length-range", 1, max_bytes]),
    ];
    conditions.extend(
        signed
            .iter()
            .map(|(name, value)| serde_json::json!({ name: value })),
    );
    let policy = serde_json::json!({
        "expiration": expires_at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        "conditions": conditions,
    });
    let policy = base64::engine::general_purpose::STANDARD.encode(policy.to_string());
    let signature = hex::encode(hmac(
        &signing_key(signer.secret_access_key, &date, signer.region, "s3"),
        policy.as_bytes(),
    ));
    let mut fields = vec![("key".to_string(), key.to_string())];
    fields.extend(signed);
    fields.push(("policy".to_string(), policy));
    fields.push(("x-amz-signature".to_string(), signature));
    fields
}

/// SigV4's key for one day, region and service.
fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> Vec<u8> {
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    hmac(&k_service, b"aws4_request")
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // A key of any length is accepted by HMAC; this cannot fail.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signing_key_matches_the_aws_documentation_example() {
        // "Examples of how to derive a signing key for Signature Version 4", AWS General Reference.
        let key = signing_key(
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "20120215",
            "us-east-1",
            "iam",
        );
        assert_eq!(
            hex::encode(key),
            "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"
        );
    }

    #[test]
    fn the_policy_names_the_key_the_size_range_and_the_signing_fields() {
        let signer = Signer {
            access_key_id: "AKID",
            secret_access_key: "secret",
            session_token: Some("token"),
            region: "eu-west-1",
        };
        let now: DateTime<Utc> = "2026-11-26T03:00:00Z".parse().unwrap();
        let expires = now + chrono::Duration::minutes(15);
        let fields = fields(&signer, "bucket", "uploads/u/x", 50, now, expires);
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "key",
                "x-amz-algorithm",
                "x-amz-credential",
                "x-amz-date",
                "x-amz-security-token",
                "policy",
                "x-amz-signature"
            ]
        );
        let policy = &fields[5].1;
        let policy: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(policy)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(policy["expiration"], "2026-11-26T03:15:00.000Z");
        let conditions = policy["conditions"].as_array().unwrap();
        assert!(conditions.contains(&serde_json::json!({ "key": "uploads/u/x" })));
        assert!(conditions.contains(&serde_json::json!(["content-length-range", 1, 50])));
        assert!(conditions.contains(&serde_json::json!({
            "x-amz-credential": "AKID/20261126/eu-west-1/s3/aws4_request"
        })));
        assert!(conditions.contains(&serde_json::json!({ "x-amz-security-token": "token" })));
        assert_eq!(fields[6].1.len(), 64);
    }
}
