//! A rate-limit counter's item (`<subject>` / `<window name>`): `window` (the start of the
//! window it counts, in Unix seconds), `count`, and `ttl` (when the backend may drop it). The
//! one module that names its keys and attributes.

use serde_json::Value;

use super::model::Subject;
use crate::ids::sha256_hex;
use crate::ports::{Condition, Item, Update};

/// The partition a subject's counters are in.
impl Subject {
    pub(super) fn pk(&self) -> String {
        match self {
            Subject::User(id) => user_rate_pk(id),
            Subject::Address(a) => format!("RATE#IP#{a}"),
            Subject::PasswordAddress(a) => format!("RATE#PWIP#{a}"),
            Subject::SignInEmail(e) => format!("RATE#EMAIL#{}", sha256_hex(e)),
            Subject::SignInEmailFromAddress { email, address } => {
                format!(
                    "RATE#EMAILIP#{}",
                    sha256_hex(&format!("{email}\n{address}"))
                )
            }
        }
    }
}

/// The partition of a user's request counters (removed with the account).
pub fn user_rate_pk(user_id: &str) -> String {
    format!("RATE#USER#{user_id}")
}

/// A counter at the start of a window, having counted one request.
pub(super) fn first_count(pk: &str, sk: &str, start: i64, expires: i64) -> Item {
    Item::new(pk, sk)
        .with("window", start)
        .with("count", 1)
        .with("ttl", expires)
}

pub(super) fn counted() -> Update {
    Update::default().add("count", 1)
}

/// The counter counts the window that started at `start` (as stored).
pub(super) fn window_is(start: Value) -> Condition {
    Condition::Equals("window".into(), start)
}

/// The window the counter counts, as stored.
pub(super) fn window_of(item: &Item) -> Option<&Value> {
    item.attrs.get("window")
}

/// The count; an unreadable one counts as over every limit.
pub(super) fn count_of(item: &Item) -> u32 {
    item.i64("count")
        .and_then(|c| u32::try_from(c).ok())
        .unwrap_or(u32::MAX)
}
