//! The glossaries service: a user's glossaries and their entries, checked and stored.

use std::collections::HashSet;

use tracing::info;

use super::{Entry, EntryInput, Glossary, GlossaryError, MAX_ENTRIES};
use crate::fault::DataError;
use crate::ids::new_id;
use crate::ports::Ports;
use crate::ports::{Condition, Index, Query, StoreError};

use super::model::{MAX_CONTEXT, MAX_NAME, MAX_TERM};
use super::record::{
    self, from_item, owned_by, pk, to_item, unchanged_since, user_glossaries, GlossaryChange, SK,
};

/// Reads of a glossary one [`Glossaries::set_entry`] makes at most while others change it.
const SET_ENTRY_TRIES: usize = 3;

#[derive(Clone)]
pub struct Glossaries {
    ports: Ports,
}

impl Glossaries {
    pub fn new(ports: Ports) -> Self {
        Glossaries { ports }
    }

    /// Removes every glossary of a closed account; returns how many.
    pub(crate) async fn remove_all_of(&self, user_id: &str) -> Result<usize, DataError> {
        let table = self.ports.table.as_ref();
        crate::items::delete_indexed_of(table, user_glossaries(user_id), user_id)
            .await
            .map_err(DataError::from)
    }

    pub async fn list(&self, user_id: &str) -> Result<Vec<Glossary>, GlossaryError> {
        let query = Query::partition(user_glossaries(user_id)).descending();
        let items = self.ports.table.query_index(Index::Gsi1, query).await?;
        Ok(items.iter().map(from_item).collect::<Result<_, _>>()?)
    }

    pub async fn get(&self, user_id: &str, id: &str) -> Result<Glossary, GlossaryError> {
        let item = self.ports.table.get(&pk(id), SK).await?;
        match item {
            Some(item) if record::owner_of(&item) == Some(user_id) => Ok(from_item(&item)?),
            _ => Err(GlossaryError::NotFound),
        }
    }

    pub async fn create(
        &self,
        user_id: &str,
        name: &str,
        description: Option<String>,
        entries: Vec<EntryInput>,
    ) -> Result<Glossary, GlossaryError> {
        let now = self.ports.clock.now();
        let glossary = Glossary {
            id: new_id(),
            name: valid_name(name)?,
            description: valid_description(description)?,
            entry_count: 0,
            entries: merge_entries(&[], entries)?,
            created_at: now,
            updated_at: now,
        };
        let item = to_item(user_id, &glossary)?;
        self.ports.table.put(item, Condition::NotExists).await?;
        info!(glossary_id = %glossary.id, entries = glossary.entries.len(), "glossary created");
        Ok(Glossary {
            entry_count: glossary.entries.len(),
            ..glossary
        })
    }

    /// Changes what is given; `entries`, when given, becomes the whole list.
    pub async fn update(
        &self,
        user_id: &str,
        id: &str,
        name: Option<String>,
        description: Option<Option<String>>,
        entries: Option<Vec<EntryInput>>,
    ) -> Result<Glossary, GlossaryError> {
        let current = self.get(user_id, id).await?;
        let mut change = GlossaryChange::default();
        if let Some(name) = name {
            change.name = Some(valid_name(&name)?);
        }
        if let Some(description) = description {
            change.description = Some(valid_description(description)?);
        }
        if let Some(entries) = entries {
            change.entries = Some(merge_entries(&current.entries, entries)?);
        }
        let update = change.into_update(self.ports.clock.now())?;
        let item = self
            .ports
            .table
            .update(&pk(id), SK, update, owned_by(user_id))
            .await
            .map_err(|e| match e {
                StoreError::NotFound | StoreError::Conflict => GlossaryError::NotFound,
                e => e.into(),
            })?;
        Ok(from_item(&item)?)
    }

