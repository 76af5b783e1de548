//! Writing in the community from the app: `/dashboard/posts` (the user's posts, a new one, an
//! edit, each with a Markdown preview rendered as the public page renders it) and
//! `/dashboard/community/{slug}` (a post with its comments, where the signed-in user comments and
//! replies). For administrators, `/admin` (the comments waiting for moderation) and
//! `/admin/email` (the email configuration and its tests; SUPER_ADMIN, as the API).

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Form;
use booktr_core::community::{NewComment, NewPost, PostEdit};
use booktr_core::types::{Email, Role};
use minijinja::{context, Value};

use super::failure::page_error;
use super::page::page;
use super::session::{field, SignedIn};
use crate::error::ApiError;
use crate::extract::Path;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::web::markdown;
use crate::wire::community as wire;
use crate::wire::Mirror;

pub fn router() -> Routes {
    Routes::new()
        .route("/dashboard/posts", get(my_posts))
        .route("/dashboard/posts/new", get(new_post).post(write_new))
        .route("/dashboard/posts/{id}", get(edit_post).post(write_edit))
        .route("/dashboard/community/{slug}", get(discussion).post(comment))
        .route("/admin", get(moderation))
        .route("/admin/comments/{id}", post(moderate))
        .route("/admin/email", get(email_config).post(email_test))
        .route("/admin/email/settings", post(email_settings))
}

async fn my_posts(State(state): State<AppState>, me: SignedIn) -> Response {
    match state.services.community.posts_of(&me.user.id).await {
        Ok(posts) => {
            let posts: Vec<wire::Post> = Mirror::mirror(posts);
            let title = me.lang.get("my_posts");
            page(
                &state,
                Some(&me),
                me.lang,
                "app/posts.html",
                title,
                context! { posts },
            )
            .await
            .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e.into()),
    }
}

/// The editor, with what was written so far and its preview; a new post also chooses its
/// category and tags.
async fn editor(state: &AppState, me: &SignedIn, post: Value, preview: Option<String>) -> Response {
    let taxonomy = async {
        let community = &state.services.community;
        Ok::<_, ApiError>((community.categories().await?, community.tags().await?))
    }
    .await;
    let (categories, tags) = match taxonomy {
        Ok(taxonomy) => taxonomy,
        Err(e) => return page_error(me.lang, e),
    };
    let title = me.lang.get("write_post");
    let categories: Vec<wire::Category> = Mirror::mirror(categories);
    let tags: Vec<wire::Tag> = Mirror::mirror(tags);
    let data = context! { post, preview, categories, tags };
    page(state, Some(me), me.lang, "app/post_edit.html", title, data)
        .await
        .unwrap_or_else(|r| r)
}

async fn new_post(State(state): State<AppState>, me: SignedIn) -> Response {
    editor(
        &state,
        &me,
        context! { action => "/dashboard/posts/new", draft => true },
        None,
    )
    .await
}

/// What the editor's form holds, for showing it again with its preview.
fn written(fields: &[(String, String)], action: &str, draft: bool) -> Value {
    context! {
        action,
        draft,
        title => field(fields, "title"),
        content => field(fields, "content"),
        excerpt => field(fields, "excerpt"),
        category => field(fields, "categoryId"),
        tags => fields.iter().filter(|(n, _)| n == "tagId").map(|(_, v)| v.clone()).collect::<Vec<_>>(),
    }
}

