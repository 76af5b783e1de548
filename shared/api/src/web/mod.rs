//! The public website: server-rendered pages readable without JavaScript, from templates that
//! escape everything they are given unless it is marked as sanitised HTML (`|safe`, used only
//! for [`markdown::render`]'s output; the passage editor's preview is built escaped, as a safe
//! value, by `app::editor`). One layout for every page: `<title>`, description,
//! canonical URL and Open Graph tags, the app's style sheet and a header that offers the
//! library to a signed-in visitor and sign-in and sign-up to anyone else, in the visitor's
//! language ([`app::Visitor`]).
//!
//! Pages: `/` (home), `/comunidad` (posts, paged), `/comunidad/{slug}` (a post and its approved
//! comments), `/comunidad/categoria/{slug}` and `/comunidad/etiqueta/{slug}`; and the files for
//! search engines and feed readers (`seo`).

pub mod app;
mod layout;
pub mod markdown;
pub mod reader;
mod seo;
mod templates;
pub mod words;

use axum::extract::State;
use axum::response::Response;
use booktr_core::community::{Comment, Post, PostFilter};
use minijinja::context;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::{Path, Query};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::Mirror;

use app::Visitor;
use layout::{head, render};

/// Posts on one page of the list.
const PER_PAGE: u32 = 10;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .merge(seo::router())
        .routes(routes!(home))
        .routes(routes!(community))
        .routes(routes!(post))
        .routes(routes!(category))
        .routes(routes!(tag))
}

/// A post as the templates show it: as the API does, with its date.
#[derive(Serialize)]
struct PostView {
    #[serde(flatten)]
    post: crate::wire::community::Post,
    date: String,
}

fn view(post: &Post) -> PostView {
    PostView {
        post: post.clone().into(),
        date: post
            .published_at
            .unwrap_or(post.created_at)
            .format("%Y-%m-%d")
            .to_string(),
    }
}

/// The home page: what the service does and the latest community posts.
#[utoipa::path(get, path = "/", tag = "pages", responses((status = 200, description = "HTML page", content_type = "text/html", body = String)))]
async fn home(State(state): State<AppState>, visitor: Visitor) -> Result<Response, ApiError> {
    let filter = PostFilter {
        page: 1,
        limit: 5,
        ..PostFilter::default()
    };
    let page = state.services.community.posts(filter, None).await?;
    let posts: Vec<_> = page.posts.iter().map(view).collect();
    let lang = visitor.lang;
    let head = head(
        &state,
        "/",
        format!("booktr — {}", lang.get("home_heading")),
        lang.get("home_description").into(),
    )
    .seen_by(&visitor);
    render("home.html", head, context! { posts })
}

#[derive(Deserialize)]
struct PageQuery {
    page: Option<String>,
}

fn page_number(q: &PageQuery) -> Result<u32, ApiError> {
    match &q.page {
        None => Ok(1),
        Some(p) => p
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=100_000).contains(n))
            .ok_or_else(|| ApiError::bad_request("page: a whole number from 1")),
    }
}

/// Which posts a list page shows.
enum Selection {
    All,
    Category(String),
    Tag(String),
}

/// A list page of posts: all of them, or those of a category or tag (404 for an unknown one).
async fn list_page(
    state: &AppState,
    visitor: &Visitor,
    selection: Selection,
    q: &PageQuery,
) -> Result<Response, ApiError> {
    let community = &state.services.community;
    let number = page_number(q)?;
    let categories = community.categories().await?;
    let tags = community.tags().await?;
    let mut filter = PostFilter {
        page: number,
        limit: PER_PAGE,
        ..PostFilter::default()
    };
    let (path, heading, description) = match &selection {
        Selection::All => (
            "/comunidad".to_string(),
            visitor.lang.get("community").to_string(),
            visitor.lang.get("community_description").to_string(),
        ),
        Selection::Category(slug) => {
            let category = categories
                .iter()
                .find(|c| &c.slug == slug)
                .ok_or_else(|| ApiError::not_found("category"))?;
            filter.category = Some(category.slug.clone());
            (
                format!("/comunidad/categoria/{}", category.slug),
                category.name.clone(),
                category
                    .description
                    .clone()
                    .unwrap_or_else(|| format!("Posts in {}.", category.name)),
            )
        }
        Selection::Tag(slug) => {
            let tag = tags
                .iter()
                .find(|t| &t.slug == slug)
                .ok_or_else(|| ApiError::not_found("tag"))?;
            filter.tag = Some(tag.slug.clone());
            (
                format!("/comunidad/etiqueta/{}", tag.slug),
                format!("#{}", tag.name),
                format!("Posts tagged {}.", tag.name),
            )
        }
    };
    let page = community.posts(filter, None).await?;
    if number > 1 && page.posts.is_empty() {
        return Err(ApiError::not_found("page"));
    }
    let link = |n: u32| {
        if n == 1 {
            path.clone()
        } else {
            format!("{path}?page={n}")
        }
    };
    let total_pages = page.pagination.total_pages.max(1);
    let previous = (number > 1).then(|| link(number - 1));
    let next = (u64::from(number) < total_pages).then(|| link(number + 1));
    let posts: Vec<_> = page.posts.iter().map(view).collect();
    let title = if number > 1 {
        format!("{heading} — page {number} — booktr")
    } else {
        format!("{heading} — booktr")
    };
    let head = head(state, &link(number), title, description).seen_by(visitor);
    let categories: Vec<crate::wire::community::Category> = Mirror::mirror(categories);
    let tags: Vec<crate::wire::community::Tag> = Mirror::mirror(tags);
    render(
        "posts.html",
        head,
        context! {
            heading,
            posts,
            categories,
            tags,
            page => number,
            total_pages,
            previous,
            next,
        },
    )
}

