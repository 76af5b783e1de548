//! The `Queue` contract, case by case. Invoke with `booktr_ports::queue_conformance!(make)`
//! where `make` is an async fn returning a fresh [`QueueHarness`] (empty queues).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::unique;
use crate::queue::MAX_RECEIVES;
use crate::{Outgoing, Queue, QueueName, Received};

/// What the queue suite needs from a backend besides the port itself.
#[async_trait]
pub trait QueueHarness: Send {
    fn queue(&self) -> Arc<dyn Queue>;
    /// Lets `by` pass as the queue sees time (advance a manual clock, or really wait).
    async fn pass(&self, by: Duration);
    /// Drops the adapter and opens the same durable store again, as a process restart would.
    async fn restart(&mut self);
}

#[macro_export]
macro_rules! queue_conformance {
    ($make:path) => {
        $crate::queue_conformance!($make, when = $crate::conformance::always);
    };
    ($make:path, when = $when:path) => {
        $crate::__conformance_cases!(
            queue,
            $make,
            $when,
            harness,
            [
                messages_of_a_group_come_in_send_order_one_at_a_time,
                groups_do_not_wait_for_each_other,
                an_unacknowledged_message_returns_after_its_visibility_timeout,
                a_message_moves_to_the_dead_letter_queue_after_four_receives,
                the_render_queue_keeps_its_groups_order_and_shares_the_jobs_dead_letter_queue,
                acknowledged_messages_are_gone_and_acks_are_idempotent,
                a_released_message_is_delivered_again_with_its_count_kept,
                a_repeated_deduplication_id_is_enqueued_once,
                nothing_is_lost_across_a_restart,
                stats_count_waiting_and_in_flight_messages,
            ]
        );
    };
}

const VISIBILITY: Duration = Duration::from_secs(2);
const JOBS: QueueName = QueueName::Jobs;

async fn send(queue: &dyn Queue, group: &str, body: &str) {
    let message = Outgoing {
        group: group.into(),
        dedup_id: unique("dedup"),
        body: body.into(),
    };
    queue.send(JOBS, message).await.unwrap();
}

async fn receive(queue: &dyn Queue, max: usize) -> Vec<Received> {
    queue.receive(JOBS, max, VISIBILITY).await.unwrap()
}

fn bodies(messages: &[Received]) -> Vec<&str> {
    messages.iter().map(|m| m.body.as_str()).collect()
}

pub async fn messages_of_a_group_come_in_send_order_one_at_a_time<H: QueueHarness>(h: &mut H) {
    let q = h.queue();
    for body in ["a1", "a2", "a3"] {
        send(q.as_ref(), "book-a", body).await;
    }
    let first = receive(q.as_ref(), 1).await;
    assert_eq!(bodies(&first), ["a1"]);
    assert!(
        receive(q.as_ref(), 10).await.is_empty(),
        "a2 must wait while a1 is in flight"
    );
    q.ack(JOBS, &first[0].receipt).await.unwrap();
    let rest = receive(q.as_ref(), 10).await;
    assert_eq!(
        bodies(&rest),
        ["a2", "a3"],
        "a batch keeps the group's order"
    );
}

pub async fn groups_do_not_wait_for_each_other<H: QueueHarness>(h: &mut H) {
    let q = h.queue();
    send(q.as_ref(), "book-a", "a1").await;
    send(q.as_ref(), "book-a", "a2").await;
    send(q.as_ref(), "book-b", "b1").await;
    let a = receive(q.as_ref(), 1).await;
    assert_eq!(bodies(&a), ["a1"]);
    let b = receive(q.as_ref(), 10).await;
    assert_eq!(
        bodies(&b),
        ["b1"],
        "book-b is not held up by book-a's message in flight"
    );
}

pub async fn an_unacknowledged_message_returns_after_its_visibility_timeout<H: QueueHarness>(
    h: &mut H,
) {
    let q = h.queue();
    send(q.as_ref(), "g", "m").await;
    let first = receive(q.as_ref(), 1).await;
    assert_eq!(first[0].receive_count, 1);
    assert!(
        receive(q.as_ref(), 1).await.is_empty(),
        "hidden while in flight"
    );
    h.pass(VISIBILITY + Duration::from_secs(1)).await;
    let again = receive(q.as_ref(), 1).await;
    assert_eq!(bodies(&again), ["m"]);
    assert_eq!(
        again[0].id, first[0].id,
        "the same message, delivered again"
    );
    assert_eq!(again[0].receive_count, 2);
    assert_ne!(
        again[0].receipt, first[0].receipt,
        "each delivery has its own receipt"
    );
}

