//! A user's translation preferences (the spec's UserPreferences): the defaults a translation
//! start falls back on. Stored as `USER#<id>` / `PREFERENCES`; absent means the defaults.

use serde::{Deserialize, Serialize};

use crate::fault::{DataError, Fault};
use crate::ports::Ports;
use crate::ports::{Condition, Item};

/// The model a translation uses when neither the request nor the user's preferences name one.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// The language books are translated into when neither the upload, the start request nor the
/// preferences say.
pub const DEFAULT_TARGET_LANGUAGE: &str = "es";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Preferences {
    pub default_model: String,
    pub default_target_language: String,
    pub preserve_formatting: bool,
    pub auto_start_translation: bool,
    pub default_glossary_id: Option<String>,
}

impl Default for Preferences {
    fn default() -> Self {
        Preferences {
            default_model: DEFAULT_MODEL.into(),
            default_target_language: DEFAULT_TARGET_LANGUAGE.into(),
            preserve_formatting: true,
            auto_start_translation: false,
            default_glossary_id: None,
        }
    }
}

const SK: &str = "PREFERENCES";

fn pk(user_id: &str) -> String {
    format!("USER#{user_id}")
}

/// The user's preferences, or the defaults for what they never set.
pub async fn get(ports: &Ports, user_id: &str) -> Result<Preferences, DataError> {
    let Some(item) = ports.table.get(&pk(user_id), SK).await? else {
        return Ok(Preferences::default());
    };
    let value = item
        .attrs
        .get("preferences")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    serde_json::from_value(value).map_err(|e| {
        Fault::Corrupt {
            what: format!("the preferences of {user_id}"),
            detail: e.to_string(),
        }
        .into()
    })
}

/// Replaces the user's preferences (validation is the caller's: the values are written as given).
pub async fn put(ports: &Ports, user_id: &str, preferences: &Preferences) -> Result<(), DataError> {
    let value = serde_json::to_value(preferences).map_err(Fault::encoding("the preferences"))?;
    let item = Item::new(pk(user_id), SK).with("preferences", value);
    Ok(ports.table.put(item, Condition::Always).await?)
}
