//! A user's translation preferences.

use booktr_core::preferences as domain;

use super::wire;

wire! {
    #[serde(rename_all = "camelCase")]
    pub struct Preferences from domain::Preferences {
        pub default_model: String,
        pub default_target_language: String,
        pub preserve_formatting: bool,
        pub auto_start_translation: bool,
        pub default_glossary_id: Option<String>,
    }
}
