//! The use cases one process is built of, on the ports it is wired with.

use std::sync::Arc;

use booktr_translate::profile::Settings;

use crate::accounts::Accounts;
use crate::accounts::User;
use crate::books::Books;
use crate::community::Community;
use crate::developer::Developer;
use crate::email::{Postman, Recovery};
use crate::events::Events;
use crate::fault::DataError;
use crate::glossaries::Glossaries;
use crate::health::{Health, QueueMode};
use crate::jobs::digest::{DigestParts, Digests};
use crate::jobs::{JobHandler, JobParts, RunObserver};
use crate::limits::RateLimiter;
use crate::memory::Memory;
use crate::ports::Ports;
use crate::privacy::{Domains, Privacy};
use crate::translation::Translations;
use crate::usage::{Quotas, Usage};

/// Every use case, sharing one set of ports. Cheap to clone.
#[derive(Clone)]
pub struct Services {
    pub accounts: Accounts,
    /// Password reset and email verification links.
    pub recovery: Recovery,
    pub books: Books,
    pub developer: Developer,
    pub glossaries: Glossaries,
    /// The users' translation memories.
    pub memory: Memory,
    pub community: Community,
    pub jobs: JobHandler,
    pub health: Health,
    pub translations: Translations,
    pub events: Events,
    /// The administrator's email settings, and every email sent.
    pub email: Postman,
    pub digests: Digests,
    pub limiter: RateLimiter,
    pub usage: Usage,
    pub privacy: Privacy,
}

/// Chapters of a book translated at the same time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// This many, and twice as many for plans with priority (`BOOKTR_CHAPTER_WINDOW`).
    ByPlan(usize),
    /// This many whatever the owner's plan (`booktr translate --parallel`).
    EveryPlan(usize),
}

impl Services {
    /// `window`: chapters of a book translated at the same time (see `Translations`);
    /// `file_budget`: what reading an upload and rendering a book may cost in memory; `site`:
    /// the service's public URL, for the links notifications and emails carry; `pipeline`: how
    /// the translation pipeline cuts a chapter into requests (quotes and jobs alike).
    pub fn new(
        ports: Ports,
        mode: QueueMode,
        quotas: Quotas,
        window: Window,
        file_budget: booktr_formats::Budget,
        pipeline: Settings,
        site: &str,
    ) -> Self {
        // The one place services are built: each gets the collaborators it works with, and
        // every service exists once per process (clones share its state, such as the key cache).
        let usage = Usage::new(ports.clone(), quotas);
        let limiter = RateLimiter::new(ports.clone());
        let accounts = Accounts::new(ports.clone(), limiter.clone());
        let email = Postman::new(ports.clone());
        let recovery = Recovery::new(accounts.clone(), email.clone(), site);
        let directory = Arc::new(Directory(accounts.clone()));
        let events = Events::new(ports.clone(), email.clone(), directory.clone(), site);
        let developer = Developer::new(ports.clone());
        let glossaries = Glossaries::new(ports.clone());
        let memory = Memory::new(ports.clone());
        let community = Community::new(ports.clone(), events.clone(), directory.clone());
        let books = Books::new(ports.clone(), usage.clone());
        let translations = Translations::new(
            ports.clone(),
            books.clone(),
            glossaries.clone(),
            memory.clone(),
            usage.clone(),
            directory,
            developer.clone(),
        )
        .with_file_budget(file_budget)
        .with_pipeline(pipeline);
        let translations = match window {
            Window::ByPlan(window) => translations.with_window(window),
            Window::EveryPlan(window) => translations.with_window_for_every_plan(window),
        };
        let privacy = Privacy::new(
            ports.clone(),
            Domains {
                accounts: accounts.clone(),
                books: books.clone(),
                glossaries: glossaries.clone(),
                memory: memory.clone(),
                events: events.clone(),
                community: community.clone(),
                developer: developer.clone(),
                usage: usage.clone(),
            },
        );
        let digests = Digests::new(
            ports.clone(),
            DigestParts {
                events: events.clone(),
                postman: email.clone(),
                accounts: accounts.clone(),
                books: books.clone(),
            },
        );
        let jobs = JobHandler::new(
            ports.clone(),
            JobParts {
                books: books.clone(),
                translations: translations.clone(),
                privacy: privacy.clone(),
                events: events.clone(),
                developer: developer.clone(),
                digests: digests.clone(),
                pipeline,
            },
        );
        Services {
            accounts,
            recovery,
            books,
            developer,
            glossaries,
            memory,
            community,
            jobs,
            health: Health::new(ports, mode),
            translations,
            events,
            email,
            digests,
            limiter,
            usage,
            privacy,
        }
    }

    /// With `observer` told of every run's steps by the job handler (`booktr translate`'s
    /// progress).
    pub fn observed_by(mut self, observer: Arc<dyn RunObserver>) -> Self {
        self.jobs = self.jobs.observed_by(observer);
        self
    }
}

/// The accounts service answering the narrow questions other domains own about a user
/// (`translation::Owners`, `events::Recipients`, `community::Authors`): they depend on their
/// own question, and only this wiring knows that accounts answer it.
struct Directory(Accounts);

#[async_trait::async_trait]
impl crate::translation::Owners for Directory {
    async fn owner(&self, user_id: &str) -> Result<Option<User>, DataError> {
        self.0.find(user_id).await
    }
}

#[async_trait::async_trait]
impl crate::events::Recipients for Directory {
    async fn email_of(&self, user_id: &str) -> Result<Option<String>, DataError> {
        Ok(self
            .0
            .find(user_id)
            .await?
            .map(|user| user.email.to_string()))
    }
}

#[async_trait::async_trait]
impl crate::community::Authors for Directory {
    async fn author(&self, user_id: &str) -> Result<Option<User>, DataError> {
        self.0.find(user_id).await
    }
}
