//! The `Queue` port on SQLite: a durable FIFO job queue with message groups, visibility
//! timeouts, receive counts, deduplication and a dead-letter queue, as SQS FIFO behaves.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use booktr_ports::ids::new_id;
use booktr_ports::queue::{DEDUP_WINDOW, MAX_RECEIVES};
use booktr_ports::{Clock, Outgoing, Queue, QueueName, QueueStats, Received, StoreError};
use rusqlite::{params, OptionalExtension, TransactionBehavior};

use crate::db::{sql, Db};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    queue TEXT NOT NULL,
    grp TEXT NOT NULL,
    body TEXT NOT NULL,
    receive_count INTEGER NOT NULL DEFAULT 0,
    visible_at INTEGER NOT NULL,
    receipt TEXT UNIQUE
);
CREATE INDEX IF NOT EXISTS messages_due ON messages (queue, visible_at, seq);
CREATE INDEX IF NOT EXISTS messages_group ON messages (queue, grp, seq);
CREATE TABLE IF NOT EXISTS dedup (
    queue TEXT NOT NULL,
    dedup_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    sent_at INTEGER NOT NULL,
    PRIMARY KEY (queue, dedup_id)
);
CREATE TABLE IF NOT EXISTS completed (
    queue TEXT PRIMARY KEY,
    count INTEGER NOT NULL
);
";

/// Messages due now whose group has no earlier unacknowledged message that is hidden (in flight
/// or delayed) and no message in flight at all: the FIFO rule, in one query.
const DUE: &str = "
SELECT m.seq, m.id, m.grp, m.body, m.receive_count FROM messages m
WHERE m.queue = ?1 AND m.visible_at <= ?2
  AND NOT EXISTS (
    SELECT 1 FROM messages e
    WHERE e.queue = m.queue AND e.grp = m.grp AND e.seq <> m.seq AND e.visible_at > ?2
      AND (e.seq < m.seq OR e.receipt IS NOT NULL))
ORDER BY m.seq LIMIT ?3";

#[derive(Clone)]
pub struct SqliteQueue {
    db: Db,
    clock: Arc<dyn Clock>,
}

impl SqliteQueue {
    pub fn open(path: &Path, clock: Arc<dyn Clock>) -> Result<SqliteQueue, StoreError> {
        Ok(SqliteQueue {
            db: Db::open(path, SCHEMA)?,
            clock,
        })
    }

    fn now_ms(&self) -> i64 {
        self.clock.now().timestamp_millis()
    }

    /// Makes every in-flight message visible again. Only for a process that has just started and
    /// holds the data directory's lock: nothing it finds in flight can still be worked on, so
    /// waiting out the visibility timeout would only delay the work.
    ///
    /// Receive counts are kept (each was counted, durably, before its work started), and a
    /// message in flight for its [`CRASH_RECEIVES`]th receive goes to the dead-letter queue
    /// instead: it was in hand at this many deaths of the process at most, and each of those
    /// stopped every other book's work with it, so a job that takes the process down is not
    /// run a fourth time.
    pub async fn release_in_flight(&self) -> Result<Recovered, StoreError> {
        let now = self.now_ms();
        self.db
            .call(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
                let mut recovered = Recovered::default();
                for queue in QueueName::ALL {
                    let Some(dead_letter) = queue.dead_letter() else { continue };
                    let moved = tx
                        .execute(
                            "UPDATE messages SET queue = ?1, receive_count = 0, visible_at = ?2, receipt = NULL \
                             WHERE queue = ?3 AND receipt IS NOT NULL AND visible_at > ?2 AND receive_count >= ?4",
                            params![dead_letter.as_str(), now, queue.as_str(), CRASH_RECEIVES],
                        )
                        .map_err(sql)?;
                    if moved > 0 {
                        tracing::error!(queue = queue.as_str(), moved, "jobs in hand at the last {CRASH_RECEIVES} deaths of the process moved to the dead-letter queue");
                    }
                    recovered.dead_lettered += moved;
                }
                recovered.released = tx
                    .execute(
                        "UPDATE messages SET visible_at = ?1, receipt = NULL WHERE receipt IS NOT NULL AND visible_at > ?1",
                        params![now],
                    )
                    .map_err(sql)?;
                tx.commit().map_err(sql)?;
                Ok(recovered)
            })
            .await
    }
}

/// A message found in flight at a start with this many receives goes to the dead-letter queue
/// (see [`SqliteQueue::release_in_flight`]): one fewer than [`MAX_RECEIVES`], the tries a job
/// that only fails gets.
pub const CRASH_RECEIVES: u32 = MAX_RECEIVES - 1;

/// What a start found in flight.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Recovered {
    /// Made visible again, to be run again.
    pub released: usize,
    /// Moved to the dead-letter queue, whose handler gives their book up.
    pub dead_lettered: usize,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[async_trait]
impl Queue for SqliteQueue {
    async fn send(&self, queue: QueueName, message: Outgoing) -> Result<String, StoreError> {
        let now = self.now_ms();
        self.db
            .call(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
                tx.execute("DELETE FROM dedup WHERE sent_at <= ?1", params![now - millis(DEDUP_WINDOW)]).map_err(sql)?;
                let earlier: Option<String> = tx
                    .query_row(
                        "SELECT message_id FROM dedup WHERE queue = ?1 AND dedup_id = ?2",
                        params![queue.as_str(), message.dedup_id],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(sql)?;
                if let Some(id) = earlier {
                    return Ok(id);
                }
                let id = new_id();
                tx.execute(
                    "INSERT INTO messages (id, queue, grp, body, visible_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![id, queue.as_str(), message.group, message.body, now],
                )
                .map_err(sql)?;
                tx.execute(
                    "INSERT INTO dedup (queue, dedup_id, message_id, sent_at) VALUES (?1, ?2, ?3, ?4)",
                    params![queue.as_str(), message.dedup_id, id, now],
                )
                .map_err(sql)?;
                tx.commit().map_err(sql)?;
                Ok(id)
            })
            .await
    }

