//! What the usage domain speaks: the plans' quotas, a spend, the report and its meters, the
//! calendar months usage is counted in.

use chrono::{DateTime, Datelike, TimeZone, Utc};
use serde::Serialize;

use crate::accounts::User;
use crate::types::{Plan, Role};

/// A plan's monthly allowance; None is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub books: Option<u64>,
    pub words: Option<u64>,
}

impl Quota {
    pub const UNLIMITED: Quota = Quota {
        books: None,
        words: None,
    };
}

/// The quotas of each plan (`BOOKTR_QUOTA_<PLAN>_BOOKS` / `_WORDS`). Role DEV is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    pub free: Quota,
    pub pro: Quota,
    pub business: Quota,
}

impl Default for Quotas {
    /// Free: a few short books a month (a novel of 100k words fits); Pro: a translator's month;
    /// Business: a publisher's.
    fn default() -> Self {
        Quotas {
            free: Quota {
                books: Some(3),
                words: Some(100_000),
            },
            pro: Quota {
                books: Some(30),
                words: Some(3_000_000),
            },
            business: Quota {
                books: Some(300),
                words: Some(30_000_000),
            },
        }
    }
}

impl Quotas {
    pub fn of(&self, user: &User) -> Quota {
        if user.role == Role::Dev {
            return Quota::UNLIMITED;
        }
        match user.plan {
            Plan::Free => self.free,
            Plan::Pro => self.pro,
            Plan::Business => self.business,
        }
    }

    pub fn plan_mut(&mut self, plan: Plan) -> &mut Quota {
        match plan {
            Plan::Free => &mut self.free,
            Plan::Pro => &mut self.pro,
            Plan::Business => &mut self.business,
        }
    }
}

/// One counter of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Meter {
    pub used: u64,
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
    /// Of the limit, 0-100 (0 when unlimited).
    pub percentage: f64,
}

impl Meter {
    pub(super) fn new(used: u64, limit: Option<u64>) -> Self {
        Meter {
            used,
            limit,
            remaining: limit.map(|l| l.saturating_sub(used)),
            percentage: match limit {
                Some(0) => 100.0,
                Some(l) => ((used as f64 / l as f64) * 1000.0).round() / 10.0,
                None => 0.0,
            }
            .min(100.0),
        }
    }
}

/// The spec's Usage.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageReport {
    pub plan: Plan,
    pub plan_name: String,
    pub books: Meter,
    pub words: Meter,
    pub allowed_models: Vec<String>,
    pub priority: bool,
    pub reset_date: DateTime<Utc>,
}

/// Why a translation of `words` cannot start this month (see [`Usage::cover`]).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Shortfall {
    pub words: u64,
    /// Words left in this month's quota.
    pub remaining: u64,
    /// The first plan above the user's whose monthly quota covers the words.
    pub plan: Option<Plan>,
    /// Whether a whole month of the user's own plan covers them (after `reset_date`).
    pub fits_next_month: bool,
    pub reset_date: DateTime<Utc>,
}

/// What a spend asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spend {
    pub books: u64,
    pub words: u64,
}

/// The month a time falls in, as the usage item names it.
pub fn period_of(t: DateTime<Utc>) -> String {
    format!("{:04}-{:02}", t.year(), t.month())
}

/// The first instant of the month after `t`'s.
pub fn next_period_start(t: DateTime<Utc>) -> DateTime<Utc> {
    let (year, month) = if t.month() == 12 {
        (t.year() + 1, 1)
    } else {
        (t.year(), t.month() + 1)
    };
    Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0)
        .single()
        .unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_resets_on_the_first_of_the_next_month() {
        let t = Utc.with_ymd_and_hms(2026, 12, 31, 23, 59, 59).unwrap();
        assert_eq!(period_of(t), "2026-12");
        assert_eq!(
            next_period_start(t),
            Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap()
        );
        let t = Utc.with_ymd_and_hms(2026, 11, 23, 7, 0, 0).unwrap();
        assert_eq!(
            next_period_start(t),
            Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap()
        );
    }

    #[test]
    fn meters_report_remaining_and_percentage() {
        let m = Meter::new(25, Some(100));
        assert_eq!((m.remaining, m.percentage), (Some(75), 25.0));
        let unlimited = Meter::new(25, None);
        assert_eq!((unlimited.remaining, unlimited.percentage), (None, 0.0));
        assert_eq!(Meter::new(150, Some(100)).remaining, Some(0));
    }
}
