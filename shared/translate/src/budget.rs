//! One concurrency budget per provider key, shared by every request on that key in the process
//! (every chunk of every chapter of every book), that tells the provider's congestion from its
//! failures.
//!
//! A request takes a [`Permit`] before it is sent and says with it how the request ended:
//!
//! - **Answered**: the limit grows by one per answer (it doubles every round trip) until the
//!   key's first 429, and after it as long as it is below the level where the last 429 cut it
//!   (the *ceiling*: getting back there is safe, it held until then); above the ceiling by
//!   `1 / limit` (about one more request in flight per round trip), probing for more.
//! - **Refused with 429**: congestion, when sending fewer makes it rarer. The limit halves, but
//!   once per round trip: a 429 to a request sent before the last cut, or less than a smoothed
//!   round trip after it, is the same burst answering (every request in flight meets the same
//!   limit), not news. The round trip after a cut tells whether it helped: when the share of
//!   requests refused did not fall by a third at half the load, the refusals do not follow the
//!   load (a provider refusing a share of requests whatever is sent), the cut is undone and that
//!   share is the key's *noise*; from then on a 429 cuts only in a round trip that refuses
//!   clearly more than the noise ([`NOISE_MARGIN`]). The noise is learned down again by round
//!   trips that refuse less. The request itself waits out its `Retry-After` (the caller's
//!   business); the key is not paused for it, since the cut already sends fewer, and a pause per
//!   429 would stop the key whenever a share of requests is refused whatever the load.
//! - **Failed** (5xx, overload, a timeout, an unreadable answer): not congestion, the limit
//!   stays (the caller retries after a jittered back-off). Sending less does not make a server
//!   error rarer, and halving on each would starve the key on a provider that fails a steady
//!   share of requests.
//!
//! Where the provider says how much of its rate limits is left ([`RateLimits`], read from every
//! answer's headers), the key is paced by it before a 429 happens: no request is sent while
//! requests or tokens are used up, until their reset.
//!
//! The limit starts at [`START`], stays within [`MIN`]..=[`MAX`], and is kept across chapter
//! jobs until the key is idle for [`FORGET_AFTER`] (keys are held by a hash, never in clear).
//! The limit and the requests in flight are gauges ([`BUDGET_LIMIT`], [`BUDGET_IN_FLIGHT`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::Notify;
use tokio::time::Instant;

pub const START: f64 = 16.0;
pub const MIN: f64 = 1.0;
pub const MAX: f64 = 128.0;
/// The round trip assumed until an answer measures one.
const FIRST_ROUND_TRIP: Duration = Duration::from_secs(1);
/// The longest pause the headers may impose at once: a daily limit's reset hours away is
/// looked at again on the next answer rather than trusted blindly.
const LONGEST_PACE: Duration = Duration::from_secs(60);
/// A key unused this long starts again from [`START`].
pub const FORGET_AFTER: Duration = Duration::from_secs(3600);
/// A round trip's share of 429s is judged from this many outcomes at least (fewer say little).
const SAMPLE: u32 = 16;
/// The most of a key's requests taken as refused whatever the load.
const MAX_NOISE: f64 = 0.5;
/// Refusals above the noise that are taken for congestion: a round trip's share of 429s wanders
/// around the noise by chance (by about 0.1 over 20 requests at a noise of 0.15).
pub const NOISE_MARGIN: f64 = 0.15;

/// Requests a key's budget lets in flight, by provider host (the `metrics` facade). One value
/// per host: keys of several users on one provider share the label, the last change shows.
pub const BUDGET_LIMIT: &str = "model_budget_limit";
/// Requests in flight on a key, by provider host.
pub const BUDGET_IN_FLIGHT: &str = "model_budget_in_flight";

/// What a provider's headers say is left of the key's rate limits.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RateLimits {
    pub requests_remaining: Option<u64>,
    pub requests_reset: Option<Duration>,
    pub tokens_remaining: Option<u64>,
    pub tokens_reset: Option<Duration>,
}

