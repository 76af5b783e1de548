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
//!   trips that refuse less. The request itself waits out its `Retry-After` on its place
//!   ([`Permit::rate_limited`]); the key is not paused for it, since the cut already sends fewer, and a pause per
//!   429 would stop the key whenever a share of requests is refused whatever the load.
//! - **Failed** (5xx, overload, a timeout, an unreadable answer): not congestion, the limit
//!   stays (the caller retries after a jittered back-off). Sending less does not make a server
//!   error rarer, and halving on each would starve the key on a provider that fails a steady
//!   share of requests. While the key answers most requests, a failure is isolated and worth
//!   trying again soon ([`ISOLATED_RETRY`]); once most fail ([`OUTAGE`]), the caller's back-off
//!   doubles, as for an outage. Doubling on a request's own streak instead sent the unlucky
//!   requests of a healthy key to wait 4 to 8 s, and the book waited for them.
//!
//! Where the provider says how much of its rate limits is left ([`RateLimits`], read from every
//! answer's headers), the key is paced by it before a 429 happens: no request is sent while
//! requests or tokens are used up, until their reset.
//!
//! Within the limit, the books on the key share it fairly ([`shares`]): a freed place goes to
//! the waiting book with the fewest requests in flight for its weight.
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

mod shares;
use shares::Shares;
pub use shares::{within, Share};

pub const START: f64 = 16.0;
pub const MIN: f64 = 1.0;
pub const MAX: f64 = 256.0;
/// The round trip assumed until an answer measures one.
const FIRST_ROUND_TRIP: Duration = Duration::from_secs(1);
/// The longest pause the headers may impose at once: a daily limit's reset hours away is
/// looked at again on the next answer rather than trusted blindly.
const LONGEST_PACE: Duration = Duration::from_secs(60);
/// A key unused this long starts again from [`START`].
pub const FORGET_AFTER: Duration = Duration::from_secs(3600);
/// A round trip's share of 429s is judged from this many outcomes at least (fewer say little).
const SAMPLE: u32 = 16;
/// Round trips after a cut within which its effect is judged.
const PROBE_ROUND_TRIPS: u32 = 8;
/// The most of a key's requests taken as refused whatever the load.
const MAX_NOISE: f64 = 0.5;
/// Refusals above the noise that are taken for congestion: a round trip's share of 429s wanders
/// around the noise by chance (by about 0.1 over 20 requests at a noise of 0.15).
pub const NOISE_MARGIN: f64 = 0.15;

/// When to send again a request that failed on a key answering most requests.
pub const ISOLATED_RETRY: Duration = Duration::from_millis(500);
/// The smoothed share of requests failing from which the key is taken to be down.
const OUTAGE: f64 = 0.5;
/// How much one outcome moves the smoothed share of failures (about the last 16 count).
const FAILING_WEIGHT: f64 = 1.0 / 16.0;

/// Requests a key's budget lets in flight, by provider host (the `metrics` facade). One value
/// per host: keys of several users on one provider share the label, the last change shows.
pub const BUDGET_LIMIT: &str = "model_budget_limit";
/// Requests holding a place on a key (sent, or waiting out a 429 to be sent again), by provider
/// host.
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
    /// Requests in flight and waiting, by book.
    shares: Shares,
    /// The smoothed share of requests that failed (not 429s: those are answers).
    failing: f64,
}

/// What a cut changed, and the outcomes of the requests sent before it (the burst that caused
/// it goes on answering after the cut, so its share is known in full only later).
#[derive(Debug)]
struct Probe {
    at: Instant,
    before: Epoch,
    limit: f64,
    /// Answers since the cut: each would have grown the limit by one without it.
    answers: u32,
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
        if let Some(probe) = &mut self.probe {
            probe.answers += u32::from(!refused);
        }
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
                // Where the limit would be had it not been cut: the answers since grow it as
                // they would have (undoing only the cut left the key a round trip or two
                // behind, every time noise was learned).
                let uncut = (probe.limit + f64::from(probe.answers)).min(MAX);
                self.limit = self.limit.max(uncut);
                // The cuts before it were as likely the noise: no level is known to be too
                // much, the limit grows fast again (a real limit, if any, cuts it again).
                self.ceiling = MAX;
                tracing::info!(
                    noise = share,
                    limit = self.limit,
                    "provider refuses a share of requests whatever the load: cut undone"
                );
            }
            Some(probe) => tracing::debug!(
                share,
                before = probe.before.share_so_far(),
                outcomes_before = probe.before.answered + probe.before.refused,
                limit = self.limit,
                "fewer 429s after the cut: congestion"
            ),
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
    share: Arc<str>,
}

