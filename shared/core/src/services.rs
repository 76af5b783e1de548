//! The use cases one process is built of, on the ports it is wired with.

use crate::accounts::Accounts;
use crate::books::Books;
use crate::community::Community;
use crate::developer::Developer;
use crate::email::Postman;
use crate::events::Events;
use crate::glossaries::Glossaries;
use crate::health::{Health, QueueMode};
use crate::jobs::digest::Digests;
use crate::jobs::JobHandler;
use crate::limits::RateLimiter;
use crate::ports::Ports;
use crate::privacy::Privacy;
use crate::translation::Translations;
use crate::usage::{Quotas, Usage};

/// Every use case, sharing one set of ports. Cheap to clone.
#[derive(Clone)]
pub struct Services {
    pub accounts: Accounts,
    pub books: Books,
    pub developer: Developer,
    pub glossaries: Glossaries,
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

impl Services {
    /// `window`: chapters of a book translated at the same time (see `Translations`);
    /// `file_budget`: what reading an upload and rendering a book may cost in memory.
    pub fn new(
        ports: Ports,
        mode: QueueMode,
        quotas: Quotas,
        window: usize,
        file_budget: booktr_formats::Budget,
    ) -> Self {
        let usage = Usage::new(ports.clone(), quotas);
        let events = Events::new(ports.clone());
        let accounts = Accounts::new(ports.clone());
        Services {
            privacy: Privacy::new(ports.clone(), accounts.clone(), usage.clone()),
            accounts,
            books: Books::new(ports.clone(), usage.clone()),
            developer: Developer::new(ports.clone()),
            glossaries: Glossaries::new(ports.clone()),
            community: Community::new(ports.clone()),
            jobs: JobHandler::new(ports.clone(), usage.clone()).with_file_budget(file_budget),
            translations: Translations::new(ports.clone(), usage.clone())
                .with_window(window)
                .with_file_budget(file_budget),
            usage,
            events: events.clone(),
            email: Postman::new(ports.clone()),
            digests: Digests::new(ports.clone(), events),
            limiter: RateLimiter::new(ports.clone()),
            health: Health::new(ports, mode),
        }
    }
}
