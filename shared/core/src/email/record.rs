//! The mail settings' items (partition `EMAIL`): the sender settings (`SETTINGS`:
//! `senderPrefix`, `senderName`, `replyToPrefix`, `sandbox`, and the last test's `lastTestAt`,
//! `lastTestStatus`, `error`) and each allowed recipient of sandbox mode (`RECIPIENT#<email>`:
//! `email`, `verifiedAt`). The one module that names their keys and attributes.

use chrono::{DateTime, Utc};

use super::model::Stored;
use super::{EmailSettingsPatch, SenderPrefix};
use crate::fault::DataError;
use crate::items::{parse_time, time};
use crate::ports::{Condition, Item, Ports, StoreError, Update};
use crate::types::Email;

pub(super) const PK: &str = "EMAIL";
pub(super) const SETTINGS_SK: &str = "SETTINGS";
pub(super) const RECIPIENT: &str = "RECIPIENT#";

pub(super) fn recipient_sk(email: &Email) -> String {
    format!("{RECIPIENT}{email}")
}

/// Makes sure the settings item exists, so that partial updates have something to update.
pub(super) async fn ensure_settings_item(ports: &Ports) -> Result<(), DataError> {
    match ports
        .table
        .put(Item::new(PK, SETTINGS_SK), Condition::NotExists)
        .await
    {
        Ok(()) | Err(StoreError::Conflict) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

pub(super) async fn update_settings(ports: &Ports, update: Update) -> Result<(), DataError> {
    ensure_settings_item(ports).await?;
    ports
        .table
        .update(PK, SETTINGS_SK, update, Condition::Always)
        .await?;
    Ok(())
}

pub(super) async fn read(ports: &Ports) -> Result<Stored, DataError> {
    let Some(item) = ports.table.get(PK, SETTINGS_SK).await? else {
        return Ok(Stored::default());
    };
    Ok(Stored {
        sender_prefix: item
            .str("senderPrefix")
            .and_then(SenderPrefix::parse)
            .unwrap_or_default(),
        sender_name: item.str("senderName").map(str::to_string),
        reply_to_prefix: item.str("replyToPrefix").and_then(SenderPrefix::parse),
        sandbox: item.bool("sandbox").unwrap_or(false),
        last_test_at: parse_time(&item, "lastTestAt")?,
        last_test_status: item.str("lastTestStatus").map(str::to_string),
        error: item.str("error").map(str::to_string),
    })
}

pub(super) async fn write(ports: &Ports, patch: &EmailSettingsPatch) -> Result<(), DataError> {
    let mut update = Update::default();
    if let Some(prefix) = patch.sender_prefix {
        update = update.set("senderPrefix", prefix.as_str());
    }
    if let Some(name) = &patch.sender_name {
        update = update.set("senderName", name.as_str());
    }
    match patch.reply_to_prefix {
        Some(Some(prefix)) => update = update.set("replyToPrefix", prefix.as_str()),
        Some(None) => update = update.remove("replyToPrefix"),
        None => {}
    }
    if let Some(sandbox) = patch.sandbox {
        update = update.set("sandbox", sandbox);
    }
    update_settings(ports, update).await
}

/// Records a test's result: `error` None for a success.
pub(super) async fn record_test(
    ports: &Ports,
    at: DateTime<Utc>,
    error: Option<&str>,
) -> Result<(), DataError> {
    let update = Update::default().set("lastTestAt", time(at));
    let update = match error {
        None => update.set("lastTestStatus", "success").remove("error"),
        Some(error) => update.set("lastTestStatus", "failure").set("error", error),
    };
    update_settings(ports, update).await
}

/// An allowed recipient, verified at `now`.
pub(super) fn recipient_item(email: &Email, now: DateTime<Utc>) -> Item {
    Item::new(PK, recipient_sk(email))
        .with("email", email.as_str())
        .with("verifiedAt", time(now))
}

pub(super) fn recipient_of(item: &Item) -> Option<String> {
    item.str("email").map(str::to_string)
}
