//! A unit's id: which passage, and the passage as it was exported.

use std::fmt;

use sha2::{Digest, Sha256};

use super::super::model::Passage;

/// `c<chapter>-p<index>-v<version>-<fingerprint>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct UnitId {
    pub(super) chapter: u32,
    pub(super) index: u32,
    /// The passage's version when exported.
    pub(super) version: u64,
    /// [`fingerprint`] of the text exported.
    pub(super) fingerprint: String,
}

/// Hex digits of a fingerprint: 64 bits, enough that two texts of one passage never share one.
const FINGERPRINT_DIGITS: usize = 16;

impl UnitId {
    /// The id of `passage`, whose text `text` is exported into `lang`.
    pub(super) fn of(passage: &Passage, lang: &str, text: &str) -> UnitId {
        UnitId {
            chapter: passage.chapter,
            index: passage.index,
            version: passage.version,
            fingerprint: fingerprint(lang, text),
        }
    }

    /// The id a unit names, if it is one of ours.
    pub(super) fn parse(id: &str) -> Option<UnitId> {
        let mut parts = id.trim().split('-');
        let mut number = |prefix: char| {
            let part = parts.next()?.strip_prefix(prefix)?;
            part.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| part.parse::<u64>().ok())
                .flatten()
        };
        let chapter = u32::try_from(number('c')?).ok()?;
        let index = u32::try_from(number('p')?).ok()?;
        let version = number('v')?;
        let fingerprint = parts.next()?;
        let hex = fingerprint.len() == FINGERPRINT_DIGITS
            && fingerprint
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        (hex && parts.next().is_none()).then(|| UnitId {
            chapter,
            index,
            version,
            fingerprint: fingerprint.to_string(),
        })
    }
}

impl fmt::Display for UnitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "c{}-p{}-v{}-{}",
            self.chapter, self.index, self.version, self.fingerprint
        )
    }
}

/// What tells a passage's text apart: a hash of the language and of the text as an export
/// writes it and an import reads it back (`xliff::canonical`), so that a target a tool handed
/// back as it was has the fingerprint of the text exported.
pub(super) fn fingerprint(lang: &str, text: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(lang.as_bytes());
    hash.update([0]);
    hash.update(booktr_formats::xliff::canonical(text).as_bytes());
    hex::encode(&hash.finalize()[..FINGERPRINT_DIGITS / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_names_its_passage_version_and_text_and_reads_back() {
        let id = UnitId {
            chapter: 3,
            index: 12,
            version: 7,
            fingerprint: fingerprint("es", "Llamadme <i>Ismael</i>."),
        };
        let written = id.to_string();
        assert!(written.starts_with("c3-p12-v7-"), "{written}");
        assert_eq!(UnitId::parse(&written), Some(id));
        for other in [
            "",
            "c3-p12-v7",
            "c3-p12-v7-0123456789abcdeg",
            "c3-p12-v7-0123456789ABCDEF",
            "c3-p12-v7-0123456789abcdef-x",
            "c+3-p12-v7-0123456789abcdef",
            "c4294967296-p1-v0-0123456789abcdef",
            "p12-c3-v7-0123456789abcdef",
        ] {
            assert_eq!(UnitId::parse(other), None, "{other}");
        }
    }

    #[test]
    fn a_fingerprint_is_of_the_language_and_the_text_as_an_export_writes_it() {
        let text = "Say &quot;no&quot;.";
        assert_eq!(fingerprint("es", text), fingerprint("es", "Say \"no\"."));
        assert_ne!(fingerprint("es", text), fingerprint("fr", text));
        assert_ne!(fingerprint("es", text), fingerprint("es", "Say \"yes\"."));
        assert_eq!(fingerprint("es", text).len(), FINGERPRINT_DIGITS);
    }
}
