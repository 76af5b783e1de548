//! The marker of an account closed and waiting for its purge (`PURGE#<userId>` / `PURGE`:
//! `at`, when it closed). The one module that names its attributes.

use chrono::{DateTime, Utc};

use crate::items::time;
use crate::ports::Item;

pub(super) const MARKER_SK: &str = "PURGE";

pub(super) fn marker_pk(user_id: &str) -> String {
    format!("PURGE#{user_id}")
}

pub(super) fn purge_marker(user_id: &str, closed_at: DateTime<Utc>) -> Item {
    Item::new(marker_pk(user_id), MARKER_SK).with("at", time(closed_at))
}
