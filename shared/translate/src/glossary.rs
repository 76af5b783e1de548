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
///
/// One pass over `text` without allocating: a match is tried only where a word starts with the
/// term's first lower-cased letter. The offline engine calls this for every term of a book-wide
/// list on every block, so it is on the whole-book path.
pub fn find_term(text: &str, term: &str) -> Option<(usize, usize)> {
    let folded: Vec<char> = term.trim().chars().flat_map(char::to_lowercase).collect();
    let first = *folded.first()?;
    let mut after_word_char = false;
    for (start, c) in text.char_indices() {
        if !after_word_char && c.to_lowercase().next() == Some(first) {
            if let Some(len) = folded_prefix_len(&text[start..], &folded) {
                let end = start + len;
                if !text[end..].chars().next().is_some_and(is_word_char) {
                    return Some((start, end));
                }
            }
        }
        after_word_char = is_word_char(c);
    }
    None
}

/// The byte length of the start of `text` whose lower-cased characters are exactly `folded`.
fn folded_prefix_len(text: &str, folded: &[char]) -> Option<usize> {
    let mut k = 0;
    for (at, c) in text.char_indices() {
        if k == folded.len() {
            return Some(at);
        }
        for lower in c.to_lowercase() {
            if folded.get(k) != Some(&lower) {
                return None;
            }
            k += 1;
        }
    }
    (k == folded.len()).then_some(text.len())
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
        assert!(!contains_term("anything", "   "));
        assert!(contains_term("whale", " whale "));
        assert!(!contains_term("wha", "whale"));
        assert!(contains_term("the whale", "whale"));
    }

    #[test]
    fn a_match_is_the_byte_range_of_the_original_text() {
        assert_eq!(find_term("L'ÉTÉ ardent", "été"), Some((2, 7)));
        assert_eq!(find_term("whalebone, then Whale", "whale"), Some((16, 21)));
        assert_eq!(find_term("Ahab", "ahab"), Some((0, 4)));
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
