//! Users, API keys and sessions: who is calling and what they may do.

mod error;
mod key_cache;
mod model;
mod password;
pub mod record;
mod service;

pub use error::AccountsError;
pub use model::{
    ApiKey, Credential, NewKey, NewUser, Principal, User, API_KEY_PREFIX, SESSION_COOKIE,
};
pub(crate) use service::{hash_password, validate_password};
pub use service::{Accounts, SESSION_TTL_DAYS};
