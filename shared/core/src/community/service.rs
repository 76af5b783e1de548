//! The community service and what it asks of the accounts domain; its use cases are in
//! `posts.rs`, `comments.rs` and `taxonomy.rs`.

use crate::fault::DataError;
use crate::ports::Ports;

/// Who wrote a post: the one thing the community needs of the accounts domain, answered by
/// the wiring with the accounts service.
#[async_trait::async_trait]
pub trait Authors: Send + Sync {
    /// The account, None once it is closed.
    async fn author(&self, user_id: &str) -> Result<Option<crate::accounts::User>, DataError>;
}

#[derive(Clone)]
pub struct Community {
    pub(super) ports: Ports,
    /// Replies tell the parent comment's author.
    pub(super) events: crate::events::Events,
    pub(super) authors: std::sync::Arc<dyn Authors>,
}

impl Community {
    pub fn new(
        ports: Ports,
        events: crate::events::Events,
        authors: std::sync::Arc<dyn Authors>,
    ) -> Self {
        Community {
            ports,
            events,
            authors,
        }
    }
}
