//! `booktr serve`: every router on one socket, plus the in-process job workers, until Ctrl-C or
//! SIGTERM; then the server drains its requests and the workers finish their current job.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use booktr_api::{AppState, Settings};
use booktr_core::books::Books;
use booktr_core::config::Config;
use booktr_core::jobs::digest::Digests;
use booktr_core::jobs::runner::{self, RunnerConfig};
use booktr_core::ports::{Models, QueueName, SystemClock};
use booktr_local::DataDirLock;
use booktr_outbound::EnvModels;
use booktr_translate::providers::MODELS;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::wiring;

pub async fn run(config: Config) -> anyhow::Result<()> {
    let _lock = DataDirLock::acquire(&config.data_dir).map_err(anyhow::Error::msg)?;
    let models = Arc::new(EnvModels::from_env());
    let app = wiring::embedded(&config, Arc::new(SystemClock), models.clone())
        .context("opening the data directory")?;
    // The address first: a busy port must fail the start before the one-time administrator
    // key is made and printed, or the key would be lost with the process.
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.addr))?;
    say_which_models_are_offline(models.as_ref());
    let recovered = app.queue.release_in_flight().await?;
    if recovered.released > 0 {
        warn!(
            recovered = recovered.released,
            "jobs interrupted by the last shutdown will run again"
        );
    }

    if let Some((user, key)) = app
        .services
        .accounts
        .bootstrap_admin(config.admin_email.clone())
        .await?
    {
        print_first_start_banner(&user.email.to_string(), &key.secret, &config.public_url);
    }

    let (stop, stopped) = watch::channel(false);
    let mut workers = Vec::new();
    if let Some(addr) = config.metrics_addr {
        let queue = app.ports.queue.clone();
        let stopped = stopped.clone();
        workers.push(tokio::spawn(async move {
            crate::metrics::log_failure(
                crate::metrics::serve_prometheus(addr, queue, stopped).await,
            );
        }));
    }
    workers.push(tokio::spawn(sweep_expired(
        app.table.clone(),
        stopped.clone(),
    )));
    workers.push(tokio::spawn(queue_digests(
        app.services.digests.clone(),
        stopped.clone(),
    )));
    workers.push(tokio::spawn(clean_up_uploads(
        app.services.books.clone(),
        stopped.clone(),
    )));
    let queues = std::iter::repeat_n(QueueName::Jobs, config.workers).chain([
        QueueName::JobsDeadLetter,
        // One worker: a delivery is one short request, and retries wait minutes anyway.
        QueueName::Webhooks,
    ]);
    for queue in queues {
        let handle = tokio::spawn(runner::run(
            app.ports.queue.clone(),
            app.services.jobs.clone(),
            queue,
            RunnerConfig::default(),
            stopped.clone(),
        ));
        workers.push(handle);
    }

    let state = AppState::new(
        app.services.clone(),
        Settings {
            public_url: config.public_url.clone(),
            trust_forwarded_for: config.trust_forwarded_for,
            body_limit: None,
            upload_origin: None,
        },
    );
    info!(addr = %config.addr, data_dir = %config.data_dir.display(), workers = config.workers, "booktr listening");
    println!(
        "booktr is serving {} (data in {})",
        config.public_url,
        config.data_dir.display()
    );
    serve_router(listener, booktr_api::router(state), shutdown_signal()).await?;

    info!("shutting down: waiting for workers to finish their current job");
    let _ = stop.send(true);
    for worker in workers {
        let _ = worker.await;
    }
    Ok(())
}

/// Serves `router` on `listener` until `shutdown` completes, then lets the open requests finish:
/// the HTTP side of `booktr serve`, which the black-box tests run too.
pub async fn serve_router(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}

/// Logs, and prints, which provider families have no key here: their models are translated by
/// the offline engine (a visibly fake pseudo-translation that costs nothing).
fn say_which_models_are_offline(models: &EnvModels) {
    let mut offline: Vec<&str> = Vec::new();
    for (model, family, _) in MODELS {
        let (key_var, _) = booktr_translate::providers::env_names(*family);
        let engine = models.model(model, None).map(|m| m.name().to_string());
        if engine.as_deref() == Ok(booktr_translate::offline::NAME) && !offline.contains(&key_var) {
            offline.push(key_var);
        }
    }
    if !offline.is_empty() {
        let keys = offline.join(", ");
        warn!(missing = %keys, "no provider key: the offline engine translates those models' books");
        println!(
            "No {keys}: books sent to those providers' models are translated by the offline \
             engine (a visibly fake pseudo-translation, free). Users may set their own keys in \
             the developer settings."
        );
    }
}

fn print_first_start_banner(email: &str, secret: &str, url: &str) {
    println!();
    println!("  First start: created the administrator {email}.");
    println!("  Its API key (shown only this once, copy it now):");
    println!();
    println!("      {secret}");
    println!();
    println!("  Try: curl -H 'Authorization: Bearer {secret}' {url}/api/user");
    println!();
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = terminate => {}
    }
}

/// Removes expired rate-limit windows every ten minutes (DynamoDB's time-to-live does this on
/// AWS), so counters of addresses that never come back do not pile up.
async fn sweep_expired(table: Arc<booktr_local::SqliteTable>, mut stopped: watch::Receiver<bool>) {
    loop {
        match table.purge_expired(chrono::Utc::now().timestamp()).await {
            Ok(0) => {}
            Ok(removed) => info!(removed, "expired rate-limit windows removed"),
            Err(e) => warn!(error = %e, "could not remove expired rate-limit windows"),
        }
        tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_secs(600)) => {}
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
            _ = tokio::time::sleep(std::time::Duration::from_secs(3600)) => {}
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
            _ = tokio::time::sleep(std::time::Duration::from_secs(3600)) => {}
            _ = stopped.changed() => return,
        }
    }
}
