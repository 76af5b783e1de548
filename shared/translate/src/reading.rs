//! Reading a model's answer strictly: only a block's own text is kept.
//!
//! The protocol (see `protocol`) sends every block as one line, `[[id]] text`, its line breaks
//! written as `<br/>` marks, so verse and code travel as one line and come back as one. A
//! block's text is therefore exactly the rest of its marker line: where it ends is never a
//! guess. Everything else in the answer is removed and counted by where it stood:
//!
//! - reasoning sections (`<think>…</think>` and its kin), before anything else is read;
//! - Markdown fence lines (```` ``` ````, ```` ```text ````);
//! - lines before the first marker (a preamble: "Sure! Here is the translation:");
//! - lines between blocks and after the last one (a sign-off, a note, a block the model
//!   continued on a new line: never glued onto a block, whose text would then hold it);
//! - a second answer for a marker already read, and markers nobody asked for.
//!
//! `TERM:` lines are the review's term report, `WHY:` lines the reason the review or the polish
//! gives for the block before it, and `NO CHANGES` their answer when a chunk needs none: read
//! separately, never part of a block.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What was removed from answers, in lines (reasoning in sections).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Removed {
    /// `<think>` (or `<thinking>`, `<reasoning>`) sections.
    pub reasoning: u32,
    /// Markdown fence lines.
    pub fences: u32,
    /// Lines before the first block.
    pub before: u32,
    /// Lines between blocks (text the model put on a line of its own).
    pub between: u32,
    /// Lines after the last block (sign-offs, notes).
    pub after: u32,
    /// Second answers for a block already answered.
    pub duplicates: u32,
    /// Blocks nobody asked for.
    pub extra: u32,
}

impl Removed {
    pub fn total(&self) -> u32 {
        self.reasoning
            + self.fences
            + self.before
            + self.between
            + self.after
            + self.duplicates
            + self.extra
    }
}

impl std::ops::AddAssign for Removed {
    fn add_assign(&mut self, o: Removed) {
        self.reasoning += o.reasoning;
        self.fences += o.fences;
        self.before += o.before;
        self.between += o.between;
        self.after += o.after;
        self.duplicates += o.duplicates;
        self.extra += o.extra;
    }
}

/// A model's answer, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// Each asked-for block's text, as found on its marker line.
    pub blocks: BTreeMap<usize, String>,
    /// `TERM:` lines of a review answer: (source, translation).
    pub terms: Vec<(String, String)>,
    /// `WHY:` lines: the reason given for a block's change, by the block before the line.
    pub reasons: BTreeMap<usize, String>,
    pub removed: Removed,
    /// The marker of the last block in the answer, asked for or not: where an answer stopped
    /// at its token limit was cut.
    pub ends_in: Option<usize>,
}

/// Reads an answer to a request for the blocks `asked` (None: any marker is taken, for
/// reading the blocks of a prompt).
pub fn read_answer(text: &str, asked: Option<&[usize]>) -> Answer {
    let mut answer = Answer::default();
    let (text, sections) = without_reasoning(text);
    answer.removed.reasoning = sections;
    // Lines that are not blocks, held until it is known whether a block follows them.
    let mut loose = 0;
    let mut seen_marker = false;
    // The marker most recently read, which a `WHY:` line explains.
    let mut last = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with("```") {
            answer.removed.fences += 1;
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("TERM:") {
            if let Some(term) = parse_term(rest) {
                answer.terms.push(term);
            }
            continue;
        }
        if let Some(reason) = trimmed.strip_prefix("WHY:") {
            if let Some(id) = last {
                answer.reasons.insert(id, reason.trim().to_string());
            }
            continue;
        }
        if trimmed
            .trim_end_matches('.')
            .eq_ignore_ascii_case("no changes")
        {
            continue;
        }
        let Some((id, rest)) = marker(trimmed) else {
            loose += 1;
            continue;
        };
        if seen_marker {
            answer.removed.between += loose;
        } else {
            answer.removed.before += loose;
        }
        loose = 0;
        seen_marker = true;
        last = Some(id);
        if asked.is_some_and(|asked| !asked.contains(&id)) {
            answer.removed.extra += 1;
        } else {
            match answer.blocks.entry(id) {
                std::collections::btree_map::Entry::Occupied(_) => answer.removed.duplicates += 1,
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(rest.trim().to_string());
                }
            }
        }
    }
    answer.ends_in = last;
    if seen_marker {
        answer.removed.after += loose;
    } else {
        answer.removed.before += loose;
    }
    answer
}

