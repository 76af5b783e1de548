//! What the translation memory speaks: a language pair, an entry and where its text came from,
//! a passage to remember, what a recording did, pages, and the memory's bounds.

use chrono::{DateTime, Utc};

use super::error::MemoryError;
use crate::types::LanguageCode;

/// Entries a language pair holds at most: a few long novels' worth (Moby-Dick is about 2,500
/// passages of about 400 characters).
pub const MAX_ENTRIES: u64 = 10_000;
/// Language pairs a user's memory holds at most.
pub const MAX_PAIRS: usize = 10;
/// A passage longer than this (its source or its text, in characters) is not remembered: a
/// block that long is a page, which never comes back word for word.
pub const MAX_PASSAGE_CHARS: usize = 10_000;
/// A chapter's blocks are compared for close passages with at most this many of the pair's
/// newest entries.
pub const CANDIDATES: usize = 2_000;
/// Entries on one page unless the caller asks for fewer or more, and the most.
pub const DEFAULT_PAGE: usize = 50;
pub const MAX_PAGE: usize = 200;

/// A language pair: what the passages were translated from and into.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pair {
    pub source: String,
    pub target: String,
}

impl Pair {
    /// A pair from a request's codes (`en`, `pt-BR`): 400 for a code that is not one, or for
    /// a language into itself.
    pub fn parse(source: &str, target: &str) -> Result<Pair, MemoryError> {
        let code = |name: &str, raw: &str| {
            LanguageCode::parse(raw)
                .map(|c| c.to_string())
                .map_err(|e| MemoryError::Invalid(format!("{name}: {e}")))
        };
        let pair = Pair {
            source: code("source", source)?,
            target: code("target", target)?,
        };
        if pair.source == pair.target {
            return Err(MemoryError::Invalid(format!(
                "source and target are both '{}': a pair translates one language into another",
                pair.source
            )));
        }
        Ok(pair)
    }

    /// A book's pair: its languages, stored as parsed codes.
    pub fn of(source: &str, target: &str) -> Pair {
        Pair {
            source: source.to_string(),
            target: target.to_string(),
        }
    }
}

impl std::fmt::Display for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} -> {}", self.source, self.target)
    }
}

/// Where an entry's text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A chapter's translation as the run stored it (its model's, after every pass).
    Model,
    /// The owner's own text (an edit, a term applied), or the model's kept as it was.
    Edit,
    /// A re-translation the owner accepted.
    Proposal,
    /// A TMX file the owner imported.
    Import,
}

impl Origin {
    pub fn name(self) -> &'static str {
        match self {
            Origin::Model => "model",
            Origin::Edit => "edit",
            Origin::Proposal => "proposal",
            Origin::Import => "import",
        }
    }
}

impl std::str::FromStr for Origin {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            Origin::Model,
            Origin::Edit,
            Origin::Proposal,
            Origin::Import,
        ]
        .into_iter()
        .find(|o| o.name() == s)
        .ok_or(())
    }
}

/// One remembered passage.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The hash of its source ([`passage_id`]).
    pub id: String,
    /// The source and its accepted translation, in the manuscript's inline markup.
    pub source: String,
    pub target: String,
    pub origin: Origin,
    /// The book it was accepted in; None for an imported one.
    pub book_id: Option<String>,
    pub updated_at: DateTime<Utc>,
}

/// A passage to remember.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    pub source: String,
    pub target: String,
    pub origin: Origin,
    pub book_id: Option<String>,
}

/// A pair of the user's memory, counted.
#[derive(Debug, Clone, PartialEq)]
pub struct PairSummary {
    pub pair: Pair,
    pub entries: u64,
    /// [`MAX_ENTRIES`].
    pub limit: u64,
    /// Passages new to the pair that were not remembered because it was full.
    pub refused: u64,
}

/// A page of a pair's entries, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryPage {
    pub pair: PairSummary,
    pub offset: u32,
    pub entries: Vec<Entry>,
}

/// A pair with all its entries, for the account export.
#[derive(Debug, Clone, PartialEq)]
pub struct PairMemory {
    pub pair: PairSummary,
    pub entries: Vec<Entry>,
}

/// What a recording did with its passages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recorded {
    /// New entries and entries replaced.
    pub remembered: u32,
    /// Passages not remembered: the pair (or the user's pairs) full, or a passage too long.
    pub refused: u32,
}

impl std::ops::AddAssign for Recorded {
    fn add_assign(&mut self, other: Recorded) {
        self.remembered += other.remembered;
        self.refused += other.refused;
    }
}

/// What an import did: its units remembered or refused, and those it skipped (without a
/// segment in each of the pair's languages).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Imported {
    pub recorded: Recorded,
    pub skipped: u32,
}

/// The key of a passage's source: the SHA-256 of its markup exactly as written (text and inline
/// marks), its first 128 bits in hex.
pub fn passage_id(source: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(source.as_bytes())[..16])
}

/// Whether a passage is one the memory takes: both texts within [`MAX_PASSAGE_CHARS`], the
/// text not empty, characters a book's XML can hold and no bidirectional control its source
/// does not have (an imported text is held to what an owner's edit is), and the source's marks
/// in the text.
pub(super) fn rememberable(source: &str, target: &str) -> bool {
    let within = |text: &str| text.chars().count() <= MAX_PASSAGE_CHARS;
    let allowed = |c: char| {
        let xml =
            matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}');
        let bidi = matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
        xml && (!bidi || source.contains(c))
    };
    within(source)
        && within(target)
        && !source.trim().is_empty()
        && !target.trim().is_empty()
        && source.chars().all(|c| allowed(c) || source.contains(c))
        && target.chars().all(allowed)
        && booktr_translate::checks::marks_problem(source, target).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passages_key_is_its_markup_exactly() {
        let id = passage_id("Call me <i>Ishmael</i>.");
        assert_eq!(id.len(), 32);
        assert_eq!(id, passage_id("Call me <i>Ishmael</i>."));
        assert_ne!(id, passage_id("Call me Ishmael."));
        assert_ne!(id, passage_id("Call me <b>Ishmael</b>."));
    }

    #[test]
    fn a_pair_is_two_language_codes_and_not_one_language_into_itself() {
        assert_eq!(Pair::parse("EN", "pt_br").unwrap(), Pair::of("en", "pt-BR"));
        assert!(Pair::parse("en", "en").is_err());
        assert!(Pair::parse("english", "es").is_err());
    }

    #[test]
    fn only_a_text_with_its_sources_marks_and_characters_a_book_holds_is_remembered() {
        assert!(rememberable(
            "Call me <i>Ishmael</i>.",
            "Llámame <i>Ismael</i>."
        ));
        assert!(!rememberable("Call me <i>Ishmael</i>.", "Llámame Ismael."));
        assert!(!rememberable("Call me.", "Llámame\u{202E}."));
        assert!(!rememberable("Call me.", "Llámame\u{1}."));
        assert!(!rememberable("Call me.", " "));
        assert!(!rememberable(&"a".repeat(MAX_PASSAGE_CHARS + 1), "b"));
    }
}
