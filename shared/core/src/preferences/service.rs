//! Reading and replacing a user's preferences.

use super::model::Preferences;
use super::record;
use crate::fault::DataError;
use crate::ports::{Condition, Ports};

/// The user's preferences, or the defaults for what they never set.
pub async fn get(ports: &Ports, user_id: &str) -> Result<Preferences, DataError> {
    let (pk, sk) = record::key(user_id);
    let Some(item) = ports.table.get(&pk, sk).await? else {
        return Ok(Preferences::default());
    };
    Ok(record::from_item(user_id, &item)?)
}

/// Replaces the user's preferences (validation is the caller's: the values are written as given).
pub async fn put(ports: &Ports, user_id: &str, preferences: &Preferences) -> Result<(), DataError> {
    let item = record::item(user_id, preferences)?;
    Ok(ports.table.put(item, Condition::Always).await?)
}
