//! The table port on DynamoDB: one table, keys `pk`/`sk` (strings), the sparse index `gsi1`
//! (`gsi1pk`/`gsi1sk`), attributes as JSON values mapped onto DynamoDB types (strings, numbers,
//! booleans, null, lists, maps). Conditions become condition expressions; a failed one is the
//! domain's `Conflict`.

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, ConditionCheck, Delete, GlobalSecondaryIndex,
    KeySchemaElement, KeyType, Projection, ProjectionType, Put, ReturnValue, ScalarAttributeType,
    TransactWriteItem, Update as DynamoUpdate,
};
use aws_sdk_dynamodb::Client;
use booktr_ports::table::MAX_TRANSACTION_OPS;
use booktr_ports::{Attrs, Condition, Index, Item, Query, StoreError, Table, Update, WriteOp};
use serde_json::{Number, Value};

/// The name of the secondary index (see `template.yaml`).
pub const GSI1: &str = "gsi1";

pub struct DynamoTable {
    client: Client,
    table: String,
}

impl DynamoTable {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoTable {
            client,
            table: table.into(),
        }
    }

    /// Creates the table as `template.yaml` declares it (for the emulator and first-run
    /// development; production tables come from the SAM stack).
    pub async fn create(client: &Client, table: &str) -> Result<(), StoreError> {
        let key = |name: &str, kind: KeyType| {
            KeySchemaElement::builder()
                .attribute_name(name)
                .key_type(kind)
                .build()
                .map_err(invalid)
        };
        let attribute = |name: &str| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .map_err(invalid)
        };
        let index = GlobalSecondaryIndex::builder()
            .index_name(GSI1)
            .key_schema(key("gsi1pk", KeyType::Hash)?)
            .key_schema(key("gsi1sk", KeyType::Range)?)
            .projection(
                Projection::builder()
                    .projection_type(ProjectionType::All)
                    .build(),
            )
            .build()
            .map_err(invalid)?;
        client
            .create_table()
            .table_name(table)
            .billing_mode(BillingMode::PayPerRequest)
            .key_schema(key("pk", KeyType::Hash)?)
            .key_schema(key("sk", KeyType::Range)?)
            .attribute_definitions(attribute("pk")?)
            .attribute_definitions(attribute("sk")?)
            .attribute_definitions(attribute("gsi1pk")?)
            .attribute_definitions(attribute("gsi1sk")?)
            .global_secondary_indexes(index)
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn get_item(&self, pk: &str, sk: &str) -> Result<Option<Item>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("pk", s(pk))
            .key("sk", s(sk))
            .consistent_read(true)
            .send()
            .await
            .map_err(unavailable)?;
        output.item.map(from_dynamo).transpose()
    }
}

/// Expression placeholders, numbered as they are added.
#[derive(Default)]
struct Expression {
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Expression {
    fn name(&mut self, name: &str) -> String {
        let placeholder = format!("#n{}", self.names.len());
        self.names.insert(placeholder.clone(), name.to_string());
        placeholder
    }

    fn value(&mut self, value: AttributeValue) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.insert(placeholder.clone(), value);
        placeholder
    }

    /// The condition as an expression; None for `Always`.
    fn condition(&mut self, condition: &Condition) -> Result<Option<String>, StoreError> {
        Ok(match condition {
            Condition::Always => None,
            Condition::NotExists => Some("attribute_not_exists(pk)".into()),
            Condition::Exists => Some("attribute_exists(pk)".into()),
            Condition::Equals(name, value) => {
                let (n, v) = (self.name(name), self.value(to_dynamo(value)?));
                Some(format!("attribute_exists(pk) AND {n} = {v}"))
            }
            Condition::In(name, values) => {
                if values.is_empty() {
                    return Err(StoreError::Invalid("an In condition needs values".into()));
                }
                let n = self.name(name);
                let mut listed = Vec::new();
                for value in values {
                    listed.push(self.value(to_dynamo(value)?));
                }
                Some(format!(
                    "attribute_exists(pk) AND {n} IN ({})",
                    listed.join(", ")
                ))
            }
            Condition::AtMost(name, limit) => {
                let n = self.name(name);
                let v = self.value(AttributeValue::N(limit.to_string()));
                // An absent counter reads as 0.
                let absent = if *limit >= 0 {
                    format!("attribute_not_exists({n}) OR ")
                } else {
                    String::new()
                };
                Some(format!("attribute_exists(pk) AND ({absent}{n} <= {v})"))
            }
            Condition::All(all) => {
                let mut parts = Vec::new();
                for condition in all {
                    if let Some(part) = self.condition(condition)? {
                        parts.push(format!("({part})"));
                    }
                }
                (!parts.is_empty()).then(|| parts.join(" AND "))
            }
        })
    }

