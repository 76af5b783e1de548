//! Reading and writing the attribute values every entity's item uses, written once: timestamps
//! as fixed-width RFC 3339 text (so they sort), and errors for items that lack what the domain
//! wrote into them.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::fault::{DataError, Fault};
use crate::ports::{Condition, Index, Item, Query, StoreError, Table};

/// The user's partition, `USER#<id>`, which several domains share: the accounts keep the profile
/// and the account's links in it, other domains their own sort-key families (usage, settings,
/// notifications, webhooks, comment pointers, digest markers), so that closing the account
/// removes them with it. Each record module names its own sort keys in it.
pub fn user_pk(user_id: &str) -> String {
    format!("USER#{user_id}")
}

/// Timestamps are stored as fixed-width RFC 3339 UTC strings, so they sort as text.
pub fn time(t: DateTime<Utc>) -> Value {
    Value::String(time_text(t))
}

pub fn time_text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

pub fn opt_time(t: Option<DateTime<Utc>>) -> Value {
    t.map_or(Value::Null, time)
}

pub fn parse_time(item: &Item, name: &str) -> Result<Option<DateTime<Utc>>, Fault> {
    match item.attrs.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => DateTime::parse_from_rfc3339(s)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|_| corrupt(item, name)),
        Some(_) => Err(corrupt(item, name)),
    }
}

pub fn required_time(item: &Item, name: &str) -> Result<DateTime<Utc>, Fault> {
    parse_time(item, name)?.ok_or_else(|| corrupt(item, name))
}

pub fn required_str<'a>(item: &'a Item, name: &str) -> Result<&'a str, Fault> {
    item.str(name).ok_or_else(|| corrupt(item, name))
}

pub fn parsed<T: std::str::FromStr>(item: &Item, name: &str) -> Result<T, Fault> {
    required_str(item, name)?
        .parse()
        .map_err(|_| corrupt(item, name))
}

pub fn opt_string(item: &Item, name: &str) -> Option<String> {
    item.str(name).map(str::to_string)
}

/// A stored item that does not have the shape the domain wrote: never expected, so a fault
/// (logged, answered 500, not retried) rather than a store failure or the caller's mistake.
pub fn corrupt(item: &Item, name: &str) -> Fault {
    CorruptItem::of(item, name).into()
}

/// A stored item without the shape the domain wrote: which item, and which attribute is missing
/// or of the wrong type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("item {pk}/{sk} has a missing or invalid '{attribute}'")]
pub struct CorruptItem {
    pub pk: String,
    pub sk: String,
    pub attribute: String,
}

impl CorruptItem {
    pub fn of(item: &Item, attribute: &str) -> Self {
        CorruptItem {
            pk: item.pk.clone(),
            sk: item.sk.clone(),
            attribute: attribute.to_string(),
        }
    }
}

/// A corrupt item is the domain's own data gone wrong, not its backend's failure: a fault
/// (500, not retried) wherever it is met.
impl From<CorruptItem> for Fault {
    fn from(e: CorruptItem) -> Self {
        Fault::Corrupt {
            what: format!("item {}/{}", e.pk, e.sk),
            detail: format!("a missing or invalid '{}'", e.attribute),
        }
    }
}

impl From<CorruptItem> for DataError {
    fn from(e: CorruptItem) -> Self {
        DataError::Fault(e.into())
    }
}

/// Reads an item's attributes for a record module: every attribute that is there must have the
/// type the domain writes, or the read fails with a [`CorruptItem`] naming it. Absent and null
/// are the same (an attribute cleared, or written by an older version that did not have it);
/// the record decides whether that is allowed and what it means.
#[derive(Clone, Copy)]
pub struct Fields<'a>(&'a Item);

impl<'a> Fields<'a> {
    pub fn of(item: &'a Item) -> Self {
        Fields(item)
    }

    pub fn corrupt(&self, name: &str) -> CorruptItem {
        CorruptItem::of(self.0, name)
    }

