//! An EPUB translated in place: the source package, file for file, with each block's translated
//! text put back where the extractor found it. Stylesheets, fonts, images, ids, links and the
//! reading order stay as they were; only content documents, the package document and the
//! navigation files change, and those only where there is text to change.
//!
//! Which element a block came from is found by walking the source again with the extractor's
//! own traversal ([`crate::epub::read_package`]), so nothing beyond the manuscript needs to be
//! kept. When that walk does not give the blocks the translation was made from, the answer is
//! [`FormatError::Mismatch`] and the caller renders the manuscript afresh.

use std::collections::HashMap;
use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use self::block::to_xhtml;
use self::opf::rewrite_opf;
use super::edit::{apply, attr_of, declare_utf8, rewrite_tag, scan, tag_attrs, Edit};
use super::{is_rtl, Layout, RenderOptions, Rendition};
use crate::archive::{Archive, Limits};
use crate::budget::Budget;
use crate::epub::{read_package, Package, Position};
use crate::error::FormatError;
use crate::manuscript::{Block, BlockKind, Chapter};
use crate::markup::{self, escape_attr, escape_text};
use crate::xhtml::{Located, Origin};

/// The stylesheet a bilingual book adds, beside its package document.
const BILINGUAL_CSS_NAME: &str = "booktr-bilingual.css";
const BILINGUAL_CSS: &str = ".booktr-original { color: #666; font-size: 0.85em; }
.booktr-translation { display: inline; }
p.booktr-translation, div.booktr-translation, blockquote.booktr-translation,
h1.booktr-translation, h2.booktr-translation, h3.booktr-translation, h4.booktr-translation,
h5.booktr-translation, h6.booktr-translation, pre.booktr-translation { display: block; }
";
const ORIGINAL_CLASS: &str = "booktr-original";
const TRANSLATION_CLASS: &str = "booktr-translation";

/// Block elements a bilingual book may repeat as a sibling; the others (a list item, a table
/// cell, a note's `aside`) get the translation inside, after the original words.
const COPYABLE: &[&str] = &[
    "p",
    "div",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "address",
    "center",
];

/// Renders `original_epub` with its text replaced by `translated`.
///
/// `translated[i]` is the translation of chapter `i` of the manuscript `epub::extract` gives for
/// the same file (the same blocks in the same order), or None to keep that chapter as it is (a
/// partial download). The title comes from `options.title`, the language from
/// `options.language`, `dcterms:modified` from `options.modified`.
pub fn render(
    original_epub: &[u8],
    translated: &[Option<Chapter>],
    options: &RenderOptions,
    layout: Layout,
    budget: Budget,
) -> Result<Rendition, FormatError> {
    let package = read_package(original_epub, budget, true)?;
    check_match(&package, translated)?;
    let options = &RenderOptions {
        title: book_title(&package, translated, options.title.as_deref()),
        ..options.clone()
    };
    let limits = Limits::for_file(original_epub.len(), budget);
    let target = options.language.as_str();
    let source_language = package.manuscript.language.clone();
    let langs = Languages {
        target,
        source: source_language.as_deref(),
    };
    let mut warnings = Vec::new();

    let (edits, left_in_original) = block_edits(&package, translated, layout, &langs);
    if left_in_original > 0 {
        warnings.push(format!(
            "{left_in_original} passages kept their original text: their markup in the source \
             could not take a translation in place"
        ));
    }

    let opf_dir = package
        .opf_path
        .rsplit_once('/')
        .map(|(dir, _)| format!("{dir}/"))
        .unwrap_or_default();
    let css_path = format!("{opf_dir}{BILINGUAL_CSS_NAME}");
    let mut changed = Changed::within(limits);
    for (document, mut edits) in package.documents.iter().zip(edits) {
        if edits.is_empty() {
            continue;
        }
        document_edits(
            &document.source,
            &document.located,
            &document.path,
            &css_path,
            layout,
            target,
            &mut edits,
        );
        let mut text = apply(&document.source, edits);
        if !document.utf8 {
            text = declare_utf8(&text);
        }
        changed.keep(&document.path, text)?;
    }

    let mut zip = Archive::open(original_epub, limits)?;
    if let Some(nav) = &package.nav_path {
        if let Some(source) = zip.read_text(nav)? {
            if let Some(text) = translate_nav(&package, translated, nav, &source, target) {
                changed.keep(nav, text)?;
            }
        }
    }
    if let Some(ncx) = &package.ncx_path {
        if let Some(source) = zip.read_text(ncx)? {
            if let Some(text) = translate_ncx(&package, translated, ncx, &source, options) {
                changed.keep(ncx, text)?;
            }
        }
    }
    let opf = rewrite_opf(&package, options, layout, BILINGUAL_CSS_NAME);
    changed.keep(&package.opf_path, opf)?;

    let bytes = write_zip(&mut zip, &changed.files, layout, &css_path)?;
    // The source's limits: its documents were read under them, and the changed ones kept within.
    let (bytes, removed) = super::inert::epub(bytes, limits)?;
    warnings.extend(removed.warning());
    Ok(Rendition { bytes, warnings })
}

