//! A user's translation preferences (the spec's UserPreferences): the defaults a translation
//! start falls back on.

use serde::{Deserialize, Serialize};

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