    /// Gives the entry whose source is `source` (ignoring case) the target `target`, or adds
    /// the entry when there is none. Written only while the glossary is as it was read: a
    /// change made meanwhile is read and the entry set again on it (a few times at most).
    pub async fn set_entry(
        &self,
        user_id: &str,
        id: &str,
        source: &str,
        target: &str,
    ) -> Result<Glossary, GlossaryError> {
        for _ in 0..SET_ENTRY_TRIES {
            let current = self.get(user_id, id).await?;
            let mut inputs: Vec<EntryInput> = current
                .entries
                .iter()
                .map(|e| EntryInput {
                    id: Some(e.id.clone()),
                    ..EntryInput::default()
                })
                .collect();
            let folded = source.trim().to_lowercase();
            match current
                .entries
                .iter()
                .position(|e| e.source.to_lowercase() == folded)
            {
                Some(at) => inputs[at].target = Some(target.to_string()),
                None => inputs.push(EntryInput {
                    source: Some(source.to_string()),
                    target: Some(target.to_string()),
                    ..EntryInput::default()
                }),
            }
            let change = GlossaryChange {
                entries: Some(merge_entries(&current.entries, inputs)?),
                ..GlossaryChange::default()
            };
            let update = change.into_update(self.ports.clock.now())?;
            let condition = unchanged_since(user_id, current.updated_at);
            match self
                .ports
                .table
                .update(&pk(id), SK, update, condition)
                .await
            {
                Ok(item) => {
                    info!(glossary_id = %id, "glossary entry set");
                    return Ok(from_item(&item)?);
                }
                Err(StoreError::Conflict) => continue,
                Err(StoreError::NotFound) => return Err(GlossaryError::NotFound),
                Err(e) => return Err(e.into()),
            }
        }
        Err(GlossaryError::Invalid(
            "the glossary kept changing while the entry was set; try again".into(),
        ))
    }

    /// Removes the glossary and its terms. Missing, or another user's: NotFound (the owner
    /// condition fails either way).
    pub async fn delete(&self, user_id: &str, id: &str) -> Result<(), GlossaryError> {
        match self
            .ports
            .table
            .delete(&pk(id), SK, owned_by(user_id))
            .await
        {
            Ok(()) => Ok(()),
            Err(StoreError::Conflict) => Err(GlossaryError::NotFound),
            Err(e) => Err(e.into()),
        }
    }
}

fn valid_name(name: &str) -> Result<String, GlossaryError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(GlossaryError::Invalid(format!(
            "name must be 1 to {MAX_NAME} characters"
        )));
    }
    Ok(name.to_string())
}

fn valid_description(description: Option<String>) -> Result<Option<String>, GlossaryError> {
    let description = description
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty());
    if description
        .as_ref()
        .is_some_and(|d| d.chars().count() > MAX_CONTEXT)
    {
        return Err(GlossaryError::Invalid(format!(
            "description must be at most {MAX_CONTEXT} characters"
        )));
    }
    Ok(description)
}

/// The new entry list: inputs with an existing `id` update that entry, others are new. Sources
/// and targets must be non-empty, sources unique (ignoring case).
fn merge_entries(current: &[Entry], inputs: Vec<EntryInput>) -> Result<Vec<Entry>, GlossaryError> {
    if inputs.len() > MAX_ENTRIES {
        return Err(GlossaryError::Invalid(format!(
            "a glossary holds at most {MAX_ENTRIES} entries"
        )));
    }
    let mut seen = HashSet::new();
    let mut entries = Vec::with_capacity(inputs.len());
    for (index, input) in inputs.into_iter().enumerate() {
        let existing = input
            .id
            .as_deref()
            .and_then(|id| current.iter().find(|e| e.id == id));
        let position = index + 1;
        let field = |given: Option<String>,
                     kept: Option<&String>,
                     name: &str|
         -> Result<String, GlossaryError> {
            let value = given
                .or_else(|| kept.cloned())
                .map(|v| v.trim().to_string())
                .unwrap_or_default();
            if value.is_empty() {
                return Err(GlossaryError::Invalid(format!(
                    "entry {position}: {name} must not be empty"
                )));
            }
            if value.chars().count() > MAX_TERM {
                return Err(GlossaryError::Invalid(format!(
                    "entry {position}: {name} is longer than {MAX_TERM} characters"
                )));
            }
            Ok(value)
        };
        let source = field(input.source, existing.map(|e| &e.source), "source")?;
        let target = field(input.target, existing.map(|e| &e.target), "target")?;
        let context = input
            .context
            .or_else(|| existing.and_then(|e| e.context.clone()))
            .map(|c| c.trim().to_string());
        let context = context.filter(|c| !c.is_empty());
        if context
            .as_ref()
            .is_some_and(|c| c.chars().count() > MAX_CONTEXT)
        {
            return Err(GlossaryError::Invalid(format!(
                "entry {position}: context is longer than {MAX_CONTEXT} characters"
            )));
        }
        if !seen.insert(source.to_lowercase()) {
            return Err(GlossaryError::Invalid(format!(
                "entry {position}: '{source}' appears more than once"
            )));
        }
        let id = existing.map_or_else(new_id, |e| e.id.clone());
        entries.push(Entry {
            id,
            source,
            target,
            context,
        });
    }
    Ok(entries)
}
