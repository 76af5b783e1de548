//! `booktr serve`: every router on one socket, plus the in-process job workers, until Ctrl-C or
//! SIGTERM; then the server drains its requests and the workers finish their current job.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use booktr_core::config::Config;
use booktr_core::ports::Models;
use booktr_local::DataDirLock;
use booktr_outbound::EnvModels;
use booktr_translate::providers::MODELS;
use tracing::{info, warn};

use crate::app::{Application, Tasks};

pub async fn run(config: Config) -> anyhow::Result<()> {
    let _lock = DataDirLock::acquire(&config.data_dir).map_err(anyhow::Error::msg)?;
    let models = Arc::new(EnvModels::from_env());
    let app = Application::builder(config)
        .models(models.clone())
        .embedded()
        .context("opening the data directory")?;
    let config = &app.config;
    // The address first: a busy port must fail the start before the one-time administrator
    // key is made and printed, or the key would be lost with the process.
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.addr))?;
    say_which_models_are_offline(models.as_ref());

    if let Some((user, key)) = app
        .services
        .accounts
        .bootstrap_admin(config.admin_email.clone())
        .await?
    {
        print_first_start_banner(&user.email.to_string(), &key.secret, &config.public_url);
    }

    let running = app.start(Tasks::served(config)).await?;
    info!(addr = %config.addr, data_dir = %config.data_dir.display(), workers = config.workers, "booktr listening");
    println!(
        "booktr is serving {} (data in {})",
        config.public_url,
        config.data_dir.display()
    );
    serve_router(listener, app.router(), shutdown_signal()).await?;

    info!("shutting down: waiting for workers to finish their current job");
    running.stop().await;
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
