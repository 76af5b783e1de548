//! Style sheets that fetch nothing from outside the book. A reader applying a book's CSS loads
//! what its `@import` rules, `url()`s and `image-set()`s name: from another site that is a
//! tracking pixel, or a font that follows the reader around. Those references are taken out;
//! everything else in the sheet is kept byte for byte.
//!
//! CSS is read as its syntax reads it (comments, strings, escapes such as `\75 rl(` for `url(`),
//! not searched for text, so no spelling slips past. A `url()` to another site becomes `none`
//! (a valid value wherever an image is, ignored where it is not), a string naming one in
//! `image-set()` or `src()` becomes `""`, and an `@import` of one goes with its rule.
//! (`@namespace`'s address names a namespace and is kept.)

use std::ops::Range;

use super::address::is_remote;

/// One reference taken out: the range of the sheet and what it is replaced by.
pub(super) type Cut = (Range<usize>, &'static str);

/// The references in `css` that would fetch from outside the book, in order.
pub(super) fn remote_references(css: &str) -> Vec<Cut> {
    let mut scanner = Scanner {
        css,
        bytes: css.as_bytes(),
        at: 0,
        cuts: Vec::new(),
        functions: Vec::new(),
        import: None,
    };
    scanner.run();
    scanner.cuts
}

/// `css` without its references outside the book, and how many were taken out; None when it
/// has none.
pub(super) fn clean(css: &str) -> Option<(String, usize)> {
    let cuts = remote_references(css);
    if cuts.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(css.len());
    let mut at = 0;
    for (range, text) in &cuts {
        out.push_str(&css[at..range.start]);
        out.push_str(text);
        at = range.end;
    }
    out.push_str(&css[at..]);
    Some((out, cuts.len()))
}

/// A sheet decoded from another encoding, to be written as UTF-8: its `@charset` rule, which
/// must be its first bytes, says so.
pub(super) fn declare_utf8(css: &str) -> String {
    match css
        .strip_prefix("@charset \"")
        .and_then(|rest| rest.find(';'))
    {
        Some(end) => format!(
            "@charset \"UTF-8\";{}",
            &css["@charset \"".len() + end + 1..]
        ),
        None => css.to_string(),
    }
}

/// Functions whose string arguments are addresses, as `url()`'s are.
fn takes_addresses(function: &str) -> bool {
    function == "src" || function.ends_with("image-set")
}

struct Scanner<'a> {
    css: &'a str,
    bytes: &'a [u8],
    at: usize,
    cuts: Vec<Cut>,
    /// The functions (and bare parentheses, as "") open at this point, innermost last.
    functions: Vec<String>,
    /// An `@import` rule being read: where it starts, and whether it names a remote sheet.
    import: Option<(usize, bool)>,
}

