//! Password reset and email verification by emailed links. A link carries `<userId>.<secret>`:
//! 48 random alphanumerics of which only the SHA-256 is stored, in the user's own partition (so
//! the account's purge removes it with everything else). A link works once (it is claimed by a
//! conditional delete before anything changes, and looked up before a reset's password is
//! hashed, so a made-up token costs no Argon2) and expires: a reset after an hour, a
//! verification after a week. A reset link also records the account's password generation
//! when it is mailed and sets the password only while that generation still holds: a reset ends
//! every other reset link of the account, including one used at the same moment. Emails go
//! through the postman, as notification emails do: without an SMTP server, into the outbox
//! (never the log).

use chrono::Duration;
use tracing::{info, instrument, warn};

use super::Postman;
use crate::accounts::{hash_password, record, validate_password, Accounts, AccountsError, User};
use crate::fault::DataError;
use crate::ids::{random_alphanumeric, sha256_hex};
use crate::ports::{Condition, StoreError};
use crate::types::Email;

const RESET_TTL: Duration = Duration::hours(1);
const VERIFY_TTL: Duration = Duration::days(7);

#[derive(Clone, Copy)]
enum Purpose {
    Reset,
    Verify,
}

impl Purpose {
    /// The link's key in the user's partition, by the hash of its secret.
    fn sk(self, secret_hash: &str) -> String {
        match self {
            Purpose::Reset => record::reset_link_sk(secret_hash),
            Purpose::Verify => record::verify_link_sk(secret_hash),
        }
    }

    fn ttl(self) -> Duration {
        match self {
            Purpose::Reset => RESET_TTL,
            Purpose::Verify => VERIFY_TTL,
        }
    }
}

/// Mails and honours the account links. Cheap to clone.
#[derive(Clone)]
pub struct Recovery {
    accounts: Accounts,
    postman: Postman,
    site: String,
}

impl Recovery {
    pub fn new(accounts: Accounts, postman: Postman, site: &str) -> Self {
        Recovery {
            accounts,
            postman,
            site: site.trim_end_matches('/').to_string(),
        }
    }

    /// Mails a reset link when `email` has an account with a password; does nothing otherwise.
    /// Answers the same either way and sends in the background, so neither the answer nor its
    /// time tells whether the email has an account.
    #[instrument(skip(self, email))]
    pub async fn request_password_reset(&self, email: &str) -> Result<(), AccountsError> {
        let email = Email::parse(email).map_err(|e| AccountsError::Invalid(e.0))?;
        let Some(user) = self.accounts.by_email(&email).await? else {
            info!("password reset asked for an email without an account");
            return Ok(());
        };
        let token = self.issue(&user, Purpose::Reset).await?;
        let text = format!(
            "Someone (we hope you) asked to reset the password of your booktr account.\n\n\
             Choose a new password within an hour: {}/reset?token={token}\n\n\
             If it was not you, ignore this email: your password stays as it is.\n",
            self.site
        );
        self.mail(user.email.to_string(), "Reset your booktr password", text);
        Ok(())
    }

    /// Sets the password of the link's account, ends every other reset link of it and every
    /// session (whoever knew the old password is signed out), and with `revoke_api_keys` every
    /// API key too. API keys survive otherwise: a forgotten password is no reason to break the
    /// owner's integrations, but someone who took the account may have made keys of their own.
    ///
    /// The link is looked up before the password is hashed, so a made-up token costs a read,
    /// not milliseconds of Argon2; and claimed after, so a password the rules refuse does not
    /// spend it. Callers limit attempts first ([`Accounts::limit_password_attempt`]).
    #[instrument(skip_all)]
    pub async fn reset_password(
        &self,
        token: &str,
        password: &str,
        revoke_api_keys: bool,
    ) -> Result<User, AccountsError> {
        validate_password(password)?;
        let link = self.open(token, Purpose::Reset).await?;
        let hash = hash_password(password).await?;
        let Claimed { user, generation } = self.claim(link).await?;
        match self
            .accounts
            .change_password(&user.id, hash, generation)
            .await
        {
            Ok(()) => {}
            // Another reset link of the account was used since this one was mailed.
            Err(DataError::Store(StoreError::Conflict)) => {
                info!(user_id = %user.id, "reset link outdated by another reset");
                return Err(AccountsError::Invalid(dead_link_message(Purpose::Reset)));
            }
            Err(e) => return Err(e.into()),
        }
        let ended = self.accounts.end_sessions_of(&user.id).await?;
        let revoked = if revoke_api_keys {
            self.accounts.revoke_all_keys(&user.id).await?
        } else {
            0
        };
        info!(
            user_id = %user.id,
            sessions_ended = ended,
            api_keys_revoked = revoked,
            "password reset"
        );
        Ok(user)
    }

