//! API keys this process authenticated in the last second, with their owner: most requests
//! then skip the two reads (the key, its user) that authentication otherwise costs.
//!
//! Freshness: an entry lives [`FRESH_FOR`] of real time (not the domain clock: this bounds how
//! stale a copy may be, it is not a business rule). Whatever this process changes is dropped at
//! once: a revoked key, a changed profile, a closed account. Another process (another Lambda of
//! the fleet) sees such a change within [`FRESH_FOR`]. A key's expiry is checked on every use
//! against the domain clock, cached or not.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::record::StoredKey;
use super::User;

/// How long an authenticated key is trusted without reading it again.
pub const FRESH_FOR: Duration = Duration::from_secs(1);
/// Entries at most; a full cache is emptied (only valid keys enter, so filling it takes that
/// many real keys used within a second).
const CAPACITY: usize = 10_000;

/// A key and its owner as read from the table.
#[derive(Clone)]
pub(super) struct Entry {
    pub stored: StoredKey,
    pub user: User,
}

struct Cached {
    entry: Entry,
    read_at: Instant,
}

/// Taken before the reads whose result is to be kept: when they started, and which forgets
/// had happened by then.
pub(super) struct Ticket {
    read_at: Instant,
    generation: u64,
}

#[derive(Default)]
struct Inner {
    /// By the key's table partition (its secret's hash): the secret itself is never kept.
    entries: HashMap<String, Cached>,
    /// Counts forgets, so a read that raced one is not kept (see `put`).
    generation: u64,
}

/// Shared by every clone of the `Accounts` (and `Privacy`) of one process.
#[derive(Clone, Default)]
pub(super) struct KeyCache {
    inner: Arc<Mutex<Inner>>,
}

impl KeyCache {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn ticket(&self) -> Ticket {
        Ticket {
            read_at: Instant::now(),
            generation: self.lock().generation,
        }
    }

    /// The entry for this key if it was read less than [`FRESH_FOR`] ago.
    pub fn get(&self, key_pk: &str) -> Option<Entry> {
        let mut inner = self.lock();
        match inner.entries.get(key_pk) {
            Some(cached) if cached.read_at.elapsed() < FRESH_FOR => Some(cached.entry.clone()),
            Some(_) => {
                inner.entries.remove(key_pk);
                None
            }
            None => None,
        }
    }

    /// Keeps what was read after `ticket` was taken: trusted until [`FRESH_FOR`] after the
    /// reads began, and not kept at all if something was forgotten meanwhile (the reads may
    /// have seen the key or user before the change that forget was for).
    pub fn put(&self, key_pk: String, entry: Entry, ticket: Ticket) {
        let mut inner = self.lock();
        if inner.generation != ticket.generation {
            return;
        }
        if inner.entries.len() >= CAPACITY {
            inner.entries.clear();
        }
        inner.entries.insert(
            key_pk,
            Cached {
                entry,
                read_at: ticket.read_at,
            },
        );
    }

    /// Records a `lastUsedAt` this process wrote, so the next use does not write it again.
    pub fn touched(&self, key_pk: &str, at: DateTime<Utc>) {
        if let Some(cached) = self.lock().entries.get_mut(key_pk) {
            cached.entry.stored.key.last_used_at = Some(at);
        }
    }

    /// Drops one key (revoked).
    pub fn forget_key(&self, key_id: &str) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner
            .entries
            .retain(|_, cached| cached.entry.stored.key.id != key_id);
    }

    /// Drops every key of this user (profile changed, account closed).
    pub fn forget_user(&self, user_id: &str) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner
            .entries
            .retain(|_, cached| cached.entry.user.id != user_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounts::ApiKey;
    use crate::types::{Email, Plan, Role, Scope};

    fn entry(key_id: &str, user_id: &str) -> Entry {
        let now = Utc::now();
        Entry {
            stored: StoredKey {
                key: ApiKey {
                    id: key_id.into(),
                    name: "ci".into(),
                    prefix: "bt_12345678".into(),
                    scopes: vec![Scope::Read],
                    last_used_at: None,
                    expires_at: None,
                    created_at: now,
                },
                user_id: user_id.into(),
            },
            user: User {
                id: user_id.into(),
                name: None,
                email: Email::parse("ana@example.com").unwrap(),
                image: None,
                role: Role::User,
                plan: Plan::Free,
                email_verified: false,
                two_factor_enabled: false,
                preferred_language: None,
                created_at: now,
            },
        }
    }

    #[test]
    fn a_key_read_just_now_is_returned_with_its_owner() {
        let cache = KeyCache::default();
        cache.put("K1".into(), entry("key1", "u1"), cache.ticket());
        let hit = cache.get("K1").unwrap();
        assert_eq!(hit.stored.key.id, "key1");
        assert_eq!(hit.user.id, "u1");
        assert!(cache.get("K2").is_none());
    }

    #[test]
    fn a_key_read_longer_ago_than_fresh_for_is_read_again() {
        let cache = KeyCache::default();
        let mut ticket = cache.ticket();
        ticket.read_at = Instant::now() - FRESH_FOR;
        cache.put("K1".into(), entry("key1", "u1"), ticket);
        assert!(cache.get("K1").is_none());
    }

    #[test]
    fn a_read_that_began_before_a_forget_is_not_kept() {
        let cache = KeyCache::default();
        let ticket = cache.ticket();
        cache.forget_key("other");
        cache.put("K1".into(), entry("key1", "u1"), ticket);
        assert!(cache.get("K1").is_none());
    }

    #[test]
    fn forgetting_a_key_or_a_user_drops_only_theirs() {
        let cache = KeyCache::default();
        cache.put("K1".into(), entry("key1", "u1"), cache.ticket());
        cache.put("K2".into(), entry("key2", "u1"), cache.ticket());
        cache.put("K3".into(), entry("key3", "u2"), cache.ticket());
        cache.forget_key("key1");
        assert!(cache.get("K1").is_none());
        assert!(cache.get("K2").is_some());
        cache.forget_user("u1");
        assert!(cache.get("K2").is_none());
        assert!(cache.get("K3").is_some());
    }

    #[test]
    fn a_use_recorded_by_this_process_is_seen_by_the_next_lookup() {
        let cache = KeyCache::default();
        cache.put("K1".into(), entry("key1", "u1"), cache.ticket());
        let at = Utc::now();
        cache.touched("K1", at);
        assert_eq!(cache.get("K1").unwrap().stored.key.last_used_at, Some(at));
    }
}
