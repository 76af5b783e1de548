//! Comments on published posts, with replies, moderation and reply notifications.
//!
//! Layout: a comment is `COMMENT#<id>` / `COMMENT` with `postId`, `parentId`, `authorId`,
//! `content`, `mood`, `status`, `createdAt`; listed per post through `gsi1`
//! `POST#<postId>#COMMENTS` / `<createdAt>#<id>`. A PENDING comment also has an item in the
//! moderation queue, `COMMENTS#PENDING` / `<createdAt>#<id>`, removed when it is moderated. The
//! author's partition holds `USER#<authorId>` / `COMMENT#<id>`, so a closed account's comments
//! can be found.
//!
//! Rules: a comment by someone who may publish posts (verified email, paid plan, staff role)
//! is APPROVED at once; anyone else's waits PENDING for an admin. The public sees APPROVED
//! comments; an author also sees their own PENDING ones. SPAM and DELETED are never shown,
//! except that a DELETED comment with visible replies stays in the tree as "[deleted comment]"
//! without author or text, so the replies keep their place. `_count.comments` on the post
//! counts APPROVED comments. A closed account's comments become such tombstones.

use chrono::{DateTime, Utc};

use tracing::info;

use super::error::CommunityError;
use super::model::Author;
use super::posts::{may_publish, PostRef};
use super::record::comment::{of_post, pk, PENDING, SK};
use super::record::{comment, post};
use super::service::Community;
use super::taxonomy::require_admin;
use crate::accounts::User;
use crate::fault::DataError;
use crate::ids::new_id;
use crate::items::time_text;
use crate::ports::{Condition, Index, Item, Query, StoreError, WriteOp};

pub const MAX_CONTENT: usize = 5_000;
/// Comments a post shows at most (oldest first): a bound on one public request.
const MAX_LISTED: usize = 1_000;
const DELETED_TEXT: &str = "[deleted comment]";

/// The spec's BlogComment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    pub id: String,
    pub content: String,
    pub mood: Option<String>,
    pub status: String,
    pub created_at: DateTime<Utc>,
    pub author: Option<Author>,
    pub replies: Vec<Comment>,
}

/// A comment as its author writes it: on a post (by id or slug), perhaps in reply to another.
#[derive(Debug, Clone)]
pub struct NewComment {
    pub content: String,
    pub post_id: Option<String>,
    pub post_slug: Option<String>,
    pub parent_id: Option<String>,
    pub mood: Option<String>,
}

/// A comment waiting for moderation, as its item holds it (what a damaged item lacks is None).
#[derive(Debug, Clone)]
pub struct PendingComment {
    pub id: String,
    pub post_id: Option<String>,
    pub parent_id: Option<String>,
    pub content: Option<String>,
    pub mood: Option<String>,
    pub status: Option<String>,
    /// As stored (RFC 3339).
    pub created_at: Option<String>,
    pub author: Author,
}

const MOODS: [&str; 5] = ["EXCITED", "LOVED", "HAPPY", "SAD", "THUMBSY"];
const STATUSES: [&str; 4] = ["PENDING", "APPROVED", "SPAM", "DELETED"];

/// The comment's text, trimmed, once its length and mood do.
fn checked_content(new: &NewComment) -> Result<String, CommunityError> {
    let content = new.content.trim().to_string();
    if content.is_empty() || new.content.chars().count() > MAX_CONTENT {
        return Err(CommunityError::Invalid(format!(
            "content: 1 to {MAX_CONTENT} characters"
        )));
    }
    if let Some(mood) = &new.mood {
        if !MOODS.contains(&mood.as_str()) {
            return Err(CommunityError::Invalid(format!(
                "mood: one of {}",
                MOODS.join(", ")
            )));
        }
    }
    Ok(content)
}

impl Community {
    pub async fn add_comment(
        &self,
        author: &User,
        new: NewComment,
    ) -> Result<Comment, CommunityError> {
        let content = checked_content(&new)?;
        let post = self
            .public_post(new.post_id.as_deref(), new.post_slug.as_deref())
            .await?;
        let parent = self.parent_on(new.parent_id.as_deref(), &post.id).await?;
        let status = if may_publish(author) {
            "APPROVED"
        } else {
            "PENDING"
        };
        let id = new_id();
        let now = self.ports.clock.now();
        let order = format!("{}#{id}", time_text(now));
        let item = comment::item(
            pk(&id),
            SK,
            &comment::NewCommentItem {
                id: &id,
                post_id: &post.id,
                parent_id: new.parent_id.as_deref(),
                author_id: &author.id,
                content: &content,
                mood: new.mood.as_deref(),
                status,
                created_at: now,
                listed: (of_post(&post.id), order.clone()),
            },
        );
        let mut ops = vec![
            WriteOp::Put {
                item,
                condition: Condition::NotExists,
            },
            WriteOp::Put {
                item: comment::pointer(
                    crate::items::user_pk(&author.id),
                    comment::pointer_sk(&id),
                    &post.id,
                ),
                condition: Condition::Always,
            },
        ];
        if status == "PENDING" {
            ops.push(WriteOp::Put {
                item: comment::pending_entry(PENDING, &order, &id),
                condition: Condition::Always,
            });
        } else {
            ops.push(WriteOp::Update {
                pk: post::pk(&post.id),
                sk: post::SK.into(),
                update: post::comments_counted(1),
                condition: Condition::Exists,
            });
        }
        self.ports.table.transact(ops).await?;
        info!(comment_id = %id, post_id = %post.id, status, "comment added");
        if let Some(parent) = parent {
            self.tell_parent_author(&parent, author, &post, status)
                .await;
        }
        Ok(Comment {
            id,
            content,
            mood: new.mood,
            status: status.into(),
            created_at: now,
            author: Some(self.author(&author.id).await?),
            replies: Vec::new(),
        })
    }

