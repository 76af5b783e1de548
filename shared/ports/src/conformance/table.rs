//! The `Table` contract, case by case. Invoke with
//! `booktr_ports::table_conformance!(make)` where `make` is an async fn returning a
//! `Fixture<dyn Table>`.

use serde_json::json;

use super::unique;
use crate::table::MAX_TRANSACTION_OPS;
use crate::{Condition, Index, Item, Query, StoreError, Table, Update, WriteOp};

#[macro_export]
macro_rules! table_conformance {
    ($make:path) => {
        $crate::table_conformance!($make, when = $crate::conformance::always);
    };
    ($make:path, when = $when:path) => {
        $crate::__conformance_cases!(
            table,
            $make,
            $when,
            port,
            [
                get_returns_none_for_a_missing_item,
                put_then_get_returns_every_json_kind,
                put_if_absent_conflicts_and_keeps_the_first_item,
                put_with_an_equality_condition_checks_the_stored_value,
                update_of_a_missing_item_is_not_found,
                update_sets_removes_and_adds_then_returns_the_new_item,
                update_whose_condition_fails_writes_nothing,
                concurrent_counter_adds_are_atomic,
                an_at_most_condition_lets_a_counter_grow_only_to_its_limit,
                concurrent_spends_never_pass_the_limit_together,
                delete_of_a_missing_item_succeeds_and_conditions_guard_deletes,
                query_orders_by_sort_key_with_prefix_direction_and_limit,
                a_query_returns_every_item_of_a_long_partition,
                index_query_sees_only_items_with_both_index_attributes,
                transaction_applies_all_writes_or_none,
                transaction_update_of_a_missing_item_is_a_conflict,
                transaction_rejects_too_many_or_repeated_items,
            ]
        );
    };
}

fn item(pk: &str, sk: &str) -> Item {
    Item::new(pk, sk)
}

pub async fn get_returns_none_for_a_missing_item(table: &dyn Table) {
    assert_eq!(table.get(&unique("pk"), "x").await.unwrap(), None);
}

pub async fn put_then_get_returns_every_json_kind(table: &dyn Table) {
    let pk = unique("pk");
    let stored = item(&pk, "A")
        .with("s", "text with ünïcødé")
        .with("n", 42)
        .with("neg", -7)
        .with("b", true)
        .with("null", serde_json::Value::Null)
        .with("list", json!(["a", "b"]))
        .with("map", json!({"k": 1, "nested": {"x": "y"}}));
    table.put(stored.clone(), Condition::Always).await.unwrap();
    assert_eq!(table.get(&pk, "A").await.unwrap(), Some(stored));
    // A put replaces the whole item, not just the attributes it names.
    table
        .put(item(&pk, "A").with("only", 1), Condition::Always)
        .await
        .unwrap();
    assert_eq!(
        table.get(&pk, "A").await.unwrap(),
        Some(item(&pk, "A").with("only", 1))
    );
}

pub async fn put_if_absent_conflicts_and_keeps_the_first_item(table: &dyn Table) {
    let pk = unique("pk");
    table
        .put(item(&pk, "A").with("v", 1), Condition::NotExists)
        .await
        .unwrap();
    let second = table
        .put(item(&pk, "A").with("v", 2), Condition::NotExists)
        .await;
    assert!(matches!(second, Err(StoreError::Conflict)), "{second:?}");
    assert_eq!(
        table.get(&pk, "A").await.unwrap().unwrap().i64("v"),
        Some(1)
    );
    let exists = table.put(item(&pk, "B"), Condition::Exists).await;
    assert!(matches!(exists, Err(StoreError::Conflict)), "{exists:?}");
    assert_eq!(table.get(&pk, "B").await.unwrap(), None);
}

pub async fn put_with_an_equality_condition_checks_the_stored_value(table: &dyn Table) {
    let pk = unique("pk");
    table
        .put(item(&pk, "A").with("status", "OLD"), Condition::Always)
        .await
        .unwrap();
    let wrong = table
        .put(
            item(&pk, "A").with("status", "NEW"),
            Condition::equals("status", "OTHER"),
        )
        .await;
    assert!(matches!(wrong, Err(StoreError::Conflict)));
    table
        .put(
            item(&pk, "A").with("status", "NEW"),
            Condition::equals("status", "OLD"),
        )
        .await
        .unwrap();
    let any_of = Condition::In("status".into(), vec![json!("X"), json!("NEW")]);
    table
        .put(item(&pk, "A").with("status", "NEWER"), any_of)
        .await
        .unwrap();
    assert_eq!(
        table.get(&pk, "A").await.unwrap().unwrap().str("status"),
        Some("NEWER")
    );
}

