//! The developer settings service: reads, sets and removes the sealed provider keys, and opens
//! the key a run's model needs.

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use booktr_translate::model::ChatModel;
use booktr_translate::providers::{lookup, Family};

use tracing::{error, info};

use super::record::{self, pk, SK_PREFIX};
use super::{DeveloperError, DeveloperPatch, DeveloperSettings, KeySlot, NoModel, ProviderKey};
use super::{MAX_KEY_LEN, MIN_KEY_LEN};
use crate::ports::Ports;
use crate::ports::{Condition, KeyCheckError, Query, StoreError, WriteOp};

/// The shape checks, beside the provider's own check that the service makes: a key that fails
/// them is the service's `InvalidKey`.
impl ProviderKey {
    /// The checks every key passes, whatever the server: surrounding whitespace (a pasted line
    /// end) is trimmed; then [`MIN_KEY_LEN`] to [`MAX_KEY_LEN`] printable ASCII characters with
    /// no space or control character, which is what every provider's keys are and what an HTTP
    /// header can carry. The provider's own prefix is checked with the provider
    /// (`Models::check_key`), since a compatible server's keys may look like anything.
    pub fn parse(slot: KeySlot, raw: &str) -> Result<ProviderKey, DeveloperError> {
        let key = raw.trim();
        let invalid = |why: &str| DeveloperError::InvalidKey {
            slot,
            message: format!("{} is not a valid key: {why}", slot.describe()),
        };
        if key.is_empty() {
            return Err(invalid("it is empty (send null to remove the key)"));
        }
        if !key.chars().all(|c| c.is_ascii_graphic()) {
            return Err(invalid(
                "it contains spaces, control characters or non-ASCII characters",
            ));
        }
        if key.len() < MIN_KEY_LEN || key.len() > MAX_KEY_LEN {
            return Err(invalid(&format!(
                "it has {} characters; keys have {MIN_KEY_LEN} to {MAX_KEY_LEN}",
                key.len()
            )));
        }
        Ok(ProviderKey(key.to_string()))
    }
}

#[derive(Clone)]
pub struct Developer {
    ports: Ports,
}

impl Developer {
    pub fn new(ports: Ports) -> Self {
        Developer { ports }
    }

    /// Which keys the user has set, with their previews.
    pub async fn settings(&self, user_id: &str) -> Result<DeveloperSettings, DeveloperError> {
        let items = self
            .ports
            .table
            .query(Query::partition(pk(user_id)).prefix(SK_PREFIX))
            .await?;
        let mut settings = DeveloperSettings::default();
        for item in &items {
            if let Some(slot) = KeySlot::from_sk(&item.sk) {
                settings.record(slot, record::preview_of(item)?.to_string());
            }
        }
        Ok(settings)
    }

    /// Applies the patch: every key given is checked for its shape, then with its provider
    /// (side by side, one cheap call each); only when all pass is anything written, in one
    /// transaction with the removals. Returns a message saying what changed.
    pub async fn update(
        &self,
        user_id: &str,
        patch: DeveloperPatch,
    ) -> Result<String, DeveloperError> {
        let mut set = Vec::new();
        let mut removed = Vec::new();
        for (slot, change) in patch.into_changes() {
            match change {
                Some(raw) => set.push((slot, ProviderKey::parse(slot, &raw)?)),
                None => removed.push(slot),
            }
        }
        if set.is_empty() && removed.is_empty() {
            return Ok("nothing to change".into());
        }

        let models = &self.ports.models;
        let verdicts = futures::future::join_all(
            set.iter()
                .map(|(slot, key)| models.check_key(slot.family(), key.expose())),
        )
        .await;
        // A refusal is a definite answer about the caller's input, so it is reported before a
        // provider that could not be asked.
        let mut unavailable = None;
        for ((slot, _), verdict) in set.iter().zip(verdicts) {
            match verdict {
                Ok(()) => {}
                Err(KeyCheckError::Refused(why)) => {
                    let message = match why {
                        Some(why) => format!("{} is not a valid key: {why}", slot.describe()),
                        None => format!(
                            "{} was refused by {}; check the key",
                            slot.describe(),
                            slot.family().label()
                        ),
                    };
                    return Err(DeveloperError::InvalidKey {
                        slot: *slot,
                        message,
                    });
                }
                Err(KeyCheckError::Unreachable(why)) => {
                    unavailable.get_or_insert(format!(
                        "{} could not be checked ({why}); nothing was saved, try again shortly",
                        slot.describe()
                    ));
                }
            }
        }
        if let Some(message) = unavailable {
            return Err(DeveloperError::ProviderUnavailable(message));
        }

        let now = self.ports.clock.now();
        let mut ops = Vec::new();
        for (slot, key) in &set {
            let sealed = self
                .ports
                .secrets
                .seal(bound(user_id, *slot, key.expose()).as_bytes())
                .await?;
            let item = record::key_item(pk(user_id), slot.sk(), &sealed, key.preview(), now);
            ops.push(WriteOp::Put {
                item,
                condition: Condition::Always,
            });
        }
        for slot in &removed {
            ops.push(WriteOp::Delete {
                pk: pk(user_id),
                sk: slot.sk(),
                condition: Condition::Always,
            });
        }
        self.ports.table.transact(ops).await?;

        let set_names: Vec<_> = set.iter().map(|(slot, _)| slot.field()).collect();
        let set_names = set_names.join(", ");
        let removed_names: Vec<_> = removed.iter().map(|slot| slot.field()).collect();
        let removed_names = removed_names.join(", ");
        info!(user_id, set = %set_names, removed = %removed_names, "developer keys updated");
        let message = match (set_names.is_empty(), removed_names.is_empty()) {
            (false, true) => format!("saved {set_names}"),
            (true, false) => format!("removed {removed_names}"),
            _ => format!("saved {set_names}; removed {removed_names}"),
        };
        Ok(message)
    }

