//! The usage service: reports, spends, reservations and refunds over the usage items.

use chrono::{DateTime, Utc};
use tracing::info;

use super::record::{self, reserved_sk, usage_sk, user_pk, Reservation, RESERVED_PREFIX};
use super::{
    next_period_start, period_of, Meter, Quotas, Shortfall, Spend, UsageError, UsageReport,
};
use crate::accounts::User;
use crate::fault::{DataError, Fault};
use crate::ports::Ports;
use crate::ports::{Condition, Item, Query, StoreError};
use crate::types::{Plan, Role};

#[derive(Clone)]
pub struct Usage {
    ports: Ports,
    quotas: Quotas,
}

impl Usage {
    pub fn new(ports: Ports, quotas: Quotas) -> Self {
        Usage { ports, quotas }
    }

    /// The user's usage this month (reservations that are over given back first).
    pub async fn report(&self, user: &User) -> Result<UsageReport, DataError> {
        self.release_expired(&user.id).await?;
        let now = self.ports.clock.now();
        let item = self
            .ports
            .table
            .get(&user_pk(&user.id), &usage_sk(&period_of(now)))
            .await?;
        let used = item.as_ref().map(record::used).unwrap_or_default();
        let quota = self.quotas.of(user);
        let allowed_models = if user.role == Role::Dev {
            booktr_translate::providers::MODELS
                .iter()
                .map(|(name, _, _)| name.to_string())
                .collect()
        } else {
            user.plan
                .allowed_models()
                .iter()
                .map(|m| m.to_string())
                .collect()
        };
        Ok(UsageReport {
            plan: user.plan,
            plan_name: user.plan.display_name().to_string(),
            books: Meter::new(used.books, quota.books),
            words: Meter::new(used.words, quota.words),
            allowed_models,
            priority: user.plan.has_priority(),
            reset_date: next_period_start(now),
        })
    }

    /// What stands in the way of translating `words` this month, before a start is tried: None
    /// when the month's word quota covers them (as the start would find it, `report` being
    /// this user's), else what is left and what would cover them.
    pub fn cover(&self, user: &User, report: &UsageReport, words: u64) -> Option<Shortfall> {
        let remaining = report.words.remaining?;
        if words <= remaining {
            return None;
        }
        let covers = |plan: Plan| {
            let quota = match plan {
                Plan::Free => self.quotas.free,
                Plan::Pro => self.quotas.pro,
                Plan::Business => self.quotas.business,
            };
            quota.words.is_none_or(|limit| words <= limit)
        };
        let bigger = match user.plan {
            Plan::Free => &[Plan::Pro, Plan::Business][..],
            Plan::Pro => &[Plan::Business][..],
            Plan::Business => &[][..],
        };
        Some(Shortfall {
            words,
            remaining,
            plan: bigger.iter().copied().find(|p| covers(*p)),
            fits_next_month: covers(user.plan),
            reset_date: report.reset_date,
        })
    }

