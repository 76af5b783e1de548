//! What a user gets back: the export of their account, and the receipt of its deletion.

use std::collections::BTreeMap;

use booktr_core::privacy as domain;
use chrono::{DateTime, Utc};

use super::accounts::{ApiKey, User};
use super::books::BookDetail;
use super::community::Post;
use super::developer::DeveloperSettings;
use super::events::{Delivery, Notification, NotificationSettings, Webhook};
use super::glossaries::Glossary;
use super::preferences::Preferences;
use super::usage::UsageReport;
use super::wire;

wire! {
    #[serde(rename_all = "camelCase")]
    pub struct Deleted from domain::Deleted {
        pub success: bool,
        pub message: String,
        pub deleted_at: DateTime<Utc>,
    }
}

wire! {
    /// The spec's export (`user`, `books`, `apiKeys`, `webhooks`, `glossaries`, `exportedAt`), with
    /// each book's chapters, and the rest of the account: preferences, notification settings,
    /// notifications, the webhooks' delivery histories, this month's usage and which provider keys
    /// are set. Secrets never appear: API keys as listed (prefix only), webhooks without their
    /// signing secret, provider keys as previews.
    #[serde(rename_all = "camelCase")]
    pub struct AccountExport from domain::AccountExport {
        pub user: User,
        pub books: Vec<BookDetail>,
        pub api_keys: Vec<ApiKey>,
        pub webhooks: Vec<Webhook>,
        pub glossaries: Vec<Glossary>,
        /// The translation memory: every language pair with all its passages.
        pub translation_memory: Vec<super::memory::PairMemory>,
        pub preferences: Preferences,
        pub notification_settings: NotificationSettings,
        pub notifications: Vec<Notification>,
        /// Per webhook id, its delivery history (the latest 100, newest first).
        pub webhook_deliveries: BTreeMap<String, Vec<Delivery>>,
        pub usage: UsageReport,
        pub developer_settings: DeveloperSettings,
        /// Community posts the user wrote, in any status.
        pub posts: Vec<Post>,
        pub exported_at: DateTime<Utc>,
    }
}
