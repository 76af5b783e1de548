//! The community: posts with their categories, tags and comments, and what writers send.

use booktr_core::community as domain;
use chrono::{DateTime, Utc};

use super::{wire, wire_enum, Mirror};

wire! {
    /// The spec's BlogCategory.
    pub struct Category from domain::Category {
        pub id: String,
        pub slug: String,
        pub name: String,
        pub description: Option<String>,
        pub color: String,
    }
}

wire! {
    /// The spec's BlogTag.
    pub struct Tag from domain::Tag {
        pub id: String,
        pub slug: String,
        pub name: String,
    }
}

wire_enum! {
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum PostStatus from domain::PostStatus { Draft, Published, Archived }
}

wire! {
    pub struct Author from domain::Author {
        pub id: String,
        pub name: String,
        pub image: Option<String>,
    }
}

wire! {
    pub struct Counts from domain::Counts {
        pub comments: i64,
        pub reactions: i64,
    }
}

wire! {
    /// The spec's BlogPost.
    #[serde(rename_all = "camelCase")]
    pub struct Post from domain::Post {
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
        #[serde(rename = "_count")]
        pub count: Counts,
    }
}

wire! {
    pub struct PostPage from domain::PostPage {
        pub posts: Vec<Post>,
        pub pagination: Pagination,
    }
}

wire! {
    #[serde(rename_all = "camelCase")]
    pub struct Pagination from domain::Pagination {
        pub page: u32,
        pub limit: u32,
        pub total: u64,
        pub total_pages: u64,
    }
}

wire! {
    /// `POST /api/community/posts`.
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct NewPost into domain::NewPost {
        pub title: String,
        pub content: String,
        pub excerpt: Option<String>,
        pub cover_image: Option<String>,
        pub category_id: Option<String>,
        pub category_slug: Option<String>,
        pub tag_ids: Option<Vec<String>>,
        pub tag_slugs: Option<Vec<String>>,
        pub status: Option<String>,
    }
}

wire! {
    /// The spec's BlogComment.
    #[serde(rename_all = "camelCase")]
    pub struct Comment from domain::Comment {
        pub id: String,
        pub content: String,
        pub mood: Option<String>,
        pub status: String,
        pub created_at: DateTime<Utc>,
        pub author: Option<Author>,
        #[schema(no_recursion)]
        pub replies: Vec<Comment>,
    }
}

wire! {
    /// `POST /api/community/comments`.
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct NewComment into domain::NewComment {
        pub content: String,
        pub post_id: Option<String>,
        pub post_slug: Option<String>,
        pub parent_id: Option<String>,
        pub mood: Option<String>,
    }
}

wire! {
    /// A category or tag as an admin asks for it (`description` and `color` are for categories).
    #[serde(deny_unknown_fields)]
    pub struct NewTerm into domain::NewTerm {
        pub name: String,
        pub slug: Option<String>,
        pub description: Option<String>,
        pub color: Option<String>,
    }
}

/// A comment waiting for moderation, as the admin's queue shows it (its schema is left open).
pub fn pending(comment: domain::PendingComment) -> serde_json::Value {
    serde_json::json!({
        "id": comment.id,
        "postId": comment.post_id,
        "parentId": comment.parent_id,
        "content": comment.content,
        "mood": comment.mood,
        "status": comment.status,
        "createdAt": comment.created_at,
        "author": Author::mirror(comment.author),
    })
}
