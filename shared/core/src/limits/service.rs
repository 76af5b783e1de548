//! Request rate limits: fixed windows counted on the table, so every process (a fleet of
//! Lambdas, or two `booktr serve` on one database) shares the same counts.
//!
//! | item | pk | sk |
//! |---|---|---|
//! | one window's count | `RATE#<subject>` | the window's name (`minute`, `hour`) |
//!
//! Attributes: `window` (the window's start, Unix seconds), `count`, and `ttl` (Unix seconds
//! after which the item means nothing; DynamoDB's time-to-live removes it, the local runtime
//! sweeps it). A subject has one item per window kind, overwritten when a new window starts, so
//! counters never pile up for a subject that keeps coming.

use chrono::{DateTime, Utc};

pub use super::model::Subject;
use super::record;
use crate::fault::{DataError, Fault};
use crate::ports::Ports;
use crate::ports::{Condition, StoreError};
use crate::types::{Plan, Role};

/// A fixed window: at most `limit` requests per `seconds`. Its name is the counter's sort key, so
/// two budgets of one subject (API calls and pages) need windows of different names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub name: &'static str,
    pub seconds: i64,
    pub limit: u32,
}

impl Window {
    pub const fn per_minute(limit: u32) -> Self {
        Window {
            name: "minute",
            seconds: 60,
            limit,
        }
    }

    pub const fn per_hour(limit: u32) -> Self {
        Window {
            name: "hour",
            seconds: 3600,
            limit,
        }
    }
}

/// The request limits of a plan: both of the spec's statements at once (per minute and per
/// hour). None for role DEV, which is never limited.
pub fn request_windows(plan: Plan, role: Role) -> Option<[Window; 2]> {
    if role == Role::Dev {
        return None;
    }
    Some(match plan {
        Plan::Free => [Window::per_minute(60), Window::per_hour(100)],
        Plan::Pro => [Window::per_minute(300), Window::per_hour(1_000)],
        Plan::Business => [Window::per_minute(1_000), Window::per_hour(10_000)],
    })
}

/// API calls without an account are limited per client address with the FREE plan's numbers.
pub const PUBLIC_WINDOWS: [Window; 2] = [Window::per_minute(60), Window::per_hour(100)];

/// The pages a person views, signed in (counted per user) or not (per client address), apart
/// from the plan's API limits. Sized for a person: one page every 3 seconds for a whole hour,
/// two a second for a minute. Reading a book chapter by chapter is a page a minute or two; the
/// issue's heaviest hour (sign-up, upload, watch, 30 chapters, settings, sign-out) is about 80.
/// A script at full speed still stops after 120 in a minute.
pub const PAGE_WINDOWS: [Window; 2] = [
    Window {
        name: "page-minute",
        seconds: 60,
        limit: 120,
    },
    Window {
        name: "page-hour",
        seconds: 3600,
        limit: 1_200,
    },
];

/// The pages' own live updates (a book page or the library asking for its progress every 3
/// seconds), per user, apart from the pages and the plan. A page polls 20 times a minute; the
/// budget lets six such pages stay open at once for the whole hour, and no more.
pub const LIVE_WINDOWS: [Window; 2] = [
    Window {
        name: "live-minute",
        seconds: 60,
        limit: 120,
    },
    Window {
        name: "live-hour",
        seconds: 3600,
        limit: 7_200,
    },
];

/// Password attempts (sign-in, sign-up, password reset) per client address, on top of the public
/// limits.
pub const PASSWORD_WINDOWS_PER_ADDRESS: [Window; 2] =
    [Window::per_minute(10), Window::per_hour(50)];

/// Sign-in attempts at one account from one client address.
pub const SIGN_IN_WINDOWS_PER_EMAIL_AND_ADDRESS: [Window; 2] =
    [Window::per_minute(5), Window::per_hour(20)];

/// Sign-in attempts at one account from every address together: the backstop against guessing
/// from many addresses. Well above what one address may make (50 an hour), so locking someone
/// out of their account takes a distributed attack rather than a script on one machine.
pub const SIGN_IN_WINDOWS_PER_EMAIL: [Window; 2] = [Window::per_minute(30), Window::per_hour(100)];

/// The outcome of counting one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub allowed: bool,
    /// The limit of the window closest to running out.
    pub limit: u32,
    /// Requests left in that window.
    pub remaining: u32,
    /// When that window resets (Unix seconds).
    pub reset: i64,
    /// Seconds until the request may be retried, when refused.
    pub retry_after: Option<i64>,
}

#[derive(Clone)]
pub struct RateLimiter {
    ports: Ports,
}

impl RateLimiter {
    pub fn new(ports: Ports) -> Self {
        RateLimiter { ports }
    }

    /// Counts one request of `subject` in every window and says whether it may go on. The
    /// request counts even when refused, so hammering does not open a window early.
    pub async fn hit(
        &self,
        subject: &Subject,
        windows: &[Window; 2],
    ) -> Result<Verdict, DataError> {
        let now = self.ports.clock.now();
        let pk = subject.pk();
        let (a, b) = tokio::try_join!(
            self.count(&pk, &windows[0], now),
            self.count(&pk, &windows[1], now)
        )?;
        Ok(verdict(windows, &[a, b], now.timestamp()))
    }

