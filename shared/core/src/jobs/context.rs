//! What every job works with: the handler's collaborators, each shared with the rest of the
//! process, and the observer of a watched run. The jobs take the handler from here; the
//! dispatch over them (`handler`) stands on top.

use std::sync::Arc;

use super::observer::RunObserver;
use crate::books::Books;
use crate::developer::Developer;
use crate::events::Events;
use crate::jobs::digest::Digests;
use crate::ports::Ports;
use crate::privacy::Privacy;
use crate::translation::Translations;
use booktr_translate::profile::Settings;

#[derive(Clone)]
pub struct JobHandler {
    pub(crate) ports: Ports,
    pub(crate) books: Books,
    pub(crate) translations: Translations,
    pub(crate) events: Events,
    /// The book owner's own provider keys.
    pub(crate) developer: Developer,
    /// Chunking, parallelism and retries of the translation pipeline, for each model.
    pub(crate) pipeline: Settings,
    /// For purges and the open-account check.
    pub(super) privacy: Privacy,
    pub(super) digests: Digests,
    /// Told of each run's steps as they happen, when a process watches (`booktr translate`).
    observer: Option<Arc<dyn RunObserver>>,
}

/// What the job handler works with, each shared with the rest of the process.
pub struct JobParts {
    pub books: Books,
    pub translations: Translations,
    pub privacy: Privacy,
    pub events: Events,
    pub developer: Developer,
    pub digests: Digests,
    pub pipeline: Settings,
}

impl JobHandler {
    pub fn new(ports: Ports, parts: JobParts) -> Self {
        let JobParts {
            books,
            translations,
            privacy,
            events,
            developer,
            digests,
            pipeline,
        } = parts;
        JobHandler {
            books,
            translations,
            privacy,
            events,
            developer,
            digests,
            pipeline,
            observer: None,
            ports,
        }
    }

    /// With `observer` told of every run's steps (the term list, each chapter's passes).
    pub fn observed_by(mut self, observer: Arc<dyn RunObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Tells the observer, if any.
    pub(super) fn observe(&self, tell: impl FnOnce(&dyn RunObserver)) {
        if let Some(observer) = &self.observer {
            tell(observer.as_ref());
        }
    }

    /// Whether an observer watches (so that what only it needs is made only then).
    pub(super) fn is_observed(&self) -> bool {
        self.observer.is_some()
    }
}
