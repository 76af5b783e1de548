//! Where a page may send a browser back to when the address comes from the request: the sign-in
//! page's `next`, the language switch's `back`. Every such page goes through [`return_to`], so
//! none of them is an open redirect.
//!
//! A browser does not follow a `Location` as it was sent: it drops tabs and new lines anywhere,
//! trims control characters and spaces at the ends, reads a backslash as a slash, resolves `.`
//! and `..` segments, and `//host` (or `/\host`) leads to another site. So `/\t/evil.example`
//! is `//evil.example` once the browser has cleaned it. Rather than repeat the browser's
//! clean-up (and trust that every browser does exactly that), an address with anything the
//! clean-up would touch is refused, and the same checks are made on the address as one, two or
//! three rounds of percent-decoding read it, since a proxy or a later page may decode it again
//! (`/%2F%2Fevil.example`, `/%5Cevil`). A refused address falls back to `/dashboard`. What is
//! accepted is sent with its non-ASCII characters percent-encoded, so it is always a valid header
//! value: no address makes these pages answer 500.

use booktr_formats::xhtml::percent_decode;

/// Where a browser goes when the address it brought is missing or refused.
const FALLBACK: &str = "/dashboard";

/// Longer than any address of the site; a longer one is refused rather than echoed back.
const MAX_LEN: usize = 2048;

/// How many rounds of percent-decoding an address may still change under and be accepted: a
/// page of the site encodes its own address once (`/signin?next=%2Fdashboard%3Fpage%3D2`), and
/// nothing of ours encodes three times.
const DECODING_ROUNDS: usize = 3;

/// The address to send a browser to: `given` when it is a path of this site however a browser
/// or a proxy reads it, `/dashboard` otherwise.
pub fn return_to(given: Option<&str>) -> String {
    match given.and_then(site_path) {
        Some(path) => path,
        None => {
            if let Some(refused) = given.filter(|g| !g.is_empty()) {
                tracing::debug!(
                    refused = %refused.escape_debug(),
                    "a return address that leaves the site, sent to the dashboard instead"
                );
            }
            FALLBACK.to_string()
        }
    }
}

/// `given`, made a valid header value, when it and each of its decoded readings stay on the
/// site; `None` otherwise.
fn site_path(given: &str) -> Option<String> {
    // A raw space or control is never in an address of ours (the site encodes them), and
    // most controls cannot even be sent in a header.
    if given.len() > MAX_LEN || given.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let mut reading = given.to_string();
    for _ in 0..=DECODING_ROUNDS {
        if !stays_on_site(&reading) {
            return None;
        }
        let decoded = percent_decode(&reading);
        if decoded == reading {
            return Some(encode_non_ascii(given));
        }
        reading = decoded;
    }
    None
}

/// Whether a browser reading `address` relative to a page of this site stays on this site, and
/// reads it as it is written.
fn stays_on_site(address: &str) -> bool {
    let mut chars = address.chars();
    if chars.next() != Some('/') || matches!(chars.next(), Some('/' | '\\')) {
        return false;
    }
    // Browsers drop tabs and new lines from anywhere and read a backslash as a slash. Other
    // controls are refused too: no page of ours has one in its address, even encoded. A space
    // (`%20` in a query) is kept: browsers encode it again rather than drop it.
    if address.chars().any(|c| c.is_control() || c == '\\') {
        return false;
    }
    // `/..//evil.example` resolves to the path `//evil.example`: harmless where it is
    // resolved, an open redirect wherever that path is used as an address again.
    let path = address.split(['?', '#']).next().unwrap_or_default();
    !path
        .split('/')
        .any(|segment| segment == "." || segment == "..")
}

