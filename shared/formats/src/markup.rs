//! Inline markup: the text of a block with its marks (emphasis, links, footnote references) as a
//! handful of XML-like tags, so a translator sees and keeps them, and a checker can prove it did.
//!
//! | tag | meaning |
//! |---|---|
//! | `<i>…</i>` | emphasis (em, i, cite) |
//! | `<b>…</b>` | strong (strong, b) |
//! | `<sup>…</sup>`, `<sub>…</sub>` | super- and subscript |
//! | `<a href="…">…</a>` | a link; in-book targets are `#anchor` |
//! | `<br/>` | a line break inside the block |
//! | `<ref id="…"/>` | a footnote reference (the footnote is its own block) |
//!
//! Text escapes `&`, `<` and `>` (and `"` inside attribute values) as `&amp;`, `&lt;`, `&gt;`,
//! `&quot;`. Nothing else is allowed, so a block's markup is always well-formed.

use std::fmt::Write;

/// One tag of a block's markup, as the checker compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tag {
    Open {
        name: &'static str,
        attr: Option<String>,
    },
    Close(&'static str),
    Empty {
        name: &'static str,
        attr: Option<String>,
    },
}

/// Markup that is not well-formed, with where it goes wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid markup at byte {at}: {reason}")]
pub struct MarkupError {
    pub at: usize,
    pub reason: String,
}

const PAIRED: &[&str] = &["i", "b", "sup", "sub", "a"];
const EMPTY: &[&str] = &["br", "ref"];

pub fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

pub fn escape_attr(value: &str) -> String {
    escape_text(value).replace('"', "&quot;")
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// A piece of parsed markup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Tag(Tag),
}

/// Parses markup into text and tags, checking that every tag is known, attributes are the
/// expected ones and tags nest properly.
pub fn parse(markup: &str) -> Result<Vec<Piece>, MarkupError> {
    let mut pieces = Vec::new();
    let mut open: Vec<&'static str> = Vec::new();
    let mut rest = markup;
    let mut offset = 0;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            check_text(rest, offset)?;
            pieces.push(Piece::Text(unescape(rest)));
            break;
        };
        if lt > 0 {
            check_text(&rest[..lt], offset)?;
            pieces.push(Piece::Text(unescape(&rest[..lt])));
        }
        let err = |reason: &str| MarkupError {
            at: offset + lt,
            reason: reason.to_string(),
        };
        let gt = rest[lt..]
            .find('>')
            .ok_or_else(|| err("unterminated tag"))?
            + lt;
        let tag = parse_tag(&rest[lt + 1..gt]).ok_or_else(|| err("unknown or malformed tag"))?;
        match &tag {
            Tag::Open { name, .. } => open.push(name),
            Tag::Close(name) => {
                if open.pop() != Some(name) {
                    return Err(err("closing tag does not match the open one"));
                }
            }
            Tag::Empty { .. } => {}
        }
        pieces.push(Piece::Tag(tag));
        offset += gt + 1;
        rest = &rest[gt + 1..];
    }
    if let Some(name) = open.pop() {
        return Err(MarkupError {
            at: markup.len(),
            reason: format!("<{name}> is never closed"),
        });
    }
    Ok(pieces)
}

fn check_text(text: &str, offset: usize) -> Result<(), MarkupError> {
    if text.contains('>') {
        return Err(MarkupError {
            at: offset,
            reason: "a bare '>' in text".into(),
        });
    }
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        let entity = &rest[amp..];
        if !["&amp;", "&lt;", "&gt;", "&quot;"]
            .iter()
            .any(|e| entity.starts_with(e))
        {
            return Err(MarkupError {
                at: offset,
                reason: "a bare '&' or unknown entity in text".into(),
            });
        }
        rest = &rest[amp + 1..];
    }
    Ok(())
}

