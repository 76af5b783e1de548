//! The one way the app is assembled. `booktr serve`, each Lambda, the command-line tools, the
//! black-box tests and the benches build it here from the configuration: the adapters
//! ([`crate::wiring`]), the services over them, the HTTP side (the whole router, or one endpoint
//! group for a Lambda) and the background tasks (queue workers and upkeep), which stop together.
//!
//! ```text
//! let app = Application::builder(config).models(models).embedded()?;
//! let running = app.start(Tasks::served(&app.config)).await?;   // workers and upkeep
//! serve_router(listener, app.router(), shutdown).await?;        // the HTTP side, if any
//! running.stop().await;
//! ```

use std::sync::Arc;

#[cfg(feature = "serve")]
use axum::Router;
#[cfg(feature = "serve")]
use booktr_api::{AppState, Routes, Settings};
use booktr_core::config::Config;
use booktr_core::health::QueueMode;
use booktr_core::jobs::runner::{self, RunnerConfig};
use booktr_core::jobs::RunObserver;
use booktr_core::ports::{Clock, Models, QueueName, StoreError, SystemClock};
use booktr_core::services::Window;
use booktr_core::{Ports, Services};
use booktr_local::{SqliteQueue, SqliteTable};
use booktr_outbound::EnvModels;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::warn;

use crate::upkeep;
use crate::wiring::{self, WiringError};

/// The services on their adapters, ready to be served and worked.
pub struct Application {
    pub config: Config,
    pub services: Services,
    pub ports: Ports,
    /// What the HTTP side is told about where it runs; set from the configuration and the
    /// backend (a Lambda's body limit, the bucket's origin), adjustable before [`Self::router`].
    #[cfg(feature = "serve")]
    pub settings: Settings,
    mode: QueueMode,
    backend: Backend,
    run: RunSetup,
}

/// What one process sets about its services besides the configuration (`booktr translate`
/// sets both), kept so that [`Application::over`] builds the same.
#[derive(Clone, Default)]
struct RunSetup {
    /// Chapters of a book in flight whatever the owner's plan, instead of
    /// `config.chapter_window` by plan.
    window_for_every_plan: Option<usize>,
    /// Told of every run's steps by the job handler.
    observer: Option<Arc<dyn RunObserver>>,
}

/// What only one backend has, for its own upkeep.
#[derive(Clone)]
enum Backend {
    /// SQLite and local files: the queue's recovery after a crash (`release_in_flight`) and the
    /// table's sweep of expired items (`purge_expired`) are the process's own work. Behind a
    /// trait object so that a binary that never builds this backend (a Lambda) links no SQLite:
    /// concrete SQLite handles here would put their drop code, and SQLite with it, in every
    /// binary that holds an `Application`.
    Embedded(Arc<dyn LocalUpkeep>),
    /// DynamoDB, SQS, S3, KMS: the platform expires items (time to live), schedules the digests
    /// (EventBridge) and runs the workers (Lambda's event source).
    #[cfg(feature = "aws")]
    Managed,
}

/// How an [`Application`] is built: the configuration, a clock and the models, then a backend.
pub struct Builder {
    config: Config,
    clock: Arc<dyn Clock>,
    models: Option<Arc<dyn Models>>,
    run: RunSetup,
}

impl Application {
    /// With the system clock and the models of the environment's provider keys unless told
    /// otherwise.
    pub fn builder(config: Config) -> Builder {
        Builder {
            config,
            clock: Arc::new(SystemClock),
            models: None,
            run: RunSetup::default(),
        }
    }
}

impl Builder {
    /// The clock every service and queue reads (tests hand in one they move).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The models books are translated with (tests hand in stand-ins); by default
    /// [`EnvModels::from_env`].
    pub fn models(mut self, models: Arc<dyn Models>) -> Self {
        self.models = Some(models);
        self
    }

    /// With `window` chapters of a book in flight whatever the owner's plan (`booktr translate
    /// --parallel`, whose one user is there only to own the one book).
    pub fn window_for_every_plan(mut self, window: usize) -> Self {
        self.run.window_for_every_plan = Some(window);
        self
    }