pub async fn update_of_a_missing_item_is_not_found(table: &dyn Table) {
    let pk = unique("pk");
    let result = table
        .update(&pk, "A", Update::default().set("x", 1), Condition::Always)
        .await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
    assert_eq!(
        table.get(&pk, "A").await.unwrap(),
        None,
        "an update must not create the item"
    );
}

pub async fn update_sets_removes_and_adds_then_returns_the_new_item(table: &dyn Table) {
    let pk = unique("pk");
    table
        .put(
            item(&pk, "A")
                .with("keep", "k")
                .with("gone", 1)
                .with("count", 5),
            Condition::Always,
        )
        .await
        .unwrap();
    let update = Update::default()
        .set("new", "n")
        .remove("gone")
        .add("count", 3)
        .add("fresh", 2);
    let after = table
        .update(&pk, "A", update, Condition::Exists)
        .await
        .unwrap();
    let expected = item(&pk, "A")
        .with("keep", "k")
        .with("count", 8)
        .with("new", "n")
        .with("fresh", 2);
    assert_eq!(after, expected);
    assert_eq!(table.get(&pk, "A").await.unwrap(), Some(expected));
    // A counter also goes down (a passage's dropped versions leave the book's count of edits),
    // and below 0 when asked.
    let down = Update::default().add("count", -3).add("fresh", -5);
    let after = table
        .update(&pk, "A", down, Condition::Exists)
        .await
        .unwrap();
    assert_eq!(
        (after.i64("count"), after.i64("fresh")),
        (Some(5), Some(-3))
    );
}

pub async fn update_whose_condition_fails_writes_nothing(table: &dyn Table) {
    let pk = unique("pk");
    table
        .put(
            item(&pk, "A").with("status", "A").with("n", 1),
            Condition::Always,
        )
        .await
        .unwrap();
    let update = Update::default().set("status", "B").add("n", 1);
    let result = table
        .update(&pk, "A", update, Condition::equals("status", "Z"))
        .await;
    assert!(matches!(result, Err(StoreError::Conflict)), "{result:?}");
    assert_eq!(
        table.get(&pk, "A").await.unwrap(),
        Some(item(&pk, "A").with("status", "A").with("n", 1))
    );
}

pub async fn concurrent_counter_adds_are_atomic(table: &dyn Table) {
    let pk = unique("pk");
    table
        .put(item(&pk, "C").with("n", 0), Condition::Always)
        .await
        .unwrap();
    let adds =
        (0..20).map(|_| table.update(&pk, "C", Update::default().add("n", 1), Condition::Always));
    for result in futures::future::join_all(adds).await {
        result.unwrap();
    }
    assert_eq!(
        table.get(&pk, "C").await.unwrap().unwrap().i64("n"),
        Some(20)
    );
}

pub async fn an_at_most_condition_lets_a_counter_grow_only_to_its_limit(table: &dyn Table) {
    let pk = unique("pk");
    table
        .put(item(&pk, "Q").with("other", 5), Condition::Always)
        .await
        .unwrap();
    // An absent counter reads as 0.
    let spend = |n: i64| Update::default().add("used", n);
    let within = |n: i64| Condition::AtMost("used".into(), 10 - n);
    table.update(&pk, "Q", spend(7), within(7)).await.unwrap();
    let over = table.update(&pk, "Q", spend(4), within(4)).await;
    assert!(matches!(over, Err(StoreError::Conflict)), "{over:?}");
    let both = Condition::All(vec![within(3), Condition::AtMost("other".into(), 5)]);
    let after = table.update(&pk, "Q", spend(3), both).await.unwrap();
    assert_eq!(after.i64("used"), Some(10));
    let one_fails = Condition::All(vec![within(0), Condition::AtMost("other".into(), 4)]);
    let result = table.update(&pk, "Q", spend(0), one_fails).await;
    assert!(matches!(result, Err(StoreError::Conflict)), "{result:?}");
    let missing = table.update(&unique("pk"), "Q", spend(1), within(1)).await;
    assert!(matches!(missing, Err(StoreError::NotFound)), "{missing:?}");
}

pub async fn concurrent_spends_never_pass_the_limit_together(table: &dyn Table) {
    let pk = unique("pk");
    table.put(item(&pk, "Q"), Condition::Always).await.unwrap();
    let spends = (0..10).map(|_| {
        table.update(
            &pk,
            "Q",
            Update::default().add("used", 1),
            Condition::AtMost("used".into(), 3 - 1),
        )
    });
    let passed = futures::future::join_all(spends)
        .await
        .into_iter()
        .filter(Result::is_ok)
        .count();
    assert_eq!(passed, 3);
    assert_eq!(
        table.get(&pk, "Q").await.unwrap().unwrap().i64("used"),
        Some(3)
    );
}