fn parse_tag(inner: &str) -> Option<Tag> {
    if let Some(name) = inner.strip_prefix('/') {
        return PAIRED.iter().find(|n| **n == name).map(|n| Tag::Close(n));
    }
    let (inner, empty) = match inner.strip_suffix('/') {
        Some(i) => (i.trim_end(), true),
        None => (inner, false),
    };
    let (name, attrs) = inner
        .split_once(' ')
        .map_or((inner, ""), |(n, a)| (n, a.trim()));
    let attr = |expected: &str| -> Option<Option<String>> {
        let value = attrs
            .strip_prefix(expected)?
            .strip_prefix("=\"")?
            .strip_suffix('"')?;
        (!value.contains('"')).then(|| Some(unescape(value)))
    };
    let known = |list: &[&'static str]| list.iter().copied().find(|n| *n == name);
    if empty {
        let name = known(EMPTY)?;
        let attr = match name {
            "ref" => attr("id")?,
            _ if attrs.is_empty() => None,
            _ => return None,
        };
        Some(Tag::Empty { name, attr })
    } else {
        let name = known(PAIRED)?;
        let attr = match name {
            "a" => attr("href")?,
            _ if attrs.is_empty() => None,
            _ => return None,
        };
        Some(Tag::Open { name, attr })
    }
}

/// The tags of the markup in order: what a faithful translation must reproduce.
pub fn tags(markup: &str) -> Result<Vec<Tag>, MarkupError> {
    Ok(parse(markup)?
        .into_iter()
        .filter_map(|p| if let Piece::Tag(t) = p { Some(t) } else { None })
        .collect())
}

/// The text without marks; line breaks become newlines.
pub fn plain_text(markup: &str) -> String {
    match parse(markup) {
        Ok(pieces) => {
            let mut out = String::with_capacity(markup.len());
            for piece in pieces {
                match piece {
                    Piece::Text(t) => out.push_str(&t),
                    Piece::Tag(Tag::Empty { name: "br", .. }) => out.push('\n'),
                    Piece::Tag(_) => {}
                }
            }
            out
        }
        // Never stored (extractors only write valid markup), but never lose text either.
        Err(_) => markup.to_string(),
    }
}

/// Whether a book may link to `href`: an anchor in the book, or a web or mail address.
pub fn safe_link(href: &str) -> bool {
    let href = href.trim_start();
    if href.starts_with('#') {
        return true;
    }
    let scheme = href.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
    matches!(scheme.as_deref(), Some("http" | "https" | "mailto"))
}

/// Builds markup from pieces, escaping text and attributes.
#[derive(Debug, Default, Clone)]
pub struct MarkupBuilder {
    out: String,
    open: Vec<&'static str>,
}

impl MarkupBuilder {
    pub fn text(&mut self, text: &str) {
        self.out.push_str(&escape_text(text));
    }

    /// Opens an inline mark. A link goes only to a place in the book (`#anchor`) or to an
    /// `http`, `https` or `mailto` address: any other (`javascript:`, `data:`, `file:`) is
    /// dropped with its text kept, since the book is opened in readers that would follow it.
    pub fn open(&mut self, name: &'static str, attr: Option<&str>) {
        match (name, attr) {
            ("a", Some(href)) if !safe_link(href) => return,
            ("a", Some(href)) => {
                let _ = write!(self.out, "<a href=\"{}\">", escape_attr(href));
            }
            _ => {
                let _ = write!(self.out, "<{name}>");
            }
        }
        self.open.push(name);
    }

    /// Closes the innermost open tag if it is `name` (unbalanced source markup is repaired by
    /// closing only what is open).
    pub fn close(&mut self, name: &'static str) {
        if let Some(pos) = self.open.iter().rposition(|n| *n == name) {
            while self.open.len() > pos {
                if let Some(n) = self.open.pop() {
                    let _ = write!(self.out, "</{n}>");
                }
            }
        }
    }

    /// Appends markup that is already well-formed (made by another builder).
    pub fn raw(&mut self, markup: &str) {
        self.out.push_str(markup);
    }

    pub fn line_break(&mut self) {
        self.out.push_str("<br/>");
    }

    pub fn note_ref(&mut self, id: &str) {
        let _ = write!(self.out, "<ref id=\"{}\"/>", escape_attr(id));
    }

    pub fn is_blank(&self) -> bool {
        plain_text(&self.out).trim().is_empty() && !self.out.contains("<ref ")
    }

    /// The markup so far with every open tag closed, whitespace runs folded and the ends trimmed;
    /// the builder starts again empty (tags open now are reopened in the next block).
    pub fn take(&mut self) -> String {
        let reopen = self.open.clone();
        for name in reopen.iter().rev() {
            let _ = write!(self.out, "</{name}>");
        }
        let done = fold_whitespace(&std::mem::take(&mut self.out));
        self.open.clear();
        done
    }
}

/// Folds runs of whitespace to one space and trims, keeping `<br/>` as the only line break.
/// No-break spaces are content (French typography needs them) and are kept.
pub fn fold_whitespace(markup: &str) -> String {
    let mut out = String::with_capacity(markup.len());
    let mut space = false;
    for c in markup.chars() {
        if c.is_whitespace() && c != '\u{a0}' {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out.replace(" <br/>", "<br/>").replace("<br/> ", "<br/>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_parse_and_must_nest() {
        let m = r##"Call me <i>Ishmael</i>, <a href="#n1">see <b>this</b></a><ref id="n1"/>.<br/>Next &amp; last"##;
        assert_eq!(tags(m).unwrap().len(), 8);
        assert_eq!(plain_text(m), "Call me Ishmael, see this.\nNext & last");
        assert!(parse("<i>open").is_err());
        assert!(parse("<i><b>x</i></b>").is_err());
        assert!(parse("<script>x</script>").is_err());
        assert!(parse("a & b").is_err());
        assert!(parse("<a>no href</a>").is_err());
    }

    #[test]
    fn the_builder_escapes_and_balances() {
        let mut b = MarkupBuilder::default();
        b.text("  1 < 2 &\n ");
        b.open("a", Some("https://x.org/?a=1&b=\"2\""));
        b.open("i", None);
        b.text("link");
        b.close("a");
        b.text(" end ");
        let m = b.take();
        assert_eq!(
            m,
            r#"1 &lt; 2 &amp; <a href="https://x.org/?a=1&amp;b=&quot;2&quot;"><i>link</i></a> end"#
        );
        assert!(parse(&m).is_ok());
        assert_eq!(plain_text(&m), "1 < 2 & link end");
    }

    #[test]
    fn only_anchors_web_and_mail_links_are_kept_and_others_keep_their_text() {
        for href in ["#n1", "https://x.org", "HTTP://x.org", "mailto:a@b.org"] {
            let mut b = MarkupBuilder::default();
            b.open("a", Some(href));
            b.text("x");
            b.close("a");
            assert!(b.take().starts_with("<a href="), "{href}");
        }
        for href in [
            "javascript:alert(1)",
            " JavaScript://%0aalert(1)",
            "data:text/html,<script>",
            "file:///etc/passwd",
            "vbscript:x",
        ] {
            let mut b = MarkupBuilder::default();
            b.open("a", Some(href));
            b.open("i", None);
            b.text("x");
            b.close("i");
            b.close("a");
            assert_eq!(b.take(), "<i>x</i>", "{href}");
        }
    }
}
