//! EPUB 2 and 3: container, package document (metadata, manifest, spine), navigation (the EPUB 3
//! navigation document, else the NCX), XHTML content and images.
//!
//! Chapters follow the book's own table of contents: each entry starts a chapter where its link
//! points, even inside a document (an anthology in one file is split at its entries). Text before
//! the first entry is kept as an untitled chapter; nothing is dropped.

use std::collections::{HashMap, HashSet};

use crate::archive::{Archive, Limits};
use crate::budget::Budget;
use crate::dom::{self, Element};
use crate::error::FormatError;
use crate::manuscript::{Block, BlockKind, Chapter, Manuscript};
use crate::media;
use crate::xhtml::{self, document_anchor, resolve, resolve_within};

/// Font obfuscation is not DRM: fonts scrambled this way are still readable content-wise.
const FONT_OBFUSCATION: &[&str] = &[
    "http://www.idpf.org/2008/embedding",
    "http://ns.adobe.com/pdf/enc#RC",
];

/// Beyond this many, skipped manifest items are counted, not listed: the warnings are kept with
/// the book, and a hostile file could name thousands.
const MAX_LISTED_WARNINGS: usize = 10;

struct ManifestItem {
    href: String,
    media_type: String,
    properties: String,
}

pub(crate) struct NavPoint {
    path: String,
    fragment: Option<String>,
    title: String,
}

/// Where a block came from: (index among [`Package::documents`], index among its blocks).
pub(crate) type Position = (usize, usize);

/// A book as the extractor read it, with what the in-place renderer needs to put a translation
/// back where each block came from. Both walk the book with [`read_package`], so they cannot
/// disagree about which block is which.
pub(crate) struct Package {
    pub manuscript: Manuscript,
    /// For every chapter, where each of its blocks came from.
    pub origins: Vec<Vec<Position>>,
    pub opf_path: String,
    pub opf_text: String,
    /// The spine's content documents that were read, in reading order (only when located).
    pub documents: Vec<SpineDocument>,
    pub nav_path: Option<String>,
    pub ncx_path: Option<String>,
}

pub(crate) struct SpineDocument {
    pub path: String,
    pub source: String,
    /// Whether the file was UTF-8 (else it was decoded and must say UTF-8 when written).
    pub utf8: bool,
    pub located: xhtml::Located,
    /// Every block's anchors as read (before pruning), to find where navigation points go.
    pub anchors: Vec<Vec<String>>,
}

impl Package {
    /// The block a navigation link (`href` in the file `base`) starts at, as chapters are cut.
    pub fn nav_position(&self, base: &str, href: &str) -> Option<Position> {
        let point = nav_point(base, href, String::new())?;
        let start = point_position(
            &point,
            |path| self.documents.iter().position(|d| d.path == path),
            |doc, fragment| {
                self.documents[doc]
                    .anchors
                    .iter()
                    .position(|a| a.iter().any(|a| a == fragment))
            },
        )?;
        // A point on a document without blocks takes effect at the next block.
        (start.0..self.documents.len())
            .map(|doc| (doc, if doc == start.0 { start.1 } else { 0 }))
            .find(|&(doc, block)| block < self.documents[doc].anchors.len())
    }
}

pub fn extract(bytes: &[u8]) -> Result<Manuscript, FormatError> {
    extract_within(bytes, Budget::default())
}

pub fn extract_within(bytes: &[u8], budget: Budget) -> Result<Manuscript, FormatError> {
    read_package(bytes, budget, false).map(|p| p.manuscript)
}

