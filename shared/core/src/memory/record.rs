//! The memory's items, in the user's memory partition `MEMORY#<userId>`: a pair
//! (`PAIR#<source>#<target>`: `sourceLang`, `targetLang`, `entries` and `refused`, counters) and
//! an entry (`ENTRY#<source>#<target>#<hash>`: `id`, `source`, `target`, `origin`, `bookId`,
//! `updatedAt`, and `gsi1pk` / `gsi1sk`, `MEMORY#<userId>#<source>#<target>` /
//! `<updatedAt>#<hash>`, for the pair's entries newest first). The entries a book gave are
//! named by markers in the book's own memory partition, one per batch written
//! (`MEMORYBOOK#<bookId>`, `<source>#<target>#<hash of the ids>`: `userId`, `sourceLang`,
//! `targetLang`, `bookId`, `ids`): how the book's deletion finds what it taught the memory. The
//! one module that names their keys and attributes.

use super::model::{passage_id, Entry, Pair, PairSummary, MAX_ENTRIES};
use crate::items::{time, time_text, CorruptItem, Fields};
use crate::ports::{Condition, Item, Update};

pub(super) fn pk(user_id: &str) -> String {
    format!("MEMORY#{user_id}")
}

pub(super) const PAIR_PREFIX: &str = "PAIR#";

pub(super) fn pair_sk(pair: &Pair) -> String {
    format!("{PAIR_PREFIX}{}#{}", pair.source, pair.target)
}

/// The sort keys of a pair's entries start so.
pub(super) fn entries_prefix(pair: &Pair) -> String {
    format!("ENTRY#{}#{}#", pair.source, pair.target)
}

pub(super) fn entry_sk(pair: &Pair, id: &str) -> String {
    format!("{}{id}", entries_prefix(pair))
}

/// The index partition of a pair's entries.
pub(super) fn pair_index(user_id: &str, pair: &Pair) -> String {
    format!("MEMORY#{user_id}#{}#{}", pair.source, pair.target)
}

/// A pair with no entry yet.
pub(super) fn new_pair(user_id: &str, pair: &Pair) -> Item {
    Item::new(pk(user_id), pair_sk(pair))
        .with("sourceLang", pair.source.clone())
        .with("targetLang", pair.target.clone())
        .with("entries", 0)
        .with("refused", 0)
}

pub(super) fn pair_from(item: &Item) -> Result<PairSummary, CorruptItem> {
    let f = Fields::of(item);
    Ok(PairSummary {
        pair: Pair::of(f.str("sourceLang")?, f.str("targetLang")?),
        entries: f.opt_int("entries")?.unwrap_or(0),
        limit: MAX_ENTRIES,
        refused: f.opt_int("refused")?.unwrap_or(0),
    })
}

/// `count` more entries in the pair, while it has room for them all.
pub(super) fn more(count: usize) -> (Update, Condition) {
    let count = count as i64;
    (
        Update::default().add("entries", count),
        Condition::AtMost("entries".into(), MAX_ENTRIES as i64 - count),
    )
}

/// `count` entries fewer in the pair.
pub(super) fn fewer(count: usize) -> Update {
    Update::default().add("entries", -(count as i64))
}

/// `count` passages the full pair did not take.
pub(super) fn refused(count: u32) -> Update {
    Update::default().add("refused", i64::from(count))
}

pub(super) fn entry_item(user_id: &str, pair: &Pair, entry: &Entry) -> Item {
    Item::new(pk(user_id), entry_sk(pair, &entry.id))
        .with("id", entry.id.clone())
        .with("source", entry.source.clone())
        .with("target", entry.target.clone())
        .with("origin", entry.origin.name())
        .with("bookId", entry.book_id.clone())
        .with("updatedAt", time(entry.updated_at))
        .with("gsi1pk", pair_index(user_id, pair))
        .with(
            "gsi1sk",
            format!("{}#{}", time_text(entry.updated_at), entry.id),
        )
}

/// The partition of the markers of the entries book `book_id` gave.
pub(super) fn given_pk(book_id: &str) -> String {
    format!("MEMORYBOOK#{book_id}")
}

/// The marker of the entries `ids` of the pair that book `book_id` gave.
pub(super) fn marker_item(user_id: &str, pair: &Pair, book_id: &str, ids: Vec<String>) -> Item {
    let sk = format!(
        "{}#{}#{}",
        pair.source,
        pair.target,
        passage_id(&ids.join(","))
    );
    Item::new(given_pk(book_id), sk)
        .with("userId", user_id)
        .with("sourceLang", pair.source.clone())
        .with("targetLang", pair.target.clone())
        .with("bookId", book_id)
        .with("ids", ids)
}

/// Where a marker points: entries a book gave.
pub(super) struct Marker {
    pub user_id: String,
    pub pair: Pair,
    pub book_id: String,
    pub ids: Vec<String>,
}

pub(super) fn marker_from(item: &Item) -> Result<Marker, CorruptItem> {
    let f = Fields::of(item);
    Ok(Marker {
        user_id: f.string("userId")?,
        pair: Pair::of(f.str("sourceLang")?, f.str("targetLang")?),
        book_id: f.string("bookId")?,
        ids: f.strings("ids")?,
    })
}

/// The entry still as its marker's book gave it (another book, or the owner's edit in another
/// book, may have replaced it since).
pub(super) fn given_by(book_id: &str) -> Condition {
    Condition::equals("bookId", book_id)
}

pub(super) fn entry_from(item: &Item) -> Result<Entry, CorruptItem> {
    let f = Fields::of(item);
    Ok(Entry {
        id: f.string("id")?,
        source: f.string("source")?,
        target: f.string("target")?,
        origin: f.parsed("origin")?,
        book_id: f.opt_string("bookId")?,
        updated_at: f.time("updatedAt")?,
    })
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::memory::Origin;

    #[test]
    fn an_entry_reads_back_as_written() {
        let pair = Pair::of("en", "es");
        let entry = Entry {
            id: crate::memory::passage_id("Call me <i>Ishmael</i>."),
            source: "Call me <i>Ishmael</i>.".into(),
            target: "Llámame <i>Ismael</i>.".into(),
            origin: Origin::Proposal,
            book_id: Some("b1".into()),
            updated_at: chrono::DateTime::parse_from_rfc3339("2025-01-02T03:04:05.678Z")
                .unwrap()
                .with_timezone(&Utc),
        };
        let item = entry_item("u1", &pair, &entry);
        assert_eq!(item.pk, "MEMORY#u1");
        assert!(item.sk.starts_with("ENTRY#en#es#"));
        assert_eq!(entry_from(&item).unwrap(), entry);
        let summary = pair_from(&new_pair("u1", &pair)).unwrap();
        assert_eq!((summary.pair, summary.entries), (pair.clone(), 0));
        let marker = marker_item("u1", &pair, "b1", vec![entry.id.clone(), "e2".into()]);
        assert_eq!(marker.pk, given_pk("b1"));
        let read = marker_from(&marker).unwrap();
        assert_eq!(
            (
                read.user_id.as_str(),
                read.pair,
                read.book_id.as_str(),
                read.ids
            ),
            (
                "u1",
                pair.clone(),
                "b1",
                vec![entry.id.clone(), "e2".into()]
            )
        );
    }
}
