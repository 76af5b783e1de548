//! The data port: a small DynamoDB-shaped table. The domain maps its entities onto items once
//! (its record modules: `booktr_core::books::record`, `booktr_core::accounts::store`, ...); each
//! backend implements only this.
//!
//! Items live under a partition key (`pk`) and a sort key (`sk`). Attributes are JSON values.
//! One sparse secondary index, [`Index::Gsi1`], indexes items that carry both `gsi1pk` and
//! `gsi1sk` string attributes.

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::error::StoreError;

pub type Attrs = Map<String, Value>;

/// One stored item. `pk` and `sk` are not repeated inside `attrs`.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub pk: String,
    pub sk: String,
    pub attrs: Attrs,
}

impl Item {
    pub fn new(pk: impl Into<String>, sk: impl Into<String>) -> Self {
        Item {
            pk: pk.into(),
            sk: sk.into(),
            attrs: Attrs::new(),
        }
    }

    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.attrs.insert(name.to_string(), value.into());
        self
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).and_then(Value::as_str)
    }

    pub fn i64(&self, name: &str) -> Option<i64> {
        self.attrs.get(name).and_then(Value::as_i64)
    }

    pub fn bool(&self, name: &str) -> Option<bool> {
        self.attrs.get(name).and_then(Value::as_bool)
    }
}

/// A condition on the item a write addresses, evaluated atomically with the write.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// No condition.
    Always,
    /// The item MUST NOT exist yet.
    NotExists,
    /// The item MUST exist.
    Exists,
    /// The item MUST exist and its attribute MUST equal the value.
    Equals(String, Value),
    /// The item MUST exist and its attribute MUST equal one of the values.
    In(String, Vec<Value>),
    /// The item MUST exist and its attribute MUST be absent (read as 0) or a number at most the
    /// value: a counter that may still grow by `limit - value`. Quotas are checked this way,
    /// atomically with the write that spends them.
    AtMost(String, i64),
    /// Every condition MUST hold.
    All(Vec<Condition>),
}

impl Condition {
    pub fn equals(name: &str, value: impl Into<Value>) -> Self {
        Condition::Equals(name.to_string(), value.into())
    }

    /// Whether the condition holds for the current item (None when it does not exist). Adapters
    /// that evaluate conditions themselves (SQLite) use this, so the rule is written once.
    pub fn holds_for(&self, current: Option<&Attrs>) -> bool {
        match (self, current) {
            (Condition::Always, _) => true,
            (Condition::NotExists, current) => current.is_none(),
            (Condition::Exists, current) => current.is_some(),
            (Condition::Equals(name, value), Some(attrs)) => attrs.get(name) == Some(value),
            (Condition::In(name, values), Some(attrs)) => {
                attrs.get(name).is_some_and(|v| values.contains(v))
            }
            (Condition::AtMost(name, limit), Some(attrs)) => match attrs.get(name) {
                None | Some(Value::Null) => 0 <= *limit,
                Some(v) => v.as_i64().is_some_and(|v| v <= *limit),
            },
            (Condition::Equals(..) | Condition::In(..) | Condition::AtMost(..), None) => false,
            (Condition::All(all), current) => all.iter().all(|c| c.holds_for(current)),
        }
    }
}

/// Changes to an existing item's attributes, applied atomically.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Update {
    /// Attributes to set (created when absent).
    pub set: Attrs,
    /// Attributes to remove (absent ones are ignored).
    pub remove: Vec<String>,
    /// Atomic counters: add the amount to the numeric attribute, starting from 0 when absent.
    pub add: Vec<(String, i64)>,
}

impl Update {
    pub fn set(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.set.insert(name.to_string(), value.into());
        self
    }

    pub fn remove(mut self, name: &str) -> Self {
        self.remove.push(name.to_string());
        self
    }

    pub fn add(mut self, name: &str, amount: i64) -> Self {
        self.add.push((name.to_string(), amount));
        self
    }

