//! Posts: written by signed-in users, read by anyone once published.

use std::collections::HashMap;

use tracing::info;

use super::error::CommunityError;
use super::model::{Author, Category, Counts, Post, PostStatus, Tag};
use super::record::post::{self, drafts_of, pk, NewPostItem, PUBLISHED, SK};
use super::service::Community;
use super::slug::{self, slugify};
use super::taxonomy::require_admin;
use crate::accounts::User;
use crate::fault::DataError;
use crate::ids::new_id;
use crate::items::time_text;
use crate::ports::{Condition, Index, Item, Query, StoreError};
use crate::types::Role;

const MAX_TITLE: usize = 200;
/// About 15,000 words: a long essay, and a bound on what one request stores and renders.
const MAX_CONTENT: usize = 100_000;
const MAX_EXCERPT: usize = 500;
/// A derived excerpt: the content's first words, up to this many characters.
const DERIVED_EXCERPT: usize = 200;
const MAX_TAGS: usize = 10;
const MAX_URL: usize = 2_000;
pub const MAX_PAGE_SIZE: u32 = 50;
/// The newest published posts a listing filters and pages over: a bound on what one public
/// request reads (paging through the index per filter would lift it).
const LISTED: usize = 2_000;

/// A post as its author writes it: a category and tags by id or slug, and the status asked for.
#[derive(Debug, Clone, Default)]
pub struct NewPost {
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

/// What an edit of a post changes.
#[derive(Debug, Clone)]
pub struct PostEdit {
    pub title: String,
    pub content: String,
    pub excerpt: Option<String>,
    /// Publish a draft.
    pub publish: bool,
}

/// `GET /api/community/posts` query.
#[derive(Debug, Clone, Default)]
pub struct PostFilter {
    pub page: u32,
    pub limit: u32,
    pub category: Option<String>,
    pub tag: Option<String>,
    pub featured: Option<bool>,
}

#[derive(Debug, Clone)]
pub struct PostPage {
    pub posts: Vec<Post>,
    pub pagination: Pagination,
}

#[derive(Debug, Clone, Copy)]
pub struct Pagination {
    pub page: u32,
    pub limit: u32,
    pub total: u64,
    pub total_pages: u64,
}

/// Whether `user` publishes directly: a verified email, a paid plan (an accountable account,
/// which spam rarely comes from) or a staff role.
pub(super) fn may_publish(user: &User) -> bool {
    user.email_verified
        || user.plan != crate::types::Plan::Free
        || matches!(user.role, Role::Admin | Role::SuperAdmin | Role::Dev)
}

fn may_see_drafts_of(viewer: Option<&User>, author_id: &str) -> bool {
    viewer.is_some_and(|v| v.id == author_id || require_admin(v.role).is_ok())
}

impl Community {
    pub async fn create_post(&self, author: &User, new: NewPost) -> Result<Post, CommunityError> {
        let title = new.title.trim().to_string();
        if title.is_empty() || title.chars().count() > MAX_TITLE {
            return Err(invalid(format!("title: 1 to {MAX_TITLE} characters")));
        }
        if new.content.trim().is_empty() || new.content.chars().count() > MAX_CONTENT {
            return Err(invalid(format!("content: 1 to {MAX_CONTENT} characters")));
        }
        let status = match new.status.as_deref() {
            None => PostStatus::Draft,
            Some(s) => match PostStatus::parse(s) {
                Some(PostStatus::Archived) | None => {
                    return Err(invalid(format!("status: '{s}' is not DRAFT or PUBLISHED")))
                }
                Some(status) => status,
            },
        };
        if status == PostStatus::Published && !may_publish(author) {
            return Err(CommunityError::Forbidden(
                "a FREE account publishes once its email address is verified; until then, save the post as a DRAFT"
                    .into(),
            ));
        }
        let excerpt = match new.excerpt.map(|e| e.trim().to_string()) {
            Some(e) if e.chars().count() > MAX_EXCERPT => {
                return Err(invalid(format!(
                    "excerpt: at most {MAX_EXCERPT} characters"
                )))
            }
            Some(e) if !e.is_empty() => e,
            _ => derive_excerpt(&new.content),
        };
        let cover_image = new.cover_image.map(valid_cover).transpose()?;
        let category = self
            .chosen_category(new.category_id, new.category_slug)
            .await?;
        let tags = self.chosen_tags(new.tag_ids, new.tag_slugs).await?;

        let id = new_id();
        let slug = slug::claim(&self.ports, "POST", &slugify(&title, "post"), &id).await?;
        let now = self.ports.clock.now();
        let published_at = (status == PostStatus::Published).then_some(now);
        let (gsi1pk, gsi1sk) = match published_at {
            Some(at) => (PUBLISHED.to_string(), format!("{}#{id}", time_text(at))),
            None => (drafts_of(&author.id), format!("{}#{id}", time_text(now))),
        };
        let item = post::item(
            pk(&id),
            SK,
            &NewPostItem {
                id: &id,
                slug: &slug,
                title: &title,
                content: &new.content,
                excerpt: &excerpt,
                cover_image: cover_image.clone(),
                status,
                published_at,
                created_at: now,
                author_id: &author.id,
                category_id: &category.id,
                tag_ids: tags.iter().map(|t| t.id.clone()).collect(),
                gsi1: (gsi1pk, gsi1sk),
            },
        );
        if let Err(e) = self.ports.table.put(item, Condition::NotExists).await {
            // Give the slug back rather than keep it claimed by a post that does not exist.
            let claim = slug::claim_pk("POST", &slug);
            if let Err(release) = self
                .ports
                .table
                .delete(&claim, slug::CLAIM_SK, slug::claimed_by(&id))
                .await
            {
                tracing::warn!(error = %release, slug, "a slug stays claimed by a post not stored");
            }
            return Err(e.into());
        }
        info!(post_id = %id, slug, status = status.as_str(), "post created");
        Ok(Post {
            id,
            slug,
            title,
            content: new.content,
            excerpt: Some(excerpt),
            cover_image,
            status,
            featured: false,
            view_count: 0,
            published_at,
            created_at: now,
            author: author_of(author),
            category,
            tags,
            count: Counts {
                comments: 0,
                reactions: 0,
            },
        })
    }