    /// `SET`/`REMOVE` for an update; counters start from 0 when absent. None when the update
    /// changes nothing.
    fn update(&mut self, update: &Update) -> Result<Option<String>, StoreError> {
        let mut sets = Vec::new();
        for (name, value) in &update.set {
            let (n, v) = (self.name(name), self.value(to_dynamo(value)?));
            sets.push(format!("{n} = {v}"));
        }
        for (name, amount) in &update.add {
            let n = self.name(name);
            let zero = self.value(AttributeValue::N("0".into()));
            let by = self.value(AttributeValue::N(amount.to_string()));
            sets.push(format!("{n} = if_not_exists({n}, {zero}) + {by}"));
        }
        let removes: Vec<String> = update.remove.iter().map(|n| self.name(n)).collect();
        let mut parts = Vec::new();
        if !sets.is_empty() {
            parts.push(format!("SET {}", sets.join(", ")));
        }
        if !removes.is_empty() {
            parts.push(format!("REMOVE {}", removes.join(", ")));
        }
        Ok((!parts.is_empty()).then(|| parts.join(" ")))
    }

    fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    fn values(&self) -> Option<HashMap<String, AttributeValue>> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }
}

/// An update must address an existing item, whatever its condition.
fn update_condition(
    expression: &mut Expression,
    condition: &Condition,
) -> Result<String, StoreError> {
    Ok(expression
        .condition(condition)?
        .unwrap_or_else(|| "attribute_exists(pk)".into()))
}

#[async_trait]
impl Table for DynamoTable {
    async fn get(&self, pk: &str, sk: &str) -> Result<Option<Item>, StoreError> {
        self.get_item(pk, sk).await
    }

    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError> {
        let mut expression = Expression::default();
        let condition = expression.condition(&condition)?;
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(to_dynamo_item(&item)?))
            .set_condition_expression(condition)
            .set_expression_attribute_names(expression.names())
            .set_expression_attribute_values(expression.values())
            .send()
            .await
            .map_err(conflict_or_unavailable)?;
        Ok(())
    }

    async fn update(
        &self,
        pk: &str,
        sk: &str,
        update: Update,
        condition: Condition,
    ) -> Result<Item, StoreError> {
        let mut expression = Expression::default();
        let Some(update_expression) = expression.update(&update)? else {
            // Nothing to change: the answer is the item, if the condition holds.
            let current = self.get_item(pk, sk).await?.ok_or(StoreError::NotFound)?;
            return if condition.holds_for(Some(&current.attrs)) {
                Ok(current)
            } else {
                Err(StoreError::Conflict)
            };
        };
        let condition_expression = update_condition(&mut expression, &condition)?;
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .key("pk", s(pk))
            .key("sk", s(sk))
            .update_expression(update_expression)
            .condition_expression(condition_expression)
            .set_expression_attribute_names(expression.names())
            .set_expression_attribute_values(expression.values())
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match result {
            Ok(output) => output
                .attributes
                .map(from_dynamo)
                .transpose()?
                .ok_or_else(|| StoreError::Unavailable("the update returned no item".into())),
            Err(e) => match conflict_or_unavailable(e) {
                // A failed condition on a missing item is NotFound, as the port says.
                StoreError::Conflict if self.get_item(pk, sk).await?.is_none() => {
                    Err(StoreError::NotFound)
                }
                other => Err(other),
            },
        }
    }

    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<(), StoreError> {
        let mut expression = Expression::default();
        let condition = expression.condition(&condition)?;
        self.client
            .delete_item()
            .table_name(&self.table)
            .key("pk", s(pk))
            .key("sk", s(sk))
            .set_condition_expression(condition)
            .set_expression_attribute_names(expression.names())
            .set_expression_attribute_values(expression.values())
            .send()
            .await
            .map_err(conflict_or_unavailable)?;
        Ok(())
    }

    async fn query(&self, query: Query) -> Result<Vec<Item>, StoreError> {
        self.run_query(None, "pk", "sk", query).await
    }

    async fn query_index(&self, index: Index, query: Query) -> Result<Vec<Item>, StoreError> {
        let name = match index {
            Index::Gsi1 => GSI1,
        };
        self.run_query(Some(name), index.partition_attr(), index.sort_attr(), query)
            .await
    }

    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        if ops.len() > MAX_TRANSACTION_OPS {
            return Err(StoreError::Invalid(format!(
                "a transaction takes at most {MAX_TRANSACTION_OPS} writes"
            )));
        }
        if ops.is_empty() {
            return Ok(());
        }
        let mut items = Vec::with_capacity(ops.len());
        for op in &ops {
            items.push(self.transact_item(op)?);
        }
        let result = self
            .client
            .transact_write_items()
            .set_transact_items(Some(items))
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => {
                let code = e.code().unwrap_or_default().to_string();
                let message = e.message().unwrap_or_default().to_string();
                if code == "TransactionCanceledException"
                    && message.contains("ConditionalCheckFailed")
                {
                    Err(StoreError::Conflict)
                } else if code == "ValidationException" {
                    Err(StoreError::Invalid(message))
                } else {
                    Err(unavailable(e))
                }
            }
        }
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.client
            .describe_table()
            .table_name(&self.table)
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }
}