pub async fn a_message_moves_to_the_dead_letter_queue_after_four_receives<H: QueueHarness>(
    h: &mut H,
) {
    let q = h.queue();
    send(q.as_ref(), "g", "poison").await;
    send(q.as_ref(), "g", "next").await;
    for attempt in 1..=MAX_RECEIVES {
        let got = receive(q.as_ref(), 1).await;
        assert_eq!(bodies(&got), ["poison"], "attempt {attempt}");
        assert_eq!(got[0].receive_count, attempt);
        h.pass(VISIBILITY + Duration::from_secs(1)).await;
    }
    let after = receive(q.as_ref(), 1).await;
    assert_eq!(
        bodies(&after),
        ["next"],
        "the fifth receive moves the poison message out of the way"
    );
    let dead = q
        .receive(QueueName::JobsDeadLetter, 10, VISIBILITY)
        .await
        .unwrap();
    assert_eq!(bodies(&dead), ["poison"]);
    // SQS carries the count over into the dead-letter queue; the port allows either.
    assert!(dead[0].receive_count >= 1);
}

pub async fn the_render_queue_keeps_its_groups_order_and_shares_the_jobs_dead_letter_queue<
    H: QueueHarness,
>(
    h: &mut H,
) {
    let q = h.queue();
    for body in ["poison", "next"] {
        let message = Outgoing {
            group: "book".into(),
            dedup_id: unique("dedup"),
            body: body.into(),
        };
        q.send(QueueName::Render, message).await.unwrap();
    }
    for attempt in 1..=MAX_RECEIVES {
        let got = q.receive(QueueName::Render, 1, VISIBILITY).await.unwrap();
        assert_eq!(bodies(&got), ["poison"], "attempt {attempt}");
        assert!(
            q.receive(QueueName::Render, 10, VISIBILITY)
                .await
                .unwrap()
                .is_empty(),
            "next waits while poison is in flight"
        );
        h.pass(VISIBILITY + Duration::from_secs(1)).await;
    }
    let after = q.receive(QueueName::Render, 1, VISIBILITY).await.unwrap();
    assert_eq!(bodies(&after), ["next"]);
    let dead = q
        .receive(QueueName::JobsDeadLetter, 10, VISIBILITY)
        .await
        .unwrap();
    assert_eq!(bodies(&dead), ["poison"]);
    assert!(
        receive(q.as_ref(), 10).await.is_empty(),
        "nothing reaches the jobs queue"
    );
}

pub async fn acknowledged_messages_are_gone_and_acks_are_idempotent<H: QueueHarness>(h: &mut H) {
    let q = h.queue();
    send(q.as_ref(), "g", "m").await;
    let got = receive(q.as_ref(), 1).await;
    q.ack(JOBS, &got[0].receipt).await.unwrap();
    q.ack(JOBS, &got[0].receipt).await.unwrap();
    q.ack(JOBS, "no-such-receipt").await.unwrap();
    h.pass(VISIBILITY + Duration::from_secs(1)).await;
    assert!(receive(q.as_ref(), 10).await.is_empty());
}

pub async fn a_released_message_is_delivered_again_with_its_count_kept<H: QueueHarness>(h: &mut H) {
    let q = h.queue();
    send(q.as_ref(), "g", "m").await;
    let got = receive(q.as_ref(), 1).await;
    q.release(JOBS, &got[0].receipt, Duration::ZERO)
        .await
        .unwrap();
    let again = receive(q.as_ref(), 1).await;
    assert_eq!(bodies(&again), ["m"]);
    assert_eq!(again[0].receive_count, 2);
}

pub async fn a_repeated_deduplication_id_is_enqueued_once<H: QueueHarness>(h: &mut H) {
    let q = h.queue();
    let dedup_id = unique("dedup");
    for body in ["first", "second"] {
        let message = Outgoing {
            group: "g".into(),
            dedup_id: dedup_id.clone(),
            body: body.into(),
        };
        q.send(JOBS, message).await.unwrap();
    }
    let got = receive(q.as_ref(), 10).await;
    assert_eq!(bodies(&got), ["first"]);
}

pub async fn nothing_is_lost_across_a_restart<H: QueueHarness>(h: &mut H) {
    {
        let q = h.queue();
        send(q.as_ref(), "g", "m1").await;
        send(q.as_ref(), "g", "m2").await;
        let in_flight = receive(q.as_ref(), 1).await;
        assert_eq!(bodies(&in_flight), ["m1"]);
    }
    h.restart().await;
    h.pass(VISIBILITY + Duration::from_secs(1)).await;
    let q = h.queue();
    let got = receive(q.as_ref(), 10).await;
    assert_eq!(
        bodies(&got),
        ["m1", "m2"],
        "the unacknowledged and the waiting message both survive"
    );
    assert_eq!(got[0].receive_count, 2);
}

pub async fn stats_count_waiting_and_in_flight_messages<H: QueueHarness>(h: &mut H) {
    let q = h.queue();
    send(q.as_ref(), "a", "a1").await;
    send(q.as_ref(), "b", "b1").await;
    send(q.as_ref(), "c", "c1").await;
    let got = receive(q.as_ref(), 1).await;
    let stats = q.stats(JOBS).await.unwrap();
    assert_eq!((stats.waiting, stats.in_flight, stats.dead), (2, 1, 0));
    q.ack(JOBS, &got[0].receipt).await.unwrap();
    let stats = q.stats(JOBS).await.unwrap();
    assert_eq!((stats.waiting, stats.in_flight), (2, 0));
    if let Some(completed) = stats.completed {
        assert_eq!(completed, 1);
    }
}
