//! Share links: an unguessable token that shows a translated book to whoever holds it, until it
//! is revoked or expires. A link is unlisted unless its owner makes it public: only public ones
//! are listed in the sitemap, for crawlers.

use chrono::{DateTime, Duration, Utc};
use tracing::info;

use super::error::BooksError;
use super::model::Book;
use super::record::{BookChange, ShareRecord, PUBLIC_SHARES};
use super::service::Books;
use super::store;
use crate::fault::DataError;
use crate::ids::random_alphanumeric;
use crate::ports::{blobs, Condition};
use crate::types::BookStatus;

/// 32 characters of 62: about 190 bits, far beyond guessing.
const TOKEN_LENGTH: usize = 32;
/// The longest expiry a share may ask for (a gap in the spec): ten years; null means never.
pub const MAX_EXPIRES_IN_DAYS: i64 = 3650;

#[derive(Debug, Clone, PartialEq)]
pub struct Share {
    pub token: String,
    pub expires_at: Option<DateTime<Utc>>,
    /// Listed in the sitemap.
    pub public: bool,
}

impl Books {
    /// Shares a translated book (TRANSLATED, GENERATING or COMPLETED), listed in the sitemap
    /// when `public`. Sharing again replaces the link: the old token, and every download link
    /// given out through it, stop working.
    pub async fn share(
        &self,
        user_id: &str,
        book_id: &str,
        expires_in_days: Option<i64>,
        public: bool,
    ) -> Result<Share, BooksError> {
        let book = self.get(user_id, book_id).await?;
        if !matches!(
            book.status,
            BookStatus::Translated | BookStatus::Generating | BookStatus::Completed
        ) {
            return Err(BooksError::Invalid(format!(
                "the book is {}; only a translated book can be shared",
                book.status
            )));
        }
        let expires_at = match expires_in_days {
            None => None,
            Some(days) if (1..=MAX_EXPIRES_IN_DAYS).contains(&days) => {
                Some(self.ports.clock.now() + Duration::days(days))
            }
            Some(_) => {
                return Err(BooksError::Invalid(format!(
                    "expiresIn must be a number of days from 1 to {MAX_EXPIRES_IN_DAYS}, or null"
                )))
            }
        };
        self.revoke_share(&book).await?;
        let token = random_alphanumeric(TOKEN_LENGTH);
        let now = self.ports.clock.now();
        let item = ShareRecord {
            token: token.clone(),
            book_id: Some(book.id.clone()),
            expires_at,
            public,
            created_at: Some(now),
        }
        .item();
        self.ports.table.put(item, Condition::NotExists).await?;
        let update = BookChange::shared(&token, expires_at).into_update();
        self.ports
            .table
            .update(
                &store::book_pk(book_id),
                store::BOOK_SK,
                update,
                Condition::Exists,
            )
            .await?;
        info!(book_id, public, "book shared");
        Ok(Share {
            token,
            expires_at,
            public,
        })
    }

    /// Revokes the book's share link, if it has one.
    pub async fn unshare(&self, user_id: &str, book_id: &str) -> Result<(), BooksError> {
        let book = self.get(user_id, book_id).await?;
        self.revoke_share(&book).await?;
        let update = BookChange::unshared().into_update();
        self.ports
            .table
            .update(
                &store::book_pk(book_id),
                store::BOOK_SK,
                update,
                Condition::Exists,
            )
            .await?;
        Ok(())
    }

    /// The book behind a share token, while the link is valid; None for an unknown, revoked or
    /// expired token (all answered 404, so nothing is learnt by trying).
    pub async fn shared(&self, token: &str) -> Result<Option<Book>, DataError> {
        if token.len() != TOKEN_LENGTH || !token.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Ok(None);
        }
        let Some(item) = self
            .ports
            .table
            .get(&store::share_pk(token), store::SHARE_SK)
            .await?
        else {
            return Ok(None);
        };
        let share = ShareRecord::from_item(&item)?;
        if share
            .expires_at
            .is_some_and(|at| at <= self.ports.clock.now())
        {
            return Ok(None);
        }
        let Some(book_id) = share.book_id else {
            return Ok(None);
        };
        let Some(book) = self
            .find(&book_id)
            .await?
            .filter(|book| book.share_token.as_deref() == Some(token))
        else {
            return Ok(None);
        };
        // A closed account's links die with it, before its purge reaches the book.
        let owner = crate::accounts::record::find_user(&self.ports, &book.user_id).await?;
        Ok(owner.map(|_| book))
    }

    /// The newest public share links that have not expired, at most `limit` of them, with
    /// when each was made: what the sitemap lists. Read from the index alone (a revoked link,
    /// a deleted book's and a purged account's have no share item any more), so one anonymous
    /// sitemap request costs one query, whatever it lists.
    pub async fn public_shares(
        &self,
        limit: usize,
    ) -> Result<Vec<(String, DateTime<Utc>)>, DataError> {
        let items = self
            .ports
            .table
            .query_index(
                crate::ports::Index::Gsi1,
                crate::ports::Query::partition(PUBLIC_SHARES)
                    .descending()
                    .limit(limit),
            )
            .await?;
        let now = self.ports.clock.now();
        let mut shares = Vec::new();
        for item in items {
            // Links shared before the choice existed are in the index too, and stay unlisted.
            let (share, created_at) = ShareRecord::listed(&item)?;
            if !share.public || share.expires_at.is_some_and(|at| at <= now) {
                continue;
            }
            shares.push((share.token, created_at));
        }
        Ok(shares)
    }

    /// Ends the book's share link and the download links given out through it (their copies).
    pub(crate) async fn revoke_share(&self, book: &Book) -> Result<(), DataError> {
        if let Some(token) = &book.share_token {
            self.ports
                .table
                .delete(&store::share_pk(token), store::SHARE_SK, Condition::Always)
                .await?;
            let copies = store::share_files_prefix(&book.id, token);
            blobs::delete_prefix(self.ports.blobs.as_ref(), &copies).await?;
        }
        Ok(())
    }
}
