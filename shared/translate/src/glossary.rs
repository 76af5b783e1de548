//! Glossary matching: which entries a piece of text uses, whole words only, case- and
//! Unicode-aware ("Whale" matches "whale", not "whalebone"; "Ahab's" matches "Ahab").

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlossaryEntry {
    pub source: String,
    pub target: String,
    pub context: Option<String>,
}

/// Whether `term` occurs in `text` as a whole word (or phrase), ignoring case.
pub fn contains_term(text: &str, term: &str) -> bool {
    find_term(text, term).is_some()
}

/// The byte range of the first whole-word occurrence of `term` in `text`, ignoring case.
pub fn find_term(text: &str, term: &str) -> Option<(usize, usize)> {
    let term = term.trim();
    if term.is_empty() {
        return None;
    }
    let folded_term: Vec<char> = term.chars().flat_map(char::to_lowercase).collect();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let boundary_before = i == 0 || !is_word_char(chars[i - 1].1);
        if boundary_before {
            if let Some(end) = match_at(&chars, i, &folded_term) {
                let boundary_after = end == chars.len() || !is_word_char(chars[end].1);
                if boundary_after {
                    let start_byte = chars[i].0;
                    let end_byte = chars.get(end).map_or(text.len(), |(b, _)| *b);
                    return Some((start_byte, end_byte));
                }
            }
        }
        i += 1;
    }
    None
}

/// Index after the match of `folded` starting at `start`, comparing lower-cased characters.
fn match_at(chars: &[(usize, char)], start: usize, folded: &[char]) -> Option<usize> {
    let mut j = start;
    let mut k = 0;
    while k < folded.len() {
        let (_, c) = *chars.get(j)?;
        for lower in c.to_lowercase() {
            if folded.get(k) != Some(&lower) {
                return None;
            }
            k += 1;
        }
        j += 1;
    }
    Some(j)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The entries whose source term occurs in `text`.
pub fn matching<'a>(entries: &'a [GlossaryEntry], text: &str) -> Vec<&'a GlossaryEntry> {
    entries
        .iter()
        .filter(|e| contains_term(text, &e.source))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_match_whole_words_in_any_case() {
        assert!(contains_term("The White Whale!", "whale"));
        assert!(contains_term("Ahab's leg", "Ahab"));
        assert!(!contains_term("a whalebone corset", "whale"));
        assert!(!contains_term("narwhale", "whale"));
        assert!(contains_term("Captain Ahab spoke", "captain ahab"));
        assert!(contains_term("ÉTÉ ardent", "été"));
        assert!(!contains_term("anything", ""));
    }

    #[test]
    fn only_entries_in_the_text_are_matched() {
        let entries = vec![
            GlossaryEntry {
                source: "whale".into(),
                target: "ballena".into(),
                context: None,
            },
            GlossaryEntry {
                source: "harpoon".into(),
                target: "arpón".into(),
                context: None,
            },
        ];
        let found = matching(&entries, "Call me Ishmael; the whale waits.");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].target, "ballena");
    }
}