impl Scanner<'_> {
    fn run(&mut self) {
        while self.at < self.bytes.len() {
            let start = self.at;
            match self.bytes[start] {
                b'/' if self.bytes.get(start + 1) == Some(&b'*') => {
                    self.at = self.css[start + 2..]
                        .find("*/")
                        .map_or(self.bytes.len(), |i| start + 2 + i + 2);
                }
                quote @ (b'"' | b'\'') => {
                    let (end, value) = self.string(start + 1, quote);
                    self.at = end;
                    let in_address = self.functions.last().is_some_and(|f| takes_addresses(f));
                    if (in_address || self.import.is_some()) && is_remote(&value) {
                        self.refuse(start..end, "\"\"");
                    }
                }
                b'@' => {
                    let (end, name) = self.ident(start + 1);
                    self.at = end.max(start + 1);
                    match name.as_str() {
                        "import" => self.import = Some((start, false)),
                        // Its address names the namespace; nothing is fetched from it.
                        "namespace" => {
                            self.at = self.css[self.at..]
                                .find(';')
                                .map_or(self.bytes.len(), |i| self.at + i + 1);
                        }
                        _ => {}
                    }
                }
                b';' if self.functions.is_empty() => {
                    self.end_import(start + 1);
                    self.at += 1;
                }
                b'{' | b'}' => {
                    self.end_import(start);
                    self.functions.clear();
                    self.at += 1;
                }
                b'(' => {
                    self.functions.push(String::new());
                    self.at += 1;
                }
                b')' => {
                    self.functions.pop();
                    self.at += 1;
                }
                _ if self.starts_ident(start) => {
                    let (end, name) = self.ident(start);
                    // A backslash before a new line starts no identifier: step over it.
                    self.at = end.max(start + 1);
                    if self.bytes.get(end) != Some(&b'(') {
                        continue;
                    }
                    if name == "url" {
                        let (end, value) = self.url(end + 1);
                        self.at = end;
                        if is_remote(&value) {
                            self.refuse(start..end, "none");
                        }
                    } else {
                        self.functions.push(name);
                        self.at = end + 1;
                    }
                }
                _ => self.at += utf8_len(self.bytes[start]),
            }
        }
        self.end_import(self.bytes.len());
    }

    /// A remote reference at `range`: inside an `@import` the whole rule goes when it ends;
    /// elsewhere the reference is replaced by `with`.
    fn refuse(&mut self, range: Range<usize>, with: &'static str) {
        match &mut self.import {
            Some((_, remote)) => *remote = true,
            None => self.cuts.push((range, with)),
        }
    }

    /// The `@import` rule being read ends before `end`: it goes when it named a remote sheet.
    fn end_import(&mut self, end: usize) {
        if let Some((start, true)) = self.import.take() {
            self.cuts.push((start..end, ""));
        }
    }

    /// Whether an identifier starts at `at`: a letter, `_`, a non-ASCII character or an
    /// escape, or a `-` before one of those or another `-`.
    fn starts_ident(&self, at: usize) -> bool {
        let starts = |b: u8| b.is_ascii_alphabetic() || b == b'_' || b == b'\\' || b >= 0x80;
        match self.bytes.get(at) {
            Some(b'-') => self
                .bytes
                .get(at + 1)
                .is_some_and(|&b| starts(b) || b == b'-'),
            Some(&b) => starts(b),
            None => false,
        }
    }

    /// The identifier from `at`: where it ends and its name with escapes resolved, in lower
    /// case.
    fn ident(&self, mut at: usize) -> (usize, String) {
        let mut name = String::new();
        while let Some(&b) = self.bytes.get(at) {
            if b == b'\\' {
                match self.escape(at) {
                    Some((end, c)) => {
                        name.push(c);
                        at = end;
                    }
                    None => break,
                }
            } else if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b >= 0x80 {
                let len = utf8_len(b);
                name.push_str(&self.css[at..at + len]);
                at += len;
            } else {
                break;
            }
        }
        (at, name.to_lowercase())
    }

    /// The escape at `at` (a backslash): where it ends and the character it stands for; None
    /// for a backslash before a new line or at the end, which escapes nothing.
    fn escape(&self, at: usize) -> Option<(usize, char)> {
        let next = *self.bytes.get(at + 1)?;
        if next == b'\n' || next == b'\r' || next == b'\x0c' {
            return None;
        }
        let hex_len = self.bytes[at + 1..]
            .iter()
            .take(6)
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        if hex_len == 0 {
            let len = utf8_len(next);
            let c = self.css[at + 1..at + 1 + len].chars().next()?;
            return Some((at + 1 + len, c));
        }
        let digits = &self.css[at + 1..at + 1 + hex_len];
        let c = u32::from_str_radix(digits, 16)
            .ok()
            .and_then(char::from_u32)
            .filter(|&c| c != '\0')
            .unwrap_or('\u{FFFD}');
        let mut end = at + 1 + hex_len;
        // One white space after a hexadecimal escape belongs to it.
        if self.bytes.get(end).is_some_and(u8::is_ascii_whitespace) {
            end += if self.css[end..].starts_with("\r\n") {
                2
            } else {
                1
            };
        }
        Some((end, c))
    }

    /// The string whose content starts at `at`, closed by `quote`: where it ends (after the
    /// quote, or at an unescaped new line, which ends a bad string) and its value.
    fn string(&self, mut at: usize, quote: u8) -> (usize, String) {
        let mut value = String::new();
        while let Some(&b) = self.bytes.get(at) {
            match b {
                _ if b == quote => return (at + 1, value),
                b'\n' | b'\r' | b'\x0c' => return (at, value),
                b'\\' => match self.escape(at) {
                    Some((end, c)) => {
                        value.push(c);
                        at = end;
                    }
                    // An escaped new line continues the string.
                    None => at += 2,
                },
                _ => {
                    let len = utf8_len(b);
                    value.push_str(&self.css[at..at + len]);
                    at += len;
                }
            }
        }
        (self.bytes.len(), value)
    }

    /// The address of the `url(` whose argument starts at `at`: where the function ends (after
    /// its `)`) and the address, quoted or not.
    fn url(&self, at: usize) -> (usize, String) {
        let skip_space = |mut at: usize| {
            while self.bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            at
        };
        let at = skip_space(at);
        let (mut end, value) = match self.bytes.get(at) {
            Some(&quote @ (b'"' | b'\'')) => self.string(at + 1, quote),
            _ => {
                let mut value = String::new();
                let mut at = at;
                while let Some(&b) = self.bytes.get(at) {
                    match b {
                        b')' => break,
                        b'\\' => match self.escape(at) {
                            Some((end, c)) => {
                                value.push(c);
                                at = end;
                            }
                            None => at += 1,
                        },
                        _ => {
                            let len = utf8_len(b);
                            value.push_str(&self.css[at..at + len]);
                            at += len;
                        }
                    }
                }
                (at, value)
            }
        };
        // To the closing parenthesis (a malformed url() runs to it as well).
        end = self.css[end..]
            .find(')')
            .map_or(self.bytes.len(), |i| end + i + 1);
        (end, value)
    }
}