    /// Changes the author's own post: title, content and excerpt (its slug, and so its
    /// address, stays), and publishes a draft when `publish`. Another user's post, or a
    /// missing one: NotFound. A published post is not taken back to draft.
    pub async fn edit_post(
        &self,
        author: &User,
        id: &str,
        edit: PostEdit,
    ) -> Result<Post, CommunityError> {
        let current = self
            .ports
            .table
            .get(&pk(id), SK)
            .await?
            .filter(|item| post::author_id(item) == Some(author.id.as_str()))
            .ok_or(CommunityError::NotFound("post"))?;
        let title = edit.title.trim().to_string();
        if title.is_empty() || title.chars().count() > MAX_TITLE {
            return Err(invalid(format!("title: 1 to {MAX_TITLE} characters")));
        }
        if edit.content.trim().is_empty() || edit.content.chars().count() > MAX_CONTENT {
            return Err(invalid(format!("content: 1 to {MAX_CONTENT} characters")));
        }
        let excerpt = match edit.excerpt.map(|e| e.trim().to_string()) {
            Some(e) if e.chars().count() > MAX_EXCERPT => {
                return Err(invalid(format!(
                    "excerpt: at most {MAX_EXCERPT} characters"
                )))
            }
            Some(e) if !e.is_empty() => e,
            _ => derive_excerpt(&edit.content),
        };
        let mut update = post::edited(&title, &edit.content, &excerpt);
        let draft = post::status_is(&current, PostStatus::Draft);
        if draft && edit.publish {
            if !may_publish(author) {
                return Err(CommunityError::Forbidden(
                    "a FREE account publishes once its email address is verified; until then, keep the post as a DRAFT"
                        .into(),
                ));
            }
            let now = self.ports.clock.now();
            update = post::published(update, now, (PUBLISHED, format!("{}#{id}", time_text(now))));
        }
        self.ports
            .table
            .update(&pk(id), SK, update, post::by(&author.id))
            .await
            .map_err(|e| match e {
                StoreError::NotFound | StoreError::Conflict => CommunityError::NotFound("post"),
                e => e.into(),
            })?;
        info!(post_id = %id, published = draft && edit.publish, "post edited");
        self.post(id, Some(author)).await
    }

