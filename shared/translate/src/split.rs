//! Blocks too large for one chunk, cut into parts that fit, and joined back after translation.
//!
//! The chunker never splits a block, and a book of one paragraph would otherwise go to the model
//! as one request of hundreds of thousands of tokens, which no model accepts. A part ends at a
//! sentence end if one fits, else at a space, else anywhere outside a tag or an entity (text
//! without spaces: CJK, or long runs of symbols). Marks open at a cut are closed at the end of
//! the part and opened again at the start of the next, so every part is well-formed markup the
//! checks accept; the joined block then reads `<i>one.</i> <i>two.</i>`, which renders the same.

use crate::model::estimate_tokens;

/// One part of a block: its markup, and the whitespace that followed it in the block (put back
/// between the translated parts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub text: String,
    pub separator: String,
}

/// How good a place to cut is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Anywhere,
    Space,
    SentenceEnd,
}

/// A place the block may be cut: byte offset where the next part starts, where this part's
/// text ends (before the whitespace), and the marks open there.
#[derive(Debug, Clone)]
struct Cut {
    next: usize,
    end: usize,
    rank: Rank,
    open: Vec<String>,
}

/// Splits `markup` into parts of at most about `max_tokens` estimated tokens each (one part when
/// it fits). Joining the parts' texts with their separators gives the block back, up to marks
/// closed and reopened at the cuts.
pub fn split_block(markup: &str, max_tokens: u64) -> Vec<Part> {
    if estimate_tokens(markup) <= max_tokens {
        return vec![Part {
            text: markup.to_string(),
            separator: String::new(),
        }];
    }
    let cuts = cuts(markup);
    let max_chars = usize::try_from(max_tokens.max(8) * 4).unwrap_or(usize::MAX);
    let mut parts = Vec::new();
    let mut start = 0;
    let mut open_at_start: Vec<String> = Vec::new();
    let mut first_cut = 0;
    loop {
        let reopened: usize = open_at_start.iter().map(|t| t.chars().count()).sum();
        let rest = &markup[start..];
        if rest.chars().count() + reopened <= max_chars {
            parts.push(Part {
                text: format!("{}{}", open_at_start.concat(), rest),
                separator: String::new(),
            });
            return parts;
        }
        // Room for the part's own text, leaving space for its reopened and closing marks.
        let room = max_chars.saturating_sub(reopened * 2).max(max_chars / 4);
        let limit = rest
            .char_indices()
            .nth(room)
            .map_or(markup.len(), |(i, _)| start + i);
        while first_cut < cuts.len() && cuts[first_cut].next <= start {
            first_cut += 1;
        }
        let candidates = cuts[first_cut..]
            .iter()
            .take_while(|c| c.next <= limit)
            .filter(|c| c.end > start);
        // The best kind of place there is, as late as possible.
        let Some(cut) = candidates.max_by_key(|c| (c.rank, c.next)).cloned() else {
            // Not even a character boundary outside a tag fits (a tag longer than the room):
            // the rest goes as one part rather than a broken one.
            parts.push(Part {
                text: format!("{}{}", open_at_start.concat(), rest),
                separator: String::new(),
            });
            return parts;
        };
        let closing: String = cut.open.iter().rev().map(|t| closing_of(t)).collect();
        parts.push(Part {
            text: format!(
                "{}{}{}",
                open_at_start.concat(),
                &markup[start..cut.end],
                closing
            ),
            separator: markup[cut.end..cut.next].to_string(),
        });
        start = cut.next;
        open_at_start = cut.open;
    }
}

/// Joins translated parts with the separators of the parts they came from.
pub fn join_parts<'a>(texts: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut joined = String::new();
    for (text, separator) in texts {
        joined.push_str(text);
        joined.push_str(separator);
    }
    joined
}

/// Every place outside a tag or an entity where a part may end, in order.
fn cuts(markup: &str) -> Vec<Cut> {
    let mut cuts = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut chars = markup.char_indices().peekable();
    // The last character of text that was not a closing quote or bracket.
    let mut before_closers: Option<char> = None;
    while let Some((at, c)) = chars.next() {
        // Where the next part would start, where this one's text would end, and how good a
        // place that is.
        let (next, end, rank) = match c {
            '<' | '&' => {
                // A tag or an entity is never cut: skip to its end.
                let end = if c == '<' {
                    markup[at..].find('>').map_or(markup.len(), |e| at + e + 1)
                } else {
                    markup[at..].find(';').map_or(at + 1, |e| at + e + 1)
                };
                if c == '<' {
                    track_tag(&markup[at..end], &mut open);
                } else {
                    before_closers = Some('&');
                }
                while chars.peek().is_some_and(|(i, _)| *i < end) {
                    chars.next();
                }
                (end, end, Rank::Anywhere)
            }
            c if c.is_whitespace() => {
                let mut next = at + c.len_utf8();
                while let Some((i, w)) = chars.next_if(|(_, w)| w.is_whitespace()) {
                    next = i + w.len_utf8();
                }
                let rank = if before_closers.is_some_and(ends_sentence) {
                    Rank::SentenceEnd
                } else {
                    Rank::Space
                };
                before_closers = Some(' ');
                if at == 0 {
                    continue;
                }
                (next, at, rank)
            }
            c => {
                if !is_closer(c) {
                    before_closers = Some(c);
                }
                let next = at + c.len_utf8();
                // Scripts without spaces end sentences without them too.
                let rank = if matches!(c, '。' | '！' | '？') {
                    Rank::SentenceEnd
                } else {
                    Rank::Anywhere
                };
                (next, next, rank)
            }
        };
        if next < markup.len() {
            cuts.push(Cut {
                next,
                end,
                rank,
                open: open.clone(),
            });
        }
    }
    cuts
}

