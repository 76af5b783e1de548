//! Account use cases: users, sign-in sessions and API keys.

use std::collections::HashSet;

use chrono::{DateTime, Duration, Utc};
use tracing::{info, instrument, warn};

use super::key_cache::{self, KeyCache};
use super::record::{self, StoredKey};
use super::{password, AccountsError, NewKey, NewUser};
use super::{ApiKey, Credential, Principal, User, API_KEY_PREFIX};
use crate::fault::{DataError, Fault};
use crate::ids::{new_id, random_alphanumeric, sha256_hex};
use crate::items;
use crate::limits::service::{self as rate, RateLimiter, Subject};
use crate::ports::Ports;
use crate::ports::{Condition, Item, Query, StoreError, Update, WriteOp};
use crate::types::{Email, LanguageCode, Plan, Role, Scope};

/// How long a sign-in session lasts.
pub const SESSION_TTL_DAYS: i64 = 30;
/// `lastUsedAt` is written at most this often per key, so that authentication is not a write on
/// every request.
const LAST_USED_GRANULARITY_SECS: i64 = 60;
/// Characters of the key shown as its `prefix` (the `bt_` part and 8 more).
const SHOWN_PREFIX_LEN: usize = 11;
const KEY_SECRET_LEN: usize = 40;
const MAX_NAME_LEN: usize = 100;

/// Clones share one cache of recently authenticated keys (see `key_cache`): make one per
/// process and clone it wherever accounts change.
#[derive(Clone)]
pub struct Accounts {
    ports: Ports,
    keys: KeyCache,
    limiter: RateLimiter,
}

impl Accounts {
    pub fn new(ports: Ports, limiter: RateLimiter) -> Self {
        Accounts {
            ports,
            keys: KeyCache::default(),
            limiter,
        }
    }

    /// Forgets what this process remembers of the user's keys, after a change to the account
    /// made outside `Accounts` (closing it).
    pub fn forget_user(&self, user_id: &str) {
        self.keys.forget_user(user_id);
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.ports.clock.now()
    }

    /// Creates a user; the email is claimed by its own item in the same transaction, so two
    /// sign-ups with one email cannot both succeed.
    #[instrument(skip(self, new), fields(email = %new.email.masked()))]
    pub async fn create_user(&self, new: NewUser) -> Result<User, AccountsError> {
        self.insert_user(new, Vec::new()).await
    }

    /// Creates the user together with `also` in one transaction. A failed condition anywhere
    /// is reported as `EmailTaken`, so `also` should only hold writes that conflict rarely.
    async fn insert_user(&self, new: NewUser, also: Vec<WriteOp>) -> Result<User, AccountsError> {
        let name = new.name.map(|n| validate_name(&n)).transpose()?;
        let password_hash = match new.password {
            Some(p) => Some(validate_and_hash_password(&p).await?),
            None => None,
        };
        let user = User {
            id: new_id(),
            name,
            email: new.email,
            image: None,
            role: new.role,
            plan: new.plan,
            email_verified: false,
            two_factor_enabled: false,
            preferred_language: None,
            created_at: self.now(),
        };
        let claim = record::email_claim(&user.email, &user.id);
        let mut ops = vec![
            WriteOp::Put {
                item: claim,
                condition: Condition::NotExists,
            },
            WriteOp::Put {
                item: record::user_item(&user, password_hash.as_deref()),
                condition: Condition::NotExists,
            },
        ];
        ops.extend(also);
        let result = self.ports.table.transact(ops).await;
        match result {
            Err(StoreError::Conflict) => Err(AccountsError::EmailTaken),
            other => other.map_err(AccountsError::from),
        }?;
        info!(user_id = %user.id, role = %user.role, "user created");
        Ok(user)
    }

