//! The glossary item (`GLOSSARY#<id>` / `GLOSSARY`): `id`, `userId`, `name`, `description`,
//! `entries` (the whole list, as JSON), `createdAt`, `updatedAt`, and `gsi1pk` / `gsi1sk`
//! (`USER#<id>#GLOSSARIES` / `<createdAt>#<id>`) for the owner's list. The one module that
//! names its attributes.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Entry, Glossary};
use crate::fault::Fault;
use crate::items::{parse_time, required_str, required_time, time, time_text};
use crate::ports::{Condition, Item, Update};

pub(super) const SK: &str = "GLOSSARY";

pub(super) fn pk(id: &str) -> String {
    format!("GLOSSARY#{id}")
}

pub(super) fn user_glossaries(user_id: &str) -> String {
    format!("USER#{user_id}#GLOSSARIES")
}

/// The glossary is the user's.
pub(super) fn owned_by(user_id: &str) -> Condition {
    Condition::equals("userId", user_id)
}

/// The glossary is the user's and unchanged since it was read (at `updated_at`).
pub(super) fn unchanged_since(user_id: &str, updated_at: DateTime<Utc>) -> Condition {
    Condition::All(vec![
        owned_by(user_id),
        Condition::equals("updatedAt", time(updated_at)),
    ])
}

pub(super) fn owner_of(item: &Item) -> Option<&str> {
    item.str("userId")
}

/// What an edit changes; `entries` replaces the whole list.
#[derive(Default)]
pub(super) struct GlossaryChange {
    pub name: Option<String>,
    pub description: Option<Option<String>>,
    pub entries: Option<Vec<Entry>>,
}

impl GlossaryChange {
    pub fn into_update(self, now: DateTime<Utc>) -> Result<Update, Fault> {
        let mut update = Update::default().set("updatedAt", time(now));
        if let Some(name) = self.name {
            update = update.set("name", name);
        }
        if let Some(description) = self.description {
            update = update.set("description", description);
        }
        if let Some(entries) = self.entries {
            update = update.set(
                "entries",
                serde_json::to_value(&entries).map_err(Fault::encoding("a glossary"))?,
            );
        }
        Ok(update)
    }
}

pub(super) fn to_item(user_id: &str, g: &Glossary) -> Result<Item, Fault> {
    Ok(Item::new(pk(&g.id), SK)
        .with("id", g.id.clone())
        .with("userId", user_id)
        .with("name", g.name.clone())
        .with("description", g.description.clone())
        .with(
            "entries",
            serde_json::to_value(&g.entries).map_err(Fault::encoding("a glossary"))?,
        )
        .with("createdAt", time(g.created_at))
        .with("updatedAt", time(g.updated_at))
        .with("gsi1pk", user_glossaries(user_id))
        .with("gsi1sk", format!("{}#{}", time_text(g.created_at), g.id)))
}

pub(super) fn from_item(item: &Item) -> Result<Glossary, Fault> {
    let entries: Vec<Entry> = serde_json::from_value(
        item.attrs
            .get("entries")
            .cloned()
            .unwrap_or(Value::Array(Vec::new())),
    )
    .map_err(|_| crate::items::corrupt(item, "entries"))?;
    Ok(Glossary {
        id: required_str(item, "id")?.to_string(),
        name: required_str(item, "name")?.to_string(),
        description: item.str("description").map(str::to_string),
        entry_count: entries.len(),
        entries,
        created_at: required_time(item, "createdAt")?,
        updated_at: parse_time(item, "updatedAt")?.unwrap_or(required_time(item, "createdAt")?),
    })
}