impl RateLimits {
    /// How long to send nothing: until the requests' reset when none is left, until the
    /// tokens' reset when fewer are left than the answer just given used (another like it
    /// would be refused).
    fn pause(&self, tokens_used: u64) -> Option<Duration> {
        let requests = (self.requests_remaining == Some(0))
            .then_some(self.requests_reset)
            .flatten();
        let tokens = self
            .tokens_remaining
            .filter(|&left| left == 0 || left < tokens_used)
            .and(self.tokens_reset);
        requests.max(tokens).map(|pause| pause.min(LONGEST_PACE))
    }
}

#[derive(Debug)]
struct State {
    limit: f64,
    in_flight: usize,
    /// Nothing is sent before this: the provider said the key's limits are used up.
    paused_until: Option<Instant>,
    /// When a 429 last cut the limit.
    last_cut: Option<Instant>,
    /// The limit when the last 429 cut it ([`MAX`] before any): below it the limit grows fast.
    ceiling: f64,
    /// Smoothed time from sending a request to its answer.
    round_trip: Duration,
    /// The round trip being counted: since when, answers and 429s.
    epoch: Epoch,
    /// The share of 429s of the last round trip counted in full.
    last_share: f64,
    /// The share of requests refused whatever the load (see the module's notes).
    noise: f64,
    /// After a cut, until the round trip after it says whether it helped.
    probe: Option<Probe>,
}

/// What a cut changed, and the outcomes of the requests sent before it (the burst that caused
/// it goes on answering after the cut, so its share is known in full only later).
#[derive(Debug)]
struct Probe {
    at: Instant,
    before: Epoch,
    limit: f64,
}

#[derive(Debug)]
struct Epoch {
    since: Instant,
    answered: u32,
    refused: u32,
}

impl Epoch {
    fn new(since: Instant) -> Epoch {
        Epoch {
            since,
            answered: 0,
            refused: 0,
        }
    }

    /// The share of 429s counted so far, however few.
    fn share_so_far(&self) -> Option<f64> {
        let all = self.answered + self.refused;
        (all > 0).then(|| f64::from(self.refused) / f64::from(all))
    }

    fn share(&self) -> Option<f64> {
        let all = self.answered + self.refused;
        (all >= SAMPLE).then(|| f64::from(self.refused) / f64::from(all))
    }
}

impl State {
    /// Counts an outcome in the round trip being counted, then closes it if it is over. Every
    /// outcome counts, whenever its request was sent: counting only requests sent within the
    /// round trip would count the quick ones (429s come back sooner than long answers). For a
    /// round trip after a cut, the outcomes of the requests sent before it count with the
    /// share before the cut (those coming back within a round trip of it).
    fn count(&mut self, refused: bool) {
        let now = Instant::now();
        let round_trip = self.round_trip;
        let epoch = match &mut self.probe {
            Some(probe) if now.duration_since(probe.at) < round_trip => &mut probe.before,
            _ => &mut self.epoch,
        };
        if refused {
            epoch.refused += 1;
        } else {
            epoch.answered += 1;
        }
        self.roll(Instant::now());
    }

    /// Closes the round trip being counted when it is over and has enough outcomes: a cut's
    /// probe is judged, the noise learned down. A probe whose round trip refused more than
    /// noise can be is judged on fewer outcomes (the cut stays).
    fn roll(&mut self, now: Instant) {
        let over = now.duration_since(self.epoch.since) >= self.round_trip;
        let outcomes = self.epoch.answered + self.epoch.refused;
        let share = match self.epoch.share_so_far() {
            Some(share) if over && outcomes >= SAMPLE => share,
            Some(share) if self.probe.is_some() && outcomes >= 3 && share > MAX_NOISE => share,
            _ => return,
        };
        self.epoch = Epoch::new(now);
        self.last_share = share;
        match self.probe.take() {
            // Half the load, about as many refused: the refusals do not follow the load. (A
            // provider that allows less than a quarter of the load refuses more than half even
            // after the cut, so such a share is never taken for noise.)
            Some(probe)
                if share > 0.0
                    && share >= probe.before.share_so_far().unwrap_or(1.0) * 2.0 / 3.0
                    && share <= MAX_NOISE =>
            {
                self.noise = share.max(self.noise);
                self.limit = self.limit.max(probe.limit);
                // The cuts before it were as likely the noise: no level is known to be too
                // much, the limit grows fast again (a real limit, if any, cuts it again).
                self.ceiling = MAX;
                tracing::info!(
                    noise = share,
                    limit = self.limit,
                    "provider refuses a share of requests whatever the load: cut undone"
                );
            }
            Some(_) => {}
            // Slowly: a round trip refusing less by chance is common.
            None if share < self.noise => self.noise = (self.noise * 7.0 + share) / 8.0,
            None => {}
        }
    }