    /// Applies the update to attributes in memory. Adapters that do not have a native update
    /// expression (SQLite) use this, so the semantics are written once.
    pub fn apply_to(&self, attrs: &mut Attrs) {
        for (name, value) in &self.set {
            attrs.insert(name.clone(), value.clone());
        }
        for name in &self.remove {
            attrs.remove(name);
        }
        for (name, amount) in &self.add {
            let current = attrs.get(name).and_then(Value::as_i64).unwrap_or(0);
            attrs.insert(name.clone(), Value::from(current + amount));
        }
    }
}

/// One write of a transaction.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    Put {
        item: Item,
        condition: Condition,
    },
    Update {
        pk: String,
        sk: String,
        update: Update,
        condition: Condition,
    },
    Delete {
        pk: String,
        sk: String,
        condition: Condition,
    },
    /// Only checks a condition on another item; writes nothing.
    Check {
        pk: String,
        sk: String,
        condition: Condition,
    },
}

/// A query over one partition (of the table, or of an index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The partition: `pk` for the table, the index's partition attribute for an index.
    pub partition: String,
    /// Only sort keys that start with this prefix.
    pub sort_prefix: Option<String>,
    /// Newest (largest sort key) first.
    pub descending: bool,
    /// At most this many items; None returns the whole partition.
    pub limit: Option<usize>,
}

impl Query {
    pub fn partition(partition: impl Into<String>) -> Self {
        Query {
            partition: partition.into(),
            sort_prefix: None,
            descending: false,
            limit: None,
        }
    }

    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.sort_prefix = Some(prefix.into());
        self
    }

    pub fn descending(mut self) -> Self {
        self.descending = true;
        self
    }

    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }
}

/// The secondary indexes. Sparse: an item is indexed only when it has both attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    Gsi1,
}

impl Index {
    pub fn partition_attr(self) -> &'static str {
        match self {
            Index::Gsi1 => "gsi1pk",
        }
    }

    pub fn sort_attr(self) -> &'static str {
        match self {
            Index::Gsi1 => "gsi1sk",
        }
    }
}

/// The most writes one transaction may carry (DynamoDB's limit).
pub const MAX_TRANSACTION_OPS: usize = 100;

#[async_trait]
pub trait Table: Send + Sync {
    /// Reads one item. MUST be strongly consistent: a completed write is visible to the next get.
    async fn get(&self, pk: &str, sk: &str) -> Result<Option<Item>, StoreError>;

    /// Creates or replaces an item. MUST fail with `Conflict` (and write nothing) when the
    /// condition does not hold for the item currently stored under the same keys.
    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError>;

    /// Updates an existing item and returns it as it is after the update. MUST fail with
    /// `NotFound` when no item exists, `Conflict` when it exists but the condition does not hold;
    /// either way nothing is written. Counters in `add` MUST be atomic under concurrent updates.
    async fn update(
        &self,
        pk: &str,
        sk: &str,
        update: Update,
        condition: Condition,
    ) -> Result<Item, StoreError>;

    /// Deletes an item. Deleting a missing item with `Condition::Always` MUST succeed; a condition
    /// that does not hold MUST fail with `Conflict` and delete nothing.
    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<(), StoreError>;

    /// Items of one partition ordered by sort key (ascending unless `descending`), filtered by
    /// sort-key prefix and cut at `limit`. MUST be strongly consistent.
    async fn query(&self, query: Query) -> Result<Vec<Item>, StoreError>;

    /// Like `query`, over a secondary index: `partition` matches the index's partition attribute
    /// and ordering and prefix apply to its sort attribute. MAY be eventually consistent (as a
    /// DynamoDB GSI is), so the domain never uses an index to enforce uniqueness.
    async fn query_index(&self, index: Index, query: Query) -> Result<Vec<Item>, StoreError>;

    /// Applies all writes or none. At most [`MAX_TRANSACTION_OPS`] writes, each on a distinct
    /// item (else `Invalid`). MUST fail with `Conflict` when any condition does not hold, and
    /// `NotFound` is never returned: an update inside a transaction on a missing item is a
    /// `Conflict` (as DynamoDB reports it).
    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError>;

    /// A cheap round trip to the backend, for health checks.
    async fn ping(&self) -> Result<(), StoreError>;
}
