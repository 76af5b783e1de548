//! Addresses in a book's documents and style sheets: which ones a reader fetches from outside
//! the book, which it only follows when asked, and where a relative one leads in the package.

use crate::xhtml::percent_decode;

/// Whether the `attr` address of an `element` is a link a reader follows when asked, rather
/// than a resource it loads.
pub(super) fn is_followed_link(element: &str, attr: &str) -> bool {
    matches!((element, attr), ("a" | "area", "href")) || matches!(attr, "cite" | "longdesc")
}

/// Whether a reader would fetch `address` from outside the book: it has a scheme other than
/// `data:` (`https:`, `file:`), or names a host (`//host/…`).
pub(super) fn is_remote(address: &str) -> bool {
    let address = address.trim();
    if address.starts_with("//") || address.starts_with(r"\\") {
        return true;
    }
    scheme(address).is_some_and(|(scheme, _)| scheme != "data")
}

/// A URL's scheme in lower case and what follows its colon, read as a browser reads it:
/// tabs, new lines and other control characters and spaces anywhere are ignored.
pub(super) fn scheme(url: &str) -> Option<(String, String)> {
    let squeezed: String = url
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect();
    let (scheme, rest) = squeezed.split_once(':')?;
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| (scheme.to_ascii_lowercase(), rest.to_ascii_lowercase()))
}

/// The addresses of a `srcset`: each candidate's URL (a run without white space, which a
/// `data:` URL's comma does not end), without its width or density.
pub(super) fn candidates(srcset: &str) -> Vec<&str> {
    let mut urls = Vec::new();
    let mut rest = srcset;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.is_empty() {
            return urls;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let url = &rest[..end];
        let bare = url.trim_end_matches(',');
        urls.push(bare);
        rest = &rest[end..];
        // A URL that ends in a comma has no descriptors; else they run to the next comma.
        if bare.len() == url.len() {
            match rest.find(',') {
                Some(comma) => rest = &rest[comma + 1..],
                None => return urls,
            }
        }
    }
}

/// `href` (a path, percent-encoded) relative to the entry `from`, as an entry name; None when it
/// is absolute, uses a backslash or climbs above the package's root.
pub(super) fn resolve(from: &str, href: &str) -> Option<String> {
    let decoded = percent_decode(href);
    if decoded.starts_with('/') || decoded.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}
