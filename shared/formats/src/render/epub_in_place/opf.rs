//! The package document of a book translated in place: its language, title, date,
//! stylesheet and page progression set for the translation, every other byte kept.

use crate::epub::Package;
use crate::markup::{escape_attr, escape_text};
use crate::render::edit::{apply, attr_of, rewrite_tag, scan, Edit, Found};
use crate::render::{is_rtl, Layout, RenderOptions};

/// The package document: the target language, the translated title with the original kept as
/// a second title, the modification date, and a bilingual book's stylesheet.
pub(super) fn rewrite_opf(
    package: &Package,
    options: &RenderOptions,
    layout: Layout,
    css_href: &str,
) -> String {
    let langs = Languages {
        target: options.language.as_str(),
        source: package.manuscript.language.as_deref(),
    };
    let langs = &langs;
    let source = package.opf_text.as_str();
    let mut opf = Opf {
        source,
        found: scan(source),
        edits: Vec::new(),
    };
    let epub3 = opf
        .found
        .iter()
        .find(|f| f.name == "package")
        .and_then(|p| attr_of(p, "version"))
        .is_some_and(|v| v.trim_start().starts_with('3'));
    opf.language(layout, langs);
    if let Some(title) = options.title.as_deref().filter(|t| !t.trim().is_empty()) {
        opf.title(title, langs, epub3);
    }
    if epub3 {
        opf.modified(&options.modified);
    }
    if layout == Layout::Bilingual {
        opf.bilingual_stylesheet(css_href);
    }
    opf.direction(langs.target);
    apply(source, opf.edits)
}

/// The language of the translation and, when the book declares one, of its source.
struct Languages<'a> {
    target: &'a str,
    source: Option<&'a str>,
}

/// The package document being edited: its elements and the edits so far.
struct Opf<'a> {
    source: &'a str,
    found: Vec<Found>,
    edits: Vec<Edit>,
}

impl Opf<'_> {
    /// The first element named `name` inside the metadata.
    fn in_metadata(&self, name: &str) -> Option<&Found> {
        self.found.iter().find(|f| {
            f.name == name
                && f.ancestors
                    .iter()
                    .any(|&a| self.found[a].name == "metadata")
        })
    }

    /// Adds `text` at the end of the metadata, if the package has any.
    fn add_to_metadata(&mut self, text: String) {
        if let Some(m) = self.found.iter().find(|f| f.name == "metadata") {
            let end = m.content.end;
            self.edits.push(Edit {
                range: end..end,
                text,
            });
        }
    }

    /// An id the package does not use yet, from `base`.
    fn unique(&self, base: &str) -> String {
        let mut id = base.to_string();
        let mut n = 1;
        while self.source.contains(&format!("\"{id}\"")) {
            n += 1;
            id = format!("{base}-{n}");
        }
        id
    }

    /// Language: the first is the book's; a bilingual book is in both.
    fn language(&mut self, layout: Layout, langs: &Languages<'_>) {
        let target = escape_text(langs.target);
        let Some(language) = self.in_metadata("language") else {
            self.add_to_metadata(format!("  <dc:language>{target}</dc:language>\n  "));
            return;
        };
        let content = language.content.clone();
        if let (Layout::Bilingual, Some(src)) = (layout, langs.source) {
            if src != langs.target {
                let end = content.end;
                let close = self
                    .source
                    .get(end..)
                    .and_then(|r| r.find('>'))
                    .map(|i| end + i + 1);
                if let Some(close) = close {
                    self.edits.push(Edit {
                        range: close..close,
                        text: format!("\n    <dc:language>{}</dc:language>", escape_text(src)),
                    });
                }
            }
        }
        self.edits.push(Edit {
            range: content,
            text: target,
        });
    }

    /// Title: the translation first (reading systems show the first), the original kept after.
    fn title(&mut self, title: &str, langs: &Languages<'_>, epub3: bool) {
        let id = self.unique("booktr-title");
        let new_title = format!(
            r#"<dc:title id="{id}" xml:lang="{}">{}</dc:title>"#,
            escape_text(langs.target),
            escape_text(title)
        );
        match self.in_metadata("title") {
            Some(original) => {
                let tag = original.tag.clone();
                let has_lang = original.attrs.iter().any(|(k, _)| k == "xml:lang");
                self.edits.push(Edit {
                    range: tag.start..tag.start,
                    text: format!("{new_title}\n    "),
                });
                if let (false, Some(src), Some(written)) =
                    (has_lang, langs.source, self.source.get(tag.clone()))
                {
                    self.edits.push(Edit {
                        range: tag,
                        text: rewrite_tag(written, &[("xml:lang", Some(src))], None, false),
                    });
                }
            }
            None => self.add_to_metadata(format!("  {new_title}\n  ")),
        }
        if epub3 {
            self.add_to_metadata(format!(
                "  <meta refines=\"#{id}\" property=\"title-type\">main</meta>\n  "
            ));
        }
    }

    /// The modification date, set or added.
    fn modified(&mut self, modified: &str) {
        let found = self.found.iter().find(|f| {
            f.name == "meta"
                && attr_of(f, "property") == Some("dcterms:modified")
                && f.ancestors
                    .iter()
                    .any(|&a| self.found[a].name == "metadata")
        });
        match found {
            Some(m) if !m.content.is_empty() => {
                let range = m.content.clone();
                self.edits.push(Edit {
                    range,
                    text: escape_text(modified),
                });
            }
            _ => self.add_to_metadata(format!(
                "  <meta property=\"dcterms:modified\">{}</meta>\n  ",
                escape_text(modified)
            )),
        }
    }

    /// A bilingual book's stylesheet (`href`, relative to the package document) in the
    /// manifest.
    fn bilingual_stylesheet(&mut self, href: &str) {
        if let Some(manifest) = self.found.iter().find(|f| f.name == "manifest") {
            let end = manifest.content.end;
            let id = self.unique("booktr-bilingual-css");
            self.edits.push(Edit {
                range: end..end,
                text: format!(
                    "  <item id=\"{id}\" href=\"{}\" media-type=\"text/css\"/>\n  ",
                    escape_attr(href)
                ),
            });
        }
    }

    /// Page progression follows the target language's direction.
    fn direction(&mut self, target: &str) {
        let Some(spine) = self.found.iter().find(|f| f.name == "spine") else {
            return;
        };
        let declared = attr_of(spine, "page-progression-direction").is_some();
        let direction = if is_rtl(target) {
            Some("rtl")
        } else if declared {
            Some("ltr")
        } else {
            None
        };
        if let (Some(direction), Some(tag)) = (direction, self.source.get(spine.tag.clone())) {
            self.edits.push(Edit {
                range: spine.tag.clone(),
                text: rewrite_tag(
                    tag,
                    &[("page-progression-direction", Some(direction))],
                    None,
                    false,
                ),
            });
        }
    }
}