/// `value` for a query string: everything but unreserved characters (RFC 3986)
/// percent-encoded.
pub(super) fn percent_encode(value: &str) -> String {
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

/// `address` with its non-ASCII characters percent-encoded as UTF-8, as a browser would send
/// them; ASCII is left alone (controls and spaces never get this far).
fn encode_non_ascii(address: &str) -> String {
    let mut out = String::with_capacity(address.len());
    for c in address.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buffer = [0; 4];
            for byte in c.encode_utf8(&mut buffer).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn paths_of_this_site_are_kept_as_they_are() {
        for path in [
            "/dashboard",
            "/dashboard/books/x",
            "/dashboard/books/x?y=1",
            "/dashboard/books/x/read?chapter=2&page=3#top",
            "/dashboard/settings#keys",
            "/",
            "/comunidad/a-post",
            "/dashboard/glossaries?name=a%20b",
            "/dashboard/books/x...y",
        ] {
            assert_eq!(return_to(Some(path)), path, "{path}");
        }
    }

    #[test]
    fn no_address_or_an_empty_one_goes_to_the_dashboard() {
        assert_eq!(return_to(None), "/dashboard");
        assert_eq!(return_to(Some("")), "/dashboard");
    }

    #[test]
    fn every_hostile_form_of_another_site_goes_to_the_dashboard() {
        for hostile in [
            // Other sites, plainly.
            "https://evil.example",
            "http://evil.example/dashboard",
            "//evil.example",
            "///evil.example",
            "evil.example",
            "javascript:alert(1)",
            "data:text/html,hi",
            // Backslashes, which browsers read as slashes.
            "/\\evil.example",
            "\\\\evil.example",
            "/\\/evil.example",
            "/dashboard\\..\\..\\evil",
            // Tabs, new lines and other controls that browsers drop or trim.
            "/\t/evil.example",
            "/\n/evil.example",
            "/\r/evil.example",
            "/\r\n/evil.example",
            "/\0/evil.example",
            "\t//evil.example",
            " //evil.example",
            "/ /evil.example",
            "/\u{b}/evil.example",
            "/\u{c}/evil.example",
            "/\u{7f}/evil.example",
            "/\u{85}/evil.example",
            "/\u{a0}/evil.example",
            "/\u{2028}/evil.example",
            "/\u{3000}/evil.example",
            "/dashboard\nSet-Cookie: a=b",
            // Encoded forms, once and twice.
            "/%09/evil.example",
            "/%0A/evil.example",
            "/%0D/evil.example",
            "/%00/evil.example",
            "/%2F/evil.example",
            "/%2f%2fevil.example",
            "%2F%2Fevil.example",
            "/%5Cevil.example",
            "/%5cevil.example",
            "/%255Cevil.example",
            "/%252F/evil.example",
            "/%2509/evil.example",
            "/%25250A/evil.example",
            "/dashboard%0d%0aSet-Cookie:%20a=b",
            // Dot segments that resolve to `//evil.example`.
            "/..//evil.example",
            "/.//evil.example",
            "/dashboard/../..//evil.example",
            "/%2E%2E//evil.example",
            "/.%2e/%2Fevil.example",
            // Too long to be a page of ours.
            &format!("/{}", "a".repeat(3000)),
        ] {
            assert_eq!(
                return_to(Some(hostile)),
                "/dashboard",
                "{}",
                hostile.escape_debug()
            );
        }
    }

    #[test]
    fn a_path_encoded_more_often_than_the_site_ever_does_goes_to_the_dashboard() {
        assert_eq!(return_to(Some("/a%2525252541")), "/dashboard");
        assert_eq!(return_to(Some("/a%252541")), "/a%252541");
    }

    #[test]
    fn non_ascii_characters_are_sent_percent_encoded() {
        assert_eq!(return_to(Some("/comunidad/café")), "/comunidad/caf%C3%A9");
        assert_eq!(
            return_to(Some("/\u{ff0f}evil.example")),
            "/%EF%BC%8Fevil.example",
            "a fullwidth solidus stays in the path"
        );
    }

    #[test]
    fn whatever_is_given_the_answer_is_a_valid_header_value_on_this_site() {
        let mut given: Vec<String> = (0u8..=0x7f)
            .map(|b| format!("/{}/evil.example", b as char))
            .collect();
        given.extend((0u8..=0xff).map(|b| format!("/%{b:02X}/evil.example")));
        given.extend(["/%", "/%%", "/%G0", "/%e2%80%a8", "/%FF%FE"].map(String::from));
        for address in &given {
            let to = return_to(Some(address));
            assert!(
                HeaderValue::from_str(&to).is_ok(),
                "{}",
                address.escape_debug()
            );
            assert!(
                to.starts_with('/') && !to.starts_with("//"),
                "{}",
                address.escape_debug()
            );
        }
    }
}
