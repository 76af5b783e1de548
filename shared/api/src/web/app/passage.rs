//! A passage as the owner's pages show it (the editor, the review, the proposals and the term
//! rename): its text previewed with its marks, whether it holds its source, its failures.

use axum::http::StatusCode;
use booktr_core::translation::passages::{Passage, PassageError};
use booktr_formats::markup::{self, Piece, Tag};
use minijinja::Value;

use crate::error::ApiError;

/// Whether the passage's text is its source: a flagged passage that kept it (no answer of the
/// model passed the checks), or one the owner kept so.
pub(super) fn holds_source(passage: &Passage) -> bool {
    passage.text.as_deref().map(str::trim) == Some(passage.source.trim())
}

/// The passage's markup as the book shows it, inert, as HTML for the templates: emphasis,
/// strong, super- and subscript, code and line breaks as their elements; a link's text without
/// its address (the preview leads nowhere); a note's reference as a mark. The text is escaped.
/// Markup that is not well-formed is shown as the text typed.
pub(super) fn preview_value(text: &str) -> Value {
    match preview_html(text) {
        Some(html) => Value::from_safe_string(html),
        None => Value::from(text.to_string()),
    }
}

fn preview_html(text: &str) -> Option<String> {
    let pieces = markup::parse(text).ok()?;
    // A number mark that ends the text (nothing but spaces after it) is a verse line's number:
    // set apart from the last word, as the reader and the book's files set it.
    let last = pieces.iter().rposition(|p| match p {
        Piece::Text(t) => !t.trim().is_empty(),
        Piece::Tag(_) => true,
    });
    let mut out = String::with_capacity(text.len() + 16);
    for (at, piece) in pieces.into_iter().enumerate() {
        match piece {
            Piece::Text(t) => out.push_str(&markup::escape_text(&t)),
            Piece::Tag(Tag::Open { name: "a", .. }) => out.push_str("<span class=\"link\">"),
            Piece::Tag(Tag::Open { name: "keep", .. }) => {
                out.push_str("<span translate=\"no\">");
            }
            Piece::Tag(Tag::Close("a" | "keep")) => out.push_str("</span>"),
            Piece::Tag(Tag::Open { name, .. }) => {
                out.push_str(&format!("<{}>", html_name(name)));
            }
            Piece::Tag(Tag::Close(name)) => out.push_str(&format!("</{}>", html_name(name))),
            Piece::Tag(Tag::Num { text, .. }) if Some(at) == last => {
                out.push_str(&format!(
                    "<span class=\"lnum\">{}</span>",
                    markup::escape_text(&text)
                ));
            }
            // A number or sign the mark carries (a note's call, a sign): its text.
            Piece::Tag(Tag::Num { text, .. }) => out.push_str(&markup::escape_text(&text)),
            Piece::Tag(Tag::Empty { name: "br", .. }) => out.push_str("<br>"),
            Piece::Tag(Tag::Empty { .. }) => out.push_str("<sup class=\"ref\">*</sup>"),
        }
    }
    Some(out)
}

/// The element of a mark (the marks are the markup's own fixed names).
fn html_name(mark: &str) -> &str {
    match mark {
        "i" => "em",
        "b" => "strong",
        other => other,
    }
}

/// A passage's failure as the pages show it.
pub(super) fn passage_error(e: PassageError) -> ApiError {
    match e {
        PassageError::NotFound(what) => ApiError::not_found(&what),
        PassageError::Invalid(m)
        | PassageError::Marks(m)
        | PassageError::TooLong(m)
        | PassageError::Characters(m) => ApiError::bad_request(m),
        e @ (PassageError::Stale { .. } | PassageError::NothingToUndo(_)) => {
            ApiError::new(StatusCode::CONFLICT, "version_conflict", e.to_string())
        }
        PassageError::Store(s) => s.into(),
        PassageError::Fault(f) => f.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preview_renders_the_marks_inert_and_escapes_the_text() {
        assert_eq!(
            preview_html(
                "<i>Call</i> <b>me</b> &lt;b&gt; <a href=\"javascript:x()\">there</a><br/>\
                 <ref id=\"n1\"/><keep>Ishmael</keep>"
            )
            .unwrap(),
            "<em>Call</em> <strong>me</strong> &lt;b&gt; <span class=\"link\">there</span><br>\
             <sup class=\"ref\">*</sup><span translate=\"no\">Ishmael</span>"
        );
        assert_eq!(preview_html("<script>alert(1)</script>"), None);
        // A verse line's number at its end is set apart; a number mark inside the text is its
        // text.
        assert_eq!(
            preview_html("into the Hofgarten,<num class=\"lnum\" text=\"10\"/> ").unwrap(),
            "into the Hofgarten,<span class=\"lnum\">10</span> "
        );
        assert_eq!(
            preview_html("page <num class=\"pg\" text=\"7\"/> of it").unwrap(),
            "page 7 of it"
        );
        let shown = preview_value("<script>alert(1)</script>");
        assert!(
            !shown.is_safe(),
            "markup that does not parse is shown as text"
        );
    }
}
