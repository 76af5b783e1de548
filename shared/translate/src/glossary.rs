//! Glossary matching: which entries a piece of text uses, whole words only, case- and
//! Unicode-aware ("Whale" matches "whale", not "whalebone"; "Ahab's" matches "Ahab").

use std::collections::HashMap;

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
    TermSet::new([term])
        .earliest(text)
        .map(|found| (found.start, found.end))
}

/// Terms looked for together, each as [`find_term`] would: whole words, ignoring case.
///
/// A text is read once for all of them. Where a word may start, only the terms whose first
/// lower-cased letter is that character's are tried, so a book-wide list of hundreds of terms
/// costs little more per text than a few. Built once per list and used on many texts.
#[derive(Debug, Clone, Default)]
pub struct TermSet {
    /// Each term trimmed and lower-cased, in the order given.
    folded: Vec<Vec<char>>,
    /// Indexes of the terms by their first lower-cased character, ascending.
    by_first: HashMap<char, Vec<usize>>,
}

/// One occurrence: the byte range in the text and which term (its index in the set) it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub start: usize,
    pub end: usize,
    pub term: usize,
}

impl TermSet {
    pub fn new<'a>(terms: impl IntoIterator<Item = &'a str>) -> TermSet {
        let mut set = TermSet::default();
        for (index, term) in terms.into_iter().enumerate() {
            let folded: Vec<char> = term.trim().chars().flat_map(char::to_lowercase).collect();
            // A blank term is kept (indexes stay those of the input) but never found.
            if let Some(first) = folded.first() {
                set.by_first.entry(*first).or_default().push(index);
            }
            set.folded.push(folded);
        }
        set
    }

    /// The first occurrence of any term in `text`; where several start at the same place, the
    /// one given first.
    pub fn earliest(&self, text: &str) -> Option<Found> {
        self.occurrences(text).next()
    }

    /// For each term in order, whether it occurs in `text`.
    pub fn present_in(&self, text: &str) -> Vec<bool> {
        let mut present = vec![false; self.folded.len()];
        let mut missing = self.by_first.values().map(Vec::len).sum::<usize>();
        for found in self.occurrences(text) {
            if !present[found.term] {
                present[found.term] = true;
                missing -= 1;
                if missing == 0 {
                    break;
                }
            }
        }
        present
    }

    /// The items whose term occurs in `text`; `items` are those the set was built from, in order.
    pub fn keep_present<'a, T>(&self, items: &'a [T], text: &str) -> Vec<&'a T> {
        items
            .iter()
            .zip(self.present_in(text))
            .filter_map(|(item, present)| present.then_some(item))
            .collect()
    }

    /// Whether any term occurs in `text`.
    pub fn any_in(&self, text: &str) -> bool {
        self.earliest(text).is_some()
    }

    /// Every whole-word occurrence in text order (the same term may appear more than once).
    fn occurrences<'s, 't>(&'s self, text: &'t str) -> impl Iterator<Item = Found> + use<'s, 't> {
        let mut after_word_char = false;
        text.char_indices().flat_map(move |(start, c)| {
            let may_start = !after_word_char;
            after_word_char = is_word_char(c);
            let candidates: &[usize] = if may_start {
                c.to_lowercase()
                    .next()
                    .and_then(|first| self.by_first.get(&first))
                    .map_or(&[], Vec::as_slice)
            } else {
                &[]
            };
            candidates.iter().filter_map(move |&term| {
                let end = start + folded_prefix_len(&text[start..], &self.folded[term])?;
                let word_goes_on = text[end..].chars().next().is_some_and(is_word_char);
                (!word_goes_on).then_some(Found { start, end, term })
            })
        })
    }
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
    sources(entries).keep_present(entries, text)
}

/// The entries' source terms as one set, in the entries' order.
pub fn sources(entries: &[GlossaryEntry]) -> TermSet {
    TermSet::new(entries.iter().map(|e| e.source.as_str()))
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
    fn a_term_set_finds_each_term_as_find_term_would() {
        let terms = TermSet::new(["whale", "Captain Ahab", "  ", "été", "sea"]);
        let text = "The whalebone of Captain Ahab's whale, L'ÉTÉ.";
        assert_eq!(terms.present_in(text), [true, true, false, true, false]);
        assert!(terms.any_in(text));
        assert!(!terms.any_in("nothing here"));
        assert_eq!(
            terms.earliest(text),
            Some(Found {
                start: 17,
                end: 29,
                term: 1
            })
        );
    }

    #[test]
    fn where_two_terms_start_together_the_one_given_first_is_earliest() {
        let text = "Captain Ahab";
        let long_first = TermSet::new(["captain ahab", "captain"]).earliest(text);
        let short_first = TermSet::new(["captain", "captain ahab"]).earliest(text);
        assert_eq!(long_first.map(|f| (f.end, f.term)), Some((12, 0)));
        assert_eq!(short_first.map(|f| (f.end, f.term)), Some((7, 0)));
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