pub async fn delete_of_a_missing_item_succeeds_and_conditions_guard_deletes(table: &dyn Table) {
    let pk = unique("pk");
    table
        .delete(&pk, "nothing", Condition::Always)
        .await
        .unwrap();
    table
        .put(item(&pk, "A").with("owner", "u1"), Condition::Always)
        .await
        .unwrap();
    let wrong = table
        .delete(&pk, "A", Condition::equals("owner", "u2"))
        .await;
    assert!(matches!(wrong, Err(StoreError::Conflict)));
    assert!(table.get(&pk, "A").await.unwrap().is_some());
    table
        .delete(&pk, "A", Condition::equals("owner", "u1"))
        .await
        .unwrap();
    assert_eq!(table.get(&pk, "A").await.unwrap(), None);
}

pub async fn query_orders_by_sort_key_with_prefix_direction_and_limit(table: &dyn Table) {
    let pk = unique("pk");
    for sk in ["CHAPTER#00002", "BOOK", "CHAPTER#00010", "CHAPTER#00001"] {
        table.put(item(&pk, sk), Condition::Always).await.unwrap();
    }
    table
        .put(item(&unique("other"), "CHAPTER#00001"), Condition::Always)
        .await
        .unwrap();
    let sks = |items: Vec<Item>| items.into_iter().map(|i| i.sk).collect::<Vec<_>>();
    let all = table.query(Query::partition(&pk)).await.unwrap();
    assert_eq!(
        sks(all),
        ["BOOK", "CHAPTER#00001", "CHAPTER#00002", "CHAPTER#00010"]
    );
    let chapters = table
        .query(Query::partition(&pk).prefix("CHAPTER#"))
        .await
        .unwrap();
    assert_eq!(
        sks(chapters),
        ["CHAPTER#00001", "CHAPTER#00002", "CHAPTER#00010"]
    );
    let last_two = table
        .query(
            Query::partition(&pk)
                .prefix("CHAPTER#")
                .descending()
                .limit(2),
        )
        .await
        .unwrap();
    assert_eq!(sks(last_two), ["CHAPTER#00010", "CHAPTER#00002"]);
    // Prefixes are literal, even with characters that are special in LIKE or glob patterns.
    table
        .put(item(&pk, "a%b_c"), Condition::Always)
        .await
        .unwrap();
    table
        .put(item(&pk, "axbyc"), Condition::Always)
        .await
        .unwrap();
    assert_eq!(
        sks(table
            .query(Query::partition(&pk).prefix("a%b_"))
            .await
            .unwrap()),
        ["a%b_c"]
    );
}

/// Longer than any one read an adapter may answer from a first, bounded attempt (the SQLite
/// adapter reads 100 rows on the calling thread), so every way of reading past it is used.
pub async fn a_query_returns_every_item_of_a_long_partition(table: &dyn Table) {
    const ITEMS: usize = 250;
    let pk = unique("long");
    let sks: Vec<String> = (0..ITEMS).map(|i| format!("CHAPTER#{i:05}")).collect();
    for chunk in sks.chunks(MAX_TRANSACTION_OPS) {
        let puts = chunk
            .iter()
            .map(|sk| WriteOp::Put {
                item: item(&pk, sk),
                condition: Condition::Always,
            })
            .collect();
        table.transact(puts).await.unwrap();
    }
    let read = |items: Vec<Item>| items.into_iter().map(|i| i.sk).collect::<Vec<_>>();
    let all = table.query(Query::partition(&pk)).await.unwrap();
    assert_eq!(read(all), sks);
    let first = table.query(Query::partition(&pk).limit(150)).await.unwrap();
    assert_eq!(read(first), sks[..150]);
    let last = table
        .query(Query::partition(&pk).descending().limit(101))
        .await
        .unwrap();
    let expected: Vec<String> = sks.iter().rev().take(101).cloned().collect();
    assert_eq!(read(last), expected);
}