    /// Creates the first SUPER_ADMIN and a key for it, once per data store: returns None when
    /// the store was bootstrapped before. The bootstrap marker is written in the same
    /// transaction as the user, so a crash cannot leave one without the other.
    pub async fn bootstrap_admin(
        &self,
        email: Email,
    ) -> Result<Option<(User, NewKey)>, AccountsError> {
        let (pk, sk) = record::bootstrap_key();
        if self.ports.table.get(pk, sk).await?.is_some() {
            return Ok(None);
        }
        let marker = record::bootstrap_marker(self.now());
        let admin = NewUser {
            email,
            name: Some("Admin".into()),
            password: None,
            role: Role::SuperAdmin,
            plan: Plan::Business,
        };
        let also = vec![WriteOp::Put {
            item: marker,
            condition: Condition::NotExists,
        }];
        let user = match self.insert_user(admin, also).await {
            Err(AccountsError::EmailTaken) => {
                warn!("no administrator created: the store was bootstrapped concurrently or the admin email is taken");
                return Ok(None);
            }
            other => other?,
        };
        let key = self.create_key(&user, "bootstrap", None, None).await?;
        Ok(Some((user, key)))
    }

    /// The writes that close `user`'s account: the profile and the email claim (the claim only
    /// while it is still theirs, else the transaction fails with `Conflict` and
    /// [`Accounts::close_profile`] closes the profile alone). For a transaction of the caller's,
    /// beside writes of its own.
    pub fn closing(&self, user: &User) -> Vec<WriteOp> {
        vec![
            WriteOp::Delete {
                pk: record::user_pk(&user.id),
                sk: record::PROFILE.into(),
                condition: Condition::Always,
            },
            WriteOp::Delete {
                pk: record::email_pk(&user.email),
                sk: record::EMAIL_SK.into(),
                condition: record::owned_by(&user.id),
            },
        ]
    }

    /// Closes the account by removing its profile alone.
    pub async fn close_profile(&self, user_id: &str) -> Result<(), DataError> {
        self.ports
            .table
            .delete(
                &record::user_pk(user_id),
                record::PROFILE,
                Condition::Always,
            )
            .await
            .map_err(DataError::from)
    }

    /// Removes every API key and session of a closed account; returns how many.
    pub async fn remove_credentials_of(&self, user_id: &str) -> Result<usize, DataError> {
        let table = self.ports.table.as_ref();
        let keys = items::delete_indexed_of(table, record::user_api_keys(user_id), user_id).await?;
        let sessions =
            items::delete_indexed_of(table, record::user_sessions(user_id), user_id).await?;
        Ok(keys + sessions)
    }

    pub(crate) fn ports(&self) -> &Ports {
        &self.ports
    }

    /// The account of an email, None when it has none.
    pub(crate) async fn by_email(&self, email: &Email) -> Result<Option<User>, DataError> {
        let claim = self
            .ports
            .table
            .get(&record::email_pk(email), record::EMAIL_SK)
            .await?;
        match claim {
            Some(claim) => self.find(record::owner_of(&claim)?).await,
            None => Ok(None),
        }
    }

    /// Changes the stored profile; the account must exist.
    pub(crate) async fn update_profile_item(
        &self,
        user_id: &str,
        update: Update,
    ) -> Result<(), AccountsError> {
        self.ports
            .table
            .update(
                &record::user_pk(user_id),
                record::PROFILE,
                update,
                Condition::Exists,
            )
            .await?;
        Ok(())
    }

    /// How many times the account's password has been changed; 0 for one never changed, or
    /// for an account that is gone.
    pub(crate) async fn password_generation(&self, user_id: &str) -> Result<i64, DataError> {
        let profile = self
            .ports
            .table
            .get(&record::user_pk(user_id), record::PROFILE)
            .await?;
        Ok(profile
            .and_then(|p| p.i64(record::PASSWORD_GENERATION))
            .unwrap_or(0))
    }

    /// Sets the password (already validated and hashed) if it has not changed since
    /// `generation`, and moves the generation on: whatever was granted against the old
    /// generation (a reset link) stops working. `Conflict` when the password changed since, or
    /// the account is gone. Sessions are the caller's to end.
    pub(crate) async fn change_password(
        &self,
        user_id: &str,
        password_hash: String,
        generation: i64,
    ) -> Result<(), DataError> {
        let update = record::password_changed(password_hash, self.now());
        let unchanged = record::password_unchanged_since(generation);
        self.ports
            .table
            .update(
                &record::user_pk(user_id),
                record::PROFILE,
                update,
                unchanged,
            )
            .await?;
        self.keys.forget_user(user_id);
        Ok(())
    }

