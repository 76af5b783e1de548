//! Monthly plan quotas and the spec's Usage report.
//!
//! A book counts when it is uploaded (the spec's upload answers 400 "limit exceeded"); words
//! count when a translation starts: the words of the chapters that start queues (chapters
//! already translated under the same key are free). A stop gives back the words of the
//! chapters it leaves untranslated, when the run was charged in the same month. Periods are
//! calendar months in UTC.
//!
//! A spend can also be reserved ahead of the work it pays for (a direct upload's book, from the
//! offer of its form): counted at once like any spend, and held under an id until a time. The
//! work redeems it (it stays spent, once); past its time it is given back, by the first read or
//! spend of the user's usage after that, so the report never shows a reservation that is over.
//!
//! | item | pk | sk |
//! |---|---|---|
//! | one month's usage | `USER#<id>` | `USAGE#<yyyy-mm>` |
//! | a reserved spend | `USER#<id>` | `RESERVED#<id>` |
//!
//! Counters are spent with one conditional update (`Condition::AtMost` on both counters), so
//! concurrent uploads, offers and starts can never pass the last unit together.

mod error;
mod model;
mod record;
mod service;

pub use error::UsageError;
pub use model::{
    next_period_start, period_of, Meter, Quota, Quotas, Shortfall, Spend, UsageReport,
};
pub use service::Usage;
