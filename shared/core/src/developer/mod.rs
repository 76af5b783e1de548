//! Developer settings: a user's own provider keys (the spec's DeveloperSettings), one per model
//! family: key one for OpenAI (gpt), two for Anthropic (claude), three for Gemini. A translation
//! of theirs with a model of that family runs on their key, on their own credit.
//!
//! Who may set keys: every signed-in user, on any plan, since a user's own key costs the service
//! nothing. A key does not lift plan quotas or the plan's model list (only role DEV does).
//!
//! Layout: `USER#<userId>` / `DEVKEY#<ONE|TWO|THREE>` with `sealed` (base64 of the bytes the
//! [`Secrets`](crate::ports::Secrets) port sealed), `preview` (`sk-...9fQx`) and `updatedAt`. The
//! key itself is never stored, logged or printed in clear: [`ProviderKey`] and
//! [`DeveloperPatch`] redact themselves in `Debug`.

use std::fmt;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use booktr_translate::model::{ChatError, ChatModel};
use booktr_translate::providers::{lookup, Family};

use tracing::{error, info};

mod record;

use crate::ports::Ports;
use crate::ports::{Condition, KeyCheckError, Query, StoreError, WriteOp};

/// The shortest and longest key accepted, in characters. Real keys are 39 (Gemini) to about
/// 200 (OpenAI project keys); 20 keeps the preview (7 characters) a small part of any key.
pub const MIN_KEY_LEN: usize = 20;
pub const MAX_KEY_LEN: usize = 256;

const SK_PREFIX: &str = "DEVKEY#";

/// One of the three keys a user may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySlot {
    One,
    Two,
    Three,
}

impl KeySlot {
    pub const ALL: [KeySlot; 3] = [KeySlot::One, KeySlot::Two, KeySlot::Three];

    /// The slot that holds keys for a model family (the spec's order of the model list).
    pub fn for_family(family: Family) -> KeySlot {
        match family {
            Family::OpenAi => KeySlot::One,
            Family::Anthropic => KeySlot::Two,
            Family::Gemini => KeySlot::Three,
        }
    }

    pub fn family(self) -> Family {
        match self {
            KeySlot::One => Family::OpenAi,
            KeySlot::Two => Family::Anthropic,
            KeySlot::Three => Family::Gemini,
        }
    }

    /// The API's field name, which messages use so the caller knows which key is meant.
    pub fn field(self) -> &'static str {
        match self {
            KeySlot::One => "keyOne",
            KeySlot::Two => "keyTwo",
            KeySlot::Three => "keyThree",
        }
    }

    fn sk(self) -> String {
        let name = match self {
            KeySlot::One => "ONE",
            KeySlot::Two => "TWO",
            KeySlot::Three => "THREE",
        };
        format!("{SK_PREFIX}{name}")
    }

    fn from_sk(sk: &str) -> Option<KeySlot> {
        KeySlot::ALL.into_iter().find(|slot| slot.sk() == sk)
    }

    /// "keyTwo (Anthropic)".
    fn describe(self) -> String {
        format!("{} ({})", self.field(), self.family().label())
    }
}

/// A provider key that passed the shape checks. Only [`ProviderKey::expose`] gives the key out.
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderKey(String);

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

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The first 3 characters, `...`, the last 4: `sk-...9fQx`. Keys are ASCII (see `parse`).
    pub fn preview(&self) -> String {
        preview(&self.0)
    }
}

fn preview(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    let head: String = chars.iter().take(3).collect();
    let tail: String = chars[chars.len().saturating_sub(4)..].iter().collect();
    format!("{head}...{tail}")
}

impl fmt::Debug for ProviderKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProviderKey({})", self.preview())
    }
}

/// The spec's DeveloperSettings: which keys are set, masked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeveloperSettings {
    pub has_key_one: bool,
    pub has_key_two: bool,
    pub has_key_three: bool,
    pub key_one_preview: Option<String>,
    pub key_two_preview: Option<String>,
    pub key_three_preview: Option<String>,
}

impl DeveloperSettings {
    fn record(&mut self, slot: KeySlot, preview: String) {
        let (has, shown) = match slot {
            KeySlot::One => (&mut self.has_key_one, &mut self.key_one_preview),
            KeySlot::Two => (&mut self.has_key_two, &mut self.key_two_preview),
            KeySlot::Three => (&mut self.has_key_three, &mut self.key_three_preview),
        };
        *has = true;
        *shown = Some(preview);
    }
}

/// A change to the provider keys: a slot left `None` is unchanged, `Some(None)` removes its key,
/// `Some(Some(key))` sets it.
#[derive(Default)]
pub struct DeveloperPatch {
    pub key_one: Option<Option<String>>,
    pub key_two: Option<Option<String>>,
    pub key_three: Option<Option<String>>,
}

impl DeveloperPatch {
    fn into_changes(self) -> Vec<(KeySlot, Option<String>)> {
        [
            (KeySlot::One, self.key_one),
            (KeySlot::Two, self.key_two),
            (KeySlot::Three, self.key_three),
        ]
        .into_iter()
        .filter_map(|(slot, change)| change.map(|c| (slot, c)))
        .collect()
    }
}

