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
pub mod markdown;
pub mod reader;
mod seo;
pub mod words;

use std::sync::OnceLock;

use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, VARY};
use axum::response::{IntoResponse, Response};
use booktr_core::community::{Comment, Post, PostFilter};
use minijinja::{context, Environment, Value};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::{Path, Query};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::openapi::ErrorBody;
use crate::wire::Mirror;
use crate::{AppState, Routes};

use app::i18n::Lang;
use app::Visitor;

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

fn templates() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        // The markup's own escaping (`& < > "`; every attribute here is double-quoted), since
        // minijinja's default also escapes `/`, turning each URL into `https:&#x2f;&#x2f;...`.
        env.set_formatter(|out, state, value| {
            if state.auto_escape() == minijinja::AutoEscape::Html && !value.is_safe() {
                let text = if value.is_none() || value.is_undefined() {
                    String::new()
                } else {
                    value.to_string()
                };
                out.write_str(&booktr_formats::markup::escape_attr(&text))?;
                Ok(())
            } else {
                minijinja::escape_formatter(out, state, value)
            }
        });
        words::register(&mut env);
        for (name, source) in [
            ("layout.html", include_str!("../../templates/layout.html")),
            ("home.html", include_str!("../../templates/home.html")),
            ("posts.html", include_str!("../../templates/posts.html")),
            ("post.html", include_str!("../../templates/post.html")),
            ("reader.html", include_str!("../../templates/reader.html")),
            (
                "reader_body.html",
                include_str!("../../templates/reader_body.html"),
            ),
            (
                "app/reader.html",
                include_str!("../../templates/app/reader.html"),
            ),
            (
                "app/proposal.html",
                include_str!("../../templates/app/proposal.html"),
            ),
            (
                "app/passage_editor.html",
                include_str!("../../templates/app/passage_editor.html"),
            ),
            (
                "app/layout.html",
                include_str!("../../templates/app/layout.html"),
            ),
            (
                "app/error.html",
                include_str!("../../templates/app/error.html"),
            ),
            (
                "app/signin.html",
                include_str!("../../templates/app/signin.html"),
            ),
            (
                "app/signup.html",
                include_str!("../../templates/app/signup.html"),
            ),
            (
                "app/library.html",
                include_str!("../../templates/app/library.html"),
            ),
            (
                "app/book.html",
                include_str!("../../templates/app/book.html"),
            ),
            (
                "app/settings.html",
                include_str!("../../templates/app/settings.html"),
            ),
            (
                "app/languages.html",
                include_str!("../../templates/app/languages.html"),
            ),
            (
                "app/deliveries.html",
                include_str!("../../templates/app/deliveries.html"),
            ),
            (
                "app/notifications.html",
                include_str!("../../templates/app/notifications.html"),
            ),
            (
                "app/glossaries.html",
                include_str!("../../templates/app/glossaries.html"),
            ),
            (
                "app/glossary.html",
                include_str!("../../templates/app/glossary.html"),
            ),
            (
                "app/review.html",
                include_str!("../../templates/app/review.html"),
            ),
            (
                "app/terms.html",
                include_str!("../../templates/app/terms.html"),
            ),
            (
                "app/term_rename.html",
                include_str!("../../templates/app/term_rename.html"),
            ),
            (
                "app/forgot.html",
                include_str!("../../templates/app/forgot.html"),
            ),
            (
                "app/reset.html",
                include_str!("../../templates/app/reset.html"),
            ),
            (
                "app/verified.html",
                include_str!("../../templates/app/verified.html"),
            ),
            (
                "app/posts.html",
                include_str!("../../templates/app/posts.html"),
            ),
            (
                "app/post_edit.html",
                include_str!("../../templates/app/post_edit.html"),
            ),
            (
                "app/discussion.html",
                include_str!("../../templates/app/discussion.html"),
            ),
            (
                "app/moderation.html",
                include_str!("../../templates/app/moderation.html"),
            ),
            (
                "app/email.html",
                include_str!("../../templates/app/email.html"),
            ),
        ] {
            // The sources are part of the binary and tested (below): a broken one is a build
            // defect, logged here and a 500 on its pages.
            if let Err(e) = env.add_template(name, source) {
                tracing::error!(template = name, error = %e, "a page template does not parse");
            }
        }
        env
    })
}

/// What every page's head says about it, and what its header shows the visitor.
#[derive(Serialize)]
struct Head {
    lang: String,
    t: std::collections::BTreeMap<&'static str, &'static str>,
    signed_in: bool,
    site: String,
    title: String,
    description: String,
    canonical: String,
    og_type: &'static str,
    og_image: Option<String>,
    noindex: bool,
}

/// A page's head, as a visitor who is not signed in sees it in English; [`Head::seen_by`] makes
/// it the request's visitor's.
fn head(state: &AppState, path: &str, title: String, description: String) -> Head {
    let site = state.settings.public_url.clone();
    Head {
        lang: Lang::En.code().into(),
        t: Lang::En.messages(),
        signed_in: false,
        canonical: format!("{site}{path}"),
        site,
        title,
        description,
        og_type: "website",
        og_image: None,
        noindex: false,
    }
}

impl Head {
    fn seen_by(mut self, visitor: &Visitor) -> Head {
        self.lang = visitor.lang.code().into();
        self.t = visitor.lang.messages();
        self.signed_in = visitor.signed_in;
        self
    }
}

/// A page that anyone not signed in may keep for a minute (the community's pages); its
/// header differs by session and language, so caches key it by both, and a signed-in
/// visitor's copy is kept by no one.
fn render(name: &str, head: Head, page: Value) -> Result<Response, ApiError> {
    let cache = if head.signed_in {
        "private, no-store"
    } else {
        "public, max-age=60"
    };
    let mut response = render_with(name, head, page, cache)?;
    response.headers_mut().insert(
        VARY,
        axum::http::HeaderValue::from_static("Cookie, Accept-Language"),
    );
    Ok(response)
}

fn render_with(
    name: &str,
    head: Head,
    page: Value,
    cache_control: &'static str,
) -> Result<Response, ApiError> {
    let template = templates()
        .get_template(name)
        .map_err(|e| ApiError::internal(&e))?;
    let html = template
        .render(context! { ..Value::from_serialize(&head), ..page })
        .map_err(|e| ApiError::internal(&e))?;
    Ok((
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, cache_control),
        ],
        html,
    )
        .into_response())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses_and_the_layout_escapes_what_it_is_given() {
        let head = Head {
            lang: "en".into(),
            t: Lang::En.messages(),
            signed_in: false,
            site: "https://booktr.example".into(),
            title: "<script>x</script>".into(),
            description: "d".into(),
            canonical: "https://booktr.example/".into(),
            og_type: "website",
            og_image: None,
            noindex: false,
        };
        let html = templates()
            .get_template("home.html")
            .unwrap()
            .render(context! { ..Value::from_serialize(&head), ..context! { posts => Vec::<u8>::new() } })
            .unwrap();
        assert!(
            html.contains("<title>&lt;script&gt;x&lt;/script&gt;</title>"),
            "{html}"
        );
        for name in ["posts.html", "post.html", "reader.html"] {
            templates().get_template(name).unwrap();
        }
    }

    #[test]
    fn every_file_of_the_templates_folder_is_a_template_that_parses() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        let mut dirs = vec![root.clone()];
        let mut found = 0;
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let name = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                assert!(
                    templates().get_template(&name).is_ok(),
                    "{name} is not registered or does not parse"
                );
                found += 1;
            }
        }
        assert!(found >= 14, "{found}");
    }
}