    async fn receive(
        &self,
        queue: QueueName,
        max: usize,
        visibility: Duration,
    ) -> Result<Vec<Received>, StoreError> {
        let now = self.now_ms();
        let visible_at = now.saturating_add(millis(visibility));
        let limit = i64::try_from(max).unwrap_or(i64::MAX);
        self.db
            .call(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
                let received = loop {
                    let due: Vec<(i64, String, String, String, u32)> = {
                        let mut stmt = tx.prepare_cached(DUE).map_err(sql)?;
                        let rows = stmt
                            .query_map(params![queue.as_str(), now, limit], |r| {
                                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                            })
                            .map_err(sql)?;
                        rows.collect::<Result<_, _>>().map_err(sql)?
                    };
                    // Messages out of receives go to the dead-letter queue, which frees their
                    // group; then the choice is made again.
                    let exhausted: Vec<i64> =
                        due.iter().filter(|m| m.4 >= MAX_RECEIVES).map(|m| m.0).collect();
                    if exhausted.is_empty() {
                        break due;
                    }
                    let Some(dead_letter) = queue.dead_letter() else { break due };
                    for seq in exhausted {
                        tx.execute(
                            "UPDATE messages SET queue = ?1, receive_count = 0, visible_at = ?2, receipt = NULL WHERE seq = ?3",
                            params![dead_letter.as_str(), now, seq],
                        )
                        .map_err(sql)?;
                        tracing::warn!(queue = queue.as_str(), seq, "message moved to the dead-letter queue");
                    }
                };
                let mut out = Vec::with_capacity(received.len());
                for (seq, id, group, body, count) in received {
                    let receipt = new_id();
                    tx.execute(
                        "UPDATE messages SET receive_count = receive_count + 1, visible_at = ?1, receipt = ?2 WHERE seq = ?3",
                        params![visible_at, receipt, seq],
                    )
                    .map_err(sql)?;
                    out.push(Received { id, receipt, group, body, receive_count: count + 1 });
                }
                tx.commit().map_err(sql)?;
                Ok(out)
            })
            .await
    }

    async fn ack(&self, queue: QueueName, receipt: &str) -> Result<(), StoreError> {
        let receipt = receipt.to_string();
        self.db
            .call(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
                let deleted = tx
                    .execute("DELETE FROM messages WHERE queue = ?1 AND receipt = ?2", params![queue.as_str(), receipt])
                    .map_err(sql)?;
                if deleted > 0 {
                    tx.execute(
                        "INSERT INTO completed (queue, count) VALUES (?1, 1) ON CONFLICT (queue) DO UPDATE SET count = count + 1",
                        params![queue.as_str()],
                    )
                    .map_err(sql)?;
                }
                tx.commit().map_err(sql)
            })
            .await
    }

    async fn release(
        &self,
        queue: QueueName,
        receipt: &str,
        delay: Duration,
    ) -> Result<(), StoreError> {
        let receipt = receipt.to_string();
        let visible_at = self.now_ms().saturating_add(millis(delay));
        self.db
            .call(move |conn| {
                conn.execute(
                    "UPDATE messages SET visible_at = ?1, receipt = NULL WHERE queue = ?2 AND receipt = ?3",
                    params![visible_at, queue.as_str(), receipt],
                )
                .map_err(sql)?;
                Ok(())
            })
            .await
    }

    async fn stats(&self, queue: QueueName) -> Result<QueueStats, StoreError> {
        let now = self.now_ms();
        self.db
            .call(move |conn| {
                // Messages of the queue, and of those how many are in flight now.
                let count = |q: &str| -> Result<(u64, u64), StoreError> {
                    let (total, in_flight): (i64, i64) = conn
                        .query_row(
                            "SELECT count(*), count(CASE WHEN receipt IS NOT NULL AND visible_at > ?2 THEN 1 END) \
                             FROM messages WHERE queue = ?1",
                            params![q, now],
                            |r| Ok((r.get(0)?, r.get(1)?)),
                        )
                        .map_err(sql)?;
                    Ok((u64::try_from(total).unwrap_or(0), u64::try_from(in_flight).unwrap_or(0)))
                };
                let (total, in_flight) = count(queue.as_str())?;
                let first_due: Option<i64> = conn
                    .query_row(
                        // Visible ones: a message in flight is hidden until later.
                        "SELECT min(visible_at) FROM messages WHERE queue = ?1 AND visible_at <= ?2",
                        params![queue.as_str(), now],
                        |r| r.get(0),
                    )
                    .map_err(sql)?;
                let dead = match queue.dead_letter() {
                    Some(dl) => count(dl.as_str())?.0,
                    None => 0,
                };
                let completed: i64 = conn
                    .query_row(
                        "SELECT count FROM completed WHERE queue = ?1",
                        params![queue.as_str()],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(sql)?
                    .unwrap_or(0);
                Ok(QueueStats {
                    waiting: total - in_flight,
                    in_flight,
                    completed: Some(u64::try_from(completed).unwrap_or(0)),
                    dead,
                    oldest_due: first_due
                        .map(|due| Duration::from_millis(u64::try_from(now - due).unwrap_or(0))),
                })
            })
            .await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.db
            .call(|conn| conn.query_row("SELECT 1", [], |_| Ok(())).map_err(sql))
            .await
    }
}