/// Reads the book; with `locate`, also keeps its content documents and where every block came
/// from.
pub(crate) fn read_package(
    bytes: &[u8],
    budget: Budget,
    locate: bool,
) -> Result<Package, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    let mut zip = Archive::open(bytes, Limits::for_file(bytes.len(), budget))?;
    refuse_drm(&mut zip)?;

    let opf_path = package_path(&mut zip)?;
    let opf_text = zip
        .read_text(&opf_path)?
        .ok_or_else(|| FormatError::Malformed(format!("{opf_path} is missing")))?;
    let opf = dom::parse(&opf_text, &opf_path)?;

    let (manifest, warnings) = read_manifest(&opf, &opf_path);
    let mut manuscript = metadata(&opf, warnings);
    let nav_item = manifest
        .values()
        .find(|i| i.properties.split_whitespace().any(|p| p == "nav"));
    let spine = spine(&opf, &manifest, nav_item, &manuscript.warnings)?;
    let (nav_points, ncx) = navigation(&mut zip, &opf, &manifest, nav_item)?;
    let (documents, located) = read_spine(&mut zip, &spine, locate, &mut manuscript)?;

    let (chapters, mut origins) = split_into_chapters(documents, &nav_points);
    manuscript.chapters = chapters;
    if manuscript.chapters.iter().all(|c| c.word_count() == 0) {
        return Err(FormatError::NoText);
    }
    let cover_path = cover_path(&opf, &manifest);
    collect_assets(
        &mut zip,
        &mut manuscript,
        &mut origins,
        &manifest,
        cover_path.as_deref(),
    )?;
    manuscript.prune_anchors();
    manuscript.detect_language_if_missing();
    Ok(Package {
        manuscript,
        origins,
        opf_path,
        opf_text,
        documents: located,
        nav_path: nav_item.map(|n| n.href.clone()),
        ncx_path: ncx.map(|n| n.href.clone()),
    })
}

/// The package document's path, as `META-INF/container.xml` names it.
fn package_path(zip: &mut Archive<'_>) -> Result<String, FormatError> {
    let container = zip.read_text("META-INF/container.xml")?.ok_or_else(|| {
        FormatError::Malformed("META-INF/container.xml is missing: not an EPUB".into())
    })?;
    let container = dom::parse(&container, "container.xml")?;
    container
        .descendants("rootfile")
        .into_iter()
        .find(|r| {
            r.attr("media-type")
                .is_none_or(|m| m == "application/oebps-package+xml")
        })
        .and_then(|r| r.attr("full-path"))
        .map(|p| resolve("", p))
        .ok_or_else(|| FormatError::Malformed("container.xml names no package document".into()))
}

/// The manifest's items by id, their paths resolved in the archive, with a warning for each
/// item that points outside the book (skipped).
fn read_manifest(opf: &Element, opf_path: &str) -> (HashMap<String, ManifestItem>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut outside_items = 0usize;
    let mut manifest: HashMap<String, ManifestItem> = HashMap::new();
    for item in opf.descendants("item") {
        let (Some(id), Some(href)) = (item.attr("id"), item.attr("href")) else {
            continue;
        };
        // Never followed (names are only looked up inside the archive anyway), but the user is
        // told: what the spine lists there is missing from the book.
        let Some(path) = inside(opf_path, href) else {
            outside_items += 1;
            if outside_items <= MAX_LISTED_WARNINGS {
                warnings.push(format!(
                    "the manifest item '{}' points outside the book ({}) and was skipped",
                    shown(id),
                    shown(href)
                ));
            }
            continue;
        };
        manifest.insert(
            id.to_string(),
            ManifestItem {
                href: path,
                media_type: item.attr("media-type").unwrap_or_default().to_string(),
                properties: item.attr("properties").unwrap_or_default().to_string(),
            },
        );
    }
    if outside_items > MAX_LISTED_WARNINGS {
        warnings.push(format!(
            "{} more manifest items point outside the book and were skipped",
            outside_items - MAX_LISTED_WARNINGS
        ));
    }
    (manifest, warnings)
}

/// A manuscript with the package's title, author and language, and `warnings`.
fn metadata(opf: &Element, warnings: Vec<String>) -> Manuscript {
    let field = |name: &str| opf.first(name).map(Element::text).filter(|t| !t.is_empty());
    Manuscript {
        title: field("title"),
        author: field("creator"),
        language: field("language"),
        warnings,
        ..Manuscript::default()
    }
}

/// The spine's linear content documents in reading order, the navigation document left out;
/// an error when there are none (saying what was skipped, from `warnings`).
fn spine<'m>(
    opf: &Element,
    manifest: &'m HashMap<String, ManifestItem>,
    nav_item: Option<&ManifestItem>,
    warnings: &[String],
) -> Result<Vec<&'m ManifestItem>, FormatError> {
    let spine: Vec<&ManifestItem> = opf
        .descendants("itemref")
        .into_iter()
        .filter(|r| r.attr("linear") != Some("no"))
        .filter_map(|r| manifest.get(r.attr("idref")?))
        .filter(|i| media::kind(&i.media_type, &i.href) == media::Kind::Html)
        .filter(|i| nav_item.is_none_or(|nav| nav.href != i.href))
        .collect();
    if spine.is_empty() {
        let mut message = "the package document's spine lists no content".to_string();
        if !warnings.is_empty() {
            message = format!("{message} ({})", warnings.join("; "));
        }
        return Err(FormatError::Malformed(message));
    }
    Ok(spine)
}

