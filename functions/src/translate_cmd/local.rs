//! The server on this machine for one `booktr translate`: the embedded adapters (SQLite table
//! and queue, local files) in a data directory of its own, the services `booktr serve` runs,
//! and the job workers, for one user who owns the one book. The book goes through the server's
//! jobs (extract, terms, chapters, generate); this module uploads it, starts its run and waits
//! for the run to end.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use async_trait::async_trait;
use booktr_core::accounts::{NewUser, User};
use booktr_core::books::{Book, Upload};
use booktr_core::config::{pipeline_config, Config};
use booktr_core::jobs::runner::RunnerConfig;
use booktr_core::jobs::RunObserver;
use booktr_core::ports::{KeyCheckError, Models};
use booktr_core::translation::StartRequest;
use booktr_core::types::{BookStatus, ChapterStatus, Email, LanguageCode, Plan, Role};
use booktr_core::usage::{Quota, Quotas};
use booktr_core::Services;
use booktr_translate::model::{ChatError, ChatModel};
use booktr_translate::providers::Family;
use booktr_translate::recorded::{AnswerLog, Recording};

use crate::app::{Application, Running, Tasks};

/// How often the book's record is read while a job works on it.
const POLL: Duration = Duration::from_millis(10);

/// The services and their workers, in a data directory removed when this is dropped.
pub struct LocalServer {
    pub services: Services,
    /// The one user, who owns the book.
    pub user: User,
    running: Running,
    _data: DataDir,
}

impl LocalServer {
    /// Opens a fresh data directory, assembles the services on it with `window` chapters of
    /// the book in flight, `models` for the model port and `observer` told of the run's steps,
    /// and starts its job workers (`Application::start`).
    pub async fn start(
        window: usize,
        models: Arc<dyn Models>,
        observer: Arc<dyn RunObserver>,
    ) -> anyhow::Result<LocalServer> {
        let data = DataDir::create()?;
        let app = assemble(data.path(), window, models, observer)?;
        let user = app
            .services
            .accounts
            .create_user(NewUser {
                email: Email::parse("translate@booktr.localhost").map_err(|e| anyhow!("{e}"))?,
                name: None,
                password: None,
                role: Role::User,
                // Every model is in the plan; the window is the same for every plan here.
                plan: Plan::Business,
            })
            .await?;
        let running = app
            .start(Tasks {
                job_workers: 1,
                runner: RunnerConfig {
                    // Nothing else waits for this process: a job queued is taken at once.
                    idle_wait: POLL,
                    ..RunnerConfig::default()
                },
            })
            .await
            .context("starting the run's job workers")?;
        Ok(LocalServer {
            services: app.services,
            user,
            running,
            _data: data,
        })
    }

    /// Uploads the book (its extraction is queued) and waits until it is read: the book
    /// EXTRACTED, or an error saying why the file could not be read.
    pub async fn upload(
        &self,
        file_name: &str,
        bytes: Vec<u8>,
        target: &LanguageCode,
    ) -> anyhow::Result<Book> {
        let book = self
            .services
            .books
            .upload(
                &self.user,
                Upload {
                    file_name: file_name.to_string(),
                    title: None,
                    target_lang: Some(target.to_string()),
                    bytes: bytes.into(),
                },
            )
            .await
            .map_err(|e| anyhow!("{e}"))?;
        let book = self
            .wait(&book.id, |book| {
                !matches!(book.status, BookStatus::Uploaded | BookStatus::Extracting)
            })
            .await?;
        match book.status {
            BookStatus::Extracted => Ok(book),
            _ => Err(anyhow!(
                "{}",
                book.error
                    .as_deref()
                    .unwrap_or("the file could not be read")
            )),
        }
    }

