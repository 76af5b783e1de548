//! A user's translation preferences (the spec's UserPreferences): the defaults a translation
//! start falls back on. Stored as `USER#<id>` / `PREFERENCES`; absent means the defaults.

mod model;
mod record;
mod service;

pub use model::{Preferences, DEFAULT_MODEL, DEFAULT_TARGET_LANGUAGE};
pub use service::{get, put};
