//! Reading and writing the attribute values every entity's item uses, written once: timestamps
//! as fixed-width RFC 3339 text (so they sort), and errors for items that lack what the domain
//! wrote into them.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::fault::Fault;
use crate::ports::{Condition, Index, Item, Query, StoreError, Table};

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
    Fault::Corrupt {
        what: format!("item {}/{}", item.pk, item.sk),
        detail: format!("a missing or invalid '{name}'"),
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