    /// Adds one to the window's counter and returns the new count: one conditional update
    /// while the window lasts; at a window's start, the item is replaced, guarded on the window
    /// it held so that two processes starting the same window both count.
    async fn count(&self, pk: &str, window: &Window, now: DateTime<Utc>) -> Result<u32, DataError> {
        let mut start = now.timestamp() - now.timestamp().rem_euclid(window.seconds);
        let table = &self.ports.table;
        for _ in 0..8 {
            let fresh = record::first_count(pk, window.name, start, start + window.seconds);
            let added = table
                .update(
                    pk,
                    window.name,
                    record::counted(),
                    record::window_is(start.into()),
                )
                .await;
            let replaced = match added {
                Ok(item) => return Ok(record::count_of(&item)),
                Err(StoreError::NotFound) => table.put(fresh, Condition::NotExists).await,
                Err(StoreError::Conflict) => {
                    let Some(current) = table.get(pk, window.name).await? else {
                        continue;
                    };
                    match record::window_of(&current).map(|w| (w, w.as_i64())) {
                        Some((_, Some(w))) if w == start => continue,
                        // A request that read the clock just before another started the next
                        // window counts in that window rather than moving it back.
                        Some((_, Some(w))) if w > start => {
                            start = w;
                            continue;
                        }
                        Some((old, _)) => {
                            let guard = record::window_is(old.clone());
                            table.put(fresh, guard).await
                        }
                        None => table.put(fresh, Condition::Exists).await,
                    }
                }
                Err(e) => return Err(e.into()),
            };
            match replaced {
                Ok(()) => return Ok(1),
                // Someone else started the window first: count in theirs.
                Err(StoreError::Conflict) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        // Eight other writers each started a window in between: contention no caller causes.
        Err(Fault::Internal(format!(
            "the rate-limit counter {pk}/{} kept changing under us",
            window.name
        ))
        .into())
    }
}

/// The windows' counts as one answer: refused when any window is over its limit; the headers
/// describe the window with the fewest requests left, preferring on a tie one actually over
/// its limit (so a refusal names the limit that refused it), then the longer one (whose wait
/// is the one that matters).
fn verdict(windows: &[Window], counts: &[u32], now: i64) -> Verdict {
    let reset_of = |w: &Window| now - now.rem_euclid(w.seconds) + w.seconds;
    let mut allowed = true;
    let mut retry_after: Option<i64> = None;
    // (requests left, not over the limit, shorter) orders the candidates, least first.
    let mut closest: Option<((u32, bool, i64), &Window)> = None;
    for (window, &count) in windows.iter().zip(counts) {
        let over = count > window.limit;
        if over {
            allowed = false;
            let wait = (reset_of(window) - now).max(1);
            retry_after = Some(retry_after.map_or(wait, |r| r.max(wait)));
        }
        let rank = (window.limit.saturating_sub(count), !over, -window.seconds);
        if closest.is_none_or(|(best, _)| rank < best) {
            closest = Some((rank, window));
        }
    }
    let ((remaining, _, _), window) = closest.unwrap_or(((u32::MAX, true, 0), &PUBLIC_WINDOWS[0]));
    Verdict {
        allowed,
        limit: window.limit,
        remaining,
        reset: reset_of(window),
        retry_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: [Window; 2] = [Window::per_minute(60), Window::per_hour(100)];

    #[test]
    fn the_headers_describe_the_window_closest_to_running_out() {
        // 10 s into a minute and an hour: 30 used of 60 this minute, 90 of 100 this hour.
        let now = 3600 * 1000 + 10;
        let v = verdict(&W, &[30, 90], now);
        assert!(v.allowed);
        assert_eq!((v.limit, v.remaining), (100, 10));
        assert_eq!(v.reset, 3600 * 1001);
        let v = verdict(&W, &[55, 20], now);
        assert_eq!((v.limit, v.remaining, v.reset), (60, 5, 3600 * 1000 + 60));
    }

    #[test]
    fn a_request_over_either_window_is_refused_until_that_window_resets() {
        let now = 3600 * 1000 + 10;
        let v = verdict(&W, &[61, 61], now);
        assert!(!v.allowed);
        assert_eq!(v.retry_after, Some(50));
        let v = verdict(&W, &[61, 100], now);
        assert_eq!((v.limit, v.remaining, v.retry_after), (60, 0, Some(50)));
        let v = verdict(&W, &[5, 101], now);
        assert!(!v.allowed);
        assert_eq!(v.remaining, 0);
        assert_eq!(v.retry_after, Some(3590));
    }

    #[test]
    fn each_budget_of_a_subject_counts_under_names_of_its_own() {
        let names: Vec<_> = [W, PAGE_WINDOWS, LIVE_WINDOWS]
            .iter()
            .flatten()
            .map(|w| w.name)
            .collect();
        let unique: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    #[test]
    fn dev_is_never_limited_and_plans_get_the_spec_numbers() {
        assert_eq!(request_windows(Plan::Pro, Role::Dev), None);
        let free = request_windows(Plan::Free, Role::User).unwrap_or(PUBLIC_WINDOWS);
        assert_eq!((free[0].limit, free[1].limit), (60, 100));
        let business = request_windows(Plan::Business, Role::SuperAdmin);
        assert_eq!(
            business.map(|w| (w[0].limit, w[1].limit)),
            Some((1000, 10_000))
        );
    }
}