/// The answer without its reasoning sections, and how many there were. A section never closed
/// runs to the end: an answer that is all reasoning has no blocks.
fn without_reasoning(text: &str) -> (String, u32) {
    const TAGS: [(&str, &str); 3] = [
        ("<think>", "</think>"),
        ("<thinking>", "</thinking>"),
        ("<reasoning>", "</reasoning>"),
    ];
    let mut out = text.to_string();
    let mut sections = 0;
    for (open, close) in TAGS {
        while let Some(start) = out.find(open) {
            let end = out[start..]
                .find(close)
                .map_or(out.len(), |at| start + at + close.len());
            out.replace_range(start..end, "\n");
            sections += 1;
        }
        // A closing tag without its opening one: the reasoning began before the answer did
        // (some servers strip the opening tag).
        if let Some(at) = out.find(close) {
            out.replace_range(..at + close.len(), "\n");
            sections += 1;
        }
    }
    (out, sections)
}

/// `[[id]] text`, also as models decorate it: `**[[3]]**`, `- [[3]]:`, `> [[3]]`.
fn marker(line: &str) -> Option<(usize, &str)> {
    let line = line.trim_start_matches(['*', '-', '>', '#', ' ']);
    let rest = line.strip_prefix("[[")?;
    let end = rest.find("]]")?;
    let id = rest[..end].trim().parse().ok()?;
    let rest = rest[end + 2..].trim_start_matches(['*', ':', ' ']);
    Some((id, rest))
}

fn parse_term(rest: &str) -> Option<(String, String)> {
    let (source, target) = rest.split_once("=>")?;
    let unquote = |s: &str| {
        let s = s.trim();
        serde_json::from_str::<String>(s).unwrap_or_else(|_| s.trim_matches('"').to_string())
    };
    let (source, target) = (unquote(source), unquote(target));
    (!source.is_empty() && !target.is_empty()).then_some((source, target))
}

/// The answer to a one-block request in the simplest form (the translation alone, no marker):
/// reasoning, fences and a chat preamble or sign-off line removed. None when what is left is
/// not one line of text (a block is one line), so that nothing but the translation is kept.
pub fn read_plain_answer(text: &str) -> (Option<String>, Removed) {
    let mut removed = Removed::default();
    let (text, sections) = without_reasoning(text);
    removed.reasoning = sections;
    let mut lines = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("```") {
            removed.fences += 1;
        } else if crate::checks::is_chatter_line(line) {
            if lines.is_empty() {
                removed.before += 1;
            } else {
                removed.after += 1;
            }
        } else {
            lines.push(line);
        }
    }
    // A marker the model added anyway is not part of the text.
    let single = match lines.as_slice() {
        [line] => Some(
            marker(line)
                .map_or(*line, |(_, rest)| rest)
                .trim()
                .to_string(),
        ),
        _ => None,
    };
    (single, removed)
}