    /// A post by id or slug, counting the view when someone other than its author reads it
    /// published. Drafts are visible to their author (and admins) only: 404 for anyone else.
    pub async fn post(
        &self,
        id_or_slug: &str,
        viewer: Option<&User>,
    ) -> Result<Post, CommunityError> {
        let mut item = match self.ports.table.get(&pk(id_or_slug), SK).await? {
            Some(item) => item,
            None => match slug::owner(&self.ports, "POST", id_or_slug).await? {
                Some(id) => self
                    .ports
                    .table
                    .get(&pk(&id), SK)
                    .await?
                    .ok_or(CommunityError::NotFound("post"))?,
                None => return Err(CommunityError::NotFound("post")),
            },
        };
        let author_id = post::required_author_id(&item)?.to_string();
        let published = post::status_is(&item, PostStatus::Published);
        if !published && !may_see_drafts_of(viewer, &author_id) {
            return Err(CommunityError::NotFound("post"));
        }
        if published && viewer.is_none_or(|v| v.id != author_id) {
            match self
                .ports
                .table
                .update(&item.pk, &item.sk, post::viewed(), Condition::Exists)
                .await
            {
                Ok(counted) => item = counted,
                Err(StoreError::NotFound | StoreError::Conflict) => {
                    return Err(CommunityError::NotFound("post"))
                }
                Err(e) => return Err(e.into()),
            }
        }
        let mut context = Context::default();
        Ok(self.post_from(&item, &mut context).await?)
    }

    /// Features a post on the community's lists (`featured=true`) or stops featuring it;
    /// ADMIN and SUPER_ADMIN only. Drafts may be featured ahead of publication.
    pub async fn set_featured(
        &self,
        viewer: &User,
        id: &str,
        featured: bool,
    ) -> Result<Post, CommunityError> {
        require_admin(viewer.role)?;
        let item = match self
            .ports
            .table
            .update(&pk(id), SK, post::featured(featured), Condition::Exists)
            .await
        {
            Ok(item) => item,
            Err(StoreError::NotFound | StoreError::Conflict) => {
                return Err(CommunityError::NotFound("post"))
            }
            Err(e) => return Err(e.into()),
        };
        info!(post_id = id, featured, "post featuring changed");
        let mut context = Context::default();
        Ok(self.post_from(&item, &mut context).await?)
    }