    /// The comment replied to, which must be on the post.
    async fn parent_on(
        &self,
        parent_id: Option<&str>,
        post_id: &str,
    ) -> Result<Option<Item>, CommunityError> {
        Ok(match parent_id {
            Some(parent_id) => {
                let parent = self.ports.table.get(&pk(parent_id), SK).await?;
                match parent {
                    Some(p) if comment::post_id(&p) == Some(post_id) => Some(p),
                    _ => {
                        return Err(CommunityError::Invalid(format!(
                            "parentId: there is no comment '{parent_id}' on this post"
                        )))
                    }
                }
            }
            None => None,
        })
    }

    /// Tells the author of the comment replied to of an approved reply (not their own); a
    /// notification that is not recorded is logged.
    async fn tell_parent_author(&self, parent: &Item, author: &User, post: &PostRef, status: &str) {
        let parent_author = comment::author_id(parent).unwrap_or_default();
        if !parent_author.is_empty() && parent_author != author.id && status == "APPROVED" {
            let link = format!("/comunidad/{}", post.slug);
            if let Err(e) = self
                .events()
                .notify_comment_reply(parent_author, &post.title, link)
                .await
            {
                tracing::warn!(error = %e, "the reply notification was not recorded");
            }
        }
    }

    /// The comments of a published post as a tree of replies, oldest first, as `viewer` may
    /// see them.
    pub async fn comments(
        &self,
        post_id: Option<&str>,
        post_slug: Option<&str>,
        viewer: Option<&User>,
    ) -> Result<Vec<Comment>, CommunityError> {
        let post = self.public_post(post_id, post_slug).await?;
        let items = self
            .ports
            .table
            .query_index(
                Index::Gsi1,
                Query::partition(of_post(&post.id)).limit(MAX_LISTED),
            )
            .await?;
        let mut authors = std::collections::HashMap::new();
        let mut flat = Vec::new();
        for item in &items {
            let status = comment::required_status(item)?;
            let author_id = comment::author_id(item).map(str::to_string);
            let own = viewer.is_some_and(|v| author_id.as_deref() == Some(v.id.as_str()));
            let shown = match status {
                "APPROVED" => true,
                "PENDING" => own,
                "DELETED" => true, // kept only if it has visible replies (below)
                _ => false,
            };
            if !shown {
                continue;
            }
            let author = match (&author_id, status) {
                (Some(id), s) if s != "DELETED" => {
                    if !authors.contains_key(id) {
                        authors.insert(id.clone(), self.author(id).await?);
                    }
                    authors.get(id).cloned()
                }
                _ => None,
            };
            let deleted = status == "DELETED";
            flat.push((
                comment::parent_id(item).map(str::to_string),
                Comment {
                    id: comment::required_id(item)?.to_string(),
                    content: if deleted {
                        DELETED_TEXT.into()
                    } else {
                        comment::required_content(item)?.to_string()
                    },
                    mood: if deleted {
                        None
                    } else {
                        comment::mood(item).map(str::to_string)
                    },
                    status: status.to_string(),
                    created_at: comment::created_at(item)?,
                    author,
                    replies: Vec::new(),
                },
            ));
        }
        Ok(tree(None, &mut flat))
    }

    /// Comments waiting for moderation, oldest first (ADMIN and SUPER_ADMIN).
    pub async fn pending_comments(
        &self,
        role: crate::types::Role,
    ) -> Result<Vec<PendingComment>, CommunityError> {
        require_admin(role)?;
        let queue = self
            .ports
            .table
            .query(Query::partition(PENDING).limit(MAX_LISTED))
            .await?;
        let mut pending = Vec::new();
        for entry in queue {
            let Some(id) = comment::pending_id(&entry) else {
                continue;
            };
            if let Some(item) = self.ports.table.get(&pk(id), SK).await? {
                let text = |read: fn(&Item) -> Option<&str>| read(&item).map(str::to_string);
                pending.push(PendingComment {
                    id: id.to_string(),
                    post_id: text(comment::post_id),
                    parent_id: text(comment::parent_id),
                    content: text(comment::content),
                    mood: text(comment::mood),
                    status: text(comment::status),
                    created_at: text(comment::created_at_text),
                    author: self
                        .author(comment::author_id(&item).unwrap_or_default())
                        .await?,
                });
            }
        }
        Ok(pending)
    }

