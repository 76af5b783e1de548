//! The community: `GET/POST /api/community/posts`, `GET /api/community/posts/{id}` (id or
//! slug), `GET /api/community/categories`, `GET /api/community/tags`, and the admin routes
//! that make categories and tags (`POST /api/admin/community/categories`, `.../tags`);
//! comments (`GET/POST /api/community/comments`) and their moderation
//! (`GET /api/admin/comments`, the queue of PENDING ones; `PATCH /api/admin/comments/{id}`),
//! and featuring a post (`PATCH /api/admin/community/posts/{id}` `{featured}`).

use axum::extract::State;
use axum::http::StatusCode;
use booktr_core::community::{CommunityError, PostFilter};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::{Json, Path, Query};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::{Caller, OptionalCaller};
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::community::{
    Category, Comment, NewComment, NewPost, NewTerm, Post, PostPage, Tag,
};
use crate::wire::Mirror;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(one))
        .routes(routes!(categories))
        .routes(routes!(tags))
        .routes(routes!(create_category))
        .routes(routes!(create_tag))
        .routes(routes!(comments, comment))
        .routes(routes!(feature))
        .routes(routes!(pending))
        .routes(routes!(moderate))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommentsQuery {
    post_id: Option<String>,
    post_slug: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Comments {
    comments: Vec<Comment>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct OneComment {
    comment: Comment,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Pending {
    comments: Vec<serde_json::Value>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Moderation {
    status: String,
}

/// A post's approved comments (and the viewer's own pending ones).
#[utoipa::path(get, path = "/api/community/comments", tag = "community", security((), ("apiKey" = []), ("session" = [])),
    params(("postId" = Option<String>, Query), ("postSlug" = Option<String>, Query, description = "One of postId and postSlug is required")),
    responses((status = 200, description = "Comments", body = Comments),
        (status = 404, description = "No such post", body = ErrorBody)))]
async fn comments(
    State(state): State<AppState>,
    OptionalCaller(caller): OptionalCaller,
    Query(q): Query<CommentsQuery>,
) -> Result<axum::Json<Comments>, ApiError> {
    let viewer = caller.as_ref().map(|p| &p.user);
    let comments = state
        .services
        .community
        .comments(q.post_id.as_deref(), q.post_slug.as_deref(), viewer)
        .await?;
    Ok(axum::Json(Comments {
        comments: Mirror::mirror(comments),
    }))
}

/// A new comment; it waits for moderation before others see it.
#[utoipa::path(post, path = "/api/community/comments", tag = "community", security(("apiKey" = []), ("session" = [])), request_body = NewComment,
    responses((status = 201, description = "Created", body = OneComment),
        (status = 404, description = "No such post", body = ErrorBody)))]
async fn comment(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewComment>,
) -> Result<(StatusCode, axum::Json<OneComment>), ApiError> {
    let comment = state
        .services
        .community
        .add_comment(&caller.0.user, body.into())
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(OneComment {
            comment: comment.into(),
        }),
    ))
}

/// Comments waiting for moderation (ADMIN).
#[utoipa::path(get, path = "/api/admin/comments", tag = "admin", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Pending comments", body = Pending)))]
async fn pending(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<Pending>, ApiError> {
    let comments = state
        .services
        .community
        .pending_comments(caller.0.user.role)
        .await?;
    Ok(axum::Json(Pending {
        comments: comments
            .into_iter()
            .map(crate::wire::community::pending)
            .collect(),
    }))
}

/// Approves or rejects a comment (ADMIN).
#[utoipa::path(patch, path = "/api/admin/comments/{id}", tag = "admin", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The comment's id")), request_body = Moderation,
    responses((status = 200, description = "Moderated", body = super::Success),
        (status = 404, description = "No such comment", body = ErrorBody)))]
async fn moderate(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<Moderation>,
) -> Result<axum::Json<super::Success>, ApiError> {
    state
        .services
        .community
        .moderate(caller.0.user.role, &id, &body.status)
        .await?;
    Ok(axum::Json(super::SUCCESS))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Featuring {
    featured: bool,
}

/// Features or unfeatures a post (ADMIN).
#[utoipa::path(patch, path = "/api/admin/community/posts/{id}", tag = "admin", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The post's id")), request_body = Featuring,
    responses((status = 200, description = "The post now", body = OnePost),
        (status = 404, description = "No such post", body = ErrorBody)))]
async fn feature(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<Featuring>,
) -> Result<axum::Json<OnePost>, ApiError> {
    let post = state
        .services
        .community
        .set_featured(&caller.0.user, &id, body.featured)
        .await?;
    Ok(axum::Json(OnePost { post: post.into() }))
}

impl From<CommunityError> for ApiError {
    fn from(e: CommunityError) -> Self {
        match e {
            CommunityError::Invalid(m) => ApiError::bad_request(m),
            CommunityError::Forbidden(m) => ApiError::forbidden(m),
            CommunityError::NotFound(what) => ApiError::not_found(what),
            CommunityError::Store(s) => s.into(),
            CommunityError::Fault(f) => f.into(),
        }
    }
}