    /// The attribute's value, None when absent or null.
    pub fn json(&self, name: &str) -> Option<&'a Value> {
        self.0.attrs.get(name).filter(|v| !v.is_null())
    }

    pub fn opt_str(&self, name: &str) -> Result<Option<&'a str>, CorruptItem> {
        match self.json(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.corrupt(name)),
        }
    }

    pub fn str(&self, name: &str) -> Result<&'a str, CorruptItem> {
        self.opt_str(name)?.ok_or_else(|| self.corrupt(name))
    }

    pub fn opt_string(&self, name: &str) -> Result<Option<String>, CorruptItem> {
        Ok(self.opt_str(name)?.map(str::to_string))
    }

    pub fn string(&self, name: &str) -> Result<String, CorruptItem> {
        self.str(name).map(str::to_string)
    }

    /// A whole number that fits `T`.
    pub fn opt_int<T: TryFrom<i64>>(&self, name: &str) -> Result<Option<T>, CorruptItem> {
        match self.json(name) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .and_then(|n| T::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| self.corrupt(name)),
        }
    }

    pub fn int<T: TryFrom<i64>>(&self, name: &str) -> Result<T, CorruptItem> {
        self.opt_int(name)?.ok_or_else(|| self.corrupt(name))
    }

    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, CorruptItem> {
        match self.json(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.corrupt(name)),
        }
    }

    /// A timestamp written by [`time`].
    pub fn opt_time(&self, name: &str) -> Result<Option<DateTime<Utc>>, CorruptItem> {
        self.opt_str(name)?
            .map(|s| {
                DateTime::parse_from_rfc3339(s)
                    .map(|t| t.with_timezone(&Utc))
                    .map_err(|_| self.corrupt(name))
            })
            .transpose()
    }

    pub fn time(&self, name: &str) -> Result<DateTime<Utc>, CorruptItem> {
        self.opt_time(name)?.ok_or_else(|| self.corrupt(name))
    }

    /// A value written as its text (a status, a format).
    pub fn parsed<T: std::str::FromStr>(&self, name: &str) -> Result<T, CorruptItem> {
        self.str(name)?.parse().map_err(|_| self.corrupt(name))
    }

    /// A list of strings; absent is empty.
    pub fn strings(&self, name: &str) -> Result<Vec<String>, CorruptItem> {
        match self.json(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(all)) => all
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| self.corrupt(name)),
            Some(_) => Err(self.corrupt(name)),
        }
    }
}

/// Deletes every item the secondary index lists under `partition` that still belongs to
/// `user_id` (its `userId`): one already gone, or since given to someone else, is left as it
/// is. Returns how many were listed. For a closed account's purge.
pub async fn delete_indexed_of(
    table: &dyn Table,
    partition: String,
    user_id: &str,
) -> Result<usize, StoreError> {
    delete_indexed_of_but(table, partition, user_id, None).await
}

/// As [`delete_indexed_of`], leaving the item whose key is `keep` (the session that asks to
/// end the others). Returns how many were deleted or already gone.
pub async fn delete_indexed_of_but(
    table: &dyn Table,
    partition: String,
    user_id: &str,
    keep: Option<&str>,
) -> Result<usize, StoreError> {
    let mut items = table
        .query_index(Index::Gsi1, Query::partition(partition))
        .await?;
    items.retain(|item| Some(item.pk.as_str()) != keep);
    for item in &items {
        match table
            .delete(&item.pk, &item.sk, Condition::equals("userId", user_id))
            .await
        {
            Ok(()) | Err(StoreError::Conflict) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(items.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corrupt_item_is_a_fault_naming_the_item_and_the_attribute_not_a_store_failure() {
        let item = Item::new("BOOK#1", "BOOK").with("status", 3);
        let error: DataError = Fields::of(&item).str("status").unwrap_err().into();
        let DataError::Fault(Fault::Corrupt { what, detail }) = error else {
            panic!("a corrupt item read as {error:?}");
        };
        assert_eq!(what, "item BOOK#1/BOOK");
        assert_eq!(detail, "a missing or invalid 'status'");
        assert_eq!(
            Fault::from(Fields::of(&item).corrupt("status")).to_string(),
            corrupt(&item, "status").to_string()
        );
    }
}
