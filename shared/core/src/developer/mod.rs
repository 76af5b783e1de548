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

mod error;
mod model;
mod record;
mod service;

pub use error::{DeveloperError, NoModel};
pub use model::{
    DeveloperPatch, DeveloperSettings, KeySlot, ProviderKey, MAX_KEY_LEN, MIN_KEY_LEN,
};
pub use service::Developer;