/// Every content document's edits that put the translated blocks in place, and how many
/// blocks kept their original text because their markup could not take a translation.
fn block_edits(
    package: &Package,
    translated: &[Option<Chapter>],
    layout: Layout,
    langs: &Languages<'_>,
) -> (Vec<Vec<Edit>>, usize) {
    let mut edits: Vec<Vec<Edit>> = vec![Vec::new(); package.documents.len()];
    let mut left_in_original = 0usize;
    for (chapter_index, chapter) in translated.iter().enumerate() {
        let Some(chapter) = chapter else { continue };
        let source_blocks = &package.manuscript.chapters[chapter_index].blocks;
        for ((block, original), &(doc, index)) in chapter
            .blocks
            .iter()
            .zip(source_blocks)
            .zip(&package.origins[chapter_index])
        {
            if block.text == original.text {
                continue;
            }
            let document = &package.documents[doc];
            let Some(origin) = document.located.origins.get(index) else {
                left_in_original += 1;
                continue;
            };
            let placed = place_block(
                &document.source,
                &document.located,
                origin,
                block,
                layout,
                langs,
                &mut edits[doc],
            );
            if !placed {
                left_in_original += 1;
            }
        }
    }
    (edits, left_in_original)
}

/// The package's files written anew, by entry name, within the source's limits on one entry
/// and on all of them.
struct Changed {
    files: HashMap<String, Vec<u8>>,
    total: u64,
    limits: Limits,
}

impl Changed {
    fn within(limits: Limits) -> Changed {
        Changed {
            files: HashMap::new(),
            total: 0,
            limits,
        }
    }

    fn keep(&mut self, path: &str, text: String) -> Result<(), FormatError> {
        let len = text.len() as u64;
        self.total += len;
        if len > self.limits.max_entry_bytes || self.total > self.limits.max_total_bytes {
            return Err(FormatError::TooLarge(format!(
                "the translated '{path}' would be larger than the limit"
            )));
        }
        self.files.insert(path.to_string(), text.into_bytes());
        Ok(())
    }
}

struct Languages<'a> {
    target: &'a str,
    source: Option<&'a str>,
}

/// The translation must have the chapters and blocks the book's walk gives.
fn check_match(package: &Package, translated: &[Option<Chapter>]) -> Result<(), FormatError> {
    super::check_alignment(
        translated.iter().map(Option::as_ref),
        translated.len(),
        &package.manuscript.chapters,
        "the book",
    )
}

/// Puts one block's translation in its place; false when it cannot be (it is left as it was).
fn place_block(
    source: &str,
    located: &Located,
    origin: &Origin,
    block: &Block,
    layout: Layout,
    langs: &Languages<'_>,
    edits: &mut Vec<Edit>,
) -> bool {
    let Some(original) = source.get(origin.range.clone()) else {
        return false;
    };
    if let BlockKind::Image { .. } = block.kind {
        let alt = block.plain_text();
        edits.push(Edit {
            range: origin.range.clone(),
            text: rewrite_tag(original, &[("alt", Some(&alt))], None, false),
        });
        return true;
    }
    if !origin.balanced || origin.range.is_empty() {
        return false;
    }
    if markup::parse(&block.text).is_err() {
        return false;
    }
    match layout {
        Layout::Translated => {
            edits.push(Edit {
                range: origin.range.clone(),
                text: to_xhtml(&block.text, origin, source, false),
            });
        }
        Layout::Bilingual => {
            let translation = to_xhtml(&block.text, origin, source, true);
            let target = lang_attrs(Some(langs.target), langs.source);
            let original_langs = lang_attrs(langs.source, Some(langs.target));
            let container = origin
                .container
                .and_then(|c| located.containers.get(c))
                .filter(|c| c.holds_one_block() && COPYABLE.contains(&c.name.as_str()));
            match container.and_then(|c| Some((c, c.end_tag.clone()?))) {
                Some((container, end_tag)) => {
                    let Some(start) = source.get(container.start_tag.clone()) else {
                        return false;
                    };
                    edits.push(Edit {
                        range: container.start_tag.clone(),
                        text: rewrite_tag(start, &original_langs, Some(ORIGINAL_CLASS), false),
                    });
                    let copy = rewrite_tag(start, &target, Some(TRANSLATION_CLASS), true);
                    edits.push(Edit {
                        range: end_tag.end..end_tag.end,
                        text: format!("\n{copy}{translation}</{}>", container.name),
                    });
                }
                None => {
                    let span = |class: &str, attrs: &[(&str, Option<&str>)]| {
                        rewrite_tag("<span>", attrs, Some(class), false)
                    };
                    edits.push(Edit {
                        range: origin.range.start..origin.range.start,
                        text: span(ORIGINAL_CLASS, &original_langs),
                    });
                    edits.push(Edit {
                        range: origin.range.end..origin.range.end,
                        text: format!(
                            "</span> {}{translation}</span>",
                            span(TRANSLATION_CLASS, &target)
                        ),
                    });
                }
            }
        }
    }
    true
}