    /// Mails a link that verifies the account's email.
    #[instrument(skip(self, user), fields(user_id = %user.id))]
    pub async fn request_verification(&self, user: &User) -> Result<(), AccountsError> {
        if user.email_verified {
            return Ok(());
        }
        let token = self.issue(user, Purpose::Verify).await?;
        let text = format!(
            "Confirm that this is your email address for booktr: {}/verify?token={token}\n\n\
             The link works for a week.\n",
            self.site
        );
        self.mail(
            user.email.to_string(),
            "Confirm your email for booktr",
            text,
        );
        Ok(())
    }

    /// Marks the link's account's email as verified.
    #[instrument(skip_all)]
    pub async fn verify_email(&self, token: &str) -> Result<User, AccountsError> {
        let link = self.open(token, Purpose::Verify).await?;
        let Claimed { user, .. } = self.claim(link).await?;
        self.accounts
            .update_profile_item(&user.id, record::email_verified())
            .await?;
        info!(user_id = %user.id, "email verified");
        Ok(User {
            email_verified: true,
            ..user
        })
    }

    async fn issue(&self, user: &User, purpose: Purpose) -> Result<String, DataError> {
        let secret = random_alphanumeric(48);
        let expires_at = self.accounts.now() + purpose.ttl();
        let generation = match purpose {
            Purpose::Reset => Some(self.accounts.password_generation(&user.id).await?),
            Purpose::Verify => None,
        };
        let sk = purpose.sk(&sha256_hex(&secret));
        let item = record::account_link_item(&user.id, sk, expires_at, generation);
        self.accounts
            .ports()
            .table
            .put(item, Condition::NotExists)
            .await?;
        Ok(format!("{}.{secret}", user.id))
    }

    /// The link a token names, while it is there and has not expired; read, not claimed. A
    /// link that is malformed, used, expired or of an account that is gone gets one answer (see
    /// [`Recovery::claim`]), so a link reveals nothing.
    async fn open(&self, token: &str, purpose: Purpose) -> Result<Link, AccountsError> {
        let dead = || AccountsError::Invalid(dead_link_message(purpose));
        let (user_id, secret) = token.split_once('.').ok_or_else(dead)?;
        let valid = |s: &str| {
            !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric())
        };
        if !valid(user_id) || !valid(secret) {
            return Err(dead());
        }
        let (pk, sk) = (record::user_pk(user_id), purpose.sk(&sha256_hex(secret)));
        let item = self
            .accounts
            .ports()
            .table
            .get(&pk, &sk)
            .await?
            .ok_or_else(dead)?;
        let stored = record::account_link_from(&item)?;
        if stored.expires_at <= self.accounts.now() {
            // Spent as a used one is: the embedded store has no TTL to remove it.
            let table = &self.accounts.ports().table;
            table.delete(&pk, &sk, Condition::Always).await?;
            return Err(dead());
        }
        Ok(Link {
            purpose,
            user_id: user_id.to_string(),
            pk,
            sk,
            generation: stored.generation,
        })
    }

    /// The link's account, once the link is claimed (deleted) for good: of two uses at once,
    /// one gets it.
    async fn claim(&self, link: Link) -> Result<Claimed, AccountsError> {
        let dead = || AccountsError::Invalid(dead_link_message(link.purpose));
        let table = &self.accounts.ports().table;
        match table.delete(&link.pk, &link.sk, Condition::Exists).await {
            Ok(()) => {}
            Err(StoreError::Conflict) => return Err(dead()),
            Err(e) => return Err(e.into()),
        }
        let user = self.accounts.find(&link.user_id).await?.ok_or_else(dead)?;
        Ok(Claimed {
            user,
            generation: link.generation,
        })
    }

    /// Sends in the background: an SMTP server's pace must not tell who has an account.
    fn mail(&self, to: String, subject: &'static str, text: String) {
        let postman = self.postman.clone();
        tokio::spawn(async move {
            if let Err(e) = postman.send(&to, subject, &text).await {
                warn!(error = %e, subject, "account email not sent");
            }
        });
    }
}

/// A link found by its token, not claimed yet.
struct Link {
    purpose: Purpose,
    user_id: String,
    pk: String,
    sk: String,
    generation: i64,
}

/// A claimed link: its account, and the password generation it was mailed in (0 for a
/// verification link, which records none).
struct Claimed {
    user: User,
    generation: i64,
}

fn dead_link_message(purpose: Purpose) -> String {
    match purpose {
        Purpose::Reset => "this reset link is not valid: it or another reset link of the account was used, it expired (links last an hour) or it was mistyped; ask for a new one".into(),
        Purpose::Verify => "this verification link is not valid: it was used, it expired (links last a week) or it was mistyped; ask for a new one from your settings".into(),
    }
}
