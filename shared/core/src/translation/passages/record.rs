//! The item of a passage the owner changed (`BOOK#<id>` / `PASSAGE#<lang>#<chapter>#<block>`, see
//! `crate::books::store`), and the one place its attributes are named:
//!
//! | attribute | holds |
//! |---|---|
//! | `lang`, `chapter`, `block` | which passage: the translation's language, the chapter's number, the block's index in it |
//! | `version` | how many changes the passage has had: the version a client read, which its next change must name |
//! | `versions` | the passage's changes, oldest first (at most [`MAX_VERSIONS`]): each the owner's text (in a blob; an edit, a re-translation they accepted, or the model's text they kept, as its `from` says) or a reset to the model's text |
//!
//! A passage nobody changed has no item: its text is the model's, at version 0. The texts live
//! in blobs because one block may hold up to 100,000 characters, past an item's 400 KB.

use booktr_translate::protocol::Pass;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::books::store::{book_pk, passage_sk};
use crate::items::{CorruptItem, Fields};
use crate::ports::{Condition, Item, Update};

/// Changes a passage keeps; the oldest is forgotten (and its text removed) when a newer one
/// comes, so that the item stays small and the texts a book keeps stay bounded whatever the
/// owner does: at most this many texts per passage, each at most
/// `checked::max_edit_chars` of its source. Twenty is more undo than a person uses on one
/// passage, and a hundred kept five times the storage for nothing.
pub const MAX_VERSIONS: usize = 20;

/// Everything a passage item holds.
#[derive(Debug, Clone, PartialEq)]
pub struct PassageRecord {
    pub lang: String,
    pub chapter: u32,
    pub block: u32,
    pub version: u64,
    pub versions: Vec<Version>,
}

/// One change of a passage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Version {
    /// The owner's text, by the name of its blob (`crate::books::store::passage_text_key`);
    /// None for a reset to the model's text.
    pub text: Option<String>,
    pub at: DateTime<Utc>,
    /// The user who made the change.
    pub by: String,
    /// Where the owner's text came from when they did not write it; None for an edit (and a
    /// reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Provenance>,
    /// The bytes of its text (0 for a reset), as the book's stored edits count it (see
    /// [`counted`]); None on a change made before they were counted, which the count leaves
    /// out both when it comes and when it goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// What `versions` adds to the book's stored edits: the changes counted, and their texts' bytes.
pub fn counted(versions: &[Version]) -> (i64, i64) {
    versions
        .iter()
        .filter_map(|v| v.bytes)
        .fold((0, 0), |(n, bytes), b| (n + 1, bytes + b as i64))
}

/// Where an owner's text came from when they did not write it themselves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Provenance {
    /// A re-translation's text, accepted from its proposal.
    #[serde(rename_all = "camelCase")]
    Retranslated {
        model: String,
        /// The pass that last changed the text.
        pass: Pass,
        instruction: Option<String>,
        proposal: String,
        /// The checks the text had failed when the owner accepted it knowingly (the model's
        /// last answer, every one having failed); empty for a text the checks passed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        accepted_with: Vec<booktr_translate::checks::Problem>,
    },
    /// The model's text as it was, kept by the owner (its flags cleared).
    Kept,
}

impl PassageRecord {
    /// A passage at version 0: the model's text, never changed.
    pub fn untouched(lang: &str, chapter: u32, block: u32) -> PassageRecord {
        PassageRecord {
            lang: lang.to_string(),
            chapter,
            block,
            version: 0,
            versions: Vec::new(),
        }
    }

    pub fn from_item(item: &Item) -> Result<PassageRecord, CorruptItem> {
        let f = Fields::of(item);
        let versions = match f.json("versions") {
            None => Vec::new(),
            Some(value) => {
                serde_json::from_value(value.clone()).map_err(|_| f.corrupt("versions"))?
            }
        };
        Ok(PassageRecord {
            lang: f.string("lang")?,
            chapter: f.int("chapter")?,
            block: f.int("block")?,
            version: f.int("version")?,
            versions,
        })
    }