impl DynamoTable {
    async fn run_query(
        &self,
        index: Option<&str>,
        partition_attr: &str,
        sort_attr: &str,
        query: Query,
    ) -> Result<Vec<Item>, StoreError> {
        let mut expression = Expression::default();
        let p = expression.name(partition_attr);
        let pv = expression.value(s(&query.partition));
        let mut key_condition = format!("{p} = {pv}");
        if let Some(prefix) = &query.sort_prefix {
            let n = expression.name(sort_attr);
            let v = expression.value(s(prefix));
            key_condition.push_str(&format!(" AND begins_with({n}, {v})"));
        }
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let remaining = query.limit.map(|l| l.saturating_sub(items.len()));
            if remaining == Some(0) {
                break;
            }
            let output = self
                .client
                .query()
                .table_name(&self.table)
                .set_index_name(index.map(str::to_string))
                .key_condition_expression(&key_condition)
                .set_expression_attribute_names(expression.names())
                .set_expression_attribute_values(expression.values())
                .scan_index_forward(!query.descending)
                // Index reads can only be eventually consistent (the port allows it).
                .set_consistent_read(index.is_none().then_some(true))
                .set_limit(remaining.map(|r| r.min(1000) as i32))
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(unavailable)?;
            for item in output.items.unwrap_or_default() {
                items.push(from_dynamo(item)?);
            }
            match output.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => break,
            }
        }
        Ok(items)
    }

    fn transact_item(&self, op: &WriteOp) -> Result<TransactWriteItem, StoreError> {
        let mut expression = Expression::default();
        let item = match op {
            WriteOp::Put { item, condition } => {
                let condition = expression.condition(condition)?;
                TransactWriteItem::builder().put(
                    Put::builder()
                        .table_name(&self.table)
                        .set_item(Some(to_dynamo_item(item)?))
                        .set_condition_expression(condition)
                        .set_expression_attribute_names(expression.names())
                        .set_expression_attribute_values(expression.values())
                        .build()
                        .map_err(invalid)?,
                )
            }
            WriteOp::Update {
                pk,
                sk,
                update,
                condition,
            } => {
                let update_expression = expression.update(update)?.ok_or_else(|| {
                    StoreError::Invalid("an update in a transaction must change something".into())
                })?;
                let condition = update_condition(&mut expression, condition)?;
                TransactWriteItem::builder().update(
                    DynamoUpdate::builder()
                        .table_name(&self.table)
                        .key("pk", s(pk))
                        .key("sk", s(sk))
                        .update_expression(update_expression)
                        .condition_expression(condition)
                        .set_expression_attribute_names(expression.names())
                        .set_expression_attribute_values(expression.values())
                        .build()
                        .map_err(invalid)?,
                )
            }
            WriteOp::Delete { pk, sk, condition } => {
                let condition = expression.condition(condition)?;
                TransactWriteItem::builder().delete(
                    Delete::builder()
                        .table_name(&self.table)
                        .key("pk", s(pk))
                        .key("sk", s(sk))
                        .set_condition_expression(condition)
                        .set_expression_attribute_names(expression.names())
                        .set_expression_attribute_values(expression.values())
                        .build()
                        .map_err(invalid)?,
                )
            }
            WriteOp::Check { pk, sk, condition } => {
                let condition = expression
                    .condition(condition)?
                    .unwrap_or_else(|| "attribute_exists(pk) OR attribute_not_exists(pk)".into());
                TransactWriteItem::builder().condition_check(
                    ConditionCheck::builder()
                        .table_name(&self.table)
                        .key("pk", s(pk))
                        .key("sk", s(sk))
                        .condition_expression(condition)
                        .set_expression_attribute_names(expression.names())
                        .set_expression_attribute_values(expression.values())
                        .build()
                        .map_err(invalid)?,
                )
            }
        };
        Ok(item.build())
    }
}