/// The table of contents' entries (the navigation document's, else the NCX's) and the NCX.
fn navigation<'m>(
    zip: &mut Archive<'_>,
    opf: &Element,
    manifest: &'m HashMap<String, ManifestItem>,
    nav_item: Option<&ManifestItem>,
) -> Result<(Vec<NavPoint>, Option<&'m ManifestItem>), FormatError> {
    let nav_points = match nav_item {
        Some(nav) => read_nav(zip, &nav.href)?,
        None => Vec::new(),
    };
    let ncx = opf
        .first("spine")
        .and_then(|s| s.attr("toc"))
        .and_then(|id| manifest.get(id))
        .or_else(|| {
            manifest
                .values()
                .find(|i| media::essence(&i.media_type) == "application/x-dtbncx+xml")
        });
    let nav_points = if nav_points.is_empty() {
        match ncx {
            Some(ncx) => read_ncx(zip, &ncx.href)?,
            None => Vec::new(),
        }
    } else {
        nav_points
    };
    Ok((nav_points, ncx))
}

/// A spine document's path, its blocks (the first one carrying the document's own anchor) and
/// its title.
type SpineBlocks = (String, Vec<Block>, Option<String>);

/// Every spine document's blocks, groups numbered across the book; with `locate`, the documents
/// with where each block came from. The manuscript takes the first document's language when
/// the package declares none.
fn read_spine(
    zip: &mut Archive<'_>,
    spine: &[&ManifestItem],
    locate: bool,
    manuscript: &mut Manuscript,
) -> Result<(Vec<SpineBlocks>, Vec<SpineDocument>), FormatError> {
    let mut documents: Vec<SpineBlocks> = Vec::new();
    let mut located: Vec<SpineDocument> = Vec::new();
    let mut group_offset = 0u32;
    let mut blocks_so_far = 0usize;
    for item in spine {
        let Some(bytes) = zip.read(&item.href)? else {
            continue;
        };
        let (source, utf8) = crate::archive::decode_owned(bytes);
        let context = xhtml::Context {
            path: &item.href,
            max_blocks: crate::limits::MAX_BLOCKS.saturating_sub(blocks_so_far),
        };
        let doc = if locate {
            let (doc, places) = xhtml::parse_located(&source, &context)?;
            located.push(SpineDocument {
                path: item.href.clone(),
                source,
                utf8,
                located: places,
                anchors: doc.blocks.iter().map(|b| b.anchors.clone()).collect(),
            });
            doc
        } else {
            xhtml::parse(&source, &context)?
        };
        let mut blocks = doc.blocks;
        blocks_so_far += blocks.len();
        // Groups are numbered per document, and a chapter may run across documents.
        let mut last_group = group_offset;
        for group in blocks.iter_mut().flat_map(|b| &mut b.groups) {
            group.n = group.n.saturating_add(group_offset);
            last_group = last_group.max(group.n);
        }
        group_offset = last_group;
        if let Some(first) = blocks.first_mut() {
            first.anchors.insert(0, document_anchor(&item.href));
        }
        if manuscript.language.is_none() {
            manuscript.language = doc.language;
        }
        documents.push((item.href.clone(), blocks, doc.title));
    }
    Ok((documents, located))
}

/// A manifest or navigation href, resolved against `base`; None when it points outside the
/// book: a URL of any scheme (`https:`, `file:` ...) or a path whose `..` climb above the
/// archive's root (a path-traversal attempt). An absolute path is the archive's root, as in
/// OCF, so `/etc/passwd` names an entry of the archive, not a file of the server.
fn inside(base: &str, href: &str) -> Option<String> {
    if has_scheme(href) {
        return None;
    }
    resolve_within(base, href)
}