    /// What translates `model` for `user_id`: the provider with the user's own key for the
    /// model's family when they set one, else the server's choice (its provider key, or the
    /// offline engine when it has none). The inner `Err` is a reason to fail the chapter with:
    /// a stored key that no longer opens (rather than falling back to the server's key: they
    /// chose to pay for their translations, and a silent switch would bill the service, or
    /// without a server key hand them the offline engine's text), or a model the port refuses.
    pub async fn model_for(
        &self,
        user_id: &str,
        model: &str,
    ) -> Result<Result<Arc<dyn ChatModel>, NoModel>, DeveloperError> {
        let user_key = match lookup(model) {
            Some((family, _)) => match self.user_key(user_id, family).await {
                Ok(key) => key,
                Err(DeveloperError::Unreadable(slot)) => {
                    return Ok(Err(NoModel::KeyUnreadable(DeveloperError::Unreadable(
                        slot,
                    ))))
                }
                Err(e) => return Err(e),
            },
            // An unknown model is refused just below, by the port.
            None => None,
        };
        Ok(self
            .ports
            .models
            .model(model, user_key)
            .map_err(NoModel::Refused))
    }

    /// The user's own key for a model family, for their translation jobs; None when they have
    /// not set one. A key that no longer opens is `Unreadable` (the job fails the chapter with
    /// that reason rather than quietly spending the server's key); a backend that is down is a
    /// `Store` error, which the queue retries.
    pub async fn user_key(
        &self,
        user_id: &str,
        family: Family,
    ) -> Result<Option<String>, DeveloperError> {
        let slot = KeySlot::for_family(family);
        let Some(item) = self.ports.table.get(&pk(user_id), &slot.sk()).await? else {
            return Ok(None);
        };
        let unreadable = |why: &str| {
            error!(
                user_id,
                slot = slot.field(),
                why,
                "a stored provider key could not be opened"
            );
            DeveloperError::Unreadable(slot)
        };
        let sealed = record::sealed_of(&item)
            .and_then(|s| BASE64.decode(s).ok())
            .ok_or_else(|| unreadable("the sealed attribute is missing or not base64"))?;
        let opened = match self.ports.secrets.open(&sealed).await {
            Ok(opened) => opened,
            Err(StoreError::Invalid(why)) => return Err(unreadable(&why)),
            Err(e) => return Err(e.into()),
        };
        let opened = String::from_utf8(opened).map_err(|_| unreadable("not UTF-8 once opened"))?;
        let key = opened
            .strip_prefix(&bound(user_id, slot, ""))
            .ok_or_else(|| unreadable("sealed for another account or key slot"))?;
        Ok(Some(key.to_string()))
    }
}

/// What is sealed: the key behind its owner and slot, so that a sealed key copied into another
/// account's item (or slot) does not open there. The authenticated encryption covers the whole
/// text, so the binding cannot be changed without the seal failing. (Keys hold no line breaks.)
fn bound(user_id: &str, slot: KeySlot, key: &str) -> String {
    format!("{user_id}\n{}\n{key}", slot.sk())
}