    /// Revokes every API key of the user at once; returns how many there were.
    #[instrument(skip(self))]
    pub async fn revoke_all_keys(&self, user_id: &str) -> Result<usize, DataError> {
        let revoked = items::delete_indexed_of(
            self.ports.table.as_ref(),
            record::user_api_keys(user_id),
            user_id,
        )
        .await?;
        self.keys.forget_user(user_id);
        info!(revoked, "every API key revoked");
        Ok(revoked)
    }

    /// Changes the signed-in user's password. `current` must be the account's password now
    /// (`WrongPassword` otherwise, nothing changed); the new one is checked as at sign-up.
    /// Every other session of the account ends, so whoever knew the old password is signed
    /// out; the session that asked (`keep_session`, its token) stays. API keys stay, as after
    /// a reset without their revocation. Returns how many sessions ended. Callers limit
    /// attempts first ([`Accounts::limit_password_attempt`]), as for a sign-in.
    #[instrument(skip_all, fields(user_id = %user_id))]
    pub async fn change_own_password(
        &self,
        user_id: &str,
        keep_session: &str,
        current: &str,
        new: &str,
    ) -> Result<usize, AccountsError> {
        let profile = self
            .ports
            .table
            .get(&record::user_pk(user_id), record::PROFILE)
            .await?
            .ok_or(AccountsError::NotFound)?;
        let record::StoredPassword { hash, generation } = record::password_of(&profile);
        let Some(stored) = hash else {
            // An account made by the CLI has no password to give: a reset link sets one.
            password::verify_against_nothing(current.to_string()).await?;
            return Err(AccountsError::WrongPassword);
        };
        if !password::verify(current.to_string(), stored).await? {
            info!("password change refused: wrong current password");
            return Err(AccountsError::WrongPassword);
        }
        let hash = validate_and_hash_password(new).await?;
        match self.change_password(user_id, hash, generation).await {
            Ok(()) => {}
            // Changed by a reset link (or another session) between the read and the write.
            Err(DataError::Store(StoreError::Conflict)) => {
                return Err(AccountsError::Invalid(
                    "the password was changed meanwhile; reload the page and try again".into(),
                ))
            }
            Err(e) => return Err(e.into()),
        }
        let keep = record::session_pk(&sha256_hex(keep_session));
        let ended = items::delete_indexed_of_but(
            self.ports.table.as_ref(),
            record::user_sessions(user_id),
            user_id,
            Some(&keep),
        )
        .await?;
        info!(sessions_ended = ended, "password changed");
        Ok(ended)
    }

    /// Ends every session of the user; returns how many there were.
    pub(crate) async fn end_sessions_of(&self, user_id: &str) -> Result<usize, DataError> {
        items::delete_indexed_of(
            self.ports.table.as_ref(),
            record::user_sessions(user_id),
            user_id,
        )
        .await
        .map_err(DataError::from)
    }

    /// The account, None when there is none (never opened, or closed).
    pub async fn find(&self, user_id: &str) -> Result<Option<User>, DataError> {
        record::find_user(&self.ports, user_id).await
    }

    pub async fn user(&self, user_id: &str) -> Result<User, AccountsError> {
        record::find_user(&self.ports, user_id)
            .await?
            .ok_or(AccountsError::NotFound)
    }

    /// Changes the caller's own profile fields.
    pub async fn update_profile(
        &self,
        user_id: &str,
        name: Option<String>,
        preferred_language: Option<String>,
    ) -> Result<User, AccountsError> {
        let mut change = record::ProfileChange::default();
        if let Some(name) = name {
            change.name = Some(validate_name(&name)?);
        }
        if let Some(lang) = preferred_language {
            let lang = LanguageCode::parse(&lang).map_err(|e| AccountsError::Invalid(e.0))?;
            change.preferred_language = Some(lang.to_string());
        }
        let update = change.into_update(self.now());
        let item = self
            .ports
            .table
            .update(
                &record::user_pk(user_id),
                record::PROFILE,
                update,
                Condition::Always,
            )
            .await
            .map_err(not_found_as_domain)?;
        self.keys.forget_user(user_id);
        Ok(record::user_from(&item)?)
    }