/// `lang`, `xml:lang` and, where the direction differs from the other language's, `dir`.
fn lang_attrs<'a>(
    lang: Option<&'a str>,
    other: Option<&str>,
) -> Vec<(&'static str, Option<&'a str>)> {
    let Some(lang) = lang else {
        return Vec::new();
    };
    let mut attrs = vec![("lang", Some(lang)), ("xml:lang", Some(lang))];
    if is_rtl(lang) {
        attrs.push(("dir", Some("rtl")));
    } else if other.is_some_and(is_rtl) {
        attrs.push(("dir", Some("ltr")));
    }
    attrs
}

/// The root's language (and direction), and in a bilingual book the added stylesheet.
fn document_edits(
    source: &str,
    located: &Located,
    path: &str,
    css_path: &str,
    layout: Layout,
    target: &str,
    edits: &mut Vec<Edit>,
) {
    if let Some(tag) = located.html_tag.clone() {
        if let Some(original) = source.get(tag.clone()) {
            edits.push(Edit {
                range: tag,
                text: root_with_language(original, target),
            });
        }
    }
    if layout == Layout::Bilingual {
        if let Some(at) = located.head_end {
            edits.push(Edit {
                range: at..at,
                text: format!(
                    r#"<link rel="stylesheet" type="text/css" href="{}"/>"#,
                    escape_attr(&relative_href(path, css_path))
                ),
            });
        }
    }
}

fn root_with_language(tag: &str, target: &str) -> String {
    let has_dir = tag_attrs(tag).iter().any(|(k, _)| k == "dir");
    let dir = if is_rtl(target) {
        Some("rtl")
    } else if has_dir {
        Some("ltr")
    } else {
        None
    };
    let mut set = vec![("lang", Some(target)), ("xml:lang", Some(target))];
    if dir.is_some() {
        set.push(("dir", dir));
    }
    rewrite_tag(tag, &set, None, false)
}

/// `to` as a link from the document `from` (both archive paths).
fn relative_href(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> = from.split('/').collect();
    let from_dir = &from_dir[..from_dir.len().saturating_sub(1)];
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<&str> = vec![".."; from_dir.len() - common];
    parts.extend(&to_parts[common..]);
    parts.join("/")
}

/// The book's title in the target language: the translation of the first block that carries
/// the same words as `title` (a title page, a heading), as chapter titles follow their
/// headings; `title` as it is when no block carries it or that block is not translated.
fn book_title(
    package: &Package,
    translated: &[Option<Chapter>],
    title: Option<&str>,
) -> Option<String> {
    let title = title?.trim();
    let same = |text: String| text.trim().eq_ignore_ascii_case(title);
    let found = package
        .manuscript
        .chapters
        .iter()
        .zip(translated)
        .filter_map(|(source, translation)| Some((source, translation.as_ref()?)))
        .find_map(|(source, translation)| {
            let at = source.blocks.iter().position(|b| same(b.plain_text()))?;
            translation
                .blocks
                .get(at)
                .map(|b| b.plain_text().trim().to_string())
        });
    Some(
        found
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| title.to_string()),
    )
}

/// The chapter (if translated) whose first block is the first block at or after `position`.
fn translated_title<'a>(
    package: &Package,
    translated: &'a [Option<Chapter>],
    position: Position,
) -> Option<&'a str> {
    let chapter = package
        .origins
        .iter()
        .position(|o| o.first() == Some(&position))?;
    translated
        .get(chapter)?
        .as_ref()?
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty())
}

