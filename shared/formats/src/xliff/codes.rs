//! A passage's inline markup ([`crate::markup`]) as XLIFF inline content, and back.
//!
//! The source's marks that open or stand alone are numbered from 1 in order: an opening mark
//! is written `<g id="n" ctype="…">` (its close `</g>`), a mark alone `<x id="n" ctype="…"/>`.
//! A target's marks take the ids of the source's marks they equal, so a tool that keeps ids
//! (every XLIFF tool does) hands back codes booktr can turn into the source's marks again,
//! attributes and all: a translator moves a link, never changes where it leads.

use std::fmt::Write;

use super::escape;
use crate::markup::{self, Piece, Tag};

/// A piece of a target's inline content as a file holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inline {
    Text(String),
    /// `<g id="…">`: a paired mark opens.
    Open(String),
    /// `</g>`: the innermost open mark closes.
    Close,
    /// `<x id="…"/>`: a mark alone.
    Placeholder(String),
}

/// A target whose codes do not stand for the source's marks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CodeError(pub String);

/// The marks of parsed markup that carry an id: the opening ones and the ones alone, in order.
fn coded(pieces: &[Piece]) -> Vec<&Tag> {
    pieces
        .iter()
        .filter_map(|piece| match piece {
            Piece::Tag(tag @ (Tag::Open { .. } | Tag::Empty { .. } | Tag::Num { .. })) => Some(tag),
            _ => None,
        })
        .collect()
}

/// The XLIFF 1.2 `ctype` of an opening mark or a mark alone: the standard's names where it
/// has one, `x-` names for the others.
fn ctype(tag: &Tag) -> &'static str {
    match tag {
        Tag::Open { name: "i", .. } => "italic",
        Tag::Open { name: "b", .. } => "bold",
        Tag::Open { name: "a", .. } => "link",
        Tag::Open { name: "sup", .. } => "x-sup",
        Tag::Open { name: "sub", .. } => "x-sub",
        Tag::Open { name: "code", .. } => "x-code",
        Tag::Open { name: "keep", .. } => "x-keep",
        Tag::Empty { name: "br", .. } => "lb",
        Tag::Empty { .. } => "x-ref",
        Tag::Num { .. } => "x-num",
        Tag::Open { .. } | Tag::Close(_) => "x-span",
    }
}

/// `text` (markup) as XLIFF inline content, its marks coded by the marks of `source`, the
/// passage's source (pass the source itself to write the source). A mark of `text` that is not
/// the source's takes an id past the source's, which no import turns back into a mark. Text
/// that is not well-formed markup (never stored) is written as text.
pub fn to_inline(text: &str, source: &str) -> String {
    let Ok(pieces) = markup::parse(text) else {
        return escape::text(text);
    };
    let source = markup::parse(source).unwrap_or_default();
    let codes = coded(&source);
    let mut used = vec![false; codes.len()];
    let mut fresh = codes.len();
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for piece in &pieces {
        let tag = match piece {
            Piece::Text(t) => {
                escape::push_text(&mut out, t);
                continue;
            }
            Piece::Tag(Tag::Close(_)) => {
                out.push_str("</g>");
                continue;
            }
            Piece::Tag(tag) => tag,
        };
        let id = match (0..codes.len()).find(|&k| !used[k] && codes[k] == tag) {
            Some(k) => {
                used[k] = true;
                k + 1
            }
            None => {
                fresh += 1;
                fresh
            }
        };
        let (element, end) = match tag {
            Tag::Open { .. } => ("g", ">"),
            _ => ("x", "/>"),
        };
        // Writing to a String cannot fail.
        let _ = write!(out, "<{element} id=\"{id}\" ctype=\"{}\"{end}", ctype(tag));
    }
    out
}

/// The markup a target's inline content stands for, each code turned into the mark of
/// `source` (the passage's source markup) with its id. A code the source has not, or of the
/// other kind (a `<g>` for a mark alone), is refused, naming it; whether the marks are all
/// there and in order is the edit's check, as for any edit.
pub fn from_inline(source: &str, target: &[Inline]) -> Result<String, CodeError> {
    let pieces = markup::parse(source)
        .map_err(|e| CodeError(format!("the source's markup is not well-formed: {e}")))?;
    let codes = coded(&pieces);
    let code = |id: &str| {
        id.trim()
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|k| codes.get(k).copied())
            .ok_or_else(|| {
                let ids = match codes.len() {
                    0 => "the source has none".to_string(),
                    n => format!("its ids are 1 to {n}"),
                };
                CodeError(format!(
                    "inline code {id:?} is not one of the source's marks ({ids})"
                ))
            })
    };
    let mut out = String::new();
    let mut open: Vec<&'static str> = Vec::new();
    for inline in target {
        match inline {
            Inline::Text(t) => out.push_str(&markup::escape_text(t)),
            Inline::Open(id) => match code(id)? {
                tag @ Tag::Open { name, .. } => {
                    open.push(name);
                    out.push_str(&markup::tag_text(tag));
                }
                _ => {
                    return Err(CodeError(format!(
                        "inline code {id:?} is a mark alone in the source (<x/>), not a pair (<g>)"
                    )))
                }
            },
            Inline::Close => {
                let name = open
                    .pop()
                    .ok_or_else(|| CodeError("a </g> closes no open code".into()))?;
                out.push_str(&format!("</{name}>"));
            }
            Inline::Placeholder(id) => match code(id)? {
                tag @ (Tag::Empty { .. } | Tag::Num { .. }) => out.push_str(&markup::tag_text(tag)),
                _ => {
                    return Err(CodeError(format!(
                        "inline code {id:?} is a pair in the source (<g>), not a mark alone (<x/>)"
                    )))
                }
            },
        }
    }
    if let Some(name) = open.last() {
        return Err(CodeError(format!("the code of <{name}> is never closed")));
    }
    Ok(out)
}