    /// Published posts, newest first (and, for a signed-in viewer, their own drafts first),
    /// filtered and paged.
    pub async fn posts(
        &self,
        filter: PostFilter,
        viewer: Option<&User>,
    ) -> Result<PostPage, CommunityError> {
        let page = filter.page.max(1);
        let limit = filter.limit.clamp(1, MAX_PAGE_SIZE);
        let mut items = Vec::new();
        if let Some(viewer) = viewer {
            items.extend(
                self.ports
                    .table
                    .query_index(
                        Index::Gsi1,
                        Query::partition(drafts_of(&viewer.id))
                            .descending()
                            .limit(LISTED),
                    )
                    .await?,
            );
        }
        items.extend(
            self.ports
                .table
                .query_index(
                    Index::Gsi1,
                    Query::partition(PUBLISHED).descending().limit(LISTED),
                )
                .await?,
        );
        let category_id = match &filter.category {
            Some(slug) => match self.category(slug).await? {
                Some(category) => Some(category.id),
                None => return Ok(empty(page, limit)),
            },
            None => None,
        };
        let tag_id = match &filter.tag {
            Some(slug) => match self.tag(slug).await? {
                Some(tag) => Some(tag.id),
                None => return Ok(empty(page, limit)),
            },
            None => None,
        };
        let matching: Vec<&Item> = items
            .iter()
            .filter(|i| {
                category_id
                    .as_deref()
                    .is_none_or(|c| post::category_id(i) == Some(c))
            })
            .filter(|i| {
                tag_id
                    .as_deref()
                    .is_none_or(|t| post::tag_ids(i).iter().any(|id| id == t))
            })
            .filter(|i| {
                filter
                    .featured
                    .is_none_or(|f| post::is_featured(i) == Some(f))
            })
            .collect();
        let total = matching.len() as u64;
        let start = usize::try_from(u64::from(page - 1) * u64::from(limit)).unwrap_or(usize::MAX);
        let mut context = Context::default();
        let mut posts = Vec::new();
        for item in matching.into_iter().skip(start).take(limit as usize) {
            posts.push(self.post_from(item, &mut context).await?);
        }
        Ok(PostPage {
            posts,
            pagination: Pagination {
                page,
                limit,
                total,
                total_pages: total.div_ceil(u64::from(limit)),
            },
        })
    }

    /// (slug, publishedAt) of the newest `limit` published posts: what a sitemap needs, read
    /// from the index alone.
    pub async fn published_slugs(
        &self,
        limit: usize,
    ) -> Result<Vec<(String, Option<chrono::DateTime<chrono::Utc>>)>, DataError> {
        let items = self
            .ports
            .table
            .query_index(
                Index::Gsi1,
                Query::partition(PUBLISHED).descending().limit(limit),
            )
            .await?;
        items.iter().map(|item| Ok(post::listed(item)?)).collect()
    }

    /// Every post `user_id` wrote, in any status (for the account export).
    pub async fn posts_of(&self, user_id: &str) -> Result<Vec<Post>, DataError> {
        let mut context = Context::default();
        let mut posts = Vec::new();
        for item in self.items_of(user_id).await? {
            posts.push(self.post_from(&item, &mut context).await?);
        }
        Ok(posts)
    }

    /// Removes every post of `user_id` and their slugs (account deletion: a closed account's
    /// posts go with it).
    pub async fn remove_posts_of(&self, user_id: &str) -> Result<usize, DataError> {
        let table = &self.ports.table;
        let items = self.items_of(user_id).await?;
        for item in &items {
            if let Some(id) = post::id(item) {
                self.remove_comments_on(id).await?;
            }
            if let Some(slug) = post::slug(item) {
                table
                    .delete(
                        &slug::claim_pk("POST", slug),
                        slug::CLAIM_SK,
                        Condition::Always,
                    )
                    .await?;
            }
            table.delete(&item.pk, &item.sk, Condition::Always).await?;
        }
        Ok(items.len())
    }

    /// A published post by id or slug, for comments: 400 without either, 404 when there is no
    /// such published post.
    pub(super) async fn public_post(
        &self,
        id: Option<&str>,
        slug: Option<&str>,
    ) -> Result<PostRef, CommunityError> {
        let post_id = match (id, slug) {
            (Some(id), _) => Some(id.to_string()),
            (None, Some(slug)) => slug::owner(&self.ports, "POST", slug).await?,
            (None, None) => {
                return Err(invalid("give postId or postSlug".into()));
            }
        };
        let item = match post_id {
            Some(id) => self.ports.table.get(&pk(&id), SK).await?,
            None => None,
        };
        match item {
            Some(item) if post::status_is(&item, PostStatus::Published) => {
                let post = post::from_item(&item)?;
                Ok(PostRef {
                    id: post.id,
                    slug: post.slug,
                    title: post.title,
                })
            }
            _ => Err(CommunityError::NotFound("post")),
        }
    }

