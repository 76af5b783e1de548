use super::password;
use crate::ports::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum AccountsError {
    #[error("{0}")]
    Invalid(String),
    #[error("an account with this email already exists")]
    EmailTaken,
    #[error("your plan allows {limit} API keys; revoke one before creating another")]
    KeyLimitReached { limit: usize },
    #[error("not found")]
    NotFound,
    /// The credential is missing, unknown, revoked or expired; the text says which, safely.
    #[error("{0}")]
    Unauthenticated(&'static str),
    /// The password given as the account's current one is not.
    #[error("the current password is not right")]
    WrongPassword,
    /// Too many password attempts for this email or from this address.
    #[error("{message}")]
    RateLimited { message: String, retry_after: i64 },
    /// The password hashers are saturated; nothing was checked.
    #[error(transparent)]
    Busy(#[from] password::Busy),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(AccountsError);
