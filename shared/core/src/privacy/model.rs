//! What the account holder takes away (the export) and what their deletion answers.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::accounts::{ApiKey, User};
use crate::books::BookDetail;
use crate::developer::DeveloperSettings;
use crate::events::{Delivery, Notification, NotificationSettings, Webhook};
use crate::glossaries::Glossary;
use crate::preferences::Preferences;
use crate::usage::UsageReport;

/// What the caller must type, exactly (the spec's).
pub const DELETE_CONFIRMATION: &str = "DELETE MY ACCOUNT";

#[derive(Debug, Clone)]
pub struct Deleted {
    pub success: bool,
    pub message: String,
    pub deleted_at: DateTime<Utc>,
}

/// The spec's export (`user`, `books`, `apiKeys`, `webhooks`, `glossaries`, `exportedAt`), with
/// each book's chapters, and the rest of the account: preferences, notification settings,
/// notifications, the webhooks' delivery histories, this month's usage and which provider keys
/// are set. Secrets never appear: API keys as listed (prefix only), webhooks without their
/// signing secret, provider keys as previews.
#[derive(Debug)]
pub struct AccountExport {
    pub user: User,
    pub books: Vec<BookDetail>,
    pub api_keys: Vec<ApiKey>,
    pub webhooks: Vec<Webhook>,
    pub glossaries: Vec<Glossary>,
    /// The translation memory: every pair with all its entries.
    pub translation_memory: Vec<crate::memory::PairMemory>,
    pub preferences: Preferences,
    pub notification_settings: NotificationSettings,
    pub notifications: Vec<Notification>,
    /// Per webhook id, its delivery history (the latest 100, newest first).
    pub webhook_deliveries: BTreeMap<String, Vec<Delivery>>,
    pub usage: UsageReport,
    pub developer_settings: DeveloperSettings,
    /// Community posts the user wrote, in any status.
    pub posts: Vec<crate::community::Post>,
    pub exported_at: DateTime<Utc>,
}
