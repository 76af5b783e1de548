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
//! | `<code>…</code>` | code (code, kbd, samp, tt): kept as it is, never translated |
//! | `<keep>…</keep>` | text marked `translate="no"`, or in another language than the book's: kept as it is |
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

const PAIRED: &[&str] = &["i", "b", "sup", "sub", "a", "code", "keep"];

/// The marks whose text is never translated: a translation carries their text over unchanged
/// ([`with_kept_text`] puts it back whatever a model did to it).
pub const KEPT: &[&str] = &["code", "keep"];
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

/// A tag as it is written: `<i>`, `</i>`, `<a href="#n1">`, `<br/>`.
pub fn tag_text(tag: &Tag) -> String {
    let attr = |name: &str, value: &Option<String>| match (name, value) {
        (_, None) => String::new(),
        ("ref", Some(v)) => format!(" id=\"{}\"", escape_attr(v)),
        (_, Some(v)) => format!(" href=\"{}\"", escape_attr(v)),
    };
    match tag {
        Tag::Open { name, attr: value } => format!("<{name}{}>", attr(name, value)),
        Tag::Close(name) => format!("</{name}>"),
        Tag::Empty { name, attr: value } => format!("<{name}{}/>", attr(name, value)),
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

/// The text a translation changes: the plain text without what kept marks ([`KEPT`]) hold.
pub fn translatable_text(markup: &str) -> String {
    let Ok(pieces) = parse(markup) else {
        return plain_text(markup);
    };
    let mut out = String::with_capacity(markup.len());
    let mut kept_depth = 0usize;
    for piece in pieces {
        match piece {
            Piece::Tag(Tag::Open { name, .. }) if KEPT.contains(&name) => kept_depth += 1,
            Piece::Tag(Tag::Close(name)) if KEPT.contains(&name) => {
                kept_depth = kept_depth.saturating_sub(1)
            }
            Piece::Text(t) if kept_depth == 0 => out.push_str(&t),
            Piece::Tag(Tag::Empty { name: "br", .. }) if kept_depth == 0 => out.push('\n'),
            _ => {}
        }
    }
    out
}

/// Whether `markup` has a kept mark (code or `translate="no"` text).
pub fn has_kept(markup: &str) -> bool {
    KEPT.iter()
        .any(|name| markup.contains(&format!("<{name}>")))
}

/// `answer` with the content of each of its kept marks replaced by the content of the source's
/// mark of the same rank, so that code and `translate="no"` text reach the book exactly as the
/// source has them, whatever a model did to them. An answer whose kept marks are not the
/// source's (in number or kind) is given back as it is: the tag check refuses it.
pub fn with_kept_text(source: &str, answer: &str) -> String {
    if !has_kept(source) {
        return answer.to_string();
    }
    let (Ok(source_pieces), Ok(answer_pieces)) = (parse(source), parse(answer)) else {
        return answer.to_string();
    };
    let (kept_source, kept_answer) = (kept_spans(&source_pieces), kept_spans(&answer_pieces));
    let same_kinds = kept_source.len() == kept_answer.len()
        && kept_source
            .iter()
            .zip(&kept_answer)
            .all(|(a, b)| source_pieces[a.start] == answer_pieces[b.start]);
    if !same_kinds {
        return answer.to_string();
    }
    let mut out = Vec::with_capacity(answer_pieces.len());
    let mut next = 0;
    for (from, to) in kept_source.iter().zip(&kept_answer) {
        out.extend_from_slice(&answer_pieces[next..to.start]);
        out.extend_from_slice(&source_pieces[from.clone()]);
        next = to.end;
    }
    out.extend_from_slice(&answer_pieces[next..]);
    serialize(&out)
}

/// The outermost kept marks of `pieces`, each as the range from its opening to its closing tag.
fn kept_spans(pieces: &[Piece]) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut start = None;
    let mut depth = 0usize;
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Tag(Tag::Open { name, .. }) if KEPT.contains(name) => {
                if depth == 0 {
                    start = Some(i);
                }
                depth += 1;
            }
            Piece::Tag(Tag::Close(name)) if KEPT.contains(name) => {
                depth = depth.saturating_sub(1);
                if let (0, Some(s)) = (depth, start.take()) {
                    spans.push(s..i + 1);
                }
            }
            _ => {}
        }
    }
    spans
}

/// Markup from parsed pieces (the inverse of [`parse`]).
fn serialize(pieces: &[Piece]) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(&escape_text(t)),
            Piece::Tag(Tag::Open {
                name,
                attr: Some(v),
            }) => {
                let _ = write!(out, "<{name} href=\"{}\">", escape_attr(v));
            }
            Piece::Tag(Tag::Open { name, attr: None }) => {
                let _ = write!(out, "<{name}>");
            }
            Piece::Tag(Tag::Close(name)) => {
                let _ = write!(out, "</{name}>");
            }
            Piece::Tag(Tag::Empty {
                name,
                attr: Some(v),
            }) => {
                let _ = write!(out, "<{name} id=\"{}\"/>", escape_attr(v));
            }
            Piece::Tag(Tag::Empty { name, attr: None }) => {
                let _ = write!(out, "<{name}/>");
            }
        }
    }
    out
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
    /// The markup's length in bytes so far.
    pub fn markup_len(&self) -> usize {
        self.out.len()
    }

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
        // Judged with the open tags closed: unclosed markup does not parse.
        let mut closed = self.out.clone();
        for name in self.open.iter().rev() {
            let _ = write!(closed, "</{name}>");
        }
        plain_text(&closed).trim().is_empty() && !self.out.contains("<ref ")
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

    #[test]
    fn kept_text_is_not_translatable_and_comes_back_as_the_source_has_it() {
        let source = "Type <code>ls -l</code> to see <keep>Pequod</keep> &amp; <i>more</i>.";
        assert!(parse(source).is_ok());
        assert_eq!(translatable_text(source), "Type  to see  & more.");
        let answer = "Tapez <code>ls -L</code> pour voir <keep>Péquod</keep> &amp; <i>plus</i>.";
        assert_eq!(
            with_kept_text(source, answer),
            "Tapez <code>ls -l</code> pour voir <keep>Pequod</keep> &amp; <i>plus</i>."
        );
        // Kept marks that are not the source's are left for the tag check to refuse.
        let swapped = "Voir <keep>Pequod</keep> puis <code>ls</code>.";
        assert_eq!(with_kept_text(source, swapped), swapped);
        let nested = "<code>a <b>b</b></code> x";
        assert_eq!(
            with_kept_text(nested, "<code>z</code> y"),
            "<code>a <b>b</b></code> y"
        );
        assert_eq!(with_kept_text("plain", "simple"), "simple");
    }
}
