//! The public pages' one layout: what each page's head says about it and what its header
//! shows the visitor, and the rendering of a page in it.

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, VARY};
use axum::response::{IntoResponse, Response};
use minijinja::{context, Value};
use serde::Serialize;

use super::app::i18n::Lang;
use super::app::Visitor;
use super::templates::templates;
use crate::error::ApiError;
use crate::state::AppState;

/// What every page's head says about it, and what its header shows the visitor.
#[derive(Serialize)]
pub(super) struct Head {
    pub(super) lang: String,
    pub(super) t: std::collections::BTreeMap<&'static str, &'static str>,
    pub(super) signed_in: bool,
    pub(super) site: String,
    pub(super) title: String,
    pub(super) description: String,
    pub(super) canonical: String,
    pub(super) og_type: &'static str,
    pub(super) og_image: Option<String>,
    pub(super) noindex: bool,
}

/// A page's head, as a visitor who is not signed in sees it in English; [`Head::seen_by`] makes
/// it the request's visitor's.
pub(super) fn head(state: &AppState, path: &str, title: String, description: String) -> Head {
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
    pub(super) fn seen_by(mut self, visitor: &Visitor) -> Head {
        self.lang = visitor.lang.code().into();
        self.t = visitor.lang.messages();
        self.signed_in = visitor.signed_in;
        self
    }
}

/// A page that anyone not signed in may keep for a minute (the community's pages); its
/// header differs by session and language, so caches key it by both, and a signed-in
/// visitor's copy is kept by no one.
pub(super) fn render(name: &str, head: Head, page: Value) -> Result<Response, ApiError> {
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

pub(super) fn render_with(
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
}
