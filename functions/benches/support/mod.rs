//! What the benches share: the app built as `booktr serve` builds it (embedded SQLite store and
//! queue, local files, the upkeep tasks), over a fresh data directory, served over HTTP on a
//! free port.

use std::sync::Arc;
use std::time::Duration;

use booktr_core::config::Config;
use booktr_core::ports::{Clock, Models};
use booktr_functions::app::{Application, Running, Tasks};

/// A served service; its data directory and background tasks go with it.
pub struct Served {
    pub app: Application,
    /// The upkeep and the queue workers, if asked for.
    #[allow(dead_code)] // Stopped by the bench that runs workers; the others let it drop.
    pub running: Running,
    /// Where it answers, `http://127.0.0.1:<port>`.
    pub url: String,
    _data: tempfile::TempDir,
}

/// Serves the app with `env` as its configuration (besides the data directory and the public
/// address, which are the bench's own), with `tasks` running.
pub async fn serve(
    env: &[(&str, String)],
    clock: Arc<dyn Clock>,
    models: Arc<dyn Models>,
    tasks: Tasks,
) -> anyhow::Result<Served> {
    let data = tempfile::TempDir::new()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let data_dir = data.path().to_string_lossy().to_string();
    let config = Config::from_lookup(|name| match name {
        "BOOKTR_DATA_DIR" => Some(data_dir.clone()),
        "BOOKTR_PUBLIC_URL" => Some(url.clone()),
        _ => env
            .iter()
            .find(|(set, _)| *set == name)
            .map(|(_, value)| value.clone()),
    })?;
    let app = Application::builder(config)
        .clock(clock)
        .models(models)
        .embedded()?;
    tokio::spawn(booktr_functions::serve::serve_router(
        listener,
        app.router(),
        std::future::pending(),
    ));
    let running = app.start(tasks).await?;
    Ok(Served {
        app,
        running,
        url,
        _data: data,
    })
}

/// The `p` quantile (0 to 1) of sorted timings.
#[allow(dead_code)] // Not every bench reports quantiles.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}
