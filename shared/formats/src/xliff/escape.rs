//! Text and attribute values as XML 1.0 can carry them: the markup characters escaped, and a
//! character XML 1.0 cannot hold at all (a C0 control but tab, LF and CR; U+FFFE, U+FFFF; not
//! even as a character reference) replaced by U+FFFD, so that no book text can make the file
//! unreadable or add markup to it.

/// Whether XML 1.0 can hold `c` (its `Char` production; a `char` is never a surrogate).
pub(super) fn xml_allows(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
}

/// `c` as XML 1.0 can hold it.
pub(super) fn xml_char(c: char) -> char {
    if xml_allows(c) {
        c
    } else {
        char::REPLACEMENT_CHARACTER
    }
}

/// `text` as element content: `&`, `<` and `>` escaped, a carriage return as a reference (a
/// parser would otherwise turn a CR LF into LF), what XML cannot hold replaced.
pub(super) fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    push_text(&mut out, text);
    out
}

pub(super) fn push_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(xml_char(c)),
        }
    }
}

/// `value` as a double-quoted attribute value: as [`text`], with `"` escaped and the
/// whitespace a parser would turn into spaces (tab, LF) kept as references.
pub(super) fn attr(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            c => push_text(&mut out, c.encode_utf8(&mut [0; 4])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_are_escaped_and_what_xml_cannot_hold_is_replaced() {
        assert_eq!(
            text("a < b && c > d\r\n\u{1}\u{FFFF}\t"),
            "a &lt; b &amp;&amp; c &gt; d&#13;\n\u{FFFD}\u{FFFD}\t"
        );
        assert_eq!(
            attr("say \"hi\"\t<now>\n"),
            "say &quot;hi&quot;&#9;&lt;now&gt;&#10;"
        );
        assert_eq!(text("]]> <![CDATA[ x"), "]]&gt; &lt;![CDATA[ x");
    }
}