/// Whether `href` starts with a URL scheme (RFC 3986: a letter, then letters, digits, `+`, `-`
/// or `.`, then `:`). A relative path cannot: its first segment has no colon.
fn has_scheme(href: &str) -> bool {
    let Some((scheme, _)) = href.split_once(':') else {
        return false;
    };
    scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// A file-supplied name as a warning quotes it: no control characters, at most 100 characters.
fn shown(text: &str) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    match clean.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &clean[..cut]),
        None => clean,
    }
}

fn refuse_drm(zip: &mut Archive<'_>) -> Result<(), FormatError> {
    if zip.contains("META-INF/rights.xml") {
        return Err(FormatError::Encrypted);
    }
    let Some(encryption) = zip.read_text("META-INF/encryption.xml")? else {
        return Ok(());
    };
    let encryption = dom::parse(&encryption, "encryption.xml")?;
    let drm = encryption
        .descendants("encryptionmethod")
        .into_iter()
        .filter_map(|m| m.attr("algorithm"))
        .any(|algorithm| !FONT_OBFUSCATION.contains(&algorithm));
    if drm {
        return Err(FormatError::Encrypted);
    }
    Ok(())
}

fn read_nav(zip: &mut Archive<'_>, path: &str) -> Result<Vec<NavPoint>, FormatError> {
    let Some(source) = zip.read_text(path)? else {
        return Ok(Vec::new());
    };
    let root = dom::parse(&source, path)?;
    let navs = root.descendants("nav");
    let toc = navs
        .iter()
        .find(|n| {
            n.attr("type")
                .is_some_and(|t| t.split_whitespace().any(|w| w == "toc"))
        })
        .or_else(|| navs.first());
    let Some(toc) = toc else {
        return Ok(Vec::new());
    };
    Ok(toc
        .descendants("a")
        .into_iter()
        .filter_map(|a| nav_point(path, a.attr("href")?, a.text()))
        .collect())
}

fn read_ncx(zip: &mut Archive<'_>, path: &str) -> Result<Vec<NavPoint>, FormatError> {
    let Some(source) = zip.read_text(path)? else {
        return Ok(Vec::new());
    };
    let root = dom::parse(&source, path)?;
    Ok(root
        .descendants("navpoint")
        .into_iter()
        .filter_map(|point| {
            let src = point
                .elements()
                .find(|e| e.name == "content")?
                .attr("src")?;
            let title = point
                .elements()
                .find(|e| e.name == "navlabel")
                .map(Element::text)
                .unwrap_or_default();
            nav_point(path, src, title)
        })
        .collect())
}

pub(crate) fn nav_point(base: &str, href: &str, title: String) -> Option<NavPoint> {
    let (file, fragment) = match href.split_once('#') {
        Some((file, fragment)) => (file, Some(fragment.to_string()).filter(|f| !f.is_empty())),
        None => (href, None),
    };
    let path = if file.is_empty() {
        base.to_string()
    } else {
        inside(base, file)?
    };
    Some(NavPoint {
        path,
        fragment,
        title,
    })
}

/// Where a navigation point starts: (document index, block index).
fn point_position(
    point: &NavPoint,
    document: impl Fn(&str) -> Option<usize>,
    block_with_anchor: impl Fn(usize, &str) -> Option<usize>,
) -> Option<Position> {
    let doc = document(&point.path)?;
    let block = match &point.fragment {
        None => 0,
        // An anchor on an element that holds no text of its own lands on the next block.
        Some(fragment) => block_with_anchor(doc, fragment)?,
    };
    Some((doc, block))
}