    /// The author's drafts and archived posts, then their published ones (found among all
    /// published posts: an account's own index partition holds only the unpublished).
    async fn items_of(&self, user_id: &str) -> Result<Vec<Item>, DataError> {
        let table = &self.ports.table;
        let mut items = table
            .query_index(Index::Gsi1, Query::partition(drafts_of(user_id)))
            .await?;
        items.extend(
            table
                .query_index(Index::Gsi1, Query::partition(PUBLISHED))
                .await?
                .into_iter()
                .filter(|i| post::author_id(i) == Some(user_id)),
        );
        Ok(items)
    }

    async fn chosen_category(
        &self,
        id: Option<String>,
        slug: Option<String>,
    ) -> Result<Category, CommunityError> {
        match (id, slug) {
            (Some(_), Some(_)) => Err(invalid("give categoryId or categorySlug, not both".into())),
            (Some(given), None) | (None, Some(given)) => {
                // On a fresh store the seeded categories exist once something asks for them.
                self.default_category().await?;
                self.category(&given)
                    .await?
                    .ok_or_else(|| invalid(format!("there is no category '{given}'")))
            }
            (None, None) => self.default_category().await,
        }
    }

    async fn chosen_tags(
        &self,
        ids: Option<Vec<String>>,
        slugs: Option<Vec<String>>,
    ) -> Result<Vec<Tag>, CommunityError> {
        let given = match (ids, slugs) {
            (Some(_), Some(_)) => return Err(invalid("give tagIds or tagSlugs, not both".into())),
            (Some(given), None) | (None, Some(given)) => given,
            (None, None) => Vec::new(),
        };
        if given.len() > MAX_TAGS {
            return Err(invalid(format!("at most {MAX_TAGS} tags")));
        }
        let mut tags: Vec<Tag> = Vec::new();
        for one in given {
            let tag = self
                .tag(&one)
                .await?
                .ok_or_else(|| invalid(format!("there is no tag '{one}'")))?;
            if !tags.iter().any(|t| t.id == tag.id) {
                tags.push(tag);
            }
        }
        Ok(tags)
    }

    async fn post_from(&self, item: &Item, context: &mut Context) -> Result<Post, DataError> {
        let record = post::from_item(item)?;
        let author_id = record.author_id.as_str();
        let category_id = record.category_id.as_str();
        let author = match context.authors.get(author_id) {
            Some(author) => author.clone(),
            None => {
                let author = self.author(author_id).await?;
                context
                    .authors
                    .insert(author_id.to_string(), author.clone());
                author
            }
        };
        let category = match context.categories.get(category_id) {
            Some(category) => category.clone(),
            None => {
                let category = self
                    .category(category_id)
                    .await?
                    .ok_or_else(|| post::unknown_category(item))?;
                context
                    .categories
                    .insert(category_id.to_string(), category.clone());
                category
            }
        };
        let mut tags = Vec::new();
        for id in record.tag_ids.clone() {
            let tag = match context.tags.get(&id) {
                Some(tag) => tag.clone(),
                None => {
                    let tag = self.tag(&id).await?;
                    context.tags.insert(id, tag.clone());
                    tag
                }
            };
            // A tag that no longer exists is left out.
            tags.extend(tag);
        }
        Ok(Post {
            id: record.id,
            slug: record.slug,
            title: record.title,
            content: record.content,
            excerpt: record.excerpt,
            cover_image: record.cover_image,
            status: record.status,
            featured: record.featured,
            view_count: record.view_count,
            published_at: record.published_at,
            created_at: record.created_at,
            author,
            category,
            tags,
            count: Counts {
                comments: record.comment_count,
                reactions: record.reaction_count,
            },
        })
    }