async fn write_new(
    State(state): State<AppState>,
    me: SignedIn,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(e) = me.check_fields(&fields) {
        return page_error(me.lang, e);
    }
    let content = field(&fields, "content").unwrap_or_default();
    if field(&fields, "intent").as_deref() == Some("preview") {
        let post = written(&fields, "/dashboard/posts/new", true);
        return editor(&state, &me, post, Some(markdown::render(&content))).await;
    }
    let new = NewPost {
        title: field(&fields, "title").unwrap_or_default(),
        content,
        excerpt: field(&fields, "excerpt").filter(|e| !e.trim().is_empty()),
        cover_image: None,
        category_id: field(&fields, "categoryId").filter(|c| !c.is_empty()),
        category_slug: None,
        tag_ids: Some(
            fields
                .iter()
                .filter(|(n, _)| n == "tagId")
                .map(|(_, v)| v.clone())
                .collect::<Vec<_>>(),
        )
        .filter(|ids| !ids.is_empty()),
        tag_slugs: None,
        status: Some(if field(&fields, "intent").as_deref() == Some("publish") {
            "PUBLISHED".into()
        } else {
            "DRAFT".into()
        }),
    };
    match state.services.community.create_post(&me.user, new).await {
        Ok(post) => Redirect::to(&format!("/dashboard/posts/{}", post.id)).into_response(),
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn edit_post(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
) -> Response {
    match state.services.community.post(&id, Some(&me.user)).await {
        Ok(post) if post.author.id == me.user.id => {
            let draft = post.status == booktr_core::community::PostStatus::Draft;
            let value = context! {
                action => format!("/dashboard/posts/{}", post.id),
                draft,
                slug => post.slug.clone(),
                title => post.title.clone(),
                content => post.content.clone(),
                excerpt => post.excerpt.clone(),
            };
            editor(&state, &me, value, Some(markdown::render(&post.content))).await
        }
        Ok(_) => page_error(me.lang, ApiError::not_found("post")),
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn write_edit(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(e) = me.check_fields(&fields) {
        return page_error(me.lang, e);
    }
    let content = field(&fields, "content").unwrap_or_default();
    let intent = field(&fields, "intent");
    if intent.as_deref() == Some("preview") {
        let draft = field(&fields, "draft").as_deref() == Some("true");
        let post = written(&fields, &format!("/dashboard/posts/{id}"), draft);
        return editor(&state, &me, post, Some(markdown::render(&content))).await;
    }
    let edit = PostEdit {
        title: field(&fields, "title").unwrap_or_default(),
        content,
        excerpt: field(&fields, "excerpt"),
        publish: intent.as_deref() == Some("publish"),
    };
    match state
        .services
        .community
        .edit_post(&me.user, &id, edit)
        .await
    {
        Ok(post) => Redirect::to(&format!("/dashboard/posts/{}", post.id)).into_response(),
        Err(e) => page_error(me.lang, e.into()),
    }
}

/// A post with its comments, each with a reply form, and a form for a new comment.
async fn discussion(
    State(state): State<AppState>,
    me: SignedIn,
    Path(slug): Path<String>,
) -> Response {
    let loaded = async {
        let community = &state.services.community;
        let post = community.post(&slug, Some(&me.user)).await?;
        let comments = community
            .comments(Some(&post.id), None, Some(&me.user))
            .await?;
        Ok::<_, ApiError>((post, comments))
    }
    .await;
    match loaded {
        Ok((post, comments)) => {
            let body = markdown::render(&post.content);
            let title = post.title.clone();
            page(
                &state,
                Some(&me),
                me.lang,
                "app/discussion.html",
                &title,
                context! {
                    post => wire::Post::from(post),
                    // Sanitised by `markdown::render`, the one HTML the templates mark safe.
                    body => Value::from_safe_string(body),
                    comments => Vec::<wire::Comment>::mirror(comments),
                },
            )
            .await
            .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e),
    }
}

async fn comment(
    State(state): State<AppState>,
    me: SignedIn,
    Path(slug): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(e) = me.check_fields(&fields) {
        return page_error(me.lang, e);
    }
    let new = NewComment {
        content: field(&fields, "content").unwrap_or_default(),
        post_id: None,
        post_slug: Some(slug.clone()),
        parent_id: field(&fields, "parentId").filter(|p| !p.is_empty()),
        mood: None,
    };
    match state.services.community.add_comment(&me.user, new).await {
        Ok(_) => Redirect::to(&format!("/dashboard/community/{slug}#comments")).into_response(),
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn moderation(State(state): State<AppState>, me: SignedIn) -> Response {
    match state
        .services
        .community
        .pending_comments(me.user.role)
        .await
    {
        Ok(pending) => {
            let pending: Vec<_> = pending
                .into_iter()
                .map(crate::wire::community::pending)
                .collect();
            let title = me.lang.get("moderation");
            page(
                &state,
                Some(&me),
                me.lang,
                "app/moderation.html",
                title,
                context! {
                    pending,
                    super_admin => me.user.role == Role::SuperAdmin,
                },
            )
            .await
            .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn moderate(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(e) = me.check_fields(&fields) {
        return page_error(me.lang, e);
    }
    let status = field(&fields, "status").unwrap_or_default();
    match state
        .services
        .community
        .moderate(me.user.role, &id, &status)
        .await
    {
        Ok(()) => Redirect::to("/admin").into_response(),
        Err(e) => page_error(me.lang, e.into()),
    }
}

fn super_admin(me: &SignedIn) -> Result<(), ApiError> {
    if me.user.role == Role::SuperAdmin {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "the email settings are for SUPER_ADMIN accounts",
        ))
    }
}

async fn email_page(state: &AppState, me: &SignedIn, tested: Option<Value>) -> Response {
    let loaded = async {
        super_admin(me)?;
        Ok::<_, ApiError>(state.services.email.config().await?)
    }
    .await;
    match loaded {
        Ok(config) => {
            let title = me.lang.get("email_settings");
            page(
                state,
                Some(me),
                me.lang,
                "app/email.html",
                title,
                context! { config => crate::wire::email::EmailConfig::from(config), tested },
            )
            .await
            .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e),
    }
}

async fn email_config(State(state): State<AppState>, me: SignedIn) -> Response {
    email_page(&state, &me, None).await
}

/// The two tests: the SMTP connection, or a message to an address.
async fn email_test(
    State(state): State<AppState>,
    me: SignedIn,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let tested = async {
        me.check_fields(&fields)?;
        super_admin(&me)?;
        let to = field(&fields, "to")
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .map(|t| Email::parse(&t).map_err(|e| ApiError::bad_request(e.0)))
            .transpose()?;
        Ok::<_, ApiError>(state.services.email.test(to.as_ref()).await?)
    }
    .await;
    match tested {
        Ok(outcome) => {
            let tested = context! { success => outcome.success, message => outcome.message };
            email_page(&state, &me, Some(tested)).await
        }
        Err(e) => page_error(me.lang, e),
    }
}

/// The sender's prefix and name, the reply-to prefix (none to remove it) and sandbox mode.
async fn email_settings(
    State(state): State<AppState>,
    me: SignedIn,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let saved = async {
        me.check_fields(&fields)?;
        super_admin(&me)?;
        let text = |name: &str| field(&fields, name).map(|v| v.trim().to_string());
        let patch = serde_json::json!({
            "senderPrefix": text("senderPrefix"),
            "senderName": text("senderName").filter(|n| !n.is_empty()),
            "replyToPrefix": text("replyToPrefix").filter(|p| !p.is_empty()),
            "sandbox": field(&fields, "sandbox").is_some(),
        });
        // The form's fields read as the API's body, so both check them alike.
        let patch = serde_json::from_value::<crate::wire::email::EmailSettingsPatch>(patch)
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        state.services.email.update(patch.into()).await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match saved {
        Ok(()) => Redirect::to("/admin/email").into_response(),
        Err(e) => page_error(me.lang, e),
    }
}
