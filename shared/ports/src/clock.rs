//! Time, as a port, so that visibility timeouts, expiries and ages can be tested without sleeping.

use std::sync::Mutex;

use chrono::{DateTime, Duration, SubsecRound, Utc};

pub trait Clock: Send + Sync {
    /// The current time at millisecond precision (what every store keeps). MUST never go
    /// backwards within one process.
    fn now(&self) -> DateTime<Utc>;
}

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now().trunc_subsecs(3)
    }
}

/// A clock that only moves when told to: for tests of expiry and visibility timeouts.
#[derive(Debug)]
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock(Mutex::new(start.trunc_subsecs(3)))
    }

    pub fn advance(&self, by: Duration) {
        let mut now = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *now += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
