//! The files search engines and feed readers ask for: `/robots.txt`, `/sitemap.xml` and
//! `/comunidad/feed.xml`, with absolute URLs from `BOOKTR_PUBLIC_URL`. XML is written by
//! maintained writers (quick-xml for the sitemap, the `rss` crate for the feed), never by
//! string concatenation.

use std::io::Cursor;

use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use booktr_core::community::PostFilter;
use chrono::{DateTime, Utc};
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use crate::error::ApiError;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::openapi::Routes;
use crate::state::AppState;

/// The feed's size (the spec's).
const FEED_ITEMS: u32 = 50;
/// Posts and shared books the sitemap lists at most (a sitemap file holds 50,000 URLs; this
/// bounds what one anonymous request reads).
const SITEMAP_POSTS: usize = 2_000;
const SITEMAP_SHARES: usize = 2_000;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(robots))
        .routes(routes!(sitemap))
        .routes(routes!(feed))
}

fn respond(content_type: &'static str, body: String) -> Response {
    (
        [
            (CONTENT_TYPE, content_type),
            (CACHE_CONTROL, "public, max-age=300"),
        ],
        body,
    )
        .into_response()
}

#[utoipa::path(get, path = "/robots.txt", tag = "pages",
    responses((status = 200, description = "robots.txt", content_type = "text/plain", body = String)))]
async fn robots(State(state): State<AppState>) -> Response {
    let site = &state.settings.public_url;
    respond(
        "text/plain; charset=utf-8",
        format!(
            "User-agent: *\nAllow: /\nDisallow: /dashboard/\nDisallow: /admin/\nDisallow: /api/\n\nSitemap: {site}/sitemap.xml\n"
        ),
    )
}

#[utoipa::path(get, path = "/sitemap.xml", tag = "pages",
    responses((status = 200, description = "The sitemap", content_type = "application/xml", body = String)))]
async fn sitemap(State(state): State<AppState>) -> Result<Response, ApiError> {
    let site = &state.settings.public_url;
    let community = &state.services.community;
    let posts = community.published_slugs(SITEMAP_POSTS).await?;
    let newest = posts.iter().filter_map(|(_, at)| *at).max();
    let mut urls: Vec<(String, Option<DateTime<Utc>>)> = vec![
        (format!("{site}/"), newest),
        (format!("{site}/comunidad"), newest),
    ];
    urls.extend(
        posts
            .into_iter()
            .map(|(slug, at)| (format!("{site}/comunidad/{slug}"), at)),
    );
    for category in community.categories().await? {
        urls.push((
            format!("{site}/comunidad/categoria/{}", category.slug),
            None,
        ));
    }
    for tag in community.tags().await? {
        urls.push((format!("{site}/comunidad/etiqueta/{}", tag.slug), None));
    }
    for (token, since) in state.services.books.public_shares(SITEMAP_SHARES).await? {
        urls.push((format!("{site}/shared/{token}"), Some(since)));
    }
    let xml = sitemap_xml(&urls).map_err(|e| ApiError::internal(&e))?;
    Ok(respond("application/xml; charset=utf-8", xml))
}

fn sitemap_xml(urls: &[(String, Option<DateTime<Utc>>)]) -> Result<String, std::io::Error> {
    let mut writer = Writer::new_with_indent(Cursor::new(Vec::new()), b' ', 2);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    writer
        .create_element("urlset")
        .with_attribute(("xmlns", "http://www.sitemaps.org/schemas/sitemap/0.9"))
        .write_inner_content(|w| {
            for (loc, lastmod) in urls {
                w.create_element("url").write_inner_content(|w| {
                    w.create_element("loc")
                        .write_text_content(BytesText::new(loc))?;
                    if let Some(at) = lastmod {
                        w.create_element("lastmod")
                            .write_text_content(BytesText::new(
                                &at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
                            ))?;
                    }
                    Ok(())
                })?;
            }
            Ok(())
        })?;
    String::from_utf8(writer.into_inner().into_inner())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The community's RSS feed.
#[utoipa::path(get, path = "/comunidad/feed.xml", tag = "pages",
    responses((status = 200, description = "RSS 2.0", content_type = "application/rss+xml", body = String)))]
async fn feed(State(state): State<AppState>) -> Result<Response, ApiError> {
    let site = &state.settings.public_url;
    let posts = state
        .services
        .community
        .posts(
            PostFilter {
                page: 1,
                limit: FEED_ITEMS,
                ..PostFilter::default()
            },
            None,
        )
        .await?
        .posts;
    let items: Vec<rss::Item> = posts
        .iter()
        .map(|post| {
            let link = format!("{site}/comunidad/{}", post.slug);
            let mut dublin_core = rss::extension::dublincore::DublinCoreExtension::default();
            dublin_core.set_creators(vec![post.author.name.clone()]);
            rss::ItemBuilder::default()
                .title(Some(post.title.clone()))
                .link(Some(link.clone()))
                // Feed readers take a description as HTML; an excerpt is plain text, so it goes
                // escaped: a `<script>` someone typed is shown, never run.
                .description(post.excerpt.as_deref().map(escape_html))
                .pub_date(post.published_at.map(|at| at.to_rfc2822()))
                .guid(Some(
                    rss::GuidBuilder::default()
                        .value(link)
                        .permalink(true)
                        .build(),
                ))
                .dublin_core_ext(Some(dublin_core))
                .build()
        })
        .collect();
    let channel = rss::ChannelBuilder::default()
        .title("booktr — Comunidad")
        .link(format!("{site}/comunidad"))
        .description("Posts from booktr's readers and translators.")
        .language(Some("es".to_string()))
        .namespaces(std::collections::BTreeMap::from([(
            "dc".to_string(),
            rss::extension::dublincore::NAMESPACE.to_string(),
        )]))
        .items(items)
        .build();
    Ok(respond(
        "application/rss+xml; charset=utf-8",
        channel.to_string(),
    ))
}

/// `text` as HTML that shows exactly its characters.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sitemap_escapes_its_urls_and_dates_them() {
        let at = DateTime::parse_from_rfc3339("2026-11-23T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let xml = sitemap_xml(&[
            ("https://b.example/".into(), Some(at)),
            ("https://b.example/a?x=1&y=2".into(), None),
        ])
        .unwrap();
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
        assert!(xml.contains("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"));
        assert!(
            xml.contains("<loc>https://b.example/a?x=1&amp;y=2</loc>"),
            "{xml}"
        );
        assert!(
            xml.contains("<lastmod>2026-11-23T10:00:00Z</lastmod>"),
            "{xml}"
        );
    }
}
