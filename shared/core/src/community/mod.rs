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
mod error;
mod model;
mod posts;
mod record;
mod service;
mod slug;
mod taxonomy;

pub use comments::{Comment, NewComment, PendingComment};
pub use error::CommunityError;
pub use model::{Author, Category, Counts, Post, PostStatus, Tag};
pub use posts::{NewPost, Pagination, PostEdit, PostFilter, PostPage, MAX_PAGE_SIZE};
pub use service::{Authors, Community};
pub use slug::slugify;
pub use taxonomy::NewTerm;