    /// Spends from this month's quota, all or nothing; returns the period charged.
    /// Reservations that are over are given back first, so they never stand in the way.
    pub async fn spend(&self, user: &User, spend: Spend) -> Result<String, UsageError> {
        self.release_expired(&user.id).await?;
        let now = self.ports.clock.now();
        let period = period_of(now);
        let (pk, sk) = (user_pk(&user.id), usage_sk(&period));
        let quota = self.quotas.of(user);
        let room = record::room_for(quota, spend);
        let update = record::spent(spend);
        for _ in 0..3 {
            match self
                .ports
                .table
                .update(&pk, &sk, update.clone(), room.clone())
                .await
            {
                Ok(_) => {
                    info!(user_id = %user.id, books = spend.books, words = spend.words, period, "quota spent");
                    return Ok(period);
                }
                Err(StoreError::NotFound) => {
                    let first = record::month_item(&pk, &sk);
                    match self.ports.table.put(first, Condition::NotExists).await {
                        Ok(()) | Err(StoreError::Conflict) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(StoreError::Conflict) => {
                    return Err(UsageError::Exceeded(
                        self.exceeded_message(user, spend, now).await?,
                    ))
                }
                Err(e) => return Err(e.into()),
            }
        }
        // Each try found the counter gone after creating it: nothing but a bug removes it.
        Err(Fault::Internal(format!(
            "the usage counter {pk}/{sk} could not be created in three tries"
        ))
        .into())
    }

    /// Spends `spend` now for work that may not happen, held under `id` (unique to the user)
    /// until `until`: [`Usage::redeem`] keeps it spent; past `until` it is given back. Refused
    /// like a spend when the quota cannot cover it.
    pub async fn reserve(
        &self,
        user: &User,
        id: &str,
        spend: Spend,
        until: DateTime<Utc>,
    ) -> Result<(), UsageError> {
        let period = self.spend(user, spend).await?;
        let reservation = Reservation {
            period,
            spend,
            until: Some(until),
        };
        let item = reservation.to_item(&user.id, id);
        if let Err(e) = self.ports.table.put(item, Condition::NotExists).await {
            // Not held, so not spent either.
            self.refund(&user.id, &reservation.period, spend).await?;
            return Err(e.into());
        }
        info!(user_id = %user.id, reservation = id, books = spend.books, words = spend.words, %until, "spend reserved");
        Ok(())
    }

    /// Turns the reservation `id` into the spend it held, once; returns the period charged. A
    /// reservation already given back (it was over), or counted in a month now past, is spent
    /// afresh as `spend`, which the quota may refuse.
    pub async fn redeem(&self, user: &User, id: &str, spend: Spend) -> Result<String, UsageError> {
        let (pk, sk) = (user_pk(&user.id), reserved_sk(id));
        if let Some(item) = self.ports.table.get(&pk, &sk).await? {
            let reservation = Reservation::from_item(&item)?;
            match self.ports.table.delete(&pk, &sk, Condition::Exists).await {
                Ok(()) if reservation.period == period_of(self.ports.clock.now()) => {
                    info!(user_id = %user.id, reservation = id, "reserved spend redeemed");
                    return Ok(reservation.period);
                }
                // Last month's count stays where it was; this month's is spent below.
                Ok(()) | Err(StoreError::Conflict) => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.spend(user, spend).await
    }

    /// Gives back the reservation `id` if it is still held; nothing once redeemed or released.
    pub async fn release(&self, user_id: &str, id: &str) -> Result<(), DataError> {
        match self
            .ports
            .table
            .get(&user_pk(user_id), &reserved_sk(id))
            .await?
        {
            Some(item) => self.release_item(user_id, &item).await,
            None => Ok(()),
        }
    }

    /// Gives back the user's reservations whose time is over.
    async fn release_expired(&self, user_id: &str) -> Result<(), DataError> {
        let held = self
            .ports
            .table
            .query(Query::partition(user_pk(user_id)).prefix(RESERVED_PREFIX))
            .await?;
        let now = self.ports.clock.now();
        for item in held {
            if Reservation::from_item(&item)?
                .until
                .is_none_or(|until| until <= now)
            {
                self.release_item(user_id, &item).await?;
            }
        }
        Ok(())
    }

    /// Deletes a held reservation and refunds it: only the caller whose delete succeeds
    /// refunds, so a reservation released and redeemed at once counts exactly once.
    async fn release_item(&self, user_id: &str, item: &Item) -> Result<(), DataError> {
        let reservation = Reservation::from_item(item)?;
        match self
            .ports
            .table
            .delete(&item.pk, &item.sk, Condition::Exists)
            .await
        {
            Ok(()) => {
                info!(user_id, reservation = %item.sk, "reserved spend released");
                self.refund(user_id, &reservation.period, reservation.spend)
                    .await
            }
            Err(StoreError::Conflict) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Gives back words (or a book) spent in `period`; nothing when that month is over.
    pub async fn refund(&self, user_id: &str, period: &str, spend: Spend) -> Result<(), DataError> {
        if period != period_of(self.ports.clock.now()) || spend == Spend::default() {
            return Ok(());
        }
        let update = record::refunded(spend);
        match self
            .ports
            .table
            .update(
                &user_pk(user_id),
                &usage_sk(period),
                update,
                Condition::Exists,
            )
            .await
        {
            Ok(_) | Err(StoreError::NotFound) => {
                info!(
                    user_id,
                    books = spend.books,
                    words = spend.words,
                    period,
                    "quota given back"
                );
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn exceeded_message(
        &self,
        user: &User,
        spend: Spend,
        now: DateTime<Utc>,
    ) -> Result<String, DataError> {
        let report = self.report(user).await?;
        let reset = next_period_start(now).format("%Y-%m-%d");
        let plan = user.plan.display_name();
        let left = |m: &Meter| m.remaining.unwrap_or(u64::MAX);
        Ok(if spend.books > left(&report.books) {
            format!(
                "the {plan} plan's quota of {} books a month is used up; it resets on {reset}",
                report.books.limit.unwrap_or(0)
            )
        } else {
            format!(
                "the {plan} plan's quota of {} words a month has {} words left and this needs {}; \
                 it resets on {reset}",
                report.words.limit.unwrap_or(0),
                left(&report.words),
                spend.words
            )
        })
    }
}
