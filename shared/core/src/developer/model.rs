//! What the developer settings speak: the key slots, a provider key that passed the shape
//! checks, the settings and a change to them.

use std::fmt;

use booktr_translate::providers::Family;

/// The shortest and longest key accepted, in characters. Real keys are 39 (Gemini) to about
/// 200 (OpenAI project keys); 20 keeps the preview (7 characters) a small part of any key.
pub const MIN_KEY_LEN: usize = 20;
pub const MAX_KEY_LEN: usize = 256;

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

    /// "keyTwo (Anthropic)".
    pub(super) fn describe(self) -> String {
        format!("{} ({})", self.field(), self.family().label())
    }
}

/// A provider key that passed the shape checks. Only [`ProviderKey::expose`] gives the key out.
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderKey(pub(super) String);

impl ProviderKey {
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The first 3 characters, `...`, the last 4: `sk-...9fQx`. Keys are ASCII (see
    /// `ProviderKey::parse`).
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
    pub(super) fn record(&mut self, slot: KeySlot, preview: String) {
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
    pub(super) fn into_changes(self) -> Vec<(KeySlot, Option<String>)> {
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
