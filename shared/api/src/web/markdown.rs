//! What users write, shown to others: Markdown rendered by a CommonMark renderer, then cleaned by
//! an allow-list sanitiser. Nothing executable survives (no script or style elements, no event
//! handler attributes, no `javascript:` or `data:` URLs); raw HTML in the Markdown is escaped or
//! removed like any other markup outside the list; links to elsewhere get
//! `rel="nofollow ugc noopener"`, so a post lends no ranking and no window handle to the pages it
//! links to.

use std::collections::HashSet;
use std::sync::OnceLock;

use pulldown_cmark::{html, Options, Parser};

/// The sanitised HTML of `markdown`.
pub fn render(markdown: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    let mut unsafe_html = String::with_capacity(markdown.len() * 2);
    html::push_html(&mut unsafe_html, Parser::new_ext(markdown, options));
    sanitiser().clean(&unsafe_html).to_string()
}

fn sanitiser() -> &'static ammonia::Builder<'static> {
    static BUILDER: OnceLock<ammonia::Builder<'static>> = OnceLock::new();
    BUILDER.get_or_init(|| {
        let mut builder = ammonia::Builder::default();
        builder
            .url_schemes(HashSet::from(["http", "https", "mailto"]))
            .link_rel(Some("nofollow ugc noopener"));
        builder
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_html() {
        assert_eq!(
            render("# Whales\n\nSome **bold** and [a link](https://example.com)."),
            "<h1>Whales</h1>\n<p>Some <strong>bold</strong> and <a href=\"https://example.com\" rel=\"nofollow ugc noopener\">a link</a>.</p>\n"
        );
    }

    #[test]
    fn nothing_executable_survives() {
        let hostile = "<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n\
                       [click](javascript:alert(3)) <a href=\"javascript:alert(4)\">x</a>\n\n\
                       <iframe src=\"https://evil\"></iframe><style>*{}</style>\
                       <div onclick=\"alert(5)\">div</div>";
        let html = render(hostile);
        for bad in [
            "<script",
            "onerror",
            "javascript:",
            "<iframe",
            "<style",
            "onclick",
            "alert(1)",
        ] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
        assert!(html.contains("div"), "{html}");
    }
}
