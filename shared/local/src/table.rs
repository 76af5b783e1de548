//! The `Table` port on SQLite: one row per item, attributes as JSON text, the index as two
//! nullable columns with a partial index.

use std::collections::HashSet;
use std::path::Path;

use async_trait::async_trait;
use booktr_ports::table::MAX_TRANSACTION_OPS;
use booktr_ports::{Attrs, Condition, Index, Item, Query, StoreError, Table, Update, WriteOp};
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};

use crate::db::{sql, Db};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS items (
    pk TEXT NOT NULL,
    sk TEXT NOT NULL,
    attrs TEXT NOT NULL,
    gsi1pk TEXT,
    gsi1sk TEXT,
    PRIMARY KEY (pk, sk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_gsi1 ON items (gsi1pk, gsi1sk) WHERE gsi1pk IS NOT NULL AND gsi1sk IS NOT NULL;
";

#[derive(Clone)]
pub struct SqliteTable {
    db: Db,
}

impl SqliteTable {
    pub fn open(path: &Path) -> Result<SqliteTable, StoreError> {
        Ok(SqliteTable {
            db: Db::open(path, SCHEMA)?,
        })
    }

    /// Deletes items whose numeric `ttl` attribute (Unix seconds) has passed, as DynamoDB's
    /// time-to-live does on AWS; returns how many. Items with a `ttl` (rate-limit windows) mean
    /// nothing after it, so `booktr serve` sweeps them now and then.
    pub async fn purge_expired(&self, now_secs: i64) -> Result<usize, StoreError> {
        self.db
            .call(move |conn| {
                conn.execute(
                    "DELETE FROM items WHERE json_type(attrs, '$.ttl') = 'integer' AND json_extract(attrs, '$.ttl') < ?1",
                    params![now_secs],
                )
                .map_err(sql)
            })
            .await
    }
}

/// The most rows a range read returns from the calling thread (a page of a listing, the
/// chapters of most books); a read that finds more starts again on the blocking pool.
const INLINE_ROWS: usize = 100;

impl SqliteTable {
    async fn read_range(
        &self,
        index: Option<Index>,
        query: Query,
    ) -> Result<Vec<Item>, StoreError> {
        let inline = self
            .db
            .read_now(|conn| run_query(conn, index, &query, Some(INLINE_ROWS)))?;
        match inline {
            Some(items) => Ok(items),
            None => {
                let all = self
                    .db
                    .read(move |conn| run_query(conn, index, &query, None))
                    .await?;
                Ok(all.unwrap_or_default())
            }
        }
    }
}

fn read(conn: &Connection, pk: &str, sk: &str) -> Result<Option<Attrs>, StoreError> {
    // Cached statements: every request reads items, and preparing one costs about as much as
    // running it.
    let text: Option<String> = conn
        .prepare_cached("SELECT attrs FROM items WHERE pk = ?1 AND sk = ?2")
        .map_err(sql)?
        .query_row(params![pk, sk], |r| r.get(0))
        .optional()
        .map_err(sql)?;
    text.map(|t| parse_attrs(&t)).transpose()
}

fn parse_attrs(text: &str) -> Result<Attrs, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Unavailable(format!("corrupt item: {e}")))
}

fn write(conn: &Connection, pk: &str, sk: &str, attrs: &Attrs) -> Result<(), StoreError> {
    let index_attr = |name: &str| attrs.get(name).and_then(|v| v.as_str()).map(str::to_string);
    let text = serde_json::to_string(attrs).map_err(|e| StoreError::Invalid(e.to_string()))?;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO items (pk, sk, attrs, gsi1pk, gsi1sk) VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .map_err(sql)?
    .execute(params![
        pk,
        sk,
        text,
        index_attr(Index::Gsi1.partition_attr()),
        index_attr(Index::Gsi1.sort_attr())
    ])
    .map_err(sql)?;
    Ok(())
}

fn remove(conn: &Connection, pk: &str, sk: &str) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM items WHERE pk = ?1 AND sk = ?2")
        .map_err(sql)?
        .execute(params![pk, sk])
        .map_err(sql)?;
    Ok(())
}

fn begin(conn: &mut Connection) -> Result<Transaction<'_>, StoreError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql)
}

/// Applies one write inside a transaction; a failed condition is `Conflict`, a missing item
/// for an update is `NotFound`.
fn apply(tx: &Transaction<'_>, op: &WriteOp) -> Result<Option<Attrs>, StoreError> {
    match op {
        WriteOp::Put { item, condition } => {
            check(condition, read(tx, &item.pk, &item.sk)?.as_ref())?;
            write(tx, &item.pk, &item.sk, &item.attrs)?;
            Ok(None)
        }
        WriteOp::Update {
            pk,
            sk,
            update,
            condition,
        } => {
            let mut attrs = read(tx, pk, sk)?.ok_or(StoreError::NotFound)?;
            check(condition, Some(&attrs))?;
            update.apply_to(&mut attrs);
            write(tx, pk, sk, &attrs)?;
            Ok(Some(attrs))
        }
        WriteOp::Delete { pk, sk, condition } => {
            check(condition, read(tx, pk, sk)?.as_ref())?;
            remove(tx, pk, sk)?;
            Ok(None)
        }
        WriteOp::Check { pk, sk, condition } => {
            check(condition, read(tx, pk, sk)?.as_ref())?;
            Ok(None)
        }
    }
}