/// What the patch does, never the keys in it.
impl fmt::Debug for DeveloperPatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |change: &Option<Option<String>>| match change {
            None => "unchanged",
            Some(None) => "remove",
            Some(Some(_)) => "set <redacted>",
        };
        f.debug_struct("DeveloperPatch")
            .field("key_one", &show(&self.key_one))
            .field("key_two", &show(&self.key_two))
            .field("key_three", &show(&self.key_three))
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DeveloperError {
    /// The key cannot be one (its shape) or its provider refused it. Names the key.
    #[error("{message}")]
    InvalidKey { slot: KeySlot, message: String },
    /// The provider gave no verdict (unreachable, timed out, 5xx); nothing was saved.
    #[error("{0}")]
    ProviderUnavailable(String),
    /// A stored key no longer opens: the key file or KMS key changed, or the item was altered.
    /// Only setting the key again mends it.
    #[error("your stored provider key for {} could not be read; set it again in the developer settings", .0.describe())]
    Unreadable(KeySlot),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(DeveloperError);

/// Why no model translates a run: what its chapters fail with.
#[derive(Debug, thiserror::Error)]
pub enum NoModel {
    /// The user's stored key for the model's family no longer opens (always
    /// [`DeveloperError::Unreadable`], which says which key and what to do).
    #[error(transparent)]
    KeyUnreadable(DeveloperError),
    /// The models port refused the model (one it does not know).
    #[error(transparent)]
    Refused(ChatError),
}

#[derive(Clone)]
pub struct Developer {
    ports: Ports,
}

fn pk(user_id: &str) -> String {
    format!("USER#{user_id}")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preview_shows_the_first_three_and_last_four_characters() {
        let key = ProviderKey::parse(KeySlot::One, "sk-proj-abcdefghijklmnop9fQx").unwrap();
        assert_eq!(key.preview(), "sk-...9fQx");
        let key =
            ProviderKey::parse(KeySlot::Three, "AIzaSyA1234567890abcdefghijklmnopqrstuv").unwrap();
        assert_eq!(key.preview(), "AIz...stuv");
    }

    #[test]
    fn a_key_never_shows_in_debug_output() {
        let raw = "sk-ant-api03-secretsecretsecret-WXYZ";
        let key = ProviderKey::parse(KeySlot::Two, raw).unwrap();
        let shown = format!("{key:?}");
        assert_eq!(shown, "ProviderKey(sk-...WXYZ)");
        let patch = DeveloperPatch {
            key_one: Some(Some(raw.into())),
            key_two: Some(None),
            key_three: None,
        };
        let shown = format!("{patch:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(
            shown.contains("remove") && shown.contains("unchanged"),
            "{shown}"
        );
    }

    #[test]
    fn surrounding_whitespace_is_trimmed_but_inner_whitespace_is_refused() {
        let key = ProviderKey::parse(KeySlot::One, "  sk-abcdefghijklmnopqrstuvwxyz\n").unwrap();
        assert_eq!(key.expose(), "sk-abcdefghijklmnopqrstuvwxyz");
        for raw in [
            "sk-abcdefghij klmnopqrstuvwxyz",
            "sk-abcdefghij\tklmnopqrstuvwxyz",
            "sk-abcdefghij\u{0}klmnopqrstuvwxyz",
            "sk-abcdefghijé-klmnopqrstuvwxyz",
        ] {
            let error = ProviderKey::parse(KeySlot::One, raw)
                .unwrap_err()
                .to_string();
            assert!(
                error.starts_with("keyOne (OpenAI) is not a valid key"),
                "{error}"
            );
        }
    }

    #[test]
    fn empty_short_and_overlong_keys_are_refused_naming_the_key() {
        let error = ProviderKey::parse(KeySlot::Two, "   ")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("keyTwo") && error.contains("empty"),
            "{error}"
        );
        let error = ProviderKey::parse(KeySlot::Three, "AIzaShort")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("keyThree") && error.contains("9 characters"),
            "{error}"
        );
        assert!(ProviderKey::parse(KeySlot::One, &"k".repeat(MAX_KEY_LEN)).is_ok());
        assert!(ProviderKey::parse(KeySlot::One, &"k".repeat(MAX_KEY_LEN + 1)).is_err());
        assert!(ProviderKey::parse(KeySlot::One, &"k".repeat(MIN_KEY_LEN)).is_ok());
        assert!(ProviderKey::parse(KeySlot::One, &"k".repeat(MIN_KEY_LEN - 1)).is_err());
    }

    #[test]
    fn a_key_of_any_provider_shape_passes_the_generic_checks() {
        // OpenAI-compatible servers (local models, gateways) hand out keys of their own shape;
        // the provider prefix is checked only against the provider's own server.
        assert!(ProviderKey::parse(KeySlot::One, "gsk_0123456789abcdefghijKLMN").is_ok());
        assert!(ProviderKey::parse(KeySlot::One, "local-llm-token-0123456789").is_ok());
    }

    #[test]
    fn slots_follow_the_model_families() {
        for slot in KeySlot::ALL {
            assert_eq!(KeySlot::for_family(slot.family()), slot);
            assert_eq!(KeySlot::from_sk(&slot.sk()), Some(slot));
        }
        assert_eq!(KeySlot::One.sk(), "DEVKEY#ONE");
        assert_eq!(KeySlot::Three.family(), Family::Gemini);
    }
}
