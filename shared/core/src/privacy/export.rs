//! `GET /api/user/export`: everything the account holds, as one document.

use std::collections::BTreeMap;

use super::error::PrivacyError;
use super::model::AccountExport;
use super::service::Privacy;
use crate::accounts::User;
use crate::books::BookDetail;

impl Privacy {
    pub async fn export(&self, user: &User) -> Result<AccountExport, PrivacyError> {
        let user_id = user.id.as_str();
        let mut books = Vec::new();
        for book in self.domains.books.all_of(user_id).await? {
            let chapters = self.domains.books.chapters(&book.id).await?;
            books.push(BookDetail { book, chapters });
        }
        let webhooks = self.domains.events.webhooks(user_id).await?;
        let mut webhook_deliveries = BTreeMap::new();
        for webhook in &webhooks {
            let history = match self.domains.events.deliveries(user_id, &webhook.id).await {
                Ok(history) => history,
                // Deleted since it was listed.
                Err(crate::events::EventsError::NotFound) => continue,
                Err(e) => return Err(e.into()),
            };
            webhook_deliveries.insert(webhook.id.clone(), history);
        }
        let glossaries = self.domains.glossaries.list(user_id).await?;
        let translation_memory = self.domains.memory.all_of(user_id).await?;
        Ok(AccountExport {
            user: user.clone(),
            books,
            api_keys: self.domains.accounts.list_keys(user_id).await?,
            webhooks,
            glossaries,
            translation_memory,
            preferences: crate::preferences::get(&self.ports, user_id).await?,
            notification_settings: self.domains.events.notification_settings(user_id).await?,
            notifications: self.domains.events.all_notifications(user_id).await?,
            webhook_deliveries,
            usage: self.domains.usage.report(user).await?,
            developer_settings: self.domains.developer.settings(user_id).await?,
            posts: self.domains.community.posts_of(user_id).await?,
            exported_at: self.ports.clock.now(),
        })
    }
}
