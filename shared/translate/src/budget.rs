//! One concurrency budget per provider key, shared by every request on that key in the process
//! (every chunk of every chapter of every book), that adapts to the provider's rate limits:
//! additive increase, multiplicative decrease (as TCP does with a congested link).
//!
//! A request takes a permit before it is sent. Until the key's first 429 each success raises the
//! limit by one (it doubles every round of answers: a slow start, as TCP's); after it, by
//! `1 / limit` (about one more request in flight per round of answers). A 429 halves it (at most once a
//! second, since the requests already in flight answer 429 together) and pauses the key for
//! the answer's `Retry-After` (one second without one). The limit starts at [`START`], stays
//! within [`MIN`]..=[`MAX`], and is kept across chapter jobs until the key is idle for
//! [`FORGET_AFTER`] (keys are held by a hash, never in clear).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::Notify;
use tokio::time::Instant;

pub const START: f64 = 16.0;
pub const MIN: f64 = 1.0;
pub const MAX: f64 = 128.0;
/// The pause after a 429 that names none.
const DEFAULT_PAUSE: Duration = Duration::from_secs(1);
/// 429s closer together than this are one signal, not several.
const CUT_SPACING: Duration = Duration::from_secs(1);
/// A key unused this long starts again from [`START`].
pub const FORGET_AFTER: Duration = Duration::from_secs(3600);

#[derive(Debug)]
struct State {
    limit: f64,
    in_flight: usize,
    paused_until: Option<Instant>,
    last_cut: Option<Instant>,
}

impl State {
    /// No 429 seen yet: the limit still grows fast.
    fn slow_start(&self) -> bool {
        self.last_cut.is_none()
    }
}

#[derive(Debug)]
pub struct KeyBudget {
    state: Mutex<State>,
    changed: Notify,
}

/// A request's place in the budget; given back when dropped.
pub struct Permit {
    budget: Arc<KeyBudget>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.budget
            .update(|s| s.in_flight = s.in_flight.saturating_sub(1));
    }
}

impl Default for KeyBudget {
    fn default() -> Self {
        KeyBudget {
            state: Mutex::new(State {
                limit: START,
                in_flight: 0,
                paused_until: None,
                last_cut: None,
            }),
            changed: Notify::new(),
        }
    }
}

impl KeyBudget {
    /// The budget of `key` at `base_url`, shared with every other model on the same pair.
    pub fn for_key(base_url: &str, key: &str) -> Arc<KeyBudget> {
        type Budgets = HashMap<[u8; 32], (Arc<KeyBudget>, std::time::Instant)>;
        static BUDGETS: OnceLock<Mutex<Budgets>> = OnceLock::new();
        let budgets = BUDGETS.get_or_init(Mutex::default);
        let mut budgets = budgets.lock().unwrap_or_else(|p| p.into_inner());
        let now = std::time::Instant::now();
        budgets.retain(|_, (budget, used)| {
            Arc::strong_count(budget) > 1 || now.duration_since(*used) < FORGET_AFTER
        });
        let id: [u8; 32] = Sha256::digest(format!("{base_url}\n{key}")).into();
        let (budget, used) = budgets
            .entry(id)
            .or_insert_with(|| (Arc::new(KeyBudget::default()), now));
        *used = now;
        budget.clone()
    }

    /// Waits for room under the limit (and for any pause to end), then takes it.
    pub async fn acquire(self: &Arc<Self>) -> Permit {
        loop {
            // Created before the state is read, so a change made in between still wakes us.
            let changed = self.changed.notified();
            let wait = {
                let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
                let now = Instant::now();
                match s.paused_until {
                    Some(until) if until > now => Some(until),
                    _ => {
                        s.paused_until = None;
                        if (s.in_flight as f64) < s.limit.floor().max(MIN) {
                            s.in_flight += 1;
                            return Permit {
                                budget: self.clone(),
                            };
                        }
                        None
                    }
                }
            };
            match wait {
                Some(until) => tokio::time::sleep_until(until).await,
                None => changed.await,
            }
        }
    }

    pub fn on_success(&self) {
        self.update(|s| {
            let step = if s.slow_start() { 1.0 } else { 1.0 / s.limit };
            s.limit = (s.limit + step).min(MAX);
        });
    }

    /// The provider said 429: fewer requests at once, and none until `retry_after` passes.
    pub fn on_rate_limited(&self, retry_after: Option<Duration>) {
        self.update(|s| {
            let now = Instant::now();
            if s.last_cut
                .is_none_or(|at| now.duration_since(at) >= CUT_SPACING)
            {
                s.limit = (s.limit / 2.0).max(MIN);
                s.last_cut = Some(now);
            }
            let until = now + retry_after.unwrap_or(DEFAULT_PAUSE);
            s.paused_until = Some(s.paused_until.map_or(until, |p| p.max(until)));
        });
        tracing::info!(
            limit = self.limit(),
            "provider rate limit: fewer requests at once"
        );
    }

    /// Requests that may be in flight now.
    pub fn limit(&self) -> usize {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.limit.floor().max(MIN) as usize
    }

    fn update(&self, change: impl FnOnce(&mut State)) {
        change(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()));
        self.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn no_more_than_the_limit_are_in_flight_and_a_permit_given_back_lets_one_in() {
        let budget = Arc::new(KeyBudget::default());
        let mut permits = Vec::new();
        for _ in 0..16 {
            permits.push(budget.acquire().await);
        }
        let waiting = tokio::spawn({
            let budget = budget.clone();
            async move { budget.acquire().await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!waiting.is_finished(), "a 17th request went through");
        permits.pop();
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("the freed place was taken")
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_rate_limit_halves_the_limit_once_per_burst_pauses_and_successes_win_it_back() {
        let budget = Arc::new(KeyBudget::default());
        budget.on_rate_limited(Some(Duration::from_secs(2)));
        budget.on_rate_limited(None);
        assert_eq!(budget.limit(), 8, "one burst of 429s is one cut");
        let started = Instant::now();
        drop(budget.acquire().await);
        assert!(
            started.elapsed() >= Duration::from_secs(2),
            "the Retry-After was honoured"
        );
        tokio::time::sleep(CUT_SPACING).await;
        budget.on_rate_limited(None);
        assert_eq!(budget.limit(), 4);
        for _ in 0..200 {
            budget.on_success();
        }
        assert!(budget.limit() >= 16, "limit back to {}", budget.limit());
        for _ in 0..100_000 {
            budget.on_success();
        }
        assert_eq!(budget.limit(), MAX as usize);
    }

    #[test]
    fn before_any_rate_limit_the_limit_grows_by_one_per_success() {
        let budget = KeyBudget::default();
        for _ in 0..16 {
            budget.on_success();
        }
        assert_eq!(budget.limit(), 32, "doubled in one round of answers");
        budget.on_rate_limited(None);
        assert_eq!(budget.limit(), 16);
        for _ in 0..16 {
            budget.on_success();
        }
        assert_eq!(budget.limit(), 16, "after a 429, about one more per round");
    }

    #[test]
    fn models_on_the_same_key_share_one_budget() {
        let a = KeyBudget::for_key("http://x/v1", "k1");
        let b = KeyBudget::for_key("http://x/v1", "k1");
        let other = KeyBudget::for_key("http://x/v1", "k2");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &other));
    }
}