    /// Starts the book's run on `request`, of the chapters numbered in `only` (all when None),
    /// and waits until it ends: every chapter asked for translated (and, for the whole book,
    /// its EPUB made), the run paused at its cost cap, or failed. The workers are stopped
    /// then, once the jobs in hand are done, so nothing changes the book any more.
    pub async fn translate(
        self,
        request: StartRequest,
        only: Option<&[u32]>,
    ) -> anyhow::Result<Finished> {
        let book_id = request.book_id.clone();
        self.services
            .translations
            .start_chapters(&self.user, request, only)
            .await
            .map_err(|e| anyhow!("{e}"))?;
        let book = match only {
            None => {
                self.wait(&book_id, |book| {
                    matches!(
                        book.status,
                        BookStatus::Completed | BookStatus::Paused | BookStatus::Error
                    )
                })
                .await?
            }
            Some(numbers) => self.wait_for_chapters(&book_id, numbers).await?,
        };
        let LocalServer {
            services,
            user,
            running,
            _data,
        } = self;
        running.stop().await;
        let book = services
            .books
            .get(&user.id, &book.id)
            .await
            .map_err(|e| anyhow!("{e}"))?;
        Ok(Finished {
            services,
            book,
            _data,
        })
    }

    /// Waits until the chapters numbered in `numbers` are translated, or the run stops.
    async fn wait_for_chapters(&self, book_id: &str, numbers: &[u32]) -> anyhow::Result<Book> {
        loop {
            let book = self.book(book_id).await?;
            if matches!(book.status, BookStatus::Paused | BookStatus::Error) {
                return Ok(book);
            }
            let chapters = self.services.books.chapters(book_id).await?;
            let done = chapters
                .iter()
                .filter(|c| numbers.contains(&c.number))
                .all(|c| c.status == ChapterStatus::Completed);
            if done {
                return Ok(book);
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn wait(&self, book_id: &str, done: impl Fn(&Book) -> bool) -> anyhow::Result<Book> {
        loop {
            let book = self.book(book_id).await?;
            if done(&book) {
                return Ok(book);
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn book(&self, book_id: &str) -> anyhow::Result<Book> {
        self.services
            .books
            .get(&self.user.id, book_id)
            .await
            .map_err(|e| anyhow!("{e}"))
    }
}

/// A run that has ended, with what it stored.
pub struct Finished {
    pub services: Services,
    pub book: Book,
    _data: DataDir,
}

/// The app as `booktr serve` builds it on `data_dir`, with the chapters of a book in
/// flight set to `window` whatever the plan, and the job handler watched by `observer`.
fn assemble(
    data_dir: &Path,
    window: usize,
    models: Arc<dyn Models>,
    observer: Arc<dyn RunObserver>,
) -> anyhow::Result<Application> {
    let mut config = Config::from_lookup(|_| None)?;
    // The server's setting for the pipeline, read the same way (`BOOKTR_CHUNK_TOKENS`); the
    // others are this run's own (no mail, no quota, its own data directory).
    config.pipeline = pipeline_config(&|name, default| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_string())
    })?;
    config.data_dir = data_dir.to_path_buf();
    config.chapter_window = window;
    // The book is the user's own, on their own machine: no monthly quota applies.
    config.quotas = Quotas {
        free: Quota::UNLIMITED,
        pro: Quota::UNLIMITED,
        business: Quota::UNLIMITED,
    };
    Application::builder(config)
        .models(models)
        .window_for_every_plan(window)
        .observed_by(observer)
        .embedded()
        .context("opening the run's data directory")
}

/// The model port with every exchange appended to a file (`--record-answers`).
pub struct RecordingModels {
    inner: Arc<dyn Models>,
    log: AnswerLog,
}

impl RecordingModels {
    pub fn new(inner: Arc<dyn Models>, log: AnswerLog) -> Self {
        RecordingModels { inner, log }
    }
}

#[async_trait]
impl Models for RecordingModels {
    fn model(
        &self,
        model: &str,
        user_key: Option<String>,
    ) -> Result<Arc<dyn ChatModel>, ChatError> {
        let inner = self.inner.model(model, user_key)?;
        Ok(Arc::new(Recording::new(inner, self.log.clone())))
    }

    async fn check_key(&self, family: Family, key: &str) -> Result<(), KeyCheckError> {
        self.inner.check_key(family, key).await
    }
}

/// A directory of its own under the system's temporary directory, removed when dropped.
struct DataDir(PathBuf);

impl DataDir {
    fn create() -> anyhow::Result<DataDir> {
        let path =
            std::env::temp_dir().join(format!("booktr-translate-{}", booktr_core::ids::new_id()));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(DataDir(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            eprintln!("warning: removing {}: {e}", self.0.display());
        }
    }
}