    /// Whether the 429s being counted say the key is congested rather than noisy.
    fn congested(&self) -> bool {
        let share = self.epoch.share().unwrap_or(self.last_share);
        self.noise == 0.0 || share > self.noise + NOISE_MARGIN
    }
}

#[derive(Debug)]
pub struct KeyBudget {
    state: Mutex<State>,
    changed: Notify,
    /// The provider's host, for the gauges.
    host: String,
}

/// A request's place in the budget; given back when dropped (a request given up half way
/// changes nothing but the count in flight).
pub struct Permit {
    budget: Arc<KeyBudget>,
    sent: Instant,
}

impl Permit {
    /// The provider answered; `limits` from its headers, `tokens` the answer used in all.
    pub fn answered(self, limits: &RateLimits, tokens: u64) {
        let round_trip = self.sent.elapsed();
        self.budget.update(|s| {
            s.round_trip = (s.round_trip * 7 + round_trip) / 8;
            s.count(false);
            let step = if s.limit < s.ceiling {
                1.0
            } else {
                1.0 / s.limit
            };
            s.limit = (s.limit + step).min(MAX);
            pace(s, limits, tokens);
        });
    }

    /// The provider said 429: fewer requests at once, once per round trip.
    pub fn rate_limited(self, limits: &RateLimits) {
        let sent = self.sent;
        let cut = self.budget.update(|s| {
            let now = Instant::now();
            s.count(true);
            // A cut whose effect is still being measured is not judged over: once it has been,
            // or a few round trips went by without enough answers to tell.
            if s.probe
                .as_ref()
                .is_some_and(|p| now.duration_since(p.at) >= s.round_trip * 4)
            {
                s.probe = None;
            }
            let news = s
                .last_cut
                .is_none_or(|at| sent > at && now.duration_since(at) >= s.round_trip)
                && s.probe.is_none()
                && s.congested();
            if news {
                s.probe = Some(Probe {
                    at: now,
                    before: std::mem::replace(&mut s.epoch, Epoch::new(now + s.round_trip)),
                    limit: s.limit,
                });
                s.ceiling = s.limit;
                s.limit = (s.limit / 2.0).max(MIN);
                s.last_cut = Some(now);
            }
            pace(s, limits, 0);
            news.then_some(s.limit)
        });
        if let Some(limit) = cut {
            tracing::info!(
                limit,
                host = %self.budget.host,
                "provider rate limit: fewer requests at once"
            );
        }
    }

    /// The request failed in a way that says nothing about load (5xx, a timeout): the limit
    /// stays; the place is given back.
    pub fn failed(self) {}
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.budget
            .update(|s| s.in_flight = s.in_flight.saturating_sub(1));
    }
}

/// Pauses the key until the reset of a limit the headers say is used up.
fn pace(s: &mut State, limits: &RateLimits, tokens: u64) {
    if let Some(pause) = limits.pause(tokens) {
        let until = Instant::now() + pause;
        s.paused_until = Some(s.paused_until.map_or(until, |p| p.max(until)));
    }
}