    /// Sets a comment's moderation status (ADMIN and SUPER_ADMIN); keeps the post's approved
    /// count and the moderation queue in step.
    pub async fn moderate(
        &self,
        role: crate::types::Role,
        id: &str,
        status: &str,
    ) -> Result<(), CommunityError> {
        require_admin(role)?;
        if !STATUSES.contains(&status) {
            return Err(CommunityError::Invalid(format!(
                "status: one of {}",
                STATUSES.join(", ")
            )));
        }
        let item = self
            .ports
            .table
            .get(&pk(id), SK)
            .await?
            .ok_or(CommunityError::NotFound("comment"))?;
        let before = comment::required_status(&item)?.to_string();
        if before == status {
            return Ok(());
        }
        let post_pk = post::pk(comment::required_post_id(&item)?);
        let order = comment::order(&item).to_string();
        let mut ops = vec![WriteOp::Update {
            pk: item.pk.clone(),
            sk: item.sk.clone(),
            update: comment::moderated(status),
            condition: comment::status_still(&before),
        }];
        let delta = i64::from(status == "APPROVED") - i64::from(before == "APPROVED");
        if delta != 0 {
            ops.push(WriteOp::Update {
                pk: post_pk,
                sk: post::SK.into(),
                update: post::comments_counted(delta),
                condition: Condition::Exists,
            });
        }
        if before == "PENDING" {
            ops.push(WriteOp::Delete {
                pk: PENDING.into(),
                sk: order,
                condition: Condition::Always,
            });
        }
        match self.ports.table.transact(ops).await {
            Ok(()) => {
                info!(comment_id = id, from = %before, to = status, "comment moderated");
                Ok(())
            }
            Err(StoreError::Conflict) => Err(CommunityError::Invalid(
                "the comment changed meanwhile; look again".into(),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// Turns a closed account's comments into tombstones (no author, no text), so replies by
    /// others keep their place; counts and the moderation queue follow.
    pub async fn remove_comments_of(&self, user_id: &str) -> Result<usize, DataError> {
        let pointers = self
            .ports
            .table
            .query(Query::partition(crate::items::user_pk(user_id)).prefix(comment::POINTER_PREFIX))
            .await?;
        for pointer in &pointers {
            let id = pointer.sk.trim_start_matches(comment::POINTER_PREFIX);
            let Some(item) = self.ports.table.get(&pk(id), SK).await? else {
                continue;
            };
            let before = comment::status(&item).unwrap_or_default().to_string();
            let mut ops = vec![WriteOp::Update {
                pk: item.pk.clone(),
                sk: item.sk.clone(),
                update: comment::tombstone(),
                condition: Condition::Always,
            }];
            if before == "APPROVED" {
                if let Some(post_id) = comment::post_id(&item) {
                    ops.push(WriteOp::Update {
                        pk: post::pk(post_id),
                        sk: post::SK.into(),
                        update: post::comments_counted(-1),
                        condition: Condition::Exists,
                    });
                }
            }
            if before == "PENDING" {
                ops.push(WriteOp::Delete {
                    pk: PENDING.into(),
                    sk: comment::order(&item).to_string(),
                    condition: Condition::Always,
                });
            }
            match self.ports.table.transact(ops).await {
                // The post is gone (deleted with its author): the comment only.
                Err(StoreError::Conflict) => {
                    self.ports
                        .table
                        .delete(&item.pk, &item.sk, Condition::Always)
                        .await?
                }
                other => other?,
            }
        }
        Ok(pointers.len())
    }

    /// Removes every comment on a post (the post is being deleted), with the pointers in
    /// their authors' partitions and the moderation queue's entries.
    pub(super) async fn remove_comments_on(&self, post_id: &str) -> Result<(), DataError> {
        let table = &self.ports.table;
        let items = table
            .query_index(Index::Gsi1, Query::partition(of_post(post_id)))
            .await?;
        for item in items {
            if let Some(author_id) = comment::author_id(&item) {
                table
                    .delete(
                        &crate::items::user_pk(author_id),
                        &comment::pointer_sk(comment::id(&item).unwrap_or_default()),
                        Condition::Always,
                    )
                    .await?;
            }
            if comment::status(&item) == Some("PENDING") {
                let order = comment::order(&item).to_string();
                table.delete(PENDING, &order, Condition::Always).await?;
            }
            table.delete(&item.pk, &item.sk, Condition::Always).await?;
        }
        Ok(())
    }

    fn events(&self) -> &crate::events::Events {
        &self.events
    }
}

/// The comments under `parent`, each with its replies; a DELETED one stays only if something
/// under it is shown.
fn tree(parent: Option<&str>, flat: &mut Vec<(Option<String>, Comment)>) -> Vec<Comment> {
    let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(flat)
        .into_iter()
        .partition(|(p, _)| p.as_deref() == parent);
    *flat = rest;
    let mut out = Vec::new();
    for (_, mut comment) in mine {
        comment.replies = tree(Some(&comment.id.clone()), flat);
        if comment.status != "DELETED" || !comment.replies.is_empty() {
            out.push(comment);
        }
    }
    out
}
