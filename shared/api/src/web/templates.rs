//! The pages' one template engine: every template compiled into the binary, escaping all it
//! is given unless it is marked as sanitised HTML.

use std::sync::OnceLock;

use minijinja::{Environment, Error, Output, State, Value};

use super::words;

/// Every page's template, by the name pages render it with (the public site's at the top of
/// `templates/`, the app's under `app/`).
const SOURCES: &[(&str, &str)] = &[
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
        "app/memory.html",
        include_str!("../../templates/app/memory.html"),
    ),
    (
        "app/memory_pair.html",
        include_str!("../../templates/app/memory_pair.html"),
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
    (
        "app/xliff_report.html",
        include_str!("../../templates/app/xliff_report.html"),
    ),
];

/// The engine, made once per process.
pub(crate) fn templates() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_formatter(escape_markup);
        words::register(&mut env);
        for (name, source) in SOURCES {
            // The sources are part of the binary and tested (below): a broken one is a build
            // defect, logged here and a 500 on its pages.
            if let Err(e) = env.add_template(name, source) {
                tracing::error!(template = name, error = %e, "a page template does not parse");
            }
        }
        env
    })
}

/// The markup's own escaping (`& < > "`; every attribute here is double-quoted), since
/// minijinja's default also escapes `/`, turning each URL into `https:&#x2f;&#x2f;...`.
fn escape_markup(out: &mut Output<'_>, state: &State<'_, '_>, value: &Value) -> Result<(), Error> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