    /// With `observer` told of every run's steps by the job handler (`booktr translate`'s
    /// progress).
    pub fn observed_by(mut self, observer: Arc<dyn RunObserver>) -> Self {
        self.run.observer = Some(observer);
        self
    }

    fn take_models(&mut self) -> Arc<dyn Models> {
        self.models
            .take()
            .unwrap_or_else(|| Arc::new(EnvModels::from_env()))
    }

    /// The embedded backend (worker-queue mode) over `config.data_dir`, which is made if missing.
    pub fn embedded(mut self) -> Result<Application, WiringError> {
        let models = self.take_models();
        let embedded = wiring::embedded(&self.config, self.clock, models)?;
        #[cfg(feature = "serve")]
        let settings = Settings {
            public_url: self.config.public_url.clone(),
            trust_forwarded_for: self.config.trust_forwarded_for,
            body_limit: None,
            upload_origin: None,
        };
        Ok(Application::new(
            self.config,
            embedded.ports,
            QueueMode::WorkerQueue,
            #[cfg(feature = "serve")]
            settings,
            Backend::Embedded(Arc::new(SqliteUpkeep {
                queue: embedded.queue,
                table: embedded.table,
            })),
            self.run,
        ))
    }

    /// The managed backend (managed-queue mode): the AWS resources through `clients`.
    #[cfg(feature = "aws")]
    pub fn managed(
        mut self,
        clients: booktr_aws::Clients,
        resources: &wiring::AwsResources,
    ) -> Result<Application, WiringError> {
        let models = self.take_models();
        let ports = wiring::managed(&self.config, clients, resources, self.clock, models)?;
        let settings = Settings {
            public_url: self.config.public_url.clone(),
            // API Gateway's own view of the caller is used instead (`lambda::http_app`).
            trust_forwarded_for: false,
            body_limit: Some(booktr_api::LAMBDA_BODY_LIMIT),
            upload_origin: resources.upload_origin(),
        };
        Ok(Application::new(
            self.config,
            ports,
            QueueMode::ManagedQueue,
            settings,
            Backend::Managed,
            self.run,
        ))
    }
}

impl Application {
    fn new(
        config: Config,
        ports: Ports,
        mode: QueueMode,
        #[cfg(feature = "serve")] settings: Settings,
        backend: Backend,
        run: RunSetup,
    ) -> Application {
        let window = match run.window_for_every_plan {
            Some(window) => Window::EveryPlan(window),
            None => Window::ByPlan(config.chapter_window),
        };
        let mut services = Services::new(
            ports.clone(),
            mode,
            config.quotas,
            window,
            config.file_budget,
            config.pipeline,
            &config.public_url,
        );
        if let Some(observer) = &run.observer {
            services = services.observed_by(observer.clone());
        }
        Application {
            config,
            services,
            ports,
            #[cfg(feature = "serve")]
            settings,
            mode,
            backend,
            run,
        }
    }

    /// The same app over `ports` instead (the same stores behind wrappers that count or fail
    /// calls, say): its services built again over them.
    pub fn over(&self, ports: Ports) -> Application {
        Application::new(
            self.config.clone(),
            ports,
            self.mode,
            #[cfg(feature = "serve")]
            self.settings.clone(),
            self.backend.clone(),
            self.run.clone(),
        )
    }

    /// Every endpoint group on one router, as `booktr serve` answers.
    #[cfg(feature = "serve")]
    pub fn router(&self) -> Router {
        booktr_api::router(self.state())
    }

    /// One endpoint group's routes with every shared layer, as one Lambda answers.
    #[cfg(feature = "serve")]
    pub fn group(&self, routes: Routes) -> Router {
        booktr_api::finish(routes, self.state())
    }

    #[cfg(feature = "serve")]
    fn state(&self) -> AppState {
        AppState::new(self.services.clone(), self.settings.clone())
    }