fn check(condition: &Condition, current: Option<&Attrs>) -> Result<(), StoreError> {
    if condition.holds_for(current) {
        Ok(())
    } else {
        Err(StoreError::Conflict)
    }
}

/// The query's items; None, having read no further, when there are more than `at_most`.
fn run_query(
    conn: &Connection,
    index: Option<Index>,
    query: &Query,
    at_most: Option<usize>,
) -> Result<Option<Vec<Item>>, StoreError> {
    let (pk_col, sk_col) = match index {
        None => ("pk", "sk"),
        Some(Index::Gsi1) => ("gsi1pk", "gsi1sk"),
    };
    let order = if query.descending { "DESC" } else { "ASC" };
    // substr() compares the prefix literally; LIKE and GLOB would treat % _ * ? as patterns.
    let statement = format!(
        "SELECT pk, sk, attrs FROM items WHERE {pk_col} = ?1 AND {sk_col} IS NOT NULL \
         AND (?2 IS NULL OR substr({sk_col}, 1, length(?2)) = ?2) ORDER BY {sk_col} {order}, pk {order} LIMIT ?3"
    );
    let limit = query
        .limit
        .map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
    let mut stmt = conn.prepare_cached(&statement).map_err(sql)?;
    let rows = stmt
        .query_map(params![query.partition, query.sort_prefix, limit], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .map_err(sql)?;
    let mut items = Vec::new();
    for row in rows {
        if at_most.is_some_and(|at_most| items.len() == at_most) {
            return Ok(None);
        }
        let (pk, sk, attrs) = row.map_err(sql)?;
        items.push(Item {
            pk,
            sk,
            attrs: parse_attrs(&attrs)?,
        });
    }
    Ok(Some(items))
}

#[async_trait]
impl Table for SqliteTable {
    async fn get(&self, pk: &str, sk: &str) -> Result<Option<Item>, StoreError> {
        let attrs = self.db.read_now(|conn| read(conn, pk, sk))?;
        Ok(attrs.map(|attrs| Item {
            pk: pk.to_string(),
            sk: sk.to_string(),
            attrs,
        }))
    }

    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError> {
        self.db
            .call(move |conn| {
                let tx = begin(conn)?;
                apply(&tx, &WriteOp::Put { item, condition })?;
                tx.commit().map_err(sql)
            })
            .await
    }

    async fn update(
        &self,
        pk: &str,
        sk: &str,
        update: Update,
        condition: Condition,
    ) -> Result<Item, StoreError> {
        let (pk, sk) = (pk.to_string(), sk.to_string());
        self.db
            .call(move |conn| {
                let tx = begin(conn)?;
                let op = WriteOp::Update {
                    pk: pk.clone(),
                    sk: sk.clone(),
                    update,
                    condition,
                };
                let attrs = apply(&tx, &op)?.unwrap_or_default();
                tx.commit().map_err(sql)?;
                Ok(Item { pk, sk, attrs })
            })
            .await
    }

    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<(), StoreError> {
        let (pk, sk) = (pk.to_string(), sk.to_string());
        self.db
            .call(move |conn| {
                let tx = begin(conn)?;
                apply(&tx, &WriteOp::Delete { pk, sk, condition })?;
                tx.commit().map_err(sql)
            })
            .await
    }

    async fn query(&self, query: Query) -> Result<Vec<Item>, StoreError> {
        self.read_range(None, query).await
    }

    async fn query_index(&self, index: Index, query: Query) -> Result<Vec<Item>, StoreError> {
        self.read_range(Some(index), query).await
    }

    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        if ops.len() > MAX_TRANSACTION_OPS {
            return Err(StoreError::Invalid(format!(
                "a transaction takes at most {MAX_TRANSACTION_OPS} writes"
            )));
        }
        let mut seen = HashSet::new();
        for op in &ops {
            let key = match op {
                WriteOp::Put { item, .. } => (item.pk.clone(), item.sk.clone()),
                WriteOp::Update { pk, sk, .. }
                | WriteOp::Delete { pk, sk, .. }
                | WriteOp::Check { pk, sk, .. } => (pk.clone(), sk.clone()),
            };
            if !seen.insert(key) {
                return Err(StoreError::Invalid(
                    "a transaction may touch each item only once".into(),
                ));
            }
        }
        self.db
            .call(move |conn| {
                let tx = begin(conn)?;
                for op in &ops {
                    match apply(&tx, op) {
                        Ok(_) => {}
                        // Dropping `tx` rolls everything back.
                        Err(StoreError::NotFound) => return Err(StoreError::Conflict),
                        Err(e) => return Err(e),
                    }
                }
                tx.commit().map_err(sql)
            })
            .await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.db
            .call(|conn| conn.query_row("SELECT 1", [], |_| Ok(())).map_err(sql))
            .await
    }
}