/// A block's answer without the characters it must not bring into the book: those XML 1.0
/// forbids (C0 controls other than tab, line feed and carriage return; U+FFFE and U+FFFF),
/// which would make the EPUB unreadable, and the bidirectional embedding, override and isolate
/// controls (U+202A to U+202E, U+2066 to U+2069) that the block's `source` does not have, which
/// can reorder what a reader sees (the "Trojan Source" trick) and which a translation has no
/// reason to add.
pub fn clean_characters(source: &str, answer: &str) -> String {
    let forbidden = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}' || c == '\u{FFFF}'
    };
    let bidi = |c: char| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    if !answer.chars().any(|c| forbidden(c) || bidi(c)) {
        return answer.to_string();
    }
    answer
        .chars()
        .filter(|&c| !forbidden(c) && (!bidi(c) || source.contains(c)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_xml_forbids_are_removed_and_bidi_controls_unless_the_source_has_them() {
        assert_eq!(
            clean_characters(
                "Call me Ishmael.",
                "Llamadme\u{0}\u{1b} Ismael.\u{FFFE}\u{FFFF}"
            ),
            "Llamadme Ismael."
        );
        assert_eq!(
            clean_characters("a\tb", "a\tb\r\nc"),
            "a\tb\r\nc",
            "tab, line feed and carriage return are XML's"
        );
        let trojan = "Llamadme \u{202E}lemsI\u{202C} \u{2067}ya\u{2069}.";
        assert_eq!(
            clean_characters("Call me Ishmael.", trojan),
            "Llamadme lemsI ya."
        );
        // A source that embeds a right-to-left name keeps its controls in the translation.
        let source = "The sign said \u{2067}שלום\u{2069} in Hebrew.";
        let answer = "El letrero decía \u{2067}שלום\u{2069} en hebreo.";
        assert_eq!(clean_characters(source, answer), answer);
        assert_eq!(
            clean_characters(
                source,
                "El letrero \u{202E}decía\u{202C} \u{2067}שלום\u{2069}."
            ),
            "El letrero decía \u{2067}שלום\u{2069}.",
            "only the controls the source has"
        );
    }

    #[test]
    fn a_preamble_a_sign_off_and_a_fence_are_removed_and_counted() {
        let answer = read_answer(
            "Sure! Here is the translation:\n```\n[[1]] Llamadme Ismael.\n[[2]] Hace años.\n```\nI hope this helps!",
            Some(&[1, 2]),
        );
        assert_eq!(answer.blocks[&1], "Llamadme Ismael.");
        assert_eq!(
            answer.blocks[&2], "Hace años.",
            "the sign-off is not the last block's continuation"
        );
        assert_eq!(
            (
                answer.removed.before,
                answer.removed.fences,
                answer.removed.after
            ),
            (1, 2, 1)
        );
    }

    #[test]
    fn an_editors_reasons_and_no_changes_are_read_apart_from_the_blocks() {
        let answer = read_answer(
            "[[3]] Hace muchos años.\nWHY: tense\n[[5]] Llamadme Ismael.\nTERM: \"Ishmael\" => \"Ismael\"",
            Some(&[3, 4, 5]),
        );
        assert_eq!(answer.blocks.keys().copied().collect::<Vec<_>>(), [3, 5]);
        assert_eq!(answer.reasons[&3], "tense");
        assert!(!answer.reasons.contains_key(&5));
        assert_eq!(answer.removed.total(), 0);
        let none = read_answer("NO CHANGES.\nTERM: \"a\" => \"b\"", Some(&[1]));
        assert!(none.blocks.is_empty());
        assert_eq!(none.removed.total(), 0, "not chatter");
        assert_eq!(none.terms.len(), 1);
    }

    #[test]
    fn a_block_continued_on_a_new_line_keeps_only_its_marker_line() {
        let answer = read_answer(
            "[[1]] Capítulo 1.\nLlamadme Ismael.\n[[2]] Hace años.",
            Some(&[1, 2]),
        );
        assert_eq!(answer.blocks[&1], "Capítulo 1.");
        assert_eq!(answer.removed.between, 1);
    }

    #[test]
    fn reasoning_sections_go_even_unclosed_or_without_their_opening() {
        let answer = read_answer(
            "<think>\nThe user wants Spanish.\n[[1]] draft\n</think>\n[[1]] Hola.",
            Some(&[1]),
        );
        assert_eq!(answer.blocks[&1], "Hola.");
        assert_eq!(answer.removed.reasoning, 1);
        assert!(read_answer("<think>[[1]] Hola.", Some(&[1]))
            .blocks
            .is_empty());
        let answer = read_answer("Okay, Spanish.</think>\n[[1]] Hola.", Some(&[1]));
        assert_eq!(answer.blocks[&1], "Hola.");
    }

    #[test]
    fn duplicates_extras_decorated_markers_and_terms() {
        let answer = read_answer(
            "**[[1]]** Hola.\n[[1]] Otra vez.\n[[7]] ?\n- [[2]]: Adiós.\nTERM: \"Ishmael\" => \"Ismael\"\nTERM: Ahab => Acab",
            Some(&[1, 2]),
        );
        assert_eq!(answer.blocks[&1], "Hola.");
        assert_eq!(answer.blocks[&2], "Adiós.");
        assert_eq!((answer.removed.duplicates, answer.removed.extra), (1, 1));
        assert_eq!(answer.ends_in, Some(2));
        assert_eq!(
            read_answer("[[1]] Hola.\n[[2]] Adi", Some(&[1])).ends_in,
            Some(2)
        );
        assert_eq!(
            answer.terms,
            [
                ("Ishmael".into(), "Ismael".into()),
                ("Ahab".into(), "Acab".into())
            ]
        );
    }

    #[test]
    fn a_plain_answer_is_one_line_of_text_or_nothing() {
        let (text, removed) =
            read_plain_answer("Here is the Spanish translation:\n\nLlamadme Ismael.\n");
        assert_eq!(text.as_deref(), Some("Llamadme Ismael."));
        assert_eq!(removed.before, 1);
        let (text, _) = read_plain_answer("Llamadme Ismael.\nHace unos años, fui al mar.");
        assert_eq!(text, None, "two lines for a one-line block");
        let (text, _) = read_plain_answer("<think>hm</think>[[4]] Llamadme Ismael.");
        assert_eq!(text.as_deref(), Some("Llamadme Ismael."));
    }
}