    /// What readers see of an author: their name (never their email) and image.
    pub(super) async fn author(&self, user_id: &str) -> Result<Author, DataError> {
        Ok(match self.authors.author(user_id).await? {
            Some(user) => author_of(&user),
            None => Author {
                id: user_id.to_string(),
                name: ANONYMOUS.to_string(),
                image: None,
            },
        })
    }
}

/// The name shown for an author who gave none.
const ANONYMOUS: &str = "A booktr reader";

fn author_of(user: &User) -> Author {
    Author {
        id: user.id.clone(),
        name: user.name.clone().unwrap_or_else(|| ANONYMOUS.to_string()),
        image: user.image.clone(),
    }
}

/// What comments need of their post.
pub(super) struct PostRef {
    pub id: String,
    pub slug: String,
    pub title: String,
}

/// Authors, categories and tags read once per listing.
#[derive(Default)]
struct Context {
    authors: HashMap<String, Author>,
    categories: HashMap<String, Category>,
    tags: HashMap<String, Option<Tag>>,
}

fn empty(page: u32, limit: u32) -> PostPage {
    PostPage {
        posts: Vec::new(),
        pagination: Pagination {
            page,
            limit,
            total: 0,
            total_pages: 0,
        },
    }
}

fn invalid(message: String) -> CommunityError {
    CommunityError::Invalid(message)
}

fn valid_cover(url: String) -> Result<String, CommunityError> {
    let parsed = url::Url::parse(&url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
    match parsed {
        Some(_) if url.len() <= MAX_URL => Ok(url),
        _ => Err(invalid(format!(
            "coverImage: an http(s) URL of at most {MAX_URL} characters"
        ))),
    }
}

/// The content's first words as plain text: tags and link targets dropped, Markdown's marks
/// dropped, whitespace folded, cut at a word end.
fn derive_excerpt(markdown: &str) -> String {
    let mut plain = String::with_capacity(markdown.len().min(4 * DERIVED_EXCERPT));
    let mut chars = markdown.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // Raw HTML: not text.
            '<' => {
                for skipped in chars.by_ref() {
                    if skipped == '>' {
                        break;
                    }
                }
                plain.push(' ');
            }
            // A link's target: `[text](target)` keeps its text.
            ']' if chars.peek() == Some(&'(') => {
                for skipped in chars.by_ref() {
                    if skipped == ')' {
                        break;
                    }
                }
                plain.push(' ');
            }
            c if "#*_>`[]!|~".contains(c) => plain.push(' '),
            c => plain.push(c),
        }
        if plain.len() > 8 * DERIVED_EXCERPT {
            break;
        }
    }
    let mut excerpt = String::new();
    for word in plain.split_whitespace() {
        if excerpt.chars().count() + word.chars().count() + 1 > DERIVED_EXCERPT {
            excerpt.push('…');
            return excerpt;
        }
        if !excerpt.is_empty() {
            excerpt.push(' ');
        }
        excerpt.push_str(word);
    }
    excerpt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_is_the_contents_first_words_without_markdown() {
        assert_eq!(
            derive_excerpt("# Title\n\nSome **bold** words and a [link](http://x).<br>Done"),
            "Title Some bold words and a link . Done"
        );
        let long = derive_excerpt(&"word ".repeat(100));
        assert!(long.ends_with('…') && long.chars().count() <= DERIVED_EXCERPT + 1);
    }

    #[test]
    fn only_http_urls_with_a_host_are_cover_images() {
        assert!(valid_cover("https://example.com/a.png".into()).is_ok());
        for bad in [
            "javascript:alert(1)",
            "data:image/png;base64,xx",
            "ftp://x/y",
            "/a.png",
        ] {
            assert!(valid_cover(bad.into()).is_err(), "{bad}");
        }
    }
}