#[derive(Deserialize)]
struct ListQuery {
    page: Option<String>,
    limit: Option<String>,
    category: Option<String>,
    tag: Option<String>,
    featured: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct OnePost {
    post: Post,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Categories {
    categories: Vec<Category>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Tags {
    tags: Vec<Tag>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct OneCategory {
    category: Category,
}

#[derive(Serialize, utoipa::ToSchema)]
struct OneTag {
    tag: Tag,
}

/// A positive integer query parameter, or 400 naming it.
fn positive(name: &str, value: Option<String>, default: u32, max: u32) -> Result<u32, ApiError> {
    match value {
        None => Ok(default),
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| {
                ApiError::bad_request(format!("{name}: a whole number from 1 to {max}"))
            }),
    }
}

/// Published posts, a page at a time.
#[utoipa::path(get, path = "/api/community/posts", tag = "community", security((), ("apiKey" = []), ("session" = [])),
    params(("page" = Option<u32>, Query, minimum = 1, maximum = 100000),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 50),
        ("category" = Option<String>, Query, description = "A category's slug"),
        ("tag" = Option<String>, Query, description = "A tag's slug"),
        ("featured" = Option<bool>, Query)),
    responses((status = 200, description = "A page of posts", body = PostPage)))]
async fn list(
    State(state): State<AppState>,
    OptionalCaller(caller): OptionalCaller,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<PostPage>, ApiError> {
    let featured = match q.featured.as_deref() {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "featured: true or false, not '{other}'"
            )))
        }
    };
    let filter = PostFilter {
        page: positive("page", q.page, 1, 100_000)?,
        limit: positive("limit", q.limit, 10, booktr_core::community::MAX_PAGE_SIZE)?,
        category: q.category,
        tag: q.tag,
        featured,
    };
    let viewer = caller.as_ref().map(|p| &p.user);
    Ok(axum::Json(
        state.services.community.posts(filter, viewer).await?.into(),
    ))
}

#[utoipa::path(post, path = "/api/community/posts", tag = "community", security(("apiKey" = []), ("session" = [])), request_body = NewPost,
    responses((status = 201, description = "Created", body = OnePost)))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewPost>,
) -> Result<(StatusCode, axum::Json<OnePost>), ApiError> {
    let post = state
        .services
        .community
        .create_post(&caller.0.user, body.into())
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(OnePost { post: post.into() }),
    ))
}

/// A post by id or slug.
#[utoipa::path(get, path = "/api/community/posts/{id}", tag = "community", security((), ("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The post's id or slug")),
    responses((status = 200, description = "The post", body = OnePost),
        (status = 404, description = "No such post", body = ErrorBody)))]
async fn one(
    State(state): State<AppState>,
    OptionalCaller(caller): OptionalCaller,
    Path(id): Path<String>,
) -> Result<axum::Json<OnePost>, ApiError> {
    let viewer = caller.as_ref().map(|p| &p.user);
    let post = state.services.community.post(&id, viewer).await?;
    Ok(axum::Json(OnePost { post: post.into() }))
}

#[utoipa::path(get, path = "/api/community/categories", tag = "community",
    responses((status = 200, description = "Categories", body = Categories)))]
async fn categories(State(state): State<AppState>) -> Result<axum::Json<Categories>, ApiError> {
    let categories = state.services.community.categories().await?;
    Ok(axum::Json(Categories {
        categories: Mirror::mirror(categories),
    }))
}

#[utoipa::path(get, path = "/api/community/tags", tag = "community",
    responses((status = 200, description = "Tags", body = Tags)))]
async fn tags(State(state): State<AppState>) -> Result<axum::Json<Tags>, ApiError> {
    let tags = state.services.community.tags().await?;
    Ok(axum::Json(Tags {
        tags: Mirror::mirror(tags),
    }))
}

/// A new category (ADMIN).
#[utoipa::path(post, path = "/api/admin/community/categories", tag = "admin", security(("apiKey" = []), ("session" = [])), request_body = NewTerm,
    responses((status = 201, description = "Created", body = OneCategory)))]
async fn create_category(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewTerm>,
) -> Result<(StatusCode, axum::Json<OneCategory>), ApiError> {
    let category = state
        .services
        .community
        .create_category(caller.0.user.role, body.into())
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(OneCategory {
            category: category.into(),
        }),
    ))
}

/// A new tag (ADMIN).
#[utoipa::path(post, path = "/api/admin/community/tags", tag = "admin", security(("apiKey" = []), ("session" = [])), request_body = NewTerm,
    responses((status = 201, description = "Created", body = OneTag)))]
async fn create_tag(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewTerm>,
) -> Result<(StatusCode, axum::Json<OneTag>), ApiError> {
    let tag = state
        .services
        .community
        .create_tag(caller.0.user.role, body.into())
        .await?;
    Ok((StatusCode::CREATED, axum::Json(OneTag { tag: tag.into() })))
}
