//! The community's items and their keys: the one module that spells their attribute names
//! and key prefixes (post, comment, the moderation queue, an author's pointers and drafts, slug
//! claims, categories and tags; their layout is described in `super`).

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::fault::Fault;
use crate::items::{corrupt, opt_string, parse_time, required_str, required_time, time};
use crate::ports::{Condition, Item, Update};

/// A post (`POST#<id>` / `POST`): `id`, `slug`, `title`, `content`, `excerpt`, `coverImage`,
/// `status`, `featured`, the counters `viewCount`, `commentCount`, `reactionCount`,
/// `publishedAt`, `createdAt`, `authorId`, `categoryId`, `tagIds`, and `gsi1pk` / `gsi1sk`.
pub(super) mod post {
    use super::*;
    use crate::community::model::PostStatus;

    /// The post's partition.
    pub fn pk(id: &str) -> String {
        format!("POST#{id}")
    }

    pub const SK: &str = "POST";

    /// Where `gsi1` lists the published posts, newest first.
    pub const PUBLISHED: &str = "POSTS#PUBLISHED";

    /// Where `gsi1` lists an author's drafts.
    pub fn drafts_of(user_id: &str) -> String {
        format!("USER#{user_id}#DRAFTS")
    }

    /// A post as its item holds it: its author, category and tags by id.
    pub struct PostRecord {
        pub id: String,
        pub slug: String,
        pub title: String,
        pub content: String,
        pub excerpt: Option<String>,
        pub cover_image: Option<String>,
        pub status: PostStatus,
        pub featured: bool,
        pub view_count: i64,
        pub comment_count: i64,
        pub reaction_count: i64,
        pub published_at: Option<DateTime<Utc>>,
        pub created_at: DateTime<Utc>,
        pub author_id: String,
        pub category_id: String,
        pub tag_ids: Vec<String>,
    }

    pub fn from_item(item: &Item) -> Result<PostRecord, Fault> {
        Ok(PostRecord {
            author_id: required_author_id(item)?.to_string(),
            category_id: required_str(item, "categoryId")?.to_string(),
            status: PostStatus::parse(required_str(item, "status")?)
                .ok_or_else(|| corrupt(item, "status"))?,
            id: required_str(item, "id")?.to_string(),
            slug: required_str(item, "slug")?.to_string(),
            title: required_str(item, "title")?.to_string(),
            content: required_str(item, "content")?.to_string(),
            excerpt: opt_string(item, "excerpt"),
            cover_image: opt_string(item, "coverImage"),
            featured: item.bool("featured").unwrap_or(false),
            view_count: item.i64("viewCount").unwrap_or(0),
            comment_count: item.i64("commentCount").unwrap_or(0),
            reaction_count: item.i64("reactionCount").unwrap_or(0),
            published_at: parse_time(item, "publishedAt")?,
            created_at: required_time(item, "createdAt")?,
            tag_ids: tag_ids(item),
        })
    }

