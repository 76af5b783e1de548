//! The figures operators act on: `booktr serve`'s Prometheus endpoint, read by the Prometheus
//! client library's own parser, and what the stack's dashboard and alarms read (the EMF side is
//! in `aws::`, on the emulator).

use std::collections::BTreeSet;
use std::time::Duration;

use booktr_core::metrics as m;
use serde_json::Value;

use crate::checkers;
use crate::crash::{book, book_status, free_port, start_with, upload_and_start};
use crate::stand_ins::openai_stand_in;

use crate::helpers::{eventually, have, Tool};

/// The `booktr` metrics `template.yaml` references: `["booktr", "name", ...]` in the dashboard,
/// `MetricName=\"name\"` in its searches, `Namespace: booktr, MetricName: name` in the alarms.
pub fn template_metrics() -> BTreeSet<String> {
    let template = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../template.yaml"),
    )
    .unwrap();
    let mut names = BTreeSet::new();
    for marker in [
        "[\"booktr\", \"",
        "MetricName=\\\"",
        "Namespace: booktr, MetricName: ",
    ] {
        for (at, _) in template.match_indices(marker) {
            let rest = &template[at + marker.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            names.insert(name);
        }
    }
    names
}

/// Recorded only by `booktr serve`'s queue sampler: on AWS the SQS metrics say the same.
const SERVE_ONLY: [&str; 2] = [m::QUEUE_DEPTH, m::QUEUE_OLDEST_AGE];

#[test]
fn the_dashboard_and_alarms_read_every_metric_the_lambdas_record_and_no_other() {
    let referenced = template_metrics();
    let recorded: BTreeSet<String> = m::ALL
        .iter()
        .filter(|n| !SERVE_ONLY.contains(n))
        .map(|n| n.to_string())
        .collect();
    assert_eq!(referenced, recorded);
}

#[tokio::test]
async fn booktr_serve_exposes_the_domain_metrics_for_prometheus_on_its_own_address() {
    if !have(Tool::Checkers) {
        return;
    }
    let (openai, _calls) = openai_stand_in(Duration::from_millis(1)).await;
    let data = tempfile::TempDir::new().unwrap();
    let metrics_port = free_port();
    let metrics_addr = format!("127.0.0.1:{metrics_port}");
    let env = [("BOOKTR_METRICS_ADDR", metrics_addr.as_str())];
    let (_server, url, key) = start_with(data.path(), free_port(), &openai, &env).await;
    let key = key.unwrap();
    let client = reqwest::Client::new();
    let id = upload_and_start(&client, &url, &key, book(3)).await;
    let status: Value = eventually(Duration::from_secs(30), || async {
        let status = book_status(&client, &url, &key, &id)
            .await
            .unwrap_or_default();
        match status["status"] == "COMPLETED" {
            true => Ok(status),
            false => Err(status),
        }
    })
    .await;

    // Not on the public address.
    let public = client.get(format!("{url}/metrics")).send().await.unwrap();
    assert_eq!(public.status(), 404);
    // The queue sampler runs every five seconds; the first sample is taken at start.
    let scrape = client
        .get(format!("http://{metrics_addr}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(scrape.status(), 200);
    let text = scrape.text().await.unwrap();
    let families = checkers::prometheus_families(&text);
    let value = |family: &str, labels: &[(&str, &str)]| -> f64 {
        families[family]["samples"]
            .as_array()
            .unwrap_or_else(|| panic!("no {family} in {text}"))
            .iter()
            .filter(|s| labels.iter().all(|(k, v)| s[1][*k].as_str() == Some(*v)))
            .map(|s| s[2].as_f64().unwrap())
            .sum()
    };
    // The parser names counters without `_total`, histograms by their base name.
    assert_eq!(families[m::BOOKS_STARTED]["type"], "counter");
    assert_eq!(value(m::BOOKS_STARTED, &[]), 1.0);
    assert_eq!(value(m::BOOKS_COMPLETED, &[]), 1.0);
    assert_eq!(
        value(m::CHAPTERS_TRANSLATED, &[]),
        status["chaptersTotal"].as_f64().unwrap()
    );
    assert_eq!(families[m::PASS_SECONDS]["type"], "histogram");
    assert!(
        value(m::TOKENS_IN, &[("model", "gpt-4o-mini")]) > 0.0,
        "{text}"
    );
    assert!(
        value(m::TOKENS_OUT, &[("model", "gpt-4o-mini")]) > 0.0,
        "{text}"
    );
    assert!(
        value(m::COST_MICROS, &[("model", "gpt-4o-mini")]) > 0.0,
        "{text}"
    );
    assert!(value(m::MODEL_REQUESTS, &[]) >= 9.0, "{text}");
    assert_eq!(families[m::QUEUE_DEPTH]["type"], "gauge");
    assert!(families[m::QUEUE_OLDEST_AGE].is_object(), "{text}");
    // Every family is one the domain records.
    for name in families.as_object().unwrap().keys() {
        assert!(
            m::ALL.contains(&name.as_str()),
            "{name} is not in booktr_core::metrics::ALL"
        );
    }
}
