//! The token that proves a form came from one of our pages in the session it was shown in: a
//! digest of the session cookie's value. Another site cannot read the cookie (HttpOnly) nor
//! this page, so it cannot know the token; a token is worthless in another session; and it
//! needs no storage. Sign-in and sign-up, which have no session yet, are held by the
//! same-origin check instead (`auth::require_same_origin`).

use sha2::{Digest, Sha256};

/// The form field that carries it (the first field of every form, so that a multipart upload
/// is refused before its file is read).
pub const FIELD: &str = "csrf";

pub fn token(session: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"booktr web-app form\0")
        .chain_update(session.as_bytes())
        .finalize();
    hex::encode(&digest[..16])
}

/// Whether `given` is the session's token, compared in constant time.
pub fn holds(given: &str, session: &str) -> bool {
    let expected = token(session);
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_holds_for_its_session_only() {
        let t = token("session-a");
        assert!(holds(&t, "session-a"));
        assert!(!holds(&t, "session-b"));
        assert!(!holds("", "session-a"));
        assert!(!holds(&t[..31], "session-a"));
    }
}