impl Permit {
    /// The provider answered; `limits` from its headers, `tokens` the answer used in all.
    pub fn answered(self, limits: &RateLimits, tokens: u64) {
        let round_trip = self.sent.elapsed();
        self.budget.update(|s| {
            s.round_trip = (s.round_trip * 7 + round_trip) / 8;
            s.failing *= 1.0 - FAILING_WEIGHT;
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

    /// The provider said 429: fewer requests at once, once per round trip. The request keeps
    /// its place while it waits out the provider's `Retry-After` and is sent again on it
    /// ([`Permit::again`]): given back, the place went at once to another request that the
    /// provider, still full, refused as fast, and a key just over its limit spun through
    /// dozens of 429s a second.
    pub fn rate_limited(&mut self, limits: &RateLimits) {
        let sent = self.sent;
        let cut = self.budget.update(|s| {
            let now = Instant::now();
            s.failing *= 1.0 - FAILING_WEIGHT;
            s.count(true);
            // A cut whose effect is still being measured is not judged over: once it has been,
            // or several round trips went by without enough answers to tell (at half the load,
            // a round trip's sample takes two or three of them: giving up sooner left the cut
            // unjudged and the next 429 cut again).
            if s.probe
                .as_ref()
                .is_some_and(|p| now.duration_since(p.at) >= s.round_trip * PROBE_ROUND_TRIPS)
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
                    answers: 0,
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

    /// The request is sent again on its place, once any pause the provider's headers asked
    /// for is over.
    pub async fn again(&mut self) {
        loop {
            let until = self
                .budget
                .state
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .paused_until;
            match until {
                Some(until) if until > Instant::now() => tokio::time::sleep_until(until).await,
                _ => break,
            }
        }
        self.sent = Instant::now();
    }

    /// The request failed in a way that says nothing about load (5xx, a timeout): the limit
    /// stays; the place is given back. When to try again, while the key answers most requests
    /// (None: the key looks down, the caller backs off).
    pub fn failed(self) -> Option<Duration> {
        self.budget.update(|s| {
            s.failing = s.failing * (1.0 - FAILING_WEIGHT) + FAILING_WEIGHT;
            (s.failing < OUTAGE).then_some(ISOLATED_RETRY)
        })
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.budget.update(|s| {
            s.in_flight = s.in_flight.saturating_sub(1);
            s.shares.give_back(&self.share);
        });
    }
}

/// A request waiting for its place; one given up while waiting leaves the queue.
struct Waiting<'a> {
    budget: &'a KeyBudget,
    share: &'a str,
    done: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.budget.update(|s| s.shares.stop_waiting(self.share));
        }
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
                shares: Shares::default(),
                failing: 0.0,
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

    /// Waits for room under the limit (and for any pause to end) and for the turn of the
    /// task's [`Share`], then takes it.
    pub async fn acquire(self: &Arc<Self>) -> Permit {
        let share = shares::current();
        let mut waiting = Waiting {
            budget: self,
            share: &share.name,
            done: false,
        };
        self.update(|s| s.shares.wait(&share));
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
                        if (s.in_flight as f64) < s.limit.floor().max(MIN)
                            && s.shares.first(&share.name)
                        {
                            s.in_flight += 1;
                            s.shares.take(&share.name);
                            waiting.done = true;
                            drop(s);
                            // Another book waiting may go first now.
                            self.changed.notify_waiters();
                            self.show();
                            return Permit {
                                budget: self.clone(),
                                sent: now,
                                share: share.name.clone(),
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

    /// Requests holding a place now (sent, or waiting out a 429 to be sent again).
    pub fn in_flight(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .in_flight
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

    /// A request of `share` waiting for its place, on its own task.
    fn waiting(budget: &Arc<KeyBudget>, share: &Share) -> tokio::task::JoinHandle<Permit> {
        let budget = budget.clone();
        tokio::spawn(within(share.clone(), async move { budget.acquire().await }))
    }

    #[tokio::test(start_paused = true)]
    async fn a_freed_place_goes_to_the_waiting_book_with_the_fewest_requests_in_flight() {
        let budget = budget();
        let (big, small) = (Share::new("big", 1.0), Share::new("small", 1.0));
        let mut held: Vec<Permit> = within(
            big.clone(),
            futures::future::join_all((0..16).map(|_| budget.acquire())),
        )
        .await;
        let big_waiting: Vec<_> = (0..10).map(|_| waiting(&budget, &big)).collect();
        tokio::time::sleep(Duration::from_millis(10)).await;
        let small_waiting = waiting(&budget, &small);
        tokio::time::sleep(Duration::from_millis(10)).await;

        held.pop();
        let small_permit = tokio::time::timeout(Duration::from_secs(1), small_waiting)
            .await
            .expect("the short book took the freed place though it asked last")
            .unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(
            big_waiting.iter().all(|w| !w.is_finished()),
            "the big book took a place the short one needed"
        );
        // With the short book not waiting, the big one has the key to itself again.
        drop(small_permit);
        held.pop();
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(big_waiting.iter().filter(|w| w.is_finished()).count(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn books_waiting_together_share_the_places_by_weight() {
        let budget = budget();
        let (heavy, light) = (Share::new("priority", 2.0), Share::new("plain", 1.0));
        let earlier: Vec<Permit> =
            futures::future::join_all((0..16).map(|_| budget.acquire())).await;
        let heavy_waiting: Vec<_> = (0..30).map(|_| waiting(&budget, &heavy)).collect();
        let light_waiting: Vec<_> = (0..30).map(|_| waiting(&budget, &light)).collect();
        tokio::time::sleep(Duration::from_millis(10)).await;
        for permit in earlier {
            drop(permit);
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let done = |tasks: &[tokio::task::JoinHandle<Permit>]| {
            tasks.iter().filter(|t| t.is_finished()).count()
        };
        assert_eq!(done(&heavy_waiting) + done(&light_waiting), 16);
        assert!(
            (10..=11).contains(&done(&heavy_waiting)),
            "weight 2 against 1 holds two thirds of 16: {} and {}",
            done(&heavy_waiting),
            done(&light_waiting)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_rate_limits_within_one_round_trip_cuts_once() {
        let budget = budget();
        let burst: Vec<Permit> = futures::future::join_all((0..10).map(|_| budget.acquire())).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        for mut permit in burst {
            permit.rate_limited(&NO_HEADERS);
        }
        assert_eq!(budget.limit(), 8, "ten 429s of one burst are one cut");
        // Sent after the cut but answered within the round trip: still the same burst.
        let mut early = budget.acquire().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        early.rate_limited(&NO_HEADERS);
        assert_eq!(budget.limit(), 8);
        // Sent after the cut and refused a round trip later: the cut did not help enough (all
        // three refused: not the noise of a provider refusing some whatever the load), and the
        // limit is cut again.
        let late: Vec<Permit> = futures::future::join_all((0..3).map(|_| budget.acquire())).await;
        tokio::time::sleep(FIRST_ROUND_TRIP).await;
        for mut permit in late {
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
    async fn a_failure_on_a_key_answering_most_requests_is_tried_again_soon_and_an_outage_is_not() {
        let budget = budget();
        // One request in three failing, the others answered: each failure is isolated.
        for n in 0..60 {
            let permit = budget.acquire().await;
            if n % 3 == 0 {
                assert_eq!(permit.failed(), Some(ISOLATED_RETRY), "failure {n}");
            } else {
                permit.answered(&NO_HEADERS, 100);
            }
        }
        // Then every request fails: soon the key is taken to be down.
        let mut suggested = Vec::new();
        for _ in 0..20 {
            suggested.push(budget.acquire().await.failed());
        }
        assert_eq!(suggested.first(), Some(&Some(ISOLATED_RETRY)));
        assert_eq!(suggested.last(), Some(&None), "{suggested:?}");
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

        // A refused request sent again on its place waits for the pause too.
        let mut refused = budget.acquire().await;
        refused.rate_limited(&no_requests);
        let started = Instant::now();
        refused.again().await;
        assert_eq!(started.elapsed(), Duration::from_secs(5));
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
            for (place, mut permit) in permits.into_iter().enumerate() {
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
        // Undoing the cut puts the limit where the answers since would have grown it: the
        // learning costs the key no round trips of growth.
        assert!(limits[4] >= 128, "{limits:?}");
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