/// Cuts the documents' blocks into chapters at the navigation points; and where each block of
/// each chapter came from.
fn split_into_chapters(
    documents: Vec<(String, Vec<Block>, Option<String>)>,
    nav: &[NavPoint],
) -> (Vec<Chapter>, Vec<Vec<Position>>) {
    let mut starts: Vec<(Position, &str)> = Vec::new();
    let mut seen = HashSet::new();
    for point in nav {
        let position = point_position(
            point,
            |path| documents.iter().position(|(p, _, _)| p == path),
            |doc, fragment| {
                documents[doc]
                    .1
                    .iter()
                    .position(|b| b.anchors.iter().any(|a| a == fragment))
            },
        );
        let Some(position) = position else {
            continue;
        };
        if seen.insert(position) {
            starts.push((position, point.title.as_str()));
        }
    }
    starts.sort_by_key(|(position, _)| *position);

    let mut chapters: Vec<(Chapter, Vec<Position>)> = Vec::new();
    let mut next_start = starts.iter().peekable();
    let mut current = (Chapter::default(), Vec::new());
    for (doc_index, (_, blocks, doc_title)) in documents.into_iter().enumerate() {
        for (block_index, block) in blocks.into_iter().enumerate() {
            // `<=`: a point on a document with no blocks takes effect at the next block.
            while let Some(&&(position, title)) = next_start.peek() {
                if position > (doc_index, block_index) {
                    break;
                }
                let finished = std::mem::replace(
                    &mut current,
                    (
                        Chapter {
                            title: Some(title.to_string()).filter(|t| !t.trim().is_empty()),
                            blocks: Vec::new(),
                        },
                        Vec::new(),
                    ),
                );
                push_if_content(&mut chapters, finished);
                next_start.next();
            }
            current.0.blocks.push(block);
            current.1.push((doc_index, block_index));
        }
        // Without navigation, every document is a chapter titled by its first heading or title.
        if starts.is_empty() {
            let (chapter, origins) = std::mem::take(&mut current);
            push_if_content(&mut chapters, (titled(chapter, doc_title), origins));
        }
    }
    push_if_content(&mut chapters, current);
    chapters.into_iter().unzip()
}

fn titled(mut chapter: Chapter, doc_title: Option<String>) -> Chapter {
    if chapter.title.is_none() {
        chapter.title = chapter
            .blocks
            .iter()
            .find(|b| matches!(b.kind, BlockKind::Heading { .. }))
            .map(Block::plain_text)
            .or(doc_title);
    }
    chapter
}

/// Keeps a chapter that has text or images; an empty one (a cover page's wrapper) is dropped.
fn push_if_content(
    chapters: &mut Vec<(Chapter, Vec<Position>)>,
    chapter: (Chapter, Vec<Position>),
) {
    if !chapter.0.blocks.is_empty() {
        chapters.push(chapter);
    }
}

fn cover_path(opf: &Element, manifest: &HashMap<String, ManifestItem>) -> Option<String> {
    if let Some(item) = manifest
        .values()
        .find(|i| i.properties.split_whitespace().any(|p| p == "cover-image"))
    {
        return Some(item.href.clone());
    }
    let id = opf
        .descendants("meta")
        .into_iter()
        .find(|m| m.attr("name") == Some("cover"))?
        .attr("content")?;
    manifest.get(id).map(|i| i.href.clone())
}