/// `text` (markup) as an export writes it and an import reads it back: parsed and written again
/// (so `&quot;` and `"` in text are one), what XML cannot hold replaced. Two texts with one
/// canonical form are the same text to an import.
pub fn canonical(text: &str) -> String {
    let written = match markup::parse(text) {
        Ok(pieces) => markup::serialize(&pieces),
        Err(_) => text.to_string(),
    };
    written.chars().map(escape::xml_char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "Call <i>me</i> <a href=\"#n1\">Ishmael</a>.<br/>Years <b>ago</b><ref id=\"n1\"/><num class=\"lnum\" text=\"10\"/>";

    #[test]
    fn marks_become_numbered_codes_and_text_is_escaped() {
        assert_eq!(
            to_inline(SOURCE, SOURCE),
            "Call <g id=\"1\" ctype=\"italic\">me</g> <g id=\"2\" ctype=\"link\">Ishmael</g>.\
             <x id=\"3\" ctype=\"lb\"/>Years <g id=\"4\" ctype=\"bold\">ago</g>\
             <x id=\"5\" ctype=\"x-ref\"/><x id=\"6\" ctype=\"x-num\"/>"
        );
        assert_eq!(
            to_inline("a &lt;b&gt; &amp; \"c\"", "x"),
            "a &lt;b&gt; &amp; \"c\""
        );
        // Not markup (never stored): all of it text.
        assert_eq!(to_inline("<script>", "x"), "&lt;script&gt;");
    }

    #[test]
    fn a_targets_marks_take_the_ids_of_the_sources_marks_they_equal() {
        let source = "<i>a</i> <b>b</b> <i>c</i>";
        let target = "<b>B</b> <i>A</i> <i>C</i> <sup>x</sup>";
        assert_eq!(
            to_inline(target, source),
            "<g id=\"2\" ctype=\"bold\">B</g> <g id=\"1\" ctype=\"italic\">A</g> \
             <g id=\"3\" ctype=\"italic\">C</g> <g id=\"4\" ctype=\"x-sup\">x</g>"
        );
    }

    #[test]
    fn codes_come_back_as_the_sources_marks_with_their_attributes() {
        let target = vec![
            Inline::Text("Llamadme ".into()),
            Inline::Open("2".into()),
            Inline::Text("Ismael <&>".into()),
            Inline::Close,
            Inline::Placeholder("6".into()),
        ];
        assert_eq!(
            from_inline(SOURCE, &target).unwrap(),
            "Llamadme <a href=\"#n1\">Ismael &lt;&amp;&gt;</a><num class=\"lnum\" text=\"10\"/>"
        );
    }

    #[test]
    fn a_code_the_source_has_not_or_of_the_other_kind_is_refused_by_id() {
        for (target, says) in [
            (vec![Inline::Placeholder("9".into())], "\"9\" is not one"),
            (vec![Inline::Placeholder("x".into())], "\"x\" is not one"),
            (vec![Inline::Placeholder("0".into())], "\"0\" is not one"),
            (
                vec![Inline::Placeholder("1".into())],
                "a pair in the source",
            ),
            (
                vec![Inline::Open("3".into()), Inline::Close],
                "a mark alone",
            ),
            (vec![Inline::Close], "closes no open code"),
            (vec![Inline::Open("1".into())], "never closed"),
        ] {
            let error = from_inline(SOURCE, &target).unwrap_err().to_string();
            assert!(error.contains(says), "{error}");
        }
    }

    #[test]
    fn a_text_written_and_read_back_has_its_canonical_form() {
        let written = "Say &quot;no&quot; \u{1}<i>now</i>";
        assert_eq!(canonical(written), "Say \"no\" \u{FFFD}<i>now</i>");
        assert_eq!(canonical(&canonical(written)), canonical(written));
    }
}