    // --- sessions -------------------------------------------------------------------------

    /// Counts a password attempt (sign-in, sign-up, a reset link's use) from `address`, and
    /// for `email` when it is a sign-in; refuses it when either is over its limit. Counted before any hashing, so a
    /// refused attempt costs no more than a table write.
    pub async fn limit_password_attempt(
        &self,
        address: &str,
        sign_in_email: Option<&str>,
    ) -> Result<(), AccountsError> {
        let limiter = &self.limiter;
        let from_address = limiter
            .hit(
                &Subject::PasswordAddress(address.to_string()),
                &rate::PASSWORD_WINDOWS_PER_ADDRESS,
            )
            .await?;
        if let Some(wait) = from_address.retry_after {
            crate::metrics::rate_limit_refused("password");
            return Err(AccountsError::RateLimited {
                message: format!(
                    "too many password attempts from your address; try again in {wait} seconds"
                ),
                retry_after: wait,
            });
        }
        if let Some(email) = sign_in_email {
            let email = email.trim().to_lowercase();
            let pair = Subject::SignInEmailFromAddress {
                email: email.clone(),
                address: address.to_string(),
            };
            let anywhere = Subject::SignInEmail(email);
            let (from_here, from_anywhere) = tokio::try_join!(
                limiter.hit(&pair, &rate::SIGN_IN_WINDOWS_PER_EMAIL_AND_ADDRESS),
                limiter.hit(&anywhere, &rate::SIGN_IN_WINDOWS_PER_EMAIL),
            )?;
            let wait = from_here.retry_after.max(from_anywhere.retry_after);
            if let Some(wait) = wait {
                crate::metrics::rate_limit_refused("sign_in");
                return Err(AccountsError::RateLimited {
                    message: format!(
                        "too many sign-in attempts for this account; try again in {wait} seconds"
                    ),
                    retry_after: wait,
                });
            }
        }
        Ok(())
    }

    /// Checks email and password and opens a session; returns the token for the cookie.
    /// Callers limit attempts first ([`Accounts::limit_password_attempt`]).
    #[instrument(skip_all)]
    pub async fn sign_in(
        &self,
        email: &str,
        password: &str,
    ) -> Result<(User, String), AccountsError> {
        const WRONG: AccountsError = AccountsError::Unauthenticated("wrong email or password");
        let Ok(email) = Email::parse(email) else {
            password::verify_against_nothing(password.to_string()).await?;
            return Err(WRONG);
        };
        let Some(claim) = self
            .ports
            .table
            .get(&record::email_pk(&email), record::EMAIL_SK)
            .await?
        else {
            password::verify_against_nothing(password.to_string()).await?;
            return Err(WRONG);
        };
        let user_id = record::owner_of(&claim)?;
        let item = self
            .ports
            .table
            .get(&record::user_pk(user_id), record::PROFILE)
            .await?;
        let Some(item) = item else { return Err(WRONG) };
        let Some(hash) = record::password_of(&item).hash else {
            // Accounts made by the CLI have no password until one is set.
            password::verify_against_nothing(password.to_string()).await?;
            return Err(WRONG);
        };
        if !password::verify(password.to_string(), hash).await? {
            return Err(WRONG);
        }
        let user = record::user_from(&item)?;
        let token = random_alphanumeric(48);
        let now = self.now();
        let session = record::session_item(
            &sha256_hex(&token),
            &user.id,
            now,
            now + Duration::days(SESSION_TTL_DAYS),
        );
        self.ports.table.put(session, Condition::NotExists).await?;
        info!(user_id = %user.id, "signed in");
        Ok((user, token))
    }