    /// What a new post's item is made of.
    pub struct NewPostItem<'a> {
        pub id: &'a str,
        pub slug: &'a str,
        pub title: &'a str,
        pub content: &'a str,
        pub excerpt: &'a str,
        pub cover_image: Option<String>,
        pub status: PostStatus,
        pub published_at: Option<DateTime<Utc>>,
        pub created_at: DateTime<Utc>,
        pub author_id: &'a str,
        pub category_id: &'a str,
        pub tag_ids: Vec<String>,
        /// Where `gsi1` lists it.
        pub gsi1: (String, String),
    }

    pub fn item(pk: String, sk: &str, new: &NewPostItem<'_>) -> Item {
        Item::new(pk, sk)
            .with("id", new.id)
            .with("slug", new.slug)
            .with("title", new.title)
            .with("content", new.content)
            .with("excerpt", new.excerpt)
            .with("coverImage", new.cover_image.clone())
            .with("status", new.status.as_str())
            .with("featured", false)
            .with("viewCount", 0)
            .with("commentCount", 0)
            .with("reactionCount", 0)
            .with(
                "publishedAt",
                new.published_at.map(time).unwrap_or(Value::Null),
            )
            .with("createdAt", time(new.created_at))
            .with("authorId", new.author_id)
            .with("categoryId", new.category_id)
            .with("tagIds", Value::from(new.tag_ids.clone()))
            .with("gsi1pk", new.gsi1.0.clone())
            .with("gsi1sk", new.gsi1.1.clone())
    }

    pub fn id(item: &Item) -> Option<&str> {
        item.str("id")
    }

    pub fn slug(item: &Item) -> Option<&str> {
        item.str("slug")
    }

    pub fn author_id(item: &Item) -> Option<&str> {
        item.str("authorId")
    }

    pub fn required_author_id(item: &Item) -> Result<&str, Fault> {
        required_str(item, "authorId")
    }

    pub fn category_id(item: &Item) -> Option<&str> {
        item.str("categoryId")
    }

    /// The post names a category that does not exist.
    pub fn unknown_category(item: &Item) -> Fault {
        corrupt(item, "categoryId")
    }

    pub fn is_featured(item: &Item) -> Option<bool> {
        item.bool("featured")
    }

    pub fn status_is(item: &Item, status: PostStatus) -> bool {
        item.str("status") == Some(status.as_str())
    }

    /// The post's tags by id (ids that are not strings are left out).
    pub fn tag_ids(item: &Item) -> Vec<String> {
        item.attrs
            .get("tagIds")
            .and_then(Value::as_array)
            .map(|ids| {
                ids.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// (slug, publishedAt) of a published post's index entry.
    pub fn listed(item: &Item) -> Result<(String, Option<DateTime<Utc>>), Fault> {
        Ok((
            required_str(item, "slug")?.to_string(),
            parse_time(item, "publishedAt")?,
        ))
    }

    pub fn edited(title: &str, content: &str, excerpt: &str) -> Update {
        Update::default()
            .set("title", title)
            .set("content", content)
            .set("excerpt", excerpt)
    }

    /// A draft published now, listed in `gsi1` under `listed`.
    pub fn published(update: Update, now: DateTime<Utc>, listed: (&str, String)) -> Update {
        update
            .set("status", PostStatus::Published.as_str())
            .set("publishedAt", time(now))
            .set("gsi1pk", listed.0)
            .set("gsi1sk", listed.1)
    }

    pub fn viewed() -> Update {
        Update::default().add("viewCount", 1)
    }

    pub fn featured(featured: bool) -> Update {
        Update::default().set("featured", featured)
    }

    /// The post is the author's.
    pub fn by(author_id: &str) -> Condition {
        Condition::equals("authorId", author_id)
    }

    /// The post's count of approved comments moves by `delta`.
    pub fn comments_counted(delta: i64) -> Update {
        Update::default().add("commentCount", delta)
    }
}

/// A comment (`COMMENT#<id>` / `COMMENT`): `id`, `postId`, `parentId`, `authorId`, `content`,
/// `mood`, `status`, `createdAt`, and `gsi1pk` / `gsi1sk` (`POST#<postId>#COMMENTS` / its
/// order). Its author's pointer (`USER#<authorId>` / `COMMENT#<id>`): `postId`. A pending
/// comment's moderation-queue entry (`COMMENTS#PENDING` / its order): `id`. A comment is read
/// through the accessors below, each as forgiving as the caller needs.
pub(super) mod comment {
    use super::*;

    /// The comment's partition.
    pub fn pk(id: &str) -> String {
        format!("COMMENT#{id}")
    }

    pub const SK: &str = "COMMENT";

    /// The moderation queue's partition.
    pub const PENDING: &str = "COMMENTS#PENDING";

    /// Where `gsi1` lists a post's comments.
    pub fn of_post(post_id: &str) -> String {
        format!("POST#{post_id}#COMMENTS")
    }

    /// The sort-key prefix of the pointers to an author's comments, in their partition.
    pub const POINTER_PREFIX: &str = "COMMENT#";

    /// The pointer to comment `id` in its author's partition.
    pub fn pointer_sk(id: &str) -> String {
        format!("{POINTER_PREFIX}{id}")
    }

    pub struct NewCommentItem<'a> {
        pub id: &'a str,
        pub post_id: &'a str,
        pub parent_id: Option<&'a str>,
        pub author_id: &'a str,
        pub content: &'a str,
        pub mood: Option<&'a str>,
        pub status: &'a str,
        pub created_at: DateTime<Utc>,
        /// Where `gsi1` lists it: the post's comments, in order.
        pub listed: (String, String),
    }

    pub fn item(pk: String, sk: &str, new: &NewCommentItem<'_>) -> Item {
        Item::new(pk, sk)
            .with("id", new.id)
            .with("postId", new.post_id)
            .with("parentId", new.parent_id)
            .with("authorId", new.author_id)
            .with("content", new.content)
            .with("mood", new.mood)
            .with("status", new.status)
            .with("createdAt", time(new.created_at))
            .with("gsi1pk", new.listed.0.clone())
            .with("gsi1sk", new.listed.1.clone())
    }

    /// The pointer in the author's partition (how a closed account finds its comments).
    pub fn pointer(pk: String, sk: String, post_id: &str) -> Item {
        Item::new(pk, sk).with("postId", post_id)
    }

    /// The comment's entry in the moderation queue.
    pub fn pending_entry(pk: &str, order: &str, id: &str) -> Item {
        Item::new(pk, order).with("id", id)
    }

    pub fn pending_id(entry: &Item) -> Option<&str> {
        entry.str("id")
    }

    pub fn id(item: &Item) -> Option<&str> {
        item.str("id")
    }

    pub fn required_id(item: &Item) -> Result<&str, Fault> {
        required_str(item, "id")
    }

    pub fn post_id(item: &Item) -> Option<&str> {
        item.str("postId")
    }

    pub fn required_post_id(item: &Item) -> Result<&str, Fault> {
        required_str(item, "postId")
    }

    pub fn parent_id(item: &Item) -> Option<&str> {
        item.str("parentId")
    }

    pub fn author_id(item: &Item) -> Option<&str> {
        item.str("authorId")
    }

    pub fn content(item: &Item) -> Option<&str> {
        item.str("content")
    }

    pub fn required_content(item: &Item) -> Result<&str, Fault> {
        required_str(item, "content")
    }

    pub fn mood(item: &Item) -> Option<&str> {
        item.str("mood")
    }

    pub fn status(item: &Item) -> Option<&str> {
        item.str("status")
    }

    pub fn required_status(item: &Item) -> Result<&str, Fault> {
        required_str(item, "status")
    }

    pub fn created_at(item: &Item) -> Result<DateTime<Utc>, Fault> {
        required_time(item, "createdAt")
    }

    /// `createdAt` as stored (for the moderation queue, which shows it as it is).
    pub fn created_at_text(item: &Item) -> Option<&str> {
        item.str("createdAt")
    }

    /// Its place among the post's comments (and in the moderation queue).
    pub fn order(item: &Item) -> &str {
        item.str("gsi1sk").unwrap_or_default()
    }

    pub fn moderated(status: &str) -> Update {
        Update::default().set("status", status)
    }

    /// The comment's status is still `before`.
    pub fn status_still(before: &str) -> Condition {
        Condition::equals("status", before)
    }

    /// What is left of a closed account's comment: its place, no author and no text.
    pub fn tombstone() -> Update {
        Update::default()
            .set("status", "DELETED")
            .set("content", "")
            .set("mood", Value::Null)
            .remove("authorId")
    }
}

/// A slug's claim (`SLUG#<kind>#<slug>` / `SLUG`): `id`, its owner's.
/// The claim of `slug` among the slugs of a `kind` (`POST`, `CATEGORY`).
pub(super) fn slug_claim_pk(kind: &str, slug: &str) -> String {
    format!("SLUG#{kind}#{slug}")
}

pub(super) const SLUG_CLAIM_SK: &str = "SLUG";

pub(super) fn slug_claim(pk: String, sk: &str, owner_id: &str) -> Item {
    Item::new(pk, sk).with("id", owner_id)
}

pub(super) fn slug_claimed_by(owner_id: &str) -> Condition {
    Condition::equals("id", owner_id)
}

pub(super) fn slug_owner(item: &Item) -> Option<String> {
    item.str("id").map(str::to_string)
}

/// A category or a tag (`CATEGORY#<id>` / `CATEGORY`, `TAG#<id>` / `TAG`): `id`, `slug`,
/// `name`, a category's `description` and `color`, and `gsi1pk` / `gsi1sk` (its list, by slug).
pub(super) mod term {
    use super::*;
    use crate::community::model::{Category, Tag};

    fn term_item(pk: String, sk: &str, list: &str, id: &str, slug: &str) -> Item {
        Item::new(pk, sk)
            .with("id", id)
            .with("slug", slug)
            .with("gsi1pk", list)
            .with("gsi1sk", slug)
    }

    pub fn category_item(pk: String, sk: &str, list: &str, category: &Category) -> Item {
        term_item(pk, sk, list, &category.id, &category.slug)
            .with("name", category.name.as_str())
            .with("description", category.description.clone())
            .with("color", category.color.as_str())
    }

    pub fn tag_item(pk: String, sk: &str, list: &str, tag: &Tag) -> Item {
        term_item(pk, sk, list, &tag.id, &tag.slug).with("name", tag.name.as_str())
    }

    pub fn category_from(item: &Item) -> Result<Category, Fault> {
        Ok(Category {
            id: required_str(item, "id")?.to_string(),
            slug: required_str(item, "slug")?.to_string(),
            name: required_str(item, "name")?.to_string(),
            description: opt_string(item, "description"),
            color: required_str(item, "color")?.to_string(),
        })
    }

    pub fn tag_from(item: &Item) -> Result<Tag, Fault> {
        Ok(Tag {
            id: required_str(item, "id")?.to_string(),
            slug: required_str(item, "slug")?.to_string(),
            name: required_str(item, "name")?.to_string(),
        })
    }
}