pub async fn index_query_sees_only_items_with_both_index_attributes(table: &dyn Table) {
    let owner = unique("owner");
    let put = |pk: String, gsk: Option<&str>| {
        let mut it = item(&pk, "X").with("gsi1pk", owner.clone());
        if let Some(gsk) = gsk {
            it = it.with("gsi1sk", gsk);
        }
        table.put(it, Condition::Always)
    };
    put(unique("a"), Some("2024-01-02")).await.unwrap();
    put(unique("b"), Some("2024-01-01")).await.unwrap();
    put(unique("c"), Some("2024-01-03")).await.unwrap();
    put(unique("sparse"), None).await.unwrap();
    let newest_first = table
        .query_index(Index::Gsi1, Query::partition(&owner).descending().limit(2))
        .await
        .unwrap();
    let sort_keys: Vec<_> = newest_first
        .iter()
        .map(|i| i.str("gsi1sk").unwrap().to_string())
        .collect();
    assert_eq!(sort_keys, ["2024-01-03", "2024-01-02"]);
    let all = table
        .query_index(Index::Gsi1, Query::partition(&owner))
        .await
        .unwrap();
    assert_eq!(
        all.len(),
        3,
        "an item without the sort attribute is not indexed"
    );
}

pub async fn transaction_applies_all_writes_or_none(table: &dyn Table) {
    let pk = unique("pk");
    table
        .put(item(&pk, "EXISTING").with("n", 1), Condition::Always)
        .await
        .unwrap();
    // The last op's condition fails, so the first two must not be applied either.
    let failing = vec![
        WriteOp::Put {
            item: item(&pk, "NEW"),
            condition: Condition::NotExists,
        },
        WriteOp::Update {
            pk: pk.clone(),
            sk: "EXISTING".into(),
            update: Update::default().add("n", 1),
            condition: Condition::Always,
        },
        WriteOp::Check {
            pk: pk.clone(),
            sk: "MISSING".into(),
            condition: Condition::Exists,
        },
    ];
    let result = table.transact(failing).await;
    assert!(matches!(result, Err(StoreError::Conflict)), "{result:?}");
    assert_eq!(table.get(&pk, "NEW").await.unwrap(), None);
    assert_eq!(
        table.get(&pk, "EXISTING").await.unwrap().unwrap().i64("n"),
        Some(1)
    );

    table
        .put(item(&pk, "DOOMED"), Condition::Always)
        .await
        .unwrap();
    let succeeding = vec![
        WriteOp::Put {
            item: item(&pk, "NEW").with("v", "x"),
            condition: Condition::NotExists,
        },
        WriteOp::Update {
            pk: pk.clone(),
            sk: "EXISTING".into(),
            update: Update::default().add("n", 1),
            condition: Condition::equals("n", 1),
        },
        WriteOp::Delete {
            pk: pk.clone(),
            sk: "DOOMED".into(),
            condition: Condition::Exists,
        },
    ];
    table.transact(succeeding).await.unwrap();
    assert_eq!(
        table.get(&pk, "NEW").await.unwrap().unwrap().str("v"),
        Some("x")
    );
    assert_eq!(
        table.get(&pk, "EXISTING").await.unwrap().unwrap().i64("n"),
        Some(2)
    );
    assert_eq!(table.get(&pk, "DOOMED").await.unwrap(), None);
}

pub async fn transaction_update_of_a_missing_item_is_a_conflict(table: &dyn Table) {
    let pk = unique("pk");
    let ops = vec![
        WriteOp::Put {
            item: item(&pk, "A"),
            condition: Condition::Always,
        },
        WriteOp::Update {
            pk: pk.clone(),
            sk: "MISSING".into(),
            update: Update::default().set("x", 1),
            condition: Condition::Always,
        },
    ];
    let result = table.transact(ops).await;
    assert!(matches!(result, Err(StoreError::Conflict)), "{result:?}");
    assert_eq!(table.get(&pk, "A").await.unwrap(), None);
    assert_eq!(table.get(&pk, "MISSING").await.unwrap(), None);
}

pub async fn transaction_rejects_too_many_or_repeated_items(table: &dyn Table) {
    let pk = unique("pk");
    let too_many = (0..=MAX_TRANSACTION_OPS)
        .map(|i| WriteOp::Put {
            item: item(&pk, &format!("{i:04}")),
            condition: Condition::Always,
        })
        .collect();
    assert!(matches!(
        table.transact(too_many).await,
        Err(StoreError::Invalid(_))
    ));
    let repeated = vec![
        WriteOp::Put {
            item: item(&pk, "A"),
            condition: Condition::Always,
        },
        WriteOp::Delete {
            pk: pk.clone(),
            sk: "A".into(),
            condition: Condition::Always,
        },
    ];
    assert!(matches!(
        table.transact(repeated).await,
        Err(StoreError::Invalid(_))
    ));
    assert!(table.query(Query::partition(&pk)).await.unwrap().is_empty());
}
