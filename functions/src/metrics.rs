//! Where the domain's metrics (`booktr_core::metrics`) go, chosen once per process:
//! CloudWatch embedded-metric-format lines on stdout in the Lambdas (CloudWatch Logs turns them
//! into metrics; no API call, no extra latency), a Prometheus scrape endpoint in `booktr serve`.

use std::net::SocketAddr;
use std::time::Duration;

use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use booktr_core::ports::Queue;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::sync::watch;
use tracing::{info, warn};

/// The CloudWatch namespace the stack's dashboard and alarms read (`template.yaml`).
pub const NAMESPACE: &str = "booktr";

/// Histogram buckets, in seconds: a pass takes seconds, a book minutes to hours.
const BUCKETS: [f64; 14] = [
    0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0,
];

/// Installs the Prometheus recorder and serves `GET /metrics` on `addr` (its own listener, so
/// the figures are never on the public address by accident) until `stopped` turns true. Also
/// samples the queues every few seconds, since nothing else touches them on a schedule.
pub async fn serve_prometheus(
    addr: SocketAddr,
    queue: std::sync::Arc<dyn Queue>,
    mut stopped: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let handle = PrometheusBuilder::new()
        .set_buckets(&BUCKETS)?
        .install_recorder()?;
    booktr_core::metrics::describe();
    let listener = tokio::net::TcpListener::bind(addr).await?;
    info!(%addr, "metrics at /metrics");
    let app = Router::new()
        .route("/metrics", get(scrape))
        .with_state(handle.clone());
    let mut shutdown = stopped.clone();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        let _ = shutdown.wait_for(|stop| *stop).await;
    });
    let sampler = async move {
        loop {
            booktr_core::health::sample_queues(queue.as_ref()).await;
            // Histograms keep their buckets; this drops what the exporter no longer needs.
            handle.run_upkeep();
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(5)) => {}
                _ = stopped.wait_for(|stop| *stop) => return,
            }
        }
    };
    let (served, ()) = tokio::join!(std::future::IntoFuture::into_future(server), sampler);
    served?;
    Ok(())
}

async fn scrape(
    axum::extract::State(handle): axum::extract::State<PrometheusHandle>,
) -> impl IntoResponse {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        handle.render(),
    )
}

/// The Lambda side: one collector per process, flushed as EMF lines after every invocation.
#[cfg(feature = "aws")]
pub mod emf {
    use std::sync::OnceLock;

    use metrics_cloudwatch_embedded::{Builder, Collector};

    static COLLECTOR: OnceLock<Option<&'static Collector>> = OnceLock::new();

    /// Installs the EMF recorder, once; `function` becomes a dimension-free property of every
    /// line, so the figures of all functions add up in the dashboard.
    pub fn install(function: &str) {
        COLLECTOR.get_or_init(|| {
            match Builder::new().cloudwatch_namespace(super::NAMESPACE).init() {
                Ok(collector) => {
                    collector.set_property("function", function.to_string());
                    booktr_core::metrics::describe();
                    Some(collector)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "metrics recorder not installed");
                    None
                }
            }
        });
    }

    /// Writes what was recorded since the last flush as EMF lines on stdout (which the Lambda
    /// runtime sends to CloudWatch Logs).
    pub fn flush() {
        flush_to(std::io::stdout());
    }

    /// The same, to any writer (the tests read the lines back).
    pub fn flush_to(writer: impl std::io::Write) {
        if let Some(Some(collector)) = COLLECTOR.get() {
            if let Err(e) = collector.flush(writer) {
                tracing::warn!(error = %e, "metrics not written");
            }
        }
    }
}

/// Logs a failed exporter without stopping the server: metrics are never worth an outage.
pub fn log_failure(result: anyhow::Result<()>) {
    if let Err(e) = result {
        warn!(error = %e, "the metrics endpoint stopped");
    }
}