/// Keeps `open` (the marks open so far) in step with one tag.
fn track_tag(tag: &str, open: &mut Vec<String>) {
    if let Some(name) = tag.strip_prefix("</") {
        let name = name.trim_end_matches('>');
        if let Some(i) = open.iter().rposition(|t| tag_name(t) == name) {
            open.remove(i);
        }
    } else if !tag.ends_with("/>") {
        open.push(tag.to_string());
    }
}

fn ends_sentence(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…' | '。' | '！' | '？' | ';')
}

fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | '”' | '’' | '»' | ')' | ']')
}

/// `i` of `<i>`, `a` of `<a href="…">`.
fn tag_name(open_tag: &str) -> &str {
    open_tag
        .trim_start_matches('<')
        .trim_end_matches('>')
        .split_whitespace()
        .next()
        .unwrap_or_default()
}

fn closing_of(open_tag: &str) -> String {
    format!("</{}>", tag_name(open_tag))
}

#[cfg(test)]
mod tests {
    use super::*;
    use booktr_formats::markup;

    fn joined(parts: &[Part]) -> String {
        join_parts(
            parts
                .iter()
                .map(|p| (p.text.as_str(), p.separator.as_str())),
        )
    }

    #[test]
    fn a_block_that_fits_is_one_part() {
        let parts = split_block("Call me Ishmael.", 100);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].text, "Call me Ishmael.");
    }

    #[test]
    fn a_long_block_is_cut_at_sentence_ends_into_parts_that_fit() {
        let sentence = "Some years ago, never mind how long precisely, I went to sea. ";
        let block = sentence.repeat(200);
        let block = block.trim_end();
        let parts = split_block(block, 100);
        assert!(parts.len() > 10, "{}", parts.len());
        for part in &parts {
            assert!(estimate_tokens(&part.text) <= 100, "{}", part.text);
            assert!(part.text.ends_with("sea."), "{}", part.text);
        }
        assert_eq!(joined(&parts), block);
    }

    #[test]
    fn a_sentence_longer_than_a_part_is_cut_at_spaces() {
        let block = "word ".repeat(1000);
        let block = block.trim_end();
        let parts = split_block(block, 50);
        for part in &parts {
            assert!(estimate_tokens(&part.text) <= 50);
            assert!(!part.text.starts_with(' ') && !part.text.ends_with(' '));
        }
        assert_eq!(joined(&parts), block);
    }

    #[test]
    fn text_without_spaces_is_cut_anywhere_but_inside_an_entity() {
        let block = "我是一只猫&amp;".repeat(400);
        let parts = split_block(&block, 40);
        assert!(parts.len() > 1);
        for part in &parts {
            assert!(estimate_tokens(&part.text) <= 40);
            markup::tags(&part.text).expect("each part is well-formed");
        }
        assert_eq!(joined(&parts), block);
    }

    #[test]
    fn marks_open_at_a_cut_are_closed_and_reopened_so_every_part_is_well_formed() {
        let inner = "It is a way I have of driving off the spleen. ".repeat(40);
        let block = format!(
            "<i>{}</i> and <a href=\"#n1\">{}</a><ref id=\"n1\"/>",
            inner.trim_end(),
            inner.trim_end()
        );
        let parts = split_block(&block, 60);
        assert!(parts.len() > 4);
        for part in &parts {
            markup::tags(&part.text).unwrap_or_else(|e| panic!("{e}: {}", part.text));
            assert!(estimate_tokens(&part.text) <= 60, "{}", part.text);
        }
        let rejoined = joined(&parts);
        assert_eq!(
            markup::plain_text(&rejoined),
            markup::plain_text(&block),
            "the same text"
        );
        assert!(rejoined.contains("spleen.</i> <i>It is"), "{rejoined}");
        assert!(rejoined.contains("<a href=\"#n1\">It is"), "{rejoined}");
    }
}
