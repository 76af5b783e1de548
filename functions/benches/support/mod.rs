//! What the benches share: the service wired as `booktr serve` wires it (embedded SQLite store
//! and queue, local files), over a fresh data directory, served over HTTP on a free port.

use std::sync::Arc;
use std::time::Duration;

use booktr_api::{AppState, Settings};
use booktr_core::config::Config;
use booktr_core::ports::{Clock, Models};
use booktr_functions::wiring;

/// A served service; its data directory goes with it.
pub struct Served {
    pub app: wiring::Embedded,
    /// Where it answers, `http://127.0.0.1:<port>`.
    pub url: String,
    _data: tempfile::TempDir,
}

/// Serves the embedded wiring with `env` as its configuration (besides the data directory and
/// the public address, which are the bench's own).
pub async fn serve(
    env: &[(&str, String)],
    clock: Arc<dyn Clock>,
    models: Arc<dyn Models>,
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
    let app = wiring::embedded(&config, clock, models)?;
    let state = AppState::new(
        app.services.clone(),
        Settings {
            public_url: url.clone(),
            trust_forwarded_for: false,
            body_limit: None,
            upload_origin: None,
        },
    );
    let router =
        booktr_api::router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(std::future::IntoFuture::into_future(axum::serve(
        listener, router,
    )));
    Ok(Served {
        app,
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