/// The navigation document with every chapter's entry in the table of contents translated.
fn translate_nav(
    package: &Package,
    translated: &[Option<Chapter>],
    path: &str,
    source: &str,
    target: &str,
) -> Option<String> {
    let found = scan(source);
    let navs: Vec<usize> = (0..found.len())
        .filter(|&i| found[i].name == "nav")
        .collect();
    let toc = navs
        .iter()
        .copied()
        .find(|&i| {
            attr_of(&found[i], "type").is_some_and(|t| t.split_whitespace().any(|w| w == "toc"))
        })
        .or_else(|| navs.first().copied())?;
    let mut edits = Vec::new();
    for link in found
        .iter()
        .filter(|f| f.name == "a" && f.ancestors.contains(&toc))
    {
        let Some(href) = attr_of(link, "href") else {
            continue;
        };
        let href = quick_xml::escape::unescape(href)
            .map(|h| h.into_owned())
            .unwrap_or_default();
        let Some(position) = package.nav_position(path, &href) else {
            continue;
        };
        if let Some(title) = translated_title(package, translated, position) {
            edits.push(Edit {
                range: link.content.clone(),
                text: escape_text(title),
            });
        }
    }
    if edits.is_empty() {
        return None;
    }
    if let Some(html) = found.iter().find(|f| f.name == "html") {
        let tag = source.get(html.tag.clone())?;
        edits.push(Edit {
            range: html.tag.clone(),
            text: root_with_language(tag, target),
        });
    }
    Some(apply(source, edits))
}

/// The NCX with every chapter's label and the book's title translated.
fn translate_ncx(
    package: &Package,
    translated: &[Option<Chapter>],
    path: &str,
    source: &str,
    options: &RenderOptions,
) -> Option<String> {
    let found = scan(source);
    let mut edits = Vec::new();
    for (index, point) in found.iter().enumerate() {
        if point.name != "navpoint" {
            continue;
        }
        // This point's own label and target, not those of the points inside it.
        let own = |name: &str| {
            found
                .iter()
                .find(|f| f.name == name && f.ancestors.last() == Some(&index))
        };
        let Some(src) = own("content").and_then(|c| attr_of(c, "src")) else {
            continue;
        };
        let src = quick_xml::escape::unescape(src)
            .map(|h| h.into_owned())
            .unwrap_or_default();
        let Some(label) = found
            .iter()
            .position(|f| f.name == "navlabel" && f.ancestors.last() == Some(&index))
        else {
            continue;
        };
        let Some(text) = found
            .iter()
            .find(|f| f.name == "text" && f.ancestors.last() == Some(&label))
        else {
            continue;
        };
        let Some(position) = package.nav_position(path, &src) else {
            continue;
        };
        if let Some(title) = translated_title(package, translated, position) {
            edits.push(Edit {
                range: text.content.clone(),
                text: escape_text(title),
            });
        }
    }
    if let Some(title) = &options.title {
        let doc_title = found.iter().position(|f| f.name == "doctitle");
        if let Some(text) = doc_title.and_then(|d| {
            found
                .iter()
                .find(|f| f.name == "text" && f.ancestors.last() == Some(&d))
        }) {
            edits.push(Edit {
                range: text.content.clone(),
                text: escape_text(title),
            });
        }
    }
    if edits.is_empty() {
        return None;
    }
    if let Some(root) = found.iter().find(|f| f.name == "ncx") {
        if let Some(tag) = source.get(root.tag.clone()) {
            edits.push(Edit {
                range: root.tag.clone(),
                text: rewrite_tag(tag, &[("xml:lang", Some(&options.language))], None, false),
            });
        }
    }
    Some(apply(source, edits))
}

/// The package again: the mimetype first and stored, every unchanged entry copied as it was
/// stored (byte-identical, never inflated), changed ones written anew under their own names.
fn write_zip(
    zip: &mut Archive<'_>,
    changed: &HashMap<String, Vec<u8>>,
    layout: Layout,
    css_path: &str,
) -> Result<Vec<u8>, FormatError> {
    let mut out = ZipWriter::new(Cursor::new(Vec::new()));
    let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    let write_error =
        |e: zip::result::ZipError| FormatError::Malformed(format!("writing the EPUB failed: {e}"));
    let names = zip.names();
    let mimetype_first = names.first().is_some_and(|n| n == "mimetype") && zip.is_stored(0);
    if mimetype_first {
        zip.copy_raw(0, &mut out)?;
    } else {
        out.start_file("mimetype", stored).map_err(write_error)?;
        out.write_all(b"application/epub+zip")
            .map_err(|e| write_error(e.into()))?;
    }
    for (index, name) in names.iter().enumerate() {
        if name == "mimetype" || (layout == Layout::Bilingual && name == css_path) {
            continue;
        }
        match changed.get(name) {
            Some(bytes) => {
                out.start_file(name.as_str(), deflated)
                    .map_err(write_error)?;
                out.write_all(bytes).map_err(|e| write_error(e.into()))?;
            }
            None => zip.copy_raw(index, &mut out)?,
        }
    }
    if layout == Layout::Bilingual {
        out.start_file(css_path, deflated).map_err(write_error)?;
        out.write_all(BILINGUAL_CSS.as_bytes())
            .map_err(|e| write_error(e.into()))?;
    }
    Ok(out.finish().map_err(write_error)?.into_inner())
}

mod block;
mod opf;
#[cfg(test)]
mod tests;
