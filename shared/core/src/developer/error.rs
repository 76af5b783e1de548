use booktr_translate::model::ChatError;

use super::KeySlot;
use crate::ports::StoreError;

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
