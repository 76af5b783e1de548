//! The community: `GET/POST /api/community/posts`, `GET /api/community/posts/{id}` (id or
//! slug), `GET /api/community/categories`, `GET /api/community/tags`, and the admin routes
//! that make categories and tags (`POST /api/admin/community/categories`, `.../tags`);
//! comments (`GET/POST /api/community/comments`) and their moderation
//! (`GET /api/admin/comments`, the queue of PENDING ones; `PATCH /api/admin/comments/{id}`),
//! and featuring a post (`PATCH /api/admin/community/posts/{id}` `{featured}`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, patch, post};
use axum::Router;
use booktr_core::community::{
    Category, Comment, CommunityError, NewComment, NewPost, NewTerm, Post, PostFilter, PostPage,
    Tag,
};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::{Json, Query};
use crate::{AppState, Caller, OptionalCaller};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/community/posts", get(list).post(create))
        .route("/api/community/posts/{id}", get(one))
        .route("/api/community/categories", get(categories))
        .route("/api/community/tags", get(tags))
        .route("/api/admin/community/categories", post(create_category))
        .route("/api/admin/community/tags", post(create_tag))
        .route("/api/community/comments", get(comments).post(comment))
        .route("/api/admin/community/posts/{id}", patch(feature))
        .route("/api/admin/comments", get(pending))
        .route("/api/admin/comments/{id}", patch(moderate))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommentsQuery {
    post_id: Option<String>,
    post_slug: Option<String>,
}

#[derive(Serialize)]
struct Comments {
    comments: Vec<Comment>,
}

#[derive(Serialize)]
struct OneComment {
    comment: Comment,
}

#[derive(Serialize)]
struct Pending {
    comments: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Moderation {
    status: String,
}

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
    Ok(axum::Json(Comments { comments }))
}

async fn comment(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewComment>,
) -> Result<(StatusCode, axum::Json<OneComment>), ApiError> {
    let comment = state
        .services
        .community
        .add_comment(&caller.0.user, body)
        .await?;
    Ok((StatusCode::CREATED, axum::Json(OneComment { comment })))
}

async fn pending(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<Pending>, ApiError> {
    let comments = state
        .services
        .community
        .pending_comments(caller.0.user.role)
        .await?;
    Ok(axum::Json(Pending { comments }))
}

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Featuring {
    featured: bool,
}

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
    Ok(axum::Json(OnePost { post }))
}

impl From<CommunityError> for ApiError {
    fn from(e: CommunityError) -> Self {
        match e {
            CommunityError::Invalid(m) => ApiError::bad_request(m),
            CommunityError::Forbidden(m) => ApiError::forbidden(m),
            CommunityError::NotFound(what) => ApiError::not_found(what),
            CommunityError::Store(s) => s.into(),
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

#[derive(Serialize)]
struct OnePost {
    post: Post,
}

#[derive(Serialize)]
struct Categories {
    categories: Vec<Category>,
}

#[derive(Serialize)]
struct Tags {
    tags: Vec<Tag>,
}

#[derive(Serialize)]
struct OneCategory {
    category: Category,
}

#[derive(Serialize)]
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
        state.services.community.posts(filter, viewer).await?,
    ))
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewPost>,
) -> Result<(StatusCode, axum::Json<OnePost>), ApiError> {
    let post = state
        .services
        .community
        .create_post(&caller.0.user, body)
        .await?;
    Ok((StatusCode::CREATED, axum::Json(OnePost { post })))
}

async fn one(
    State(state): State<AppState>,
    OptionalCaller(caller): OptionalCaller,
    Path(id): Path<String>,
) -> Result<axum::Json<OnePost>, ApiError> {
    let viewer = caller.as_ref().map(|p| &p.user);
    let post = state.services.community.post(&id, viewer).await?;
    Ok(axum::Json(OnePost { post }))
}

async fn categories(State(state): State<AppState>) -> Result<axum::Json<Categories>, ApiError> {
    let categories = state.services.community.categories().await?;
    Ok(axum::Json(Categories { categories }))
}

async fn tags(State(state): State<AppState>) -> Result<axum::Json<Tags>, ApiError> {
    let tags = state.services.community.tags().await?;
    Ok(axum::Json(Tags { tags }))
}

async fn create_category(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewTerm>,
) -> Result<(StatusCode, axum::Json<OneCategory>), ApiError> {
    let category = state
        .services
        .community
        .create_category(caller.0.user.role, body)
        .await?;
    Ok((StatusCode::CREATED, axum::Json(OneCategory { category })))
}

async fn create_tag(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewTerm>,
) -> Result<(StatusCode, axum::Json<OneTag>), ApiError> {
    let tag = state
        .services
        .community
        .create_tag(caller.0.user.role, body)
        .await?;
    Ok((StatusCode::CREATED, axum::Json(OneTag { tag })))
}
