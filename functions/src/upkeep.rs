//! The embedded backend's upkeep, which the platform does on AWS: expired items swept (DynamoDB's
//! time to live), the upload area cleaned up, the weekly digests queued (the EventBridge
//! schedule), and the Prometheus endpoint (CloudWatch's metrics). [`crate::app::Application::start`]
//! runs them.

use std::sync::Arc;
use std::time::Duration;

use booktr_core::books::Books;
use booktr_core::config::Config;
use booktr_core::jobs::digest::Digests;
use booktr_core::ports::Clock;
use booktr_core::{Ports, Services};
use booktr_local::SqliteTable;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{info, warn};

/// Spawns every upkeep task; each ends when `stopped` changes.
pub fn start(
    config: &Config,
    services: &Services,
    ports: &Ports,
    table: Arc<SqliteTable>,
    stopped: &watch::Receiver<bool>,
) -> Vec<JoinHandle<()>> {
    let mut handles = Vec::new();
    if let Some(addr) = config.metrics_addr {
        #[cfg(feature = "serve")]
        {
            let queue = ports.queue.clone();
            let stopped = stopped.clone();
            handles.push(tokio::spawn(async move {
                crate::metrics::log_failure(
                    crate::metrics::serve_prometheus(addr, queue, stopped).await,
                );
            }));
        }
        #[cfg(not(feature = "serve"))]
        warn!(%addr, "BOOKTR_METRICS_ADDR is set, but this booktr was built without the server and its metrics endpoint");
    }
    handles.push(tokio::spawn(sweep_expired(
        table,
        ports.clock.clone(),
        stopped.clone(),
    )));
    handles.push(tokio::spawn(queue_digests(
        services.digests.clone(),
        stopped.clone(),
    )));
    handles.push(tokio::spawn(clean_up_uploads(
        services.books.clone(),
        stopped.clone(),
    )));
    handles
}

/// Removes expired rate-limit windows every ten minutes, so counters of addresses that never
/// come back do not pile up.
async fn sweep_expired(
    table: Arc<SqliteTable>,
    clock: Arc<dyn Clock>,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        match table.purge_expired(clock.now().timestamp()).await {
            Ok(0) => {}
            Ok(removed) => info!(removed, "expired rate-limit windows removed"),
            Err(e) => warn!(error = %e, "could not remove expired rate-limit windows"),
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(600)) => {}
            _ = stopped.changed() => return,
        }
    }
}

/// Removes, every hour, the upload area's files that no open direct upload holds (offers that
/// are over, forms posted again after their confirm), for the users who do not come back to
/// make another offer, which cleans up after them too.
async fn clean_up_uploads(books: Books, mut stopped: watch::Receiver<bool>) {
    loop {
        match books.clean_up_upload_area().await {
            Ok(0) => {}
            Ok(removed) => info!(removed, "upload files without an open offer removed"),
            Err(e) => warn!(error = %e, "could not clean up the upload area; next try in an hour"),
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(3600)) => {}
            _ = stopped.changed() => return,
        }
    }
}

/// Queues the weekly digests once they are due (Monday 08:00 UTC), checking every hour as the
/// EventBridge schedule does on AWS; a check in a week already done does nothing.
async fn queue_digests(digests: Digests, mut stopped: watch::Receiver<bool>) {
    loop {
        match digests.queue_due().await {
            Ok(0) => {}
            Ok(queued) => info!(queued, "weekly digests queued"),
            Err(e) => warn!(error = %e, "could not queue the weekly digests; next try in an hour"),
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(3600)) => {}
            _ = stopped.changed() => return,
        }
    }
}