/// The community's posts, paged.
#[utoipa::path(get, path = "/comunidad", tag = "pages",
    params(("page" = Option<u32>, Query, minimum = 1)), responses((status = 200, description = "HTML page", content_type = "text/html", body = String),
        (status = 404, description = "Past the last page", body = ErrorBody)))]
async fn community(
    State(state): State<AppState>,
    visitor: Visitor,
    Query(q): Query<PageQuery>,
) -> Result<Response, ApiError> {
    list_page(&state, &visitor, Selection::All, &q).await
}

/// A category's posts, paged.
#[utoipa::path(get, path = "/comunidad/categoria/{slug}", tag = "pages",
    params(("slug" = String, Path), ("page" = Option<u32>, Query, minimum = 1)), responses((status = 200, description = "HTML page", content_type = "text/html", body = String),
        (status = 404, description = "No such category or page", body = ErrorBody)))]
async fn category(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<Response, ApiError> {
    list_page(&state, &visitor, Selection::Category(slug), &q).await
}

/// A tag's posts, paged.
#[utoipa::path(get, path = "/comunidad/etiqueta/{slug}", tag = "pages",
    params(("slug" = String, Path), ("page" = Option<u32>, Query, minimum = 1)), responses((status = 200, description = "HTML page", content_type = "text/html", body = String),
        (status = 404, description = "No such tag or page", body = ErrorBody)))]
async fn tag(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<Response, ApiError> {
    list_page(&state, &visitor, Selection::Tag(slug), &q).await
}

/// A comment as the page shows it: flattened with its depth, its Markdown rendered.
#[derive(Serialize)]
struct CommentView {
    depth: usize,
    author: String,
    date: String,
    html: String,
}

fn flatten(comments: &[Comment], depth: usize, out: &mut Vec<CommentView>) {
    for comment in comments {
        let html = if comment.status == "DELETED" {
            "<p><em>[deleted comment]</em></p>".to_string()
        } else {
            markdown::render(&comment.content)
        };
        out.push(CommentView {
            depth: depth.min(8),
            author: comment
                .author
                .as_ref()
                .map_or_else(|| "—".to_string(), |a| a.name.clone()),
            date: comment.created_at.format("%Y-%m-%d").to_string(),
            html,
        });
        flatten(&comment.replies, depth + 1, out);
    }
}

/// A post and its approved comments.
#[utoipa::path(get, path = "/comunidad/{slug}", tag = "pages",
    params(("slug" = String, Path)), responses((status = 200, description = "HTML page", content_type = "text/html", body = String),
        (status = 404, description = "No such post", body = ErrorBody)))]
async fn post(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(slug): Path<String>,
) -> Result<Response, ApiError> {
    let community = &state.services.community;
    // Anonymous: a page shows published posts only, whoever asks (pages are cached).
    let post = community.post(&slug, None).await?;
    let comments = community.comments(Some(&post.id), None, None).await?;
    let mut flat = Vec::new();
    flatten(&comments, 0, &mut flat);
    let description = post.excerpt.clone().unwrap_or_else(|| post.title.clone());
    let mut head = head(
        &state,
        &format!("/comunidad/{}", post.slug),
        format!("{} — booktr", post.title),
        description,
    )
    .seen_by(&visitor);
    head.og_type = "article";
    head.og_image = post.cover_image.clone();
    render(
        "post.html",
        head,
        context! {
            post => view(&post),
            content_html => markdown::render(&post.content),
            comments => flat,
        },
    )
}