    /// Starts the background tasks: `tasks`' queue workers, and on the embedded backend the
    /// upkeep `booktr serve` does (the expired-item sweep, the upload area's clean-up, the
    /// weekly digests, the Prometheus endpoint when `BOOKTR_METRICS_ADDR` is set). Before the
    /// workers start, the jobs a killed process left in hand are released to run again, so only
    /// one process with workers may run on a data directory (`booktr serve` holds its lock).
    pub async fn start(&self, tasks: Tasks) -> Result<Running, StoreError> {
        let (stop, stopped) = watch::channel(false);
        let mut handles = Vec::new();
        match &self.backend {
            Backend::Embedded(local) => {
                handles.extend(local.start(self, tasks.job_workers > 0, &stopped).await?);
            }
            #[cfg(feature = "aws")]
            Backend::Managed => {}
        }
        let queues = std::iter::repeat_n(QueueName::Jobs, tasks.job_workers).chain(
            // With workers at all, one each on these: a delivery is one short request, and
            // retries wait minutes anyway; a render is bound by the CPU and by its memory
            // budget, so two at once would only halve each other's speed on a small machine.
            [
                QueueName::Render,
                QueueName::JobsDeadLetter,
                QueueName::Webhooks,
            ]
            .into_iter()
            .filter(|_| tasks.job_workers > 0),
        );
        for queue in queues {
            handles.push(tokio::spawn(runner::run(
                self.ports.queue.clone(),
                self.services.jobs.clone(),
                queue,
                tasks.runner,
                stopped.clone(),
            )));
        }
        Ok(Running { stop, handles })
    }
}

/// Which background tasks [`Application::start`] runs.
#[derive(Debug, Clone, Copy)]
pub struct Tasks {
    /// Workers on the jobs queue; with any, one more each on the render, dead-letter and
    /// webhook queues. With none, whoever holds the app drives the queues (`runner::drain`).
    pub job_workers: usize,
    pub runner: RunnerConfig,
}

impl Tasks {
    /// What `booktr serve` runs: `BOOKTR_WORKERS` job workers.
    pub fn served(config: &Config) -> Tasks {
        Tasks {
            job_workers: config.workers,
            runner: RunnerConfig::default(),
        }
    }

    /// Upkeep only: the caller drives the queues.
    pub fn without_workers() -> Tasks {
        Tasks {
            job_workers: 0,
            runner: RunnerConfig::default(),
        }
    }
}

/// The background tasks of a started [`Application`]. Dropped, it tells them to stop without
/// waiting for them.
pub struct Running {
    stop: watch::Sender<bool>,
    handles: Vec<JoinHandle<()>>,
}

impl Running {
    /// Tells every task to stop and waits for them: each worker finishes its current job.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        for handle in std::mem::take(&mut self.handles) {
            let _ = handle.await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// The embedded backend's own work when the app starts.
#[async_trait::async_trait]
trait LocalUpkeep: Send + Sync {
    /// Releases the jobs a killed process left in hand (when `workers` will take them) and
    /// starts the upkeep tasks.
    async fn start(
        &self,
        app: &Application,
        workers: bool,
        stopped: &watch::Receiver<bool>,
    ) -> Result<Vec<JoinHandle<()>>, StoreError>;
}

struct SqliteUpkeep {
    queue: Arc<SqliteQueue>,
    table: Arc<SqliteTable>,
}

#[async_trait::async_trait]
impl LocalUpkeep for SqliteUpkeep {
    async fn start(
        &self,
        app: &Application,
        workers: bool,
        stopped: &watch::Receiver<bool>,
    ) -> Result<Vec<JoinHandle<()>>, StoreError> {
        if workers {
            let recovered = self.queue.release_in_flight().await?;
            if recovered.released > 0 {
                warn!(
                    recovered = recovered.released,
                    "jobs interrupted by the last shutdown will run again"
                );
            }
        }
        Ok(upkeep::start(
            &app.config,
            &app.services,
            &app.ports,
            self.table.clone(),
            stopped,
        ))
    }
}