fn s(value: &str) -> AttributeValue {
    AttributeValue::S(value.to_string())
}

fn to_dynamo_item(item: &Item) -> Result<HashMap<String, AttributeValue>, StoreError> {
    let mut map = HashMap::with_capacity(item.attrs.len() + 2);
    for (name, value) in &item.attrs {
        if name == "pk" || name == "sk" {
            return Err(StoreError::Invalid(format!(
                "'{name}' is a key, not an attribute"
            )));
        }
        map.insert(name.clone(), to_dynamo(value)?);
    }
    map.insert("pk".into(), s(&item.pk));
    map.insert("sk".into(), s(&item.sk));
    Ok(map)
}

fn from_dynamo(mut map: HashMap<String, AttributeValue>) -> Result<Item, StoreError> {
    let key = |map: &mut HashMap<String, AttributeValue>, name: &str| match map.remove(name) {
        Some(AttributeValue::S(value)) => Ok(value),
        _ => Err(StoreError::Unavailable(format!(
            "an item has no string '{name}'"
        ))),
    };
    let pk = key(&mut map, "pk")?;
    let sk = key(&mut map, "sk")?;
    let mut attrs = Attrs::new();
    for (name, value) in map {
        attrs.insert(name, from_dynamo_value(value)?);
    }
    Ok(Item { pk, sk, attrs })
}

/// JSON to DynamoDB: numbers as `N` text, objects as maps, arrays as lists.
pub fn to_dynamo(value: &Value) -> Result<AttributeValue, StoreError> {
    Ok(match value {
        Value::Null => AttributeValue::Null(true),
        Value::Bool(b) => AttributeValue::Bool(*b),
        Value::Number(n) => AttributeValue::N(n.to_string()),
        Value::String(text) => AttributeValue::S(text.clone()),
        Value::Array(values) => {
            AttributeValue::L(values.iter().map(to_dynamo).collect::<Result<_, _>>()?)
        }
        Value::Object(map) => AttributeValue::M(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), to_dynamo(v)?)))
                .collect::<Result<_, StoreError>>()?,
        ),
    })
}

pub fn from_dynamo_value(value: AttributeValue) -> Result<Value, StoreError> {
    Ok(match value {
        AttributeValue::Null(_) => Value::Null,
        AttributeValue::Bool(b) => Value::Bool(b),
        AttributeValue::S(text) => Value::String(text),
        AttributeValue::N(text) => match text.parse::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => text
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| StoreError::Unavailable(format!("'{text}' is not a number")))?,
        },
        AttributeValue::L(values) => Value::Array(
            values
                .into_iter()
                .map(from_dynamo_value)
                .collect::<Result<_, _>>()?,
        ),
        AttributeValue::M(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| Ok((k, from_dynamo_value(v)?)))
                .collect::<Result<_, StoreError>>()?,
        ),
        other => {
            return Err(StoreError::Unavailable(format!(
                "unexpected DynamoDB type {other:?}"
            )))
        }
    })
}

fn invalid(e: impl std::fmt::Display) -> StoreError {
    StoreError::Invalid(e.to_string())
}

fn unavailable<E, R>(e: SdkError<E, R>) -> StoreError
where
    E: std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    StoreError::Unavailable(format!("DynamoDB: {}", aws_error_text(&e)))
}

fn conflict_or_unavailable<E, R>(e: SdkError<E, R>) -> StoreError
where
    E: std::error::Error + ProvideErrorMetadata + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    match e.code() {
        Some("ConditionalCheckFailedException") => StoreError::Conflict,
        Some("ValidationException") => {
            StoreError::Invalid(e.message().unwrap_or_default().to_string())
        }
        _ => unavailable(e),
    }
}

/// The error with its sources, as the SDK's Display says only "service error".
pub(crate) fn aws_error_text(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
