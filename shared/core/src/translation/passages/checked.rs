//! The one check an owner's text passes before it replaces a passage's translation: an edit
//! (the API's and the web editor's) and a term's new rendering applied to passages both come
//! through [`check_edit`], and a term's rendering itself through [`check_characters`].
//!
//! A passage's text ends up in the book's XHTML files, which every reader of the book (the
//! owner, a share link's visitors) parses as XML. So the text may hold only characters XML 1.0
//! allows, and no bidirectional override, embedding or isolate control that its source does not
//! hold: one such control reverses or hides the words around it in the reader's eyes (the
//! "Trojan Source" trick), and an owner's text has no more reason to carry one than its source.
//!
//! An edit is bounded by its source: [`max_edit_chars`] is [`EDIT_GROWTH`] times the source's
//! characters, at least [`EDIT_FLOOR`] and at most the largest block a book may hold. A
//! translation is rarely twice as long as its source (German from English runs about 1.3);
//! four times leaves room for a translator's note in the text, the floor for short passages (a
//! heading, a line of verse) whose translation may rightly be many times their length. Each
//! passage keeps `record::MAX_VERSIONS` changes, so what an owner can store for a book is
//! bounded by the book's own size.

use super::error::PassageError;

/// How many times its source's characters an edit may be.
pub const EDIT_GROWTH: usize = 4;
/// The characters an edit may always have, however short its source.
pub const EDIT_FLOOR: usize = 2_000;

/// The most characters an edit of a passage whose source is `source` may have.
pub fn max_edit_chars(source: &str) -> usize {
    // The floor is far below the largest block, so the clamp's bounds are in order.
    (source.chars().count().saturating_mul(EDIT_GROWTH))
        .clamp(EDIT_FLOOR, booktr_formats::limits::MAX_BLOCK_CHARS)
}

/// Whether `text` may replace the translation of a block whose source is `source`: within
/// [`max_edit_chars`], not empty (unless the source is), with characters a book can hold (see
/// [`check_characters`]) and the source's marks (the check every model answer passes).
pub fn check_edit(source: &str, text: &str) -> Result<(), PassageError> {
    let limit = max_edit_chars(source);
    let chars = text.chars().count();
    if chars > limit {
        return Err(PassageError::TooLong(format!(
            "text: {chars} characters; this passage's text holds at most {limit} \
             ({EDIT_GROWTH} times its source's {} characters, and never fewer than {EDIT_FLOOR})",
            source.chars().count()
        )));
    }
    if text.trim().is_empty() && !source.trim().is_empty() {
        return Err(PassageError::Invalid(
            "text: a passage's translation cannot be empty".into(),
        ));
    }
    check_characters("text", source, text)?;
    match booktr_translate::checks::marks_problem(source, text) {
        Some(problem) => Err(PassageError::Marks(problem)),
        None => Ok(()),
    }
}

/// Whether `text` (the request's field `field`) holds only characters that keep the book's XML
/// well-formed, and bidirectional controls only when `source` has them too. The error names the
/// field, the character's place in it (from 0, in characters) and its code point.
pub fn check_characters(field: &str, source: &str, text: &str) -> Result<(), PassageError> {
    for (place, c) in text.chars().enumerate() {
        let refused = if !xml_allows(c) {
            "which XML 1.0 does not allow, so the book's files could not be read"
        } else if is_bidi_control(c) && !source.contains(c) {
            "a bidirectional control its source does not have, which would reorder or hide \
             the text around it for the book's readers"
        } else {
            continue;
        };
        return Err(PassageError::Characters(format!(
            "{field}: character {place} is U+{:04X}, {refused}",
            c as u32
        )));
    }
    Ok(())
}

/// XML 1.0's `Char`: tab, line feed, carriage return, and every other character from U+0020
/// except U+FFFE and U+FFFF (a Rust `char` is never a surrogate).
fn xml_allows(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
}

/// The explicit bidirectional formatting characters: embeddings and overrides (U+202A to
/// U+202E) and isolates (U+2066 to U+2069). The implicit marks (U+200E, U+200F, U+061C) stay
/// allowed: they only nudge neutral characters and are how a translator fixes a mixed line.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(source: &str, text: &str) -> String {
        match check_edit(source, text) {
            Err(PassageError::Characters(m) | PassageError::TooLong(m)) => m,
            other => panic!("{text:?} was not refused as invalid: {other:?}"),
        }
    }

    #[test]
    fn characters_xml_forbids_are_refused_by_place_and_code_point() {
        let source = "Call me Ishmael.";
        assert_eq!(
            refusal(source, "Llamadme\u{1} Ismael."),
            "text: character 8 is U+0001, which XML 1.0 does not allow, so the book's files \
             could not be read"
        );
        for bad in ['\u{0}', '\u{B}', '\u{C}', '\u{1F}', '\u{FFFE}', '\u{FFFF}'] {
            let text = format!("Llamadme {bad}Ismael.");
            let message = refusal(source, &text);
            assert!(
                message.contains(&format!("character 9 is U+{:04X}", bad as u32)),
                "{message}"
            );
        }
        assert!(check_edit(source, "Llamadme\tIsmael.\r\nY\u{85}a\u{FFFD}\u{1F600}.").is_ok());
    }

    #[test]
    fn a_bidi_control_is_refused_unless_the_source_has_it() {
        for bidi in ['\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}'] {
            let text = format!("Llamadme {bidi}Ismael.");
            let message = refusal("Call me Ishmael.", &text);
            assert!(message.contains("bidirectional control"), "{message}");
            let source = format!("Call me {bidi}Ishmael.");
            assert!(check_edit(&source, &text).is_ok(), "{bidi:?} in the source");
        }
        assert!(check_edit("Call me Ishmael.", "Llamadme \u{200F}Ismael.").is_ok());
    }

    #[test]
    fn an_edit_is_at_most_four_times_its_source_and_never_held_under_the_floor() {
        assert_eq!(max_edit_chars("Hi"), EDIT_FLOOR);
        assert!(check_edit("Hi", &"é".repeat(EDIT_FLOOR)).is_ok());
        let message = refusal("Hi", &"é".repeat(EDIT_FLOOR + 1));
        assert!(message.contains("at most 2000"), "{message}");
        let source = "word ".repeat(1_000);
        assert_eq!(max_edit_chars(&source), 20_000);
        assert!(check_edit(&source, &"x".repeat(20_000)).is_ok());
        assert!(check_edit(&source, &"x".repeat(20_001)).is_err());
        let huge = "x".repeat(booktr_formats::limits::MAX_BLOCK_CHARS);
        assert_eq!(
            max_edit_chars(&huge),
            booktr_formats::limits::MAX_BLOCK_CHARS
        );
    }

    #[test]
    fn an_empty_text_and_marks_unlike_the_sources_are_still_refused() {
        assert!(matches!(
            check_edit("Call me.", "  "),
            Err(PassageError::Invalid(_))
        ));
        assert!(matches!(
            check_edit("Call <i>me</i>.", "Llamadme."),
            Err(PassageError::Marks(_))
        ));
    }
}
