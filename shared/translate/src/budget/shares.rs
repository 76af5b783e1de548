//! The fair share of a key's budget between the books that use it.
//!
//! A key's budget is the provider's capacity, and every book on the key waits for it. Without a
//! rule, a place freed goes to whichever request looks first, so a book with many chapters in
//! flight takes nearly every place and a short book started beside it waits behind all of
//! them. Here a waiting request takes a place only when no other book waiting has fewer
//! requests in flight for its weight (max-min fairness): a book alone on the key uses all of
//! it, two books waiting share it by weight, and a book that asks for little gets it at once.
//!
//! Whose a request is travels with the work as a task-local [`Share`] (set by [`within`]
//! around a book's jobs), as a tracing span does: the pipeline between the job and the
//! provider adapter does not carry it. Work spawned on another task leaves the share behind;
//! requests outside any share are one share of weight 1 together.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

tokio::task_local! {
    static CURRENT: Share;
}

/// Whom requests are sent for: one book's run, weighted by what its plan allows.
#[derive(Debug, Clone, PartialEq)]
pub struct Share {
    pub name: Arc<str>,
    /// Places in flight count `1 / weight` against the share: a share of weight 2 gets twice
    /// the places of a share of weight 1 when both wait.
    pub weight: f64,
}

impl Share {
    pub fn new(name: &str, weight: f64) -> Share {
        Share {
            name: name.into(),
            weight: weight.max(1.0),
        }
    }

    /// Requests sent outside any share.
    fn unnamed() -> Share {
        Share::new("", 1.0)
    }
}

/// Runs `work` with its model requests sent for `share`.
pub async fn within<F: Future>(share: Share, work: F) -> F::Output {
    CURRENT.scope(share, work).await
}

/// The share of the task that asks.
pub(super) fn current() -> Share {
    CURRENT
        .try_with(Share::clone)
        .unwrap_or_else(|_| Share::unnamed())
}

/// Requests in flight and waiting, by share; a share with neither is forgotten.
#[derive(Debug, Default)]
pub(super) struct Shares(HashMap<Arc<str>, Use>);

#[derive(Debug)]
struct Use {
    in_flight: usize,
    waiting: usize,
    weight: f64,
}

impl Use {
    fn load(&self) -> f64 {
        self.in_flight as f64 / self.weight
    }
}

impl Shares {
    /// A request of `share` starts waiting for a place.
    pub(super) fn wait(&mut self, share: &Share) {
        let used = self.0.entry(share.name.clone()).or_insert(Use {
            in_flight: 0,
            waiting: 0,
            weight: share.weight,
        });
        // The latest word on the weight holds (a plan may change between jobs).
        used.weight = share.weight;
        used.waiting += 1;
    }

    /// Whether a waiting request of `name` goes before every other waiting: no share waiting
    /// has fewer in flight for its weight.
    pub(super) fn first(&self, name: &str) -> bool {
        let Some(mine) = self.0.get(name).map(Use::load) else {
            return true;
        };
        self.0
            .values()
            .filter(|used| used.waiting > 0)
            .all(|used| used.load() >= mine)
    }

    /// A waiting request of `name` takes its place.
    pub(super) fn take(&mut self, name: &str) {
        if let Some(used) = self.0.get_mut(name) {
            used.waiting = used.waiting.saturating_sub(1);
            used.in_flight += 1;
        }
    }

    /// A waiting request of `name` was given up before it had a place.
    pub(super) fn stop_waiting(&mut self, name: &str) {
        self.change(name, |used| used.waiting = used.waiting.saturating_sub(1));
    }

    /// A request of `name` gave its place back.
    pub(super) fn give_back(&mut self, name: &str) {
        self.change(name, |used| {
            used.in_flight = used.in_flight.saturating_sub(1)
        });
    }

    fn change(&mut self, name: &str, change: impl FnOnce(&mut Use)) {
        if let Some(used) = self.0.get_mut(name) {
            change(used);
            if used.in_flight == 0 && used.waiting == 0 {
                self.0.remove(name);
            }
        }
    }
}
