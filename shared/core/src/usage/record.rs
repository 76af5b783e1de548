//! The usage items (see the table in `super`): a month's counters (`books`, `words`) and a
//! reserved spend (`period`, `books`, `words`, `until`). The one module that names their keys
//! and attributes.

use chrono::{DateTime, Utc};

use super::{Quota, Spend};
use crate::fault::Fault;
use crate::items::{parse_time, required_str, time};
use crate::ports::{Condition, Item, Update};

pub(super) use crate::items::user_pk;

/// A month's counters in the user's partition.
pub(super) fn usage_sk(period: &str) -> String {
    format!("USAGE#{period}")
}

pub(super) const RESERVED_PREFIX: &str = "RESERVED#";

/// A reserved spend in the user's partition.
pub(super) fn reserved_sk(id: &str) -> String {
    format!("{RESERVED_PREFIX}{id}")
}

/// A month's counters, before anything is spent in it.
pub(super) fn month_item(pk: &str, sk: &str) -> Item {
    Item::new(pk, sk).with("books", 0).with("words", 0)
}

/// What a month's counters say was used (absent counters: nothing).
pub(super) fn used(item: &Item) -> Spend {
    let count = |name: &str| {
        item.i64(name)
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0)
    };
    Spend {
        books: count("books"),
        words: count("words"),
    }
}

/// The month's counters leave room for `spend` under `quota`. Only what is spent is checked: a
/// user over one quota (after a downgrade) may still spend the other.
pub(super) fn room_for(quota: Quota, spend: Spend) -> Condition {
    let mut conditions = Vec::new();
    for (name, limit, amount) in [
        ("books", quota.books, spend.books),
        ("words", quota.words, spend.words),
    ] {
        if let Some(limit) = limit.filter(|_| amount > 0) {
            let headroom = i64::try_from(limit).unwrap_or(i64::MAX)
                - i64::try_from(amount).unwrap_or(i64::MAX);
            conditions.push(Condition::AtMost(name.into(), headroom));
        }
    }
    Condition::All(conditions)
}

pub(super) fn spent(spend: Spend) -> Update {
    Update::default()
        .add("books", i64::try_from(spend.books).unwrap_or(i64::MAX))
        .add("words", i64::try_from(spend.words).unwrap_or(i64::MAX))
}

pub(super) fn refunded(spend: Spend) -> Update {
    Update::default()
        .add("books", -i64::try_from(spend.books).unwrap_or(0))
        .add("words", -i64::try_from(spend.words).unwrap_or(0))
}

/// A reserved spend as stored: the month it was counted in, and until when it is held.
pub(super) struct Reservation {
    pub period: String,
    pub spend: Spend,
    pub until: Option<DateTime<Utc>>,
}

impl Reservation {
    pub fn to_item(&self, user_id: &str, id: &str) -> Item {
        let mut item = Item::new(user_pk(user_id), reserved_sk(id))
            .with("period", self.period.as_str())
            .with("books", i64::try_from(self.spend.books).unwrap_or(i64::MAX))
            .with("words", i64::try_from(self.spend.words).unwrap_or(i64::MAX));
        if let Some(until) = self.until {
            item = item.with("until", time(until));
        }
        item
    }

    pub fn from_item(item: &Item) -> Result<Self, Fault> {
        let count = |name: &str| item.i64(name).and_then(|n| u64::try_from(n).ok());
        Ok(Reservation {
            period: required_str(item, "period")?.to_string(),
            spend: Spend {
                books: count("books").unwrap_or(0),
                words: count("words").unwrap_or(0),
            },
            until: parse_time(item, "until")?,
        })
    }
}