    /// Ends the session; unknown tokens are ignored.
    pub async fn sign_out(&self, token: &str) -> Result<(), AccountsError> {
        let pk = record::session_pk(&sha256_hex(token));
        Ok(self
            .ports
            .table
            .delete(&pk, record::SESSION_SK, Condition::Always)
            .await?)
    }

    pub async fn authenticate_session(&self, token: &str) -> Result<Principal, AccountsError> {
        let pk = record::session_pk(&sha256_hex(token));
        let Some(item) = self.ports.table.get(&pk, record::SESSION_SK).await? else {
            return Err(AccountsError::Unauthenticated(
                "session is invalid or has ended",
            ));
        };
        if record::session_expires_at(&item)? <= self.now() {
            return Err(AccountsError::Unauthenticated("session has expired"));
        }
        let user = self
            .user_or_unauthenticated(record::owner_of(&item)?)
            .await?;
        Ok(Principal {
            user,
            scopes: vec![Scope::Read, Scope::Write],
            credential: Credential::Session,
        })
    }

    // --- API keys -------------------------------------------------------------------------

    /// Creates a key within the user's plan limit. Scopes default to read and write.
    #[instrument(skip(self, user), fields(user_id = %user.id))]
    pub async fn create_key(
        &self,
        user: &User,
        name: &str,
        scopes: Option<Vec<Scope>>,
        expires_at: Option<DateTime<Utc>>,
    ) -> Result<NewKey, AccountsError> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > MAX_NAME_LEN {
            return Err(AccountsError::Invalid(format!(
                "name must be 1 to {MAX_NAME_LEN} characters"
            )));
        }
        let scopes = match scopes {
            None => vec![Scope::Read, Scope::Write],
            Some(s) if s.is_empty() => {
                return Err(AccountsError::Invalid(
                    "scopes must name at least one of: read, write".into(),
                ))
            }
            Some(s) => {
                let unique: HashSet<Scope> = s.into_iter().collect();
                Scope::ALL
                    .iter()
                    .copied()
                    .filter(|s| unique.contains(s))
                    .collect()
            }
        };
        let now = self.now();
        if expires_at.is_some_and(|t| t <= now) {
            return Err(AccountsError::Invalid(
                "expiresAt must be in the future".into(),
            ));
        }
        if let Some(limit) = user.api_key_limit() {
            // Counted on the index, which may lag a concurrent create by a moment: two racing
            // creates can exceed the limit by one, which we accept over a global lock.
            if self.list_keys(&user.id).await?.len() >= limit {
                return Err(AccountsError::KeyLimitReached { limit });
            }
        }
        let secret = format!("{API_KEY_PREFIX}{}", random_alphanumeric(KEY_SECRET_LEN));
        let key = ApiKey {
            id: new_id(),
            name: name.to_string(),
            prefix: secret.chars().take(SHOWN_PREFIX_LEN).collect(),
            scopes,
            last_used_at: None,
            expires_at,
            created_at: now,
        };
        let item = record::api_key_item(&sha256_hex(&secret), &user.id, &key);
        self.ports.table.put(item, Condition::NotExists).await?;
        info!(key_id = %key.id, "API key created");
        Ok(NewKey { key, secret })
    }

    /// The user's keys, newest first.
    pub async fn list_keys(&self, user_id: &str) -> Result<Vec<ApiKey>, AccountsError> {
        Ok(self
            .stored_keys(user_id)
            .await?
            .into_iter()
            .map(|(_, k)| k.key)
            .collect())
    }

    async fn stored_keys(&self, user_id: &str) -> Result<Vec<(Item, StoredKey)>, AccountsError> {
        let items = self
            .ports
            .table
            .query_index(
                crate::ports::Index::Gsi1,
                Query::partition(record::user_api_keys(user_id)).descending(),
            )
            .await?;
        items
            .into_iter()
            .map(|item| record::api_key_from(&item).map(|k| (item, k)))
            .collect::<Result<_, _>>()
            .map_err(AccountsError::from)
    }

    /// Revokes a key at once. Another user's key id is NotFound.
    #[instrument(skip(self))]
    pub async fn revoke_key(&self, user_id: &str, key_id: &str) -> Result<(), AccountsError> {
        let keys = self.stored_keys(user_id).await?;
        let (item, _) = keys
            .into_iter()
            .find(|(_, k)| k.key.id == key_id)
            .ok_or(AccountsError::NotFound)?;
        // Guarded on the owner, in case the index lags a re-use of the item.
        self.ports
            .table
            .delete(&item.pk, &item.sk, record::owned_by(user_id))
            .await?;
        self.keys.forget_key(key_id);
        info!("API key revoked");
        Ok(())
    }

    /// The caller holding this key. Keys this process authenticated less than
    /// `key_cache::FRESH_FOR` ago are taken from memory; expiry is checked on every use.
    pub async fn authenticate_key(&self, secret: &str) -> Result<Principal, AccountsError> {
        const INVALID: AccountsError = AccountsError::Unauthenticated("invalid API key");
        if !secret.starts_with(API_KEY_PREFIX) {
            return Err(INVALID);
        }
        let pk = record::api_key_pk(&sha256_hex(secret));
        let key_cache::Entry { stored, user } = match self.keys.get(&pk) {
            Some(entry) => entry,
            None => {
                let ticket = self.keys.ticket();
                let Some(item) = self.ports.table.get(&pk, record::API_KEY_SK).await? else {
                    return Err(INVALID);
                };
                let stored = record::api_key_from(&item)?;
                let user = self.user_or_unauthenticated(&stored.user_id).await?;
                let entry = key_cache::Entry { stored, user };
                self.keys.put(pk.clone(), entry.clone(), ticket);
                entry
            }
        };
        let now = self.now();
        if stored.key.expires_at.is_some_and(|t| t <= now) {
            return Err(AccountsError::Unauthenticated("API key has expired"));
        }
        let stale = stored
            .key
            .last_used_at
            .is_none_or(|t| now - t >= Duration::seconds(LAST_USED_GRANULARITY_SECS));
        if stale {
            let update = record::key_used(now);
            match self
                .ports
                .table
                .update(&pk, record::API_KEY_SK, update, Condition::Always)
                .await
            {
                // Revoked between the read and this write: the request that raced it may pass.
                Ok(_) | Err(StoreError::NotFound) => {}
                Err(e) => return Err(e.into()),
            }
            self.keys.touched(&pk, now);
        }
        Ok(Principal {
            user,
            scopes: stored.key.scopes,
            credential: Credential::ApiKey { id: stored.key.id },
        })
    }

    async fn user_or_unauthenticated(&self, user_id: &str) -> Result<User, AccountsError> {
        match self.user(user_id).await {
            Err(AccountsError::NotFound) => Err(AccountsError::Unauthenticated(
                "the account no longer exists",
            )),
            other => other,
        }
    }
}

