//! The `Secrets` contract, case by case. Invoke with `booktr_ports::secrets_conformance!(make)`
//! where `make` is an async fn returning a `Fixture<dyn Secrets>`.

use crate::{Secrets, StoreError};

#[macro_export]
macro_rules! secrets_conformance {
    ($make:path) => {
        $crate::secrets_conformance!($make, when = $crate::conformance::always);
    };
    ($make:path, when = $when:path) => {
        $crate::__conformance_cases!(
            secrets,
            $make,
            $when,
            port,
            [
                a_sealed_secret_opens_to_the_same_bytes,
                two_seals_of_the_same_plaintext_differ,
                sealed_bytes_never_contain_the_plaintext,
                a_seal_altered_anywhere_does_not_open,
                a_seal_cut_short_or_extended_does_not_open,
                bytes_that_were_never_sealed_do_not_open,
            ]
        );
    };
}

const KEY: &[u8] = b"sk-proj-conformance-0123456789abcdefghijklmnopqrstuvwxyz";

fn assert_unopenable(result: Result<Vec<u8>, StoreError>, what: &str) {
    assert!(
        matches!(result, Err(StoreError::Invalid(_))),
        "{what}: expected Invalid, got {:?}",
        result.map(|bytes| bytes.len())
    );
}

pub async fn a_sealed_secret_opens_to_the_same_bytes(secrets: &dyn Secrets) {
    let binary: Vec<u8> = (0..=255u8).collect();
    let large = vec![b'k'; 4096];
    for plaintext in [KEY, &b""[..], &binary[..], &large[..]] {
        let sealed = secrets.seal(plaintext).await.unwrap();
        assert_eq!(secrets.open(&sealed).await.unwrap(), plaintext);
        // Opening does not use the seal up.
        assert_eq!(secrets.open(&sealed).await.unwrap(), plaintext);
    }
}

pub async fn two_seals_of_the_same_plaintext_differ(secrets: &dyn Secrets) {
    let first = secrets.seal(KEY).await.unwrap();
    let second = secrets.seal(KEY).await.unwrap();
    assert_ne!(first, second, "a fresh nonce (or data key) per seal");
    assert_eq!(secrets.open(&first).await.unwrap(), KEY);
    assert_eq!(secrets.open(&second).await.unwrap(), KEY);
}

pub async fn sealed_bytes_never_contain_the_plaintext(secrets: &dyn Secrets) {
    let sealed = secrets.seal(KEY).await.unwrap();
    // Not the whole key, nor any 12 bytes of it in a row.
    for window in KEY.windows(12) {
        assert!(
            !sealed.windows(window.len()).any(|w| w == window),
            "the sealed bytes contain part of the plaintext"
        );
    }
    assert!(sealed.len() > KEY.len(), "an authentication tag is added");
}

pub async fn a_seal_altered_anywhere_does_not_open(secrets: &dyn Secrets) {
    let sealed = secrets.seal(KEY).await.unwrap();
    for at in 0..sealed.len() {
        let mut altered = sealed.clone();
        altered[at] ^= 0x01;
        assert_unopenable(
            secrets.open(&altered).await,
            &format!("one bit changed in byte {at} of {}", sealed.len()),
        );
    }
    assert_eq!(secrets.open(&sealed).await.unwrap(), KEY);
}

pub async fn a_seal_cut_short_or_extended_does_not_open(secrets: &dyn Secrets) {
    let sealed = secrets.seal(KEY).await.unwrap();
    for len in [0, 1, sealed.len() / 2, sealed.len() - 16, sealed.len() - 1] {
        assert_unopenable(
            secrets.open(&sealed[..len]).await,
            &format!("cut to {len} of {} bytes", sealed.len()),
        );
    }
    let mut extended = sealed.clone();
    extended.push(0);
    assert_unopenable(secrets.open(&extended).await, "one byte added");
}

pub async fn bytes_that_were_never_sealed_do_not_open(secrets: &dyn Secrets) {
    assert_unopenable(secrets.open(KEY).await, "the plaintext itself");
    assert_unopenable(secrets.open(&[0u8; 200]).await, "zeros");
    assert_unopenable(secrets.open(&[1u8; 200]).await, "a version byte and ones");
}
