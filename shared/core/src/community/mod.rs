//! The community: blog posts with categories and tags, and comments (see `comments` for their
//! rules). The public pages and feeds that show them are `booktr-api`'s `web` module.
//!
//! Layout:
//! - a post: `POST#<id>` / `POST`, with `authorId`, `categoryId`, `tagIds` and counters
//!   (`viewCount`, `commentCount`, `reactionCount`) updated atomically; listed through `gsi1`
//!   in `POSTS#PUBLISHED` (published, by `publishedAt`) or `USER#<authorId>#DRAFTS` (drafts
//!   and archived posts, by `createdAt`);
//! - a category or tag: `CATEGORY#<id>` / `TAG#<id>`, listed in `gsi1` `CATEGORIES` / `TAGS`
//!   by slug;
//! - a slug: `SLUG#<POST|CATEGORY|TAG>#<slug>` / `SLUG` naming its owner's id, claimed with a
//!   conditional put, so two posts never share one.
//!
//! Who may do what: anyone reads published posts, categories and tags. A signed-in user writes
//! posts; a user with a verified email, on a paid plan, or with a staff role (ADMIN,
//! SUPER_ADMIN, DEV) publishes directly; a FREE account without a verified email keeps its
//! posts as DRAFTs (a request to publish is a 403 saying why). An author sees their own drafts (by id or slug, and at the head of the list);
//! nobody else does. ADMIN and SUPER_ADMIN create categories and tags.

mod comments;
mod posts;
mod record;
mod slug;
mod taxonomy;

use chrono::{DateTime, Utc};

use crate::fault::DataError;
use crate::ports::Ports;
use crate::ports::StoreError;

pub use comments::{Comment, NewComment, PendingComment};
pub use posts::{NewPost, Pagination, PostEdit, PostFilter, PostPage, MAX_PAGE_SIZE};
pub use slug::slugify;
pub use taxonomy::NewTerm;

/// The spec's BlogCategory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    pub id: String,
    pub slug: String,
    pub name: String,
    pub description: Option<String>,
    pub color: String,
}

/// The spec's BlogTag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    pub id: String,
    pub slug: String,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostStatus {
    Draft,
    Published,
    Archived,
}

impl PostStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PostStatus::Draft => "DRAFT",
            PostStatus::Published => "PUBLISHED",
            PostStatus::Archived => "ARCHIVED",
        }
    }

    pub fn parse(text: &str) -> Option<PostStatus> {
        match text {
            "DRAFT" => Some(PostStatus::Draft),
            "PUBLISHED" => Some(PostStatus::Published),
            "ARCHIVED" => Some(PostStatus::Archived),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    pub id: String,
    pub name: String,
    pub image: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub comments: i64,
    pub reactions: i64,
}

/// The spec's BlogPost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    pub id: String,
    pub slug: String,
    pub title: String,
    /// Markdown, as written (pages show it rendered and sanitised; the API returns it as is).
    pub content: String,
    pub excerpt: Option<String>,
    pub cover_image: Option<String>,
    pub status: PostStatus,
    pub featured: bool,
    pub view_count: i64,
    pub published_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub author: Author,
    pub category: Category,
    pub tags: Vec<Tag>,
    pub count: Counts,
}

#[derive(Debug, thiserror::Error)]
pub enum CommunityError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(CommunityError);

/// Who wrote a post: the one thing the community needs of the accounts domain, answered by
/// the wiring with the accounts service.
#[async_trait::async_trait]
pub trait Authors: Send + Sync {
    /// The account, None once it is closed.
    async fn author(&self, user_id: &str) -> Result<Option<crate::accounts::User>, DataError>;
}

#[derive(Clone)]
pub struct Community {
    ports: Ports,
    /// Replies tell the parent comment's author.
    events: crate::events::Events,
    authors: std::sync::Arc<dyn Authors>,
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