/// Loads every image the blocks use (and the cover) as assets with simple unique file names,
/// and points the image blocks at them.
fn collect_assets(
    zip: &mut Archive<'_>,
    manuscript: &mut Manuscript,
    origins: &mut Vec<Vec<Position>>,
    manifest: &HashMap<String, ManifestItem>,
    cover: Option<&str>,
) -> Result<(), FormatError> {
    let media_types: HashMap<&str, &str> = manifest
        .values()
        .map(|i| (i.href.as_str(), i.media_type.as_str()))
        .collect();
    let mut by_path: HashMap<String, String> = HashMap::new();
    let mut wanted: Vec<String> = cover.map(str::to_string).into_iter().collect();
    for chapter in &manuscript.chapters {
        for block in &chapter.blocks {
            if let BlockKind::Image { asset } = &block.kind {
                wanted.push(asset.clone());
            }
        }
    }
    for path in wanted {
        if by_path.contains_key(&path) {
            continue;
        }
        let Some(bytes) = zip.read(&path)? else {
            continue;
        };
        let media_type = media_types
            .get(path.as_str())
            .map(|m| m.to_string())
            .unwrap_or_else(|| crate::manuscript::media_type_of(&path));
        if !media_type.starts_with("image/") {
            continue;
        }
        let id = manuscript.add_asset(&path, media_type, bytes);
        by_path.insert(path, id);
    }
    manuscript.cover = cover.and_then(|c| by_path.get(c).cloned());
    // A chapter that is only the cover picture (the cover page) is not a chapter: the cover is
    // kept as the book's cover.
    if let Some(cover_path) = cover {
        let keep: Vec<bool> = manuscript
            .chapters
            .iter()
            .map(|chapter| {
                let only_cover = chapter.word_count() == 0
                    && chapter.blocks.iter().all(
                        |b| matches!(&b.kind, BlockKind::Image { asset } if asset == cover_path),
                    );
                !only_cover
            })
            .collect();
        let mut flags = keep.iter();
        manuscript
            .chapters
            .retain(|_| flags.next().copied().unwrap_or(true));
        let mut flags = keep.iter();
        origins.retain(|_| flags.next().copied().unwrap_or(true));
    }
    for (chapter, origins) in manuscript.chapters.iter_mut().zip(origins.iter_mut()) {
        let mut keep = Vec::with_capacity(chapter.blocks.len());
        chapter.blocks.retain_mut(|block| {
            let kept = match &mut block.kind {
                BlockKind::Image { asset } => match by_path.get(asset.as_str()) {
                    Some(id) => {
                        *asset = id.clone();
                        true
                    }
                    // A missing image keeps its alternative text as a paragraph; text is never
                    // lost.
                    None => {
                        block.kind = BlockKind::Paragraph;
                        !block.text.is_empty()
                    }
                },
                _ => true,
            };
            keep.push(kept);
            kept
        });
        let mut flags = keep.iter();
        origins.retain(|_| flags.next().copied().unwrap_or(true));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus_tests::corpus_epub as corpus;

    fn titles(m: &Manuscript) -> Vec<String> {
        m.chapters
            .iter()
            .map(|c| c.title.clone().unwrap_or_default())
            .collect()
    }

    #[test]
    fn moby_dick_has_its_chapters_in_order_with_metadata_and_cover() {
        let m = extract(&corpus("moby-dick.epub")).unwrap();
        assert_eq!(m.title.as_deref(), Some("Moby-Dick"));
        assert_eq!(m.author.as_deref(), Some("Herman Melville"));
        assert_eq!(m.language.as_deref(), Some("en-US"));
        let t = titles(&m);
        assert!(t.contains(&"Chapter 1. Loomings.".to_string()), "{t:?}");
        assert!(
            t.contains(&"Chapter 135. The Chase.—Third Day.".to_string()),
            "{t:?}"
        );
        let first = m
            .chapters
            .iter()
            .find(|c| c.title.as_deref() == Some("Chapter 1. Loomings."))
            .unwrap();
        assert!(first.plain_text().contains("Call me Ishmael."));
        assert!(m.cover.is_some());
        assert!(m.word_count() > 200_000, "{}", m.word_count());
    }

    #[test]
    fn an_anthology_in_one_file_is_split_at_its_navigation_entries() {
        let m = extract(&corpus("childrens-literature.epub")).unwrap();
        let t = titles(&m);
        assert_eq!(
            t.len(),
            22,
            "one chapter per entry of the book's table of contents: {t:?}"
        );
        assert_eq!(t[0], "SECTION IV FAIRY STORIES—MODERN FANTASTIC TALES");
        assert_eq!(t[5], "II. Friendship", "nested entries count too");
        assert_eq!(
            t[21],
            "204 THE KING OF THE GOLDEN RIVER OR THE BLACK BROTHERS"
        );
        let duckling = m
            .chapters
            .iter()
            .find(|c| c.title.as_deref() == Some("198 THE UGLY DUCKLING"))
            .unwrap();
        assert!(duckling.word_count() > 3000, "{}", duckling.word_count());
    }

    #[test]
    fn poetry_keeps_lines_and_note_links() {
        let m = extract(&corpus("wasteland.epub")).unwrap();
        let t = titles(&m);
        assert!(
            t.contains(&"I. THE BURIAL OF THE DEAD".to_string()),
            "{t:?}"
        );
        let burial = m
            .chapters
            .iter()
            .find(|c| c.title.as_deref() == Some("I. THE BURIAL OF THE DEAD"))
            .unwrap();
        assert!(
            burial
                .blocks
                .iter()
                .filter(|b| b.kind == BlockKind::Line)
                .count()
                > 50
        );
        assert!(burial
            .blocks
            .iter()
            .any(|b| b.text.contains(r#"<ref id="note-1"/>"#)));
        let notes: Vec<_> = m
            .chapters
            .iter()
            .flat_map(|c| &c.blocks)
            .filter(|b| matches!(b.kind, BlockKind::Footnote { .. }))
            .collect();
        assert!(notes.len() > 20, "{}", notes.len());
    }

    #[test]
    fn the_arabic_book_declares_its_language() {
        let m = extract(&corpus("regime-anticancer-arabic.epub")).unwrap();
        assert!(
            m.language.as_deref().is_some_and(|l| l.starts_with("ar")),
            "{:?}",
            m.language
        );
        assert!(m.word_count() > 1000);
    }

    /// `pandoc FILE -t plain | wc -w`, measured with pandoc 2.17.1.1 (Debian 12).
    const PANDOC_WORDS: [(&str, u64); 4] = [
        ("moby-dick.epub", 212_222),
        ("wasteland.epub", 4_634),
        ("childrens-literature.epub", 54_745),
        ("regime-anticancer-arabic.epub", 4_751),
    ];

    #[test]
    fn word_counts_are_within_two_percent_of_pandocs() {
        for (name, pandoc) in PANDOC_WORDS {
            let ours = extract(&corpus(name)).unwrap().word_count();
            let off = (ours as f64 - pandoc as f64).abs() / pandoc as f64;
            eprintln!(
                "{name}: {ours} words, pandoc {pandoc} ({:.2}% off)",
                off * 100.0
            );
            assert!(
                off < 0.02,
                "{name}: {ours} words, pandoc {pandoc} ({:.2}% off)",
                off * 100.0
            );
        }
    }

    #[test]
    fn emphasis_survives_extraction() {
        let m = extract(&corpus("childrens-literature.epub")).unwrap();
        let marked = m
            .chapters
            .iter()
            .flat_map(|c| &c.blocks)
            .filter(|b| b.text.contains("<i>"))
            .count();
        assert!(marked > 10, "{marked} blocks with emphasis");
    }

    fn make_epub(files: &[(&str, &[u8])]) -> Vec<u8> {
        use std::io::Write;
        let mut out = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        zip.start_file("mimetype", stored).unwrap();
        zip.write_all(b"application/epub+zip").unwrap();
        for (name, bytes) in files {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
        out.into_inner()
    }

    const CONTAINER: &[u8] = br#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#;

    fn opf(href: &str) -> Vec<u8> {
        format!(r#"<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>T</dc:title></metadata>
            <manifest><item id="c1" href="{href}" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>"#)
        .into_bytes()
    }

    const CHAPTER: &[u8] = b"<html><body><h1>One</h1><p>Some words here.</p></body></html>";

    #[test]
    fn a_minimal_epub_without_navigation_uses_one_chapter_per_document() {
        let epub = make_epub(&[
            ("META-INF/container.xml", CONTAINER),
            ("OEBPS/content.opf", &opf("c1.xhtml")),
            ("OEBPS/c1.xhtml", CHAPTER),
        ]);
        let m = extract(&epub).unwrap();
        assert_eq!(m.chapters.len(), 1);
        assert_eq!(m.chapters[0].title.as_deref(), Some("One"));
        assert_eq!(m.word_count(), 4);
    }

    #[test]
    fn a_zip_bomb_is_refused() {
        let zeros = vec![0u8; 20 << 20];
        let epub = make_epub(&[
            ("META-INF/container.xml", CONTAINER),
            ("OEBPS/content.opf", &opf("c1.xhtml")),
            ("OEBPS/c1.xhtml", &zeros),
        ]);
        assert!(epub.len() < 200_000, "the bomb is small: {}", epub.len());
        assert!(matches!(extract(&epub), Err(FormatError::TooLarge(_))));
    }

    #[test]
    fn too_many_entries_are_refused() {
        let names: Vec<String> = (0..10_001).map(|i| format!("x/{i}")).collect();
        let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
        assert!(matches!(
            extract(&make_epub(&files)),
            Err(FormatError::TooLarge(_))
        ));
    }

    #[test]
    fn paths_that_leave_the_archive_are_not_followed() {
        let epub = make_epub(&[
            ("META-INF/container.xml", CONTAINER),
            ("OEBPS/content.opf", &opf("../../../etc/passwd")),
            ("etc/passwd", b"<html><body><p>secret</p></body></html>"),
        ]);
        let refused = extract(&epub);
        assert!(
            matches!(&refused, Err(FormatError::Malformed(m)) if m.contains("'c1' points outside the book")),
            "an empty spine that says why, not the file outside: {refused:?}"
        );
    }

    #[test]
    fn manifest_items_outside_the_book_are_skipped_with_a_warning_naming_them() {
        let opf = br#"<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata/>
            <manifest>
              <item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>
              <item id="passwd" href="../../etc/passwd" media-type="application/xhtml+xml"/>
              <item id="encoded" href="%2e%2e/%2e%2e/etc/passwd" media-type="application/xhtml+xml"/>
              <item id="remote" href="https://example.com/c2.xhtml" media-type="application/xhtml+xml"/>
              <item id="local" href="file:///etc/passwd" media-type="application/xhtml+xml"/>
              <item id="root" href="../c1.xhtml" media-type="application/xhtml+xml"/>
            </manifest>
            <spine><itemref idref="c1"/><itemref idref="passwd"/><itemref idref="local"/></spine></package>"#;
        let epub = make_epub(&[
            ("META-INF/container.xml", CONTAINER),
            ("OEBPS/content.opf", opf),
            ("OEBPS/c1.xhtml", CHAPTER),
            ("etc/passwd", b"<html><body><p>secret</p></body></html>"),
        ]);
        let m = extract(&epub).unwrap();
        assert_eq!(m.word_count(), 4, "only the chapter inside is read");
        assert_eq!(
            m.warnings,
            [
                "the manifest item 'passwd' points outside the book (../../etc/passwd) and was skipped",
                "the manifest item 'encoded' points outside the book (%2e%2e/%2e%2e/etc/passwd) and was skipped",
                "the manifest item 'remote' points outside the book (https://example.com/c2.xhtml) and was skipped",
                "the manifest item 'local' points outside the book (file:///etc/passwd) and was skipped",
            ],
            "'root' climbs to the archive's root, which is still inside"
        );
    }

    #[test]
    fn thousands_of_items_outside_the_book_are_counted_not_listed() {
        let items: String = (0..500)
            .map(|i| format!(r#"<item id="x{i}" href="../../x{i}"/>"#))
            .collect();
        let opf = format!(
            r#"<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata/>
            <manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>{items}</manifest>
            <spine><itemref idref="c1"/></spine></package>"#
        );
        let epub = make_epub(&[
            ("META-INF/container.xml", CONTAINER),
            ("OEBPS/content.opf", opf.as_bytes()),
            ("OEBPS/c1.xhtml", CHAPTER),
        ]);
        let warnings = extract(&epub).unwrap().warnings;
        assert_eq!(warnings.len(), MAX_LISTED_WARNINGS + 1);
        assert_eq!(
            warnings.last().map(String::as_str),
            Some("490 more manifest items point outside the book and were skipped")
        );
    }

    #[test]
    fn a_book_with_nothing_outside_has_no_warnings() {
        let epub = make_epub(&[
            ("META-INF/container.xml", CONTAINER),
            ("OEBPS/content.opf", &opf("c1.xhtml")),
            ("OEBPS/c1.xhtml", CHAPTER),
        ]);
        assert!(extract(&epub).unwrap().warnings.is_empty());
        assert!(extract(&corpus("wasteland.epub"))
            .unwrap()
            .warnings
            .is_empty());
    }

    #[test]
    fn drm_encrypted_books_are_refused_but_obfuscated_fonts_are_not() {
        let drm = br#"<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/></enc:EncryptedData></encryption>"#;
        let fonts = br#"<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/></enc:EncryptedData></encryption>"#;
        let base = |enc: &[u8]| {
            make_epub(&[
                ("META-INF/container.xml", CONTAINER),
                ("META-INF/encryption.xml", enc),
                ("OEBPS/content.opf", &opf("c1.xhtml")),
                ("OEBPS/c1.xhtml", CHAPTER),
            ])
        };
        assert_eq!(extract(&base(drm)), Err(FormatError::Encrypted));
        assert!(extract(&base(fonts)).is_ok());
    }

    #[test]
    fn truncated_and_garbage_files_are_malformed_not_panics() {
        let book = corpus("wasteland.epub");
        for cut in [10, 1000, book.len() / 2, book.len() - 10] {
            assert!(extract(&book[..cut]).is_err(), "cut at {cut}");
        }
        assert!(matches!(
            extract(b"PK\x03\x04 garbage"),
            Err(FormatError::Malformed(_))
        ));
        let no_container = make_epub(&[("OEBPS/c1.xhtml", CHAPTER)]);
        assert!(matches!(
            extract(&no_container),
            Err(FormatError::Malformed(_))
        ));
    }
}
