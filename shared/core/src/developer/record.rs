//! A stored provider key (`USER#<id>` / `DEVKEY#<slot>`): `sealed` (the key sealed by the
//! secrets port, base64), `preview` (what the settings show of it), `updatedAt`. The one module
//! that names its keys and attributes.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use chrono::{DateTime, Utc};

use crate::fault::Fault;
use crate::items::{required_str, time};
use crate::ports::Item;

use super::KeySlot;

pub(super) use crate::items::user_pk as pk;

pub(super) const SK_PREFIX: &str = "DEVKEY#";

/// A key's slot in the user's partition.
impl KeySlot {
    pub(super) fn sk(self) -> String {
        let name = match self {
            KeySlot::One => "ONE",
            KeySlot::Two => "TWO",
            KeySlot::Three => "THREE",
        };
        format!("{SK_PREFIX}{name}")
    }

    pub(super) fn from_sk(sk: &str) -> Option<KeySlot> {
        KeySlot::ALL.into_iter().find(|slot| slot.sk() == sk)
    }
}

pub(super) fn key_item(
    pk: String,
    sk: String,
    sealed: &[u8],
    preview: String,
    now: DateTime<Utc>,
) -> Item {
    Item::new(pk, sk)
        .with("sealed", BASE64.encode(sealed))
        .with("preview", preview)
        .with("updatedAt", time(now))
}

pub(super) fn preview_of(item: &Item) -> Result<&str, Fault> {
    required_str(item, "preview")
}

/// The sealed key as stored (base64), if there is one.
pub(super) fn sealed_of(item: &Item) -> Option<&str> {
    item.str("sealed")
}