fn not_found_as_domain(e: StoreError) -> AccountsError {
    match e {
        StoreError::NotFound => AccountsError::NotFound,
        e => e.into(),
    }
}

fn validate_name(name: &str) -> Result<String, AccountsError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_LEN {
        return Err(AccountsError::Invalid(format!(
            "name must be 1 to {MAX_NAME_LEN} characters"
        )));
    }
    Ok(name.to_string())
}

pub(crate) async fn validate_and_hash_password(password: &str) -> Result<String, AccountsError> {
    validate_password(password)?;
    hash_password(password).await
}

/// The password rules alone: cheap, so that a caller can refuse before anything costly.
pub(crate) fn validate_password(password: &str) -> Result<(), AccountsError> {
    let len = password.chars().count();
    if !(password::MIN_LEN..=password::MAX_LEN).contains(&len) {
        return Err(AccountsError::Invalid(format!(
            "password must be {} to {} characters",
            password::MIN_LEN,
            password::MAX_LEN
        )));
    }
    Ok(())
}

/// The password's Argon2 hash (milliseconds of CPU: callers check what they can first).
pub(crate) async fn hash_password(password: &str) -> Result<String, AccountsError> {
    password::hash(password.to_string())
        .await?
        .map_err(|e| AccountsError::Fault(Fault::Internal(format!("hashing a password: {e}"))))
}
