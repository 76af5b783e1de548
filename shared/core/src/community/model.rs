//! What the community speaks: posts with their authors, categories, tags and counts.

use chrono::{DateTime, Utc};

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