/// The length of the UTF-8 character that starts with `first`.
fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::clean;

    fn cleaned(css: &str) -> String {
        clean(css).map_or_else(|| css.to_string(), |(text, _)| text)
    }

    #[test]
    fn a_sheet_that_fetches_nothing_from_outside_is_left_as_it_was() {
        for css in [
            "p { background: url(../images/a.png) } h1 { font-family: \"Times New Roman\" }",
            "@import url(base.css); @import 'more.css' screen;",
            "@font-face { src: url(\"fonts/a.woff2\") format('woff2') }",
            "i { background: url(data:image/png;base64,AAAA) }",
            "q::before { content: \"see http://example.org\" }",
            "@namespace svg url(http://www.w3.org/2000/svg);",
        ] {
            assert!(clean(css).is_none(), "{css}");
        }
    }

    #[test]
    fn remote_urls_become_none_however_they_are_spelled() {
        assert_eq!(
            cleaned("p{background:url(https://evil.example/bg.png) no-repeat}"),
            "p{background:none no-repeat}"
        );
        assert_eq!(
            cleaned("p{background:URL( 'HTTPS://evil.example/a.png' )}"),
            "p{background:none}"
        );
        assert_eq!(
            cleaned(r"p{background:\75 rl(//evil.example/a.png)}"),
            "p{background:none}"
        );
        assert_eq!(
            cleaned(r"p{background:u\72l(ht\74ps://evil.example/a.png)}"),
            "p{background:none}"
        );
        assert_eq!(
            cleaned("p{cursor:url(file:///etc/passwd),auto}"),
            "p{cursor:none,auto}"
        );
        assert_eq!(
            cleaned("p{background:url(java\tscript:alert(1))}"),
            "p{background:none)}"
        );
    }

    #[test]
    fn remote_imports_go_with_their_rule() {
        assert_eq!(
            cleaned("@import url(https://evil.example/a.css);\np{}"),
            "\np{}"
        );
        assert_eq!(
            cleaned("@import \"https://evil.example/a.css\" screen; @import 'ok.css';"),
            " @import 'ok.css';"
        );
        assert_eq!(cleaned("@IMPORT /* x */ '//evil.example/a.css'"), "");
    }

    #[test]
    fn strings_are_addresses_only_where_a_function_reads_them_so() {
        assert_eq!(
            cleaned("p{background-image:-webkit-image-set(\"https://evil.example/a.png\" 1x, 'b.png' 2x)}"),
            "p{background-image:-webkit-image-set(\"\" 1x, 'b.png' 2x)}"
        );
        assert_eq!(
            cleaned("p{background:src(\"https://evil.example/a.png\")}"),
            "p{background:src(\"\")}"
        );
    }

    #[test]
    fn a_malformed_sheet_is_read_to_its_end_without_a_fault() {
        for css in [
            "\\\n",
            "a\\\nb",
            "\\",
            "url(",
            "url(\"",
            "url(\\",
            "'unclosed",
            "\"a\\",
            "/* open",
            "@",
            "@import",
            "-\\\n",
            "p{background:url(é\\é)}",
            "\\1F600 rl(https://x)",
            "\\110000rl(x)",
        ] {
            let _ = clean(css);
        }
        assert_eq!(cleaned("@import url(https://evil.example/a.css"), "");
    }

    #[test]
    fn a_sheet_written_as_utf8_says_so() {
        assert_eq!(
            super::declare_utf8("@charset \"iso-8859-1\"; p{}"),
            "@charset \"UTF-8\"; p{}"
        );
        assert_eq!(super::declare_utf8("p{}"), "p{}");
    }

    #[test]
    fn comments_and_strings_hide_nothing_and_are_not_read_as_code() {
        assert!(clean("/* url(https://evil.example/a.png) */ p{}").is_none());
        assert!(clean("p::after{content:\"url(https://evil.example/a.png)\"}").is_none());
        assert_eq!(
            cleaned("p{background:/**/url(https://evil.example/a.png)}"),
            "p{background:/**/none}"
        );
    }
}
