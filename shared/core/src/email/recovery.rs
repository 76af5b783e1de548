//! Password reset and email verification by emailed links. A link carries `<userId>.<secret>`:
//! 48 random alphanumerics of which only the SHA-256 is stored, in the user's own partition (so
//! the account's purge removes it with everything else). A link works once (it is claimed by a
//! conditional delete before anything changes) and expires: a reset after an hour, a
//! verification after a week. Emails go through the postman, logged instead of sent when no
//! SMTP server is configured, as notification emails are.

use chrono::{DateTime, Duration, Utc};
use tracing::{info, instrument, warn};

use super::Postman;
use crate::accounts::{store, validate_and_hash_password, Accounts, AccountsError, User};
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

    /// Sets the password of the link's account, and ends every session of it (whoever knew the
    /// old password is signed out).
    #[instrument(skip_all)]
    pub async fn reset_password(&self, token: &str, password: &str) -> Result<User, AccountsError> {
        let hash = validate_and_hash_password(password).await?;
        let user = self.claim(token, Purpose::Reset).await?;
        self.accounts
            .update_profile_item(&user.id, Update::default().set("passwordHash", hash))
            .await?;
        let ended = self.accounts.end_sessions_of(&user.id).await?;
        info!(user_id = %user.id, sessions_ended = ended, "password reset");
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
        let user = self.claim(token, Purpose::Verify).await?;
        self.accounts
            .update_profile_item(&user.id, Update::default().set("emailVerified", true))
            .await?;
        info!(user_id = %user.id, "email verified");
        Ok(User {
            email_verified: true,
            ..user
        })
    }

    async fn issue(&self, user: &User, purpose: Purpose) -> Result<String, StoreError> {
        let secret = random_alphanumeric(48);
        let expires_at = self.accounts.now() + purpose.ttl();
        let item = Item::new(
            store::user_pk(&user.id),
            format!("{}{}", purpose.prefix(), sha256_hex(&secret)),
        )
        .with("expiresAt", items::time(expires_at))
        // DynamoDB removes it once past; the embedded store leaves it to the account's purge.
        .with("ttl", expires_at.timestamp());
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
    async fn claim(&self, token: &str, purpose: Purpose) -> Result<User, AccountsError> {
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
        self.accounts.find(user_id).await?.ok_or_else(dead)
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

fn dead_link_message(purpose: Purpose) -> String {
    match purpose {
        Purpose::Reset => "this reset link is not valid: it was used, it expired (links last an hour) or it was mistyped; ask for a new one".into(),
        Purpose::Verify => "this verification link is not valid: it was used, it expired (links last a week) or it was mistyped; ask for a new one from your settings".into(),
    }
}
