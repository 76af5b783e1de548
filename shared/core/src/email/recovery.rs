//! Password reset and email verification by emailed links. A link carries `<userId>.<secret>`:
//! 48 random alphanumerics of which only the SHA-256 is stored, in the user's own partition (so
//! the account's purge removes it with everything else). A link works once (it is claimed by a
//! conditional delete before anything changes) and expires: a reset after an hour, a
//! verification after a week. A reset link also records the account's password generation
//! when it is mailed and sets the password only while that generation still holds: a reset ends
//! every other reset link of the account, including one used at the same moment. Emails go
//! through the postman, logged instead of sent when no SMTP server is configured, as
//! notification emails are.

use chrono::{DateTime, Duration, Utc};
use tracing::{info, instrument, warn};

use super::Postman;
use crate::accounts::{store, validate_and_hash_password, Accounts, AccountsError, User};
use crate::fault::DataError;
use crate::ids::{random_alphanumeric, sha256_hex};
use crate::items;
use crate::ports::{Condition, Item, StoreError, Update};
use crate::types::Email;

const RESET_TTL: Duration = Duration::hours(1);
const VERIFY_TTL: Duration = Duration::days(7);

#[derive(Clone, Copy)]
enum Purpose {
    Reset,
    Verify,
}

impl Purpose {
    fn prefix(self) -> &'static str {
        match self {
            Purpose::Reset => "RESET#",
            Purpose::Verify => "VERIFY#",
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
    #[instrument(skip_all)]
    pub async fn reset_password(
        &self,
        token: &str,
        password: &str,
        revoke_api_keys: bool,
    ) -> Result<User, AccountsError> {
        let hash = validate_and_hash_password(password).await?;
        let Claimed { user, generation } = self.claim(token, Purpose::Reset).await?;
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
        let Claimed { user, .. } = self.claim(token, Purpose::Verify).await?;
        self.accounts
            .update_profile_item(&user.id, Update::default().set("emailVerified", true))
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
        let mut item = Item::new(
            store::user_pk(&user.id),
            format!("{}{}", purpose.prefix(), sha256_hex(&secret)),
        )
        .with("expiresAt", items::time(expires_at))
        // DynamoDB removes it once past; the embedded store leaves it to the account's purge.
        .with("ttl", expires_at.timestamp());
        if let Purpose::Reset = purpose {
            let generation = self.accounts.password_generation(&user.id).await?;
            item = item.with(store::PASSWORD_GENERATION, generation);
        }
        self.accounts
            .ports()
            .table
            .put(item, Condition::NotExists)
            .await?;
        Ok(format!("{}.{secret}", user.id))
    }

    /// The link's account, once its token is claimed (deleted) for good. A link that is
    /// malformed, used, expired or of an account that is gone gets one answer, so a link
    /// reveals nothing.
    async fn claim(&self, token: &str, purpose: Purpose) -> Result<Claimed, AccountsError> {
        let dead = || AccountsError::Invalid(dead_link_message(purpose));
        let (user_id, secret) = token.split_once('.').ok_or_else(dead)?;
        let valid = |s: &str| {
            !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric())
        };
        if !valid(user_id) || !valid(secret) {
            return Err(dead());
        }
        let (pk, sk) = (
            store::user_pk(user_id),
            format!("{}{}", purpose.prefix(), sha256_hex(secret)),
        );
        let table = &self.accounts.ports().table;
        let item = table.get(&pk, &sk).await?.ok_or_else(dead)?;
        let expires_at: DateTime<Utc> = items::required_time(&item, "expiresAt")?;
        match table.delete(&pk, &sk, Condition::Exists).await {
            Ok(()) => {}
            Err(StoreError::Conflict) => return Err(dead()),
            Err(e) => return Err(e.into()),
        }
        if expires_at <= self.accounts.now() {
            return Err(dead());
        }
        let user = self.accounts.find(user_id).await?.ok_or_else(dead)?;
        Ok(Claimed {
            user,
            // A reset link mailed before generations were recorded is of the first one.
            generation: item.i64(store::PASSWORD_GENERATION).unwrap_or(0),
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