    /// The owner's text the passage holds now (its blob's name), None when it holds the model's.
    pub fn edit(&self) -> Option<&Version> {
        self.versions.last().filter(|v| v.text.is_some())
    }

    /// The passage's first change: its item, created only if there is none yet (a concurrent
    /// first change fails with `Conflict`).
    pub fn first_item(
        book_id: &str,
        lang: &str,
        chapter: u32,
        block: u32,
        first: &Version,
    ) -> (Item, Condition) {
        let item = Item::new(book_pk(book_id), passage_sk(lang, chapter, block))
            .with("lang", lang)
            .with("chapter", chapter)
            .with("block", block)
            .with("version", 1)
            .with("versions", versions_value(std::slice::from_ref(first)));
        (item, Condition::NotExists)
    }

    /// The passage's next change, from the version the client read: the item's list of changes
    /// replaced by `versions`, written only while the item is still at `read` (a concurrent
    /// change fails with `Conflict`, never lost).
    pub fn next(read: u64, versions: &[Version]) -> (Update, Condition) {
        let update = Update::default()
            .set("version", read + 1)
            .set("versions", versions_value(versions));
        (update, Condition::equals("version", read))
    }
}

fn versions_value(versions: &[Version]) -> Value {
    serde_json::to_value(versions).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(text: Option<&str>) -> Version {
        Version {
            text: text.map(str::to_string),
            at: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
            by: "u1".into(),
            from: None,
            bytes: text.map(|t| t.len() as u64),
        }
    }

    #[test]
    fn a_passage_item_reads_back_with_its_changes() {
        let first = version(Some("v1-ab"));
        let (item, condition) = PassageRecord::first_item("b1", "es", 3, 12, &first);
        assert_eq!(condition, Condition::NotExists);
        assert_eq!(item.sk, "PASSAGE#es#00003#00012");
        let read = PassageRecord::from_item(&item).unwrap();
        assert_eq!(read.version, 1);
        assert_eq!(read.edit(), Some(&first));
        let mut attrs = item.attrs.clone();
        let (update, condition) = PassageRecord::next(1, &[first.clone(), version(None)]);
        assert!(condition.holds_for(Some(&attrs)));
        update.apply_to(&mut attrs);
        let after = PassageRecord::from_item(&Item { attrs, ..item }).unwrap();
        assert_eq!(after.version, 2);
        assert_eq!(after.edit(), None, "a reset holds the model's text");
    }

    #[test]
    fn a_change_keeps_where_the_owners_text_came_from() {
        let accepted = Version {
            from: Some(Provenance::Retranslated {
                model: "gpt-4o".into(),
                pass: Pass::Polish,
                instruction: Some("more formal".into()),
                proposal: "p1".into(),
                accepted_with: vec![booktr_translate::checks::Problem::Truncated],
            }),
            ..version(Some("v1-ab"))
        };
        let kept = Version {
            from: Some(Provenance::Kept),
            ..version(Some("v2-cd"))
        };
        let (item, _) = PassageRecord::first_item("b1", "es", 1, 0, &accepted);
        let (update, _) = PassageRecord::next(1, &[accepted.clone(), kept.clone()]);
        let mut attrs = item.attrs.clone();
        update.apply_to(&mut attrs);
        let read = PassageRecord::from_item(&Item { attrs, ..item }).unwrap();
        assert_eq!(read.versions, vec![accepted, kept]);
    }

    #[test]
    fn the_changes_counted_are_those_that_know_their_bytes() {
        let legacy = Version {
            bytes: None,
            ..version(Some("old"))
        };
        let reset = Version {
            bytes: Some(0),
            ..version(None)
        };
        let versions = [legacy, version(Some("abcd")), reset, version(Some("é"))];
        assert_eq!(counted(&versions), (3, 6));
        assert_eq!(counted(&[]), (0, 0));
    }

    #[test]
    fn a_corrupt_list_of_changes_is_an_error_naming_the_attribute() {
        let (item, _) = PassageRecord::first_item("b1", "es", 1, 0, &version(Some("x")));
        let item = item.with("versions", "not a list");
        let error = PassageRecord::from_item(&item).unwrap_err();
        assert_eq!(error.attribute, "versions");
    }
}
