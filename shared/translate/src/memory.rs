//! What the user's translation memory gives a chapter (the memory itself, per user and language
//! pair, is `booktr_core::memory`): the blocks it supplies whole, which no model is asked for,
//! and for others a close passage translated before, shown to the model beside the block.
//!
//! Close is measured on the passages' plain text (marks left out) as the second opinion
//! measures two translations: chrF, the character n-gram F-score (n = 1 to 6, whitespace left
//! out; `agreement`), [`CLOSE_ENOUGH`] or more of 100.

use std::collections::BTreeMap;

use booktr_formats::markup;

use crate::agreement::Grams;

/// A passage translated before counts as close to a block at this chrF or more: a sentence or
/// two changed in a paragraph, a word in a sentence.
pub const CLOSE_ENOUGH: f64 = 85.0;

/// What the memory holds for a chapter's blocks, by block index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remembered {
    /// Blocks whose source, text and marks, was translated and accepted before exactly so:
    /// the accepted text, which the chapter takes without a model call.
    pub exact: BTreeMap<usize, String>,
    /// Blocks with a close passage translated before (see [`CLOSE_ENOUGH`]): that passage's
    /// source and accepted text, which the first pass's request shows beside the block.
    pub similar: BTreeMap<usize, Similar>,
}

/// A close passage translated before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Similar {
    pub source: String,
    pub target: String,
}

/// Nothing remembered: a chapter translated as if there were no memory.
pub static NOTHING: Remembered = Remembered {
    exact: BTreeMap::new(),
    similar: BTreeMap::new(),
};

impl Remembered {
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.similar.is_empty()
    }
}

/// The closest of `candidates` (source and accepted text, in markup) to `source`, when it is
/// close enough: at most one comparison per candidate, and none with a candidate whose length
/// alone keeps it from being close.
pub fn closest<'c>(source: &str, candidates: &'c [Candidate]) -> Option<&'c Candidate> {
    let grams = Grams::of(&markup::plain_text(source));
    candidates
        .iter()
        .filter(|c| grams.at_most(&c.grams) >= CLOSE_ENOUGH)
        .map(|c| (grams.agreement(&c.grams), c))
        .filter(|(score, _)| *score >= CLOSE_ENOUGH)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// A passage translated before, ready to be compared.
pub struct Candidate {
    pub source: String,
    pub target: String,
    grams: Grams,
}

impl Candidate {
    pub fn new(source: String, target: String) -> Candidate {
        Candidate {
            grams: Grams::of(&markup::plain_text(&source)),
            source,
            target,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paragraph_with_a_word_changed_is_close_and_another_paragraph_is_not() {
        let candidates = vec![
            Candidate::new(
                "Call me <i>Ishmael</i>. Some years ago, never mind how long precisely, having \
                 little or no money in my purse, I thought I would sail about a little."
                    .into(),
                "Llámame Ismael.".into(),
            ),
            Candidate::new(
                "It is a way I have of driving off the spleen.".into(),
                "Es un modo que tengo.".into(),
            ),
        ];
        let edited = "Call me Ishmael. Some years ago, never mind how long exactly, having \
                      little or no money in my purse, I thought I would sail about a little.";
        let found = closest(edited, &candidates).map(|c| c.target.as_str());
        assert_eq!(found, Some("Llámame Ismael."));
        assert!(closest(
            "Whenever I find myself growing grim about the mouth.",
            &candidates
        )
        .is_none());
        assert!(closest("", &candidates).is_none());
    }
}
