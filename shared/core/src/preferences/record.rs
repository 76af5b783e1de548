//! The preferences item: `USER#<id>` / `PREFERENCES`, the preferences as one JSON attribute.

use super::model::Preferences;
use crate::fault::Fault;
use crate::items::user_pk;
use crate::ports::Item;

const SK: &str = "PREFERENCES";

/// The key of the user's preferences item.
pub(super) fn key(user_id: &str) -> (String, &'static str) {
    (user_pk(user_id), SK)
}

/// The preferences an item holds (a missing attribute reads as null, which does not decode).
pub(super) fn from_item(user_id: &str, item: &Item) -> Result<Preferences, Fault> {
    let value = item
        .attrs
        .get("preferences")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    serde_json::from_value(value).map_err(|e| Fault::Corrupt {
        what: format!("the preferences of {user_id}"),
        detail: e.to_string(),
    })
}

/// The item holding `preferences`.
pub(super) fn item(user_id: &str, preferences: &Preferences) -> Result<Item, Fault> {
    let value = serde_json::to_value(preferences).map_err(Fault::encoding("the preferences"))?;
    let (pk, sk) = key(user_id);
    Ok(Item::new(pk, sk).with("preferences", value))
}