impl KeyBudget {
    fn new(host: String) -> KeyBudget {
        KeyBudget {
            state: Mutex::new(State {
                limit: START,
                in_flight: 0,
                paused_until: None,
                last_cut: None,
                ceiling: MAX,
                round_trip: FIRST_ROUND_TRIP,
                epoch: Epoch::new(Instant::now()),
                last_share: 0.0,
                noise: 0.0,
                probe: None,
            }),
            changed: Notify::new(),
            host,
        }
    }

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
        let host = base_url
            .split("://")
            .last()
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_default()
            .to_string();
        let (budget, used) = budgets
            .entry(id)
            .or_insert_with(|| (Arc::new(KeyBudget::new(host)), now));
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
                            drop(s);
                            self.show();
                            return Permit {
                                budget: self.clone(),
                                sent: now,
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

    /// Requests that may be in flight now.
    pub fn limit(&self) -> usize {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.limit.floor().max(MIN) as usize
    }

    fn update<T>(&self, change: impl FnOnce(&mut State) -> T) -> T {
        let out = change(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()));
        self.changed.notify_waiters();
        self.show();
        out
    }

    /// Sets the gauges to the budget's state.
    fn show(&self) {
        let (limit, in_flight) = {
            let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
            (s.limit.floor().max(MIN), s.in_flight as f64)
        };
        metrics::gauge!(BUDGET_LIMIT, "host" => self.host.clone()).set(limit);
        metrics::gauge!(BUDGET_IN_FLIGHT, "host" => self.host.clone()).set(in_flight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget() -> Arc<KeyBudget> {
        Arc::new(KeyBudget::new("test".into()))
    }

    const NO_HEADERS: RateLimits = RateLimits {
        requests_remaining: None,
        requests_reset: None,
        tokens_remaining: None,
        tokens_reset: None,
    };

    #[tokio::test(start_paused = true)]
    async fn no_more_than_the_limit_are_in_flight_and_a_permit_given_back_lets_one_in() {
        let budget = budget();
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
    async fn a_burst_of_rate_limits_within_one_round_trip_cuts_once() {
        let budget = budget();
        let burst: Vec<Permit> = futures::future::join_all((0..10).map(|_| budget.acquire())).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        for permit in burst {
            permit.rate_limited(&NO_HEADERS);
        }
        assert_eq!(budget.limit(), 8, "ten 429s of one burst are one cut");
        // Sent after the cut but answered within the round trip: still the same burst.
        let early = budget.acquire().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        early.rate_limited(&NO_HEADERS);
        assert_eq!(budget.limit(), 8);
        // Sent after the cut and refused a round trip later: the cut did not help enough (all
        // three refused: not the noise of a provider refusing some whatever the load), and the
        // limit is cut again.
        let late: Vec<Permit> = futures::future::join_all((0..3).map(|_| budget.acquire())).await;
        tokio::time::sleep(FIRST_ROUND_TRIP).await;
        for permit in late {
            permit.rate_limited(&NO_HEADERS);
        }
        assert_eq!(budget.limit(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn server_errors_and_timeouts_do_not_cut_the_limit_nor_pause_the_key() {
        let budget = budget();
        for _ in 0..50 {
            budget.acquire().await.failed();
        }
        assert_eq!(budget.limit(), 16);
        let started = Instant::now();
        drop(budget.acquire().await);
        assert_eq!(started.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn after_a_cut_the_limit_grows_back_fast_to_where_it_was_then_slowly() {
        let budget = budget();
        for _ in 0..16 {
            budget.acquire().await.answered(&NO_HEADERS, 10);
        }
        assert_eq!(
            budget.limit(),
            32,
            "before any 429 it doubles every round trip"
        );
        budget.acquire().await.rate_limited(&NO_HEADERS);
        assert_eq!(budget.limit(), 16);
        for _ in 0..16 {
            budget.acquire().await.answered(&NO_HEADERS, 10);
        }
        assert_eq!(budget.limit(), 32, "back to the ceiling in one round trip");
        for _ in 0..40 {
            budget.acquire().await.answered(&NO_HEADERS, 10);
        }
        assert_eq!(
            budget.limit(),
            33,
            "above it, about one more per round trip"
        );
        for _ in 0..100_000 {
            budget.acquire().await.answered(&NO_HEADERS, 10);
        }
        assert_eq!(budget.limit(), MAX as usize);
    }

    #[tokio::test(start_paused = true)]
    async fn the_key_waits_for_the_reset_when_the_headers_say_requests_or_tokens_are_used_up() {
        let budget = budget();
        let plenty = RateLimits {
            requests_remaining: Some(100),
            requests_reset: Some(Duration::from_secs(5)),
            tokens_remaining: Some(10_000),
            tokens_reset: Some(Duration::from_secs(7)),
        };
        budget.acquire().await.answered(&plenty, 500);
        let started = Instant::now();
        drop(budget.acquire().await);
        assert_eq!(started.elapsed(), Duration::ZERO, "room left: no pause");

        let no_requests = RateLimits {
            requests_remaining: Some(0),
            ..plenty.clone()
        };
        budget.acquire().await.answered(&no_requests, 500);
        let started = Instant::now();
        drop(budget.acquire().await);
        assert_eq!(started.elapsed(), Duration::from_secs(5));

        let few_tokens = RateLimits {
            tokens_remaining: Some(400),
            ..plenty
        };
        budget.acquire().await.answered(&few_tokens, 500);
        let started = Instant::now();
        drop(budget.acquire().await);
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(7),
            "not enough tokens left for another answer like the last"
        );
        assert_eq!(budget.limit(), 19, "pacing is not a cut");
    }

    /// `rounds` round trips of 500 ms, 600 ms apart, each sending as many requests as the limit allows: a
    /// request is refused when `refuse(its place in the round, its number overall)` says so.
    async fn rounds(
        budget: &Arc<KeyBudget>,
        rounds: usize,
        refuse: impl Fn(usize, usize) -> bool,
    ) -> Vec<usize> {
        let mut sent = 0;
        let mut limits = Vec::new();
        for _ in 0..rounds {
            let permits: Vec<Permit> =
                futures::future::join_all((0..budget.limit()).map(|_| budget.acquire())).await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            for (place, permit) in permits.into_iter().enumerate() {
                sent += 1;
                if refuse(place, sent) {
                    permit.rate_limited(&NO_HEADERS);
                } else {
                    permit.answered(&NO_HEADERS, 10);
                }
            }
            limits.push(budget.limit());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        limits
    }

    #[tokio::test(start_paused = true)]
    async fn a_share_of_rate_limits_that_does_not_follow_the_load_stops_cutting_the_limit() {
        let budget = budget();
        // One request in seven refused, however many are sent.
        let limits = rounds(&budget, 12, |_, n| n % 7 == 0).await;
        assert!(
            limits.last().is_some_and(|&l| l >= 32),
            "the limit kept growing: {limits:?}"
        );
        let noise = budget.state.lock().unwrap().noise;
        assert!((0.05..0.3).contains(&noise), "noise {noise}");
    }

    #[tokio::test(start_paused = true)]
    async fn rate_limits_that_follow_the_load_keep_the_limit_near_what_the_provider_allows() {
        // Ten at once allowed: the limit is cut every other round trip (once the round trip
        // after a cut has told that it helped), and grows back to where it was cut.
        let budget = budget();
        let limits = rounds(&budget, 30, |place, _| place >= 10).await;
        assert!(limits[10..].iter().all(|&l| l <= 30), "{limits:?}");
        assert!(
            limits[10..]
                .chunks(2)
                .all(|pair| pair.iter().any(|&l| l <= 16)),
            "{limits:?}"
        );
        assert_eq!(budget.state.lock().unwrap().noise, 0.0);
        // Two allowed, far below the limit: the share refused stays high after a cut, but
        // more than half refused is never taken for noise.
        let budget = self::budget();
        let limits = rounds(&budget, 30, |place, _| place >= 2).await;
        assert!(limits[10..].iter().all(|&l| l <= 6), "{limits:?}");
        assert_eq!(budget.state.lock().unwrap().noise, 0.0);
    }

    #[test]
    fn models_on_the_same_key_share_one_budget() {
        let a = KeyBudget::for_key("http://x/v1", "k1");
        let b = KeyBudget::for_key("http://x/v1", "k1");
        let other = KeyBudget::for_key("http://x/v1", "k2");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &other));
        assert_eq!(a.host, "x");
    }
}
