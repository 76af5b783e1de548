//! Nothing active leaves the service. A translated EPUB is downloaded by its owner and, through
//! a share link, by anyone: whatever the uploaded file carried that a reading system runs or
//! follows on its own (scripts, event handlers, `javascript:` links, frames, plug-ins, scripted
//! SVG, a refresh to another address, a base that sends every link elsewhere, a stylesheet
//! fetched from the network) would run on those readers' devices under the service's name. Both
//! renderers hand their finished package to [`epub`], which takes all of that out, and drops
//! the zip entries whose names could land outside the folder a reader unpacks the book into,
//! with the package document's references to them, so that the book still opens and validates.
//!
//! Documents are read with quick-xml and edited by byte range: a file with nothing active is
//! copied as it was stored, byte for byte, and one with something active keeps every other
//! byte it had.

use std::collections::{HashMap, HashSet};
use std::io::{Cursor, Write};
use std::ops::Range;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use self::address::{candidates, is_followed_link, is_remote, resolve, scheme};
use super::edit::{apply, attr_of, declare_utf8, rewrite_tag, scan, Edit, Found};
use crate::archive::{decode_owned, Archive, Limits};
use crate::error::FormatError;
use crate::markup::{escape_attr, escape_text};
use crate::media::{self, Kind};

/// Elements taken out with everything inside them: they run code, load another document or a
/// plug-in, or change where the document's links lead.
const DROPPED: &[&str] = &[
    "script", "iframe", "frame", "frameset", "embed", "applet", "portal", "param", "base",
    // SVG Tiny's event listeners.
    "handler", "listener",
];

/// Elements whose tags are taken out around their content: a form's fields and words stay and
/// nothing is sent anywhere; an object's fallback (its text, an image) is what a reader
/// without the plug-in shows.
const UNWRAPPED: &[&str] = &["form", "object"];

/// Elements that only point at a resource: one whose address is refused goes altogether (an
/// `img` without its `src` is invalid), where another element only loses the attribute.
const RESOURCES: &[&str] = &[
    "img", "image", "feimage", "use", "link", "source", "track", "input",
];

/// SVG animations, which can set an attribute (an `href`, a handler) after the document loads.
const ANIMATIONS: &[&str] = &[
    "set",
    "animate",
    "animatemotion",
    "animatetransform",
    "animatecolor",
];

/// Attributes whose value is CSS, in which a `url()` is fetched.
const STYLED_ATTRIBUTES: &[&str] = &[
    "style",
    "fill",
    "stroke",
    "filter",
    "clip-path",
    "mask",
    "marker-start",
    "marker-mid",
    "marker-end",
    "cursor",
];

/// Attributes holding an address.
const URL_ATTRIBUTES: &[&str] = &[
    "href",
    "src",
    "srcset",
    "action",
    "formaction",
    "data",
    "poster",
    "background",
    "cite",
    "longdesc",
    "lowsrc",
    "dynsrc",
    "codebase",
    "classid",
    "archive",
    "profile",
    "ping",
    "icon",
    "manifest",
];

/// What was taken out of a book, for its warnings.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Removed {
    /// Elements (scripts, frames, plug-ins, forms and objects unwrapped, a refresh, a base, a
    /// remote stylesheet).
    pub elements: usize,
    /// Attributes (event handlers, refused addresses, `xml:base`, `srcdoc`).
    pub attributes: usize,
    /// Zip entries (a name that leaves the package, a script file, a spine item that is
    /// neither markup nor an image).
    pub files: usize,
    /// References that would fetch from outside the book when it is opened (a remote image,
    /// style sheet or font, in markup or in CSS).
    pub fetches: usize,
}

impl Removed {
    fn add(&mut self, other: &Removed) {
        self.elements += other.elements;
        self.attributes += other.attributes;
        self.files += other.files;
        self.fetches += other.fetches;
    }

    /// The warning a book's owner reads, or None when nothing was removed.
    pub(crate) fn warning(&self) -> Option<String> {
        let parts: Vec<String> = [
            (self.elements, "element", "scripts, frames, plug-ins, forms"),
            (
                self.attributes,
                "attribute",
                "event handlers, links other than web, mail or in-book ones",
            ),
            (
                self.files,
                "file",
                "scripts, or names that leave the package",
            ),
            (
                self.fetches,
                "remote reference",
                "images, style sheets or fonts from another site",
            ),
        ]
        .into_iter()
        .filter(|(count, _, _)| *count > 0)
        .map(|(count, what, such_as)| {
            let plural = if count == 1 { "" } else { "s" };
            format!("{count} {what}{plural} ({such_as})")
        })
        .collect();
        (!parts.is_empty()).then(|| {
            format!(
                "removed what could run in a reader or reach outside the book: {}",
                parts.join(", ")
            )
        })
    }
}

/// The EPUB `bytes` with nothing active left in it (see the module's notes), and what was
/// removed. `bytes` come back as they are when there is nothing to remove. `limits` bound what
/// is inflated to look at the documents: a renderer passes those of the file its entries were
/// copied from, or [`own_package`].
pub(crate) fn epub(bytes: Vec<u8>, limits: Limits) -> Result<(Vec<u8>, Removed), FormatError> {
    let mut zip = Archive::open(&bytes, limits)?;
    let names = zip.names();
    let opf_path = package_path(&mut zip)?;
    let opf = match &opf_path {
        Some(path) => zip.read_text(path)?,
        None => None,
    };
    let manifest = opf
        .as_deref()
        .zip(opf_path.as_deref())
        .map(|(text, path)| Manifest::read(text, path))
        .unwrap_or_default();

    // What every entry is: by its manifest type or its name, else by its first bytes.
    let mut kinds: HashMap<&str, Kind> = HashMap::new();
    for name in &names {
        if name == "mimetype" || name.ends_with('/') || Some(name) == opf_path.as_ref() {
            continue;
        }
        let mut kind = manifest.kind_of(name);
        // A reading system may go by a file's name as well as its declared type: one named as
        // markup or a style sheet is cleaned as such, whatever the manifest says it is.
        let by_name = media::kind("", name);
        if !kind.is_markup() && (by_name.is_markup() || by_name == Kind::Css) {
            kind = by_name;
        }
        if kind == Kind::Unknown {
            if let Some(bytes) = zip.read(name)? {
                kind = media::sniff(&bytes);
            }
        }
        kinds.insert(name, kind);
    }
    let kind_of = |name: &str| kinds.get(name).copied().unwrap_or(Kind::Unknown);
    let dropped: HashSet<String> = names
        .iter()
        .filter(|name| {
            !safe_entry_name(name)
                || kind_of(name) == Kind::Script
                || media::kind("", name) == Kind::Script
                // A reading system shows a spine item as a page: only markup (cleaned below)
                // and images may be one.
                || (manifest.spine.contains(name.as_str())
                    && !matches!(kind_of(name), Kind::Html | Kind::Svg | Kind::Inert))
        })
        .cloned()
        .collect();
    let mut removed = Removed {
        files: dropped.len(),
        ..Removed::default()
    };

    let mut changed: HashMap<&str, Vec<u8>> = HashMap::new();
    for name in &names {
        let kind = kind_of(name);
        if dropped.contains(name) || !(kind.is_markup() || kind == Kind::Css) {
            continue;
        }
        let Some(raw) = zip.read(name)? else { continue };
        // Taken over without a copy: a chapter may be tens of megabytes.
        let (text, utf8) = decode_owned(raw);
        let clean = if kind == Kind::Css {
            css::clean(&text).map(|(clean, fetches)| {
                let what = Removed {
                    fetches,
                    ..Removed::default()
                };
                (clean, what)
            })
        } else {
            document(&text, name, &dropped)
        };
        if let Some((clean, what)) = clean {
            removed.add(&what);
            let clean = match (utf8, kind) {
                (true, _) => clean,
                (false, Kind::Css) => css::declare_utf8(&clean),
                (false, _) => declare_utf8(&clean),
            };
            changed.insert(name, clean.into_bytes());
        }
    }
    if let (Some(path), Some(text)) = (&opf_path, &opf) {
        if let Some(clean) = manifest.without_dropped(text, &dropped) {
            changed.insert(path, clean.into_bytes());
        }
    }
    if changed.is_empty() && dropped.is_empty() {
        return Ok((bytes, removed));
    }
    let out = write(&mut zip, &names, &dropped, &changed)?;
    Ok((out, removed))
}

/// Limits no real book reaches, for a package a renderer wrote itself from what it already
/// holds: there is no bomb in it, and a book of many chapters and images may have more entries
/// than an upload is allowed. (Finite: the archive reads one byte past a limit.)
pub(crate) fn own_package() -> Limits {
    Limits {
        max_entries: usize::MAX,
        max_entry_bytes: 1 << 40,
        max_total_bytes: 1 << 40,
    }
}

/// The package again: the mimetype first, unchanged entries copied as they were stored, the
/// cleaned ones written anew, the dropped ones left out.
fn write(
    zip: &mut Archive<'_>,
    names: &[String],
    dropped: &HashSet<String>,
    changed: &HashMap<&str, Vec<u8>>,
) -> Result<Vec<u8>, FormatError> {
    let mut out = ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    let write_error = |e: zip::result::ZipError| {
        FormatError::Malformed(format!(
            "writing the EPUB without its active content failed: {e}"
        ))
    };
    if names.first().is_some_and(|n| n == "mimetype") && zip.is_stored(0) {
        zip.copy_raw(0, &mut out)?;
    } else {
        out.start_file("mimetype", stored).map_err(write_error)?;
        out.write_all(b"application/epub+zip")
            .map_err(|e| write_error(e.into()))?;
    }
    for (index, name) in names.iter().enumerate() {
        if name == "mimetype" || dropped.contains(name) {
            continue;
        }
        match changed.get(name.as_str()) {
            Some(bytes) => {
                out.start_file(name.as_str(), deflated)
                    .map_err(write_error)?;
                out.write_all(bytes).map_err(|e| write_error(e.into()))?;
            }
            None => zip.copy_raw(index, &mut out)?,
        }
    }
    Ok(out.finish().map_err(write_error)?.into_inner())
}

/// Whether a zip entry's name stays inside the folder a reader unpacks the book into: no
/// absolute path, no drive, no backslash (a separator on Windows), no `.` or `..` segment, no
/// empty segment, no control character. A directory entry's trailing `/` is allowed.
pub(crate) fn safe_entry_name(name: &str) -> bool {
    let path = name.strip_suffix('/').unwrap_or(name);
    !path.is_empty()
        && !path.contains(['\\', ':'])
        && !path.chars().any(char::is_control)
        && path
            .split('/')
            .all(|segment| !matches!(segment, "" | "." | ".."))
}

/// The package document's path, from `META-INF/container.xml`.
fn package_path(zip: &mut Archive<'_>) -> Result<Option<String>, FormatError> {
    let Some(container) = zip.read_text("META-INF/container.xml")? else {
        return Ok(None);
    };
    let found = scan(&container);
    Ok(found
        .iter()
        .filter(|f| f.name == "rootfile")
        .find(|f| attr_of(f, "media-type").is_none_or(|m| m == "application/oebps-package+xml"))
        .and_then(|f| attr_of(f, "full-path"))
        .map(unescape_lenient)
        .filter(|p| safe_entry_name(p)))
}

/// One manifest item: its id, where it is in the archive (None when it is not: a URL, or a
/// path that leaves the package), and what its media type (or name) makes it.
struct Item {
    id: String,
    remote: bool,
    path: Option<String>,
    kind: Kind,
}

#[derive(Default)]
struct Manifest {
    opf_path: String,
    items: Vec<Item>,
    /// What each item in the package is, by its path.
    kinds: HashMap<String, Kind>,
    /// The paths of the items the spine lists, which a reading system shows as pages.
    spine: HashSet<String>,
}

impl Manifest {
    fn read(opf: &str, opf_path: &str) -> Manifest {
        let found = scan(opf);
        let items = found
            .iter()
            .filter(|f| f.name == "item")
            .filter_map(|f| {
                let href = unescape_lenient(attr_of(f, "href")?);
                let remote = scheme(&href).is_some();
                let path = if remote {
                    None
                } else {
                    resolve(opf_path, &href)
                };
                let media_type = attr_of(f, "media-type")
                    .map(unescape_lenient)
                    .unwrap_or_default();
                Some(Item {
                    id: unescape_lenient(attr_of(f, "id")?),
                    remote,
                    kind: media::kind(&media_type, path.as_deref().unwrap_or(&href)),
                    path,
                })
            })
            .collect::<Vec<_>>();
        let spine_ids: HashSet<String> = found
            .iter()
            .filter(|f| f.name == "itemref")
            .filter_map(|f| attr_of(f, "idref").map(unescape_lenient))
            .collect();
        let spine = items
            .iter()
            .filter(|i| spine_ids.contains(&i.id))
            .filter_map(|i| i.path.clone())
            .collect();
        let kinds = items
            .iter()
            .filter_map(|i| Some((i.path.clone()?, i.kind)))
            .collect();
        Manifest {
            opf_path: opf_path.to_string(),
            items,
            kinds,
            spine,
        }
    }

    /// What the entry `name` is by its manifest type (or its name when the manifest does not
    /// list it or its type says nothing known), before its bytes are looked at.
    fn kind_of(&self, name: &str) -> Kind {
        self.kinds
            .get(name)
            .copied()
            .unwrap_or_else(|| media::kind("", name))
    }

    /// The package document without the items whose files are dropped or outside the
    /// package (and the spine entries, guide references, fallbacks and cover naming them),
    /// without the `scripted` and `remote-resources` properties, since no document keeps a
    /// script, a form or a remote resource, and with every markup item's media type written as
    /// its plain essence (`text/html; charset=x` is XHTML to a reading system, and is cleaned
    /// as such); None when there is nothing to change.
    fn without_dropped(&self, opf: &str, dropped: &HashSet<String>) -> Option<String> {
        let gone: HashSet<&str> = self
            .items
            .iter()
            // A remote item would be fetched when the book is opened.
            .filter(|i| {
                i.kind == Kind::Script
                    || i.remote
                    || i.path.as_ref().is_none_or(|p| dropped.contains(p))
            })
            .map(|i| i.id.as_str())
            .collect();
        let found = scan(opf);
        let mut edits = Vec::new();
        for f in &found {
            let id_attr = |name: &str| attr_of(f, name).map(unescape_lenient);
            let names_gone =
                |name: &str| id_attr(name).is_some_and(|id| gone.contains(id.as_str()));
            let remove = match f.name.as_str() {
                "item" => names_gone("id"),
                "itemref" => names_gone("idref"),
                "reference" => attr_of(f, "href").is_some_and(|href| {
                    let href = unescape_lenient(href);
                    let path = href.split('#').next().unwrap_or_default();
                    resolve(&self.opf_path, path).is_none_or(|p| dropped.contains(&p))
                }),
                "meta" => {
                    attr_of(f, "name") == Some("cover")
                        && id_attr("content").is_some_and(|id| gone.contains(id.as_str()))
                }
                _ => false,
            };
            if remove {
                edits.push(Edit {
                    range: whole_element(opf, f),
                    text: String::new(),
                });
                continue;
            }
            if f.name != "item" {
                continue;
            }
            let mut set: Vec<(&str, Option<String>)> = Vec::new();
            const WITHDRAWN: &[&str] = &["scripted", "remote-resources"];
            if let Some(properties) = attr_of(f, "properties") {
                if properties
                    .split_whitespace()
                    .any(|p| WITHDRAWN.contains(&p))
                {
                    let kept: Vec<&str> = properties
                        .split_whitespace()
                        .filter(|p| !WITHDRAWN.contains(p))
                        .collect();
                    set.push(("properties", (!kept.is_empty()).then(|| kept.join(" "))));
                }
            }
            if let Some(declared) = attr_of(f, "media-type") {
                let plain = match media::kind(declared, "") {
                    Kind::Html => Some("application/xhtml+xml"),
                    Kind::Svg => Some("image/svg+xml"),
                    _ => None,
                };
                if let Some(plain) = plain.filter(|plain| declared != *plain) {
                    set.push(("media-type", Some(plain.to_string())));
                }
            }
            for reference in ["fallback", "fallback-style", "media-overlay"] {
                if names_gone(reference) {
                    set.push((reference, None));
                }
            }
            if let (false, Some(tag)) = (set.is_empty(), opf.get(f.tag.clone())) {
                let set: Vec<(&str, Option<&str>)> =
                    set.iter().map(|(k, v)| (*k, v.as_deref())).collect();
                edits.push(Edit {
                    range: f.tag.clone(),
                    text: rewrite_tag(tag, &set, None, false),
                });
            }
        }
        (!edits.is_empty()).then(|| apply(opf, edits))
    }
}

/// An element's whole extent (an empty one's tag, else to the end of its end tag), with the
/// indentation before it, so that taking it out leaves no blank line.
fn whole_element(text: &str, f: &Found) -> Range<usize> {
    let closed_later = !text.get(f.tag.clone()).is_some_and(|t| t.ends_with("/>"))
        && text
            .get(f.content.end..)
            .is_some_and(|rest| rest.starts_with("</"));
    let end = match text.get(f.content.end..).and_then(|rest| rest.find('>')) {
        Some(i) if closed_later => f.content.end + i + 1,
        _ => f.tag.end,
    };
    let before = &text[..f.tag.start];
    let indent = before.len() - before.trim_end_matches([' ', '\t']).len();
    let start = if before[..before.len() - indent].ends_with('\n') {
        f.tag.start - indent - 1
    } else {
        f.tag.start
    };
    start..end
}

/// The document at `path` with nothing active in it and what was removed, or None when it
/// carries nothing active (it is then kept byte for byte). `dropped` are the entries left out
/// of the package: a reference to one is refused like an address outside the package.
///
/// An element is taken out with its content ([`DROPPED`], a `meta` refresh, a `link` to
/// another site, an SVG animation of an `href` or a handler, a resource whose address is
/// refused); a `form` or an `object` is unwrapped ([`UNWRAPPED`]); attributes are taken out:
/// event handlers (`on*`), `xml:base`, `srcdoc`, what is not an attribute's name
/// (`<p <script>`), and an address that is `javascript:`, `vbscript:`, `data:` other than an
/// image's source, or a path outside the package. Markup an HTML parser would read otherwise
/// than an XML one (comments it ends early, a CDATA section holding `<`, processing
/// instructions, a DOCTYPE's internal subset) is taken out or escaped, and what follows a
/// point the reader cannot parse is kept as text.
pub(crate) fn document(
    text: &str,
    path: &str,
    dropped: &HashSet<String>,
) -> Option<(String, Removed)> {
    let mut cleaner = Cleaner {
        text,
        path,
        dropped,
        edits: Vec::new(),
        removed: Removed::default(),
        open: Vec::new(),
        skipping: None,
    };
    cleaner.run();
    if cleaner.edits.is_empty() {
        return None;
    }
    let removed = cleaner.removed;
    Some((apply(text, cleaner.edits), removed))
}

/// Elements whose content an HTML parser reads as plain text up to their end tag, comments
/// included.
const RAW_TEXT: &[&str] = &[
    "style", "title", "textarea", "xmp", "noscript", "noembed", "noframes",
];

/// What an open element's end tag does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Kept,
    /// Kept, and its content is text to an HTML parser ([`RAW_TEXT`]).
    RawText,
    /// A `style` element (raw text too), whose sheet starts at the offset.
    Style(usize),
    /// An element whose tags are taken out around its content ([`UNWRAPPED`]).
    Unwrapped,
}

struct Cleaner<'a> {
    text: &'a str,
    path: &'a str,
    dropped: &'a HashSet<String>,
    edits: Vec<Edit>,
    removed: Removed,
    open: Vec<Open>,
    /// Inside an element being taken out: where it starts and how many elements are open in it.
    skipping: Option<(usize, usize)>,
}

/// What to do with a start (or empty) tag.
enum Verdict {
    Keep,
    /// Taken out with its content, for what it would do.
    Drop(Taken),
    Unwrap,
    Rewrite(String),
}

/// Why an element is taken out, for the count of what was removed.
#[derive(Clone, Copy)]
enum Taken {
    /// It runs, frames or redirects.
    Active,
    /// It loads a resource from outside the book.
    Remote,
}

impl Cleaner<'_> {
    fn run(&mut self) {
        let mut base = 0usize;
        let mut reader = xml_reader(self.text);
        loop {
            let before = base + reader.buffer_position() as usize;
            let event = reader.read_event();
            let after = base + reader.buffer_position() as usize;
            let event = match event {
                Ok(Event::Eof) => break,
                Ok(event) => event,
                Err(_) => {
                    self.unreadable_from(before);
                    return;
                }
            };
            match event {
                // A script's text is not markup: `if (a < b)` must not end it, nor hide its end.
                Event::Start(e) if local_name(e.name().as_ref()) == "script" => {
                    let end = script_end(self.text, after);
                    if self.skipping.is_none() {
                        self.removed.elements += 1;
                        self.cut(before..end);
                    }
                    base = end;
                    reader = xml_reader(&self.text[end..]);
                }
                Event::Start(e) => self.start(&e, before..after),
                Event::Empty(e) => self.empty(&e, before..after),
                Event::End(_) => self.end(before..after),
                _ if self.skipping.is_some() => {}
                other => self.other(&other, before..after),
            }
        }
        if let Some((start, _)) = self.skipping {
            self.cut(start..self.text.len());
        }
    }

    /// A start tag (at `tag`): judged, unless inside an element being taken out.
    fn start(&mut self, e: &BytesStart<'_>, tag: Range<usize>) {
        if let Some((_, depth)) = &mut self.skipping {
            *depth += 1;
            return;
        }
        let after = tag.end;
        match self.judge(e, tag.clone()) {
            Verdict::Drop(taken) => {
                self.count(taken);
                self.skipping = Some((tag.start, 1));
            }
            Verdict::Unwrap => {
                self.removed.elements += 1;
                self.cut(tag);
                self.open.push(Open::Unwrapped);
            }
            Verdict::Rewrite(text) => {
                self.replace(tag, text);
                self.open.push(kept(e, after));
            }
            Verdict::Keep => self.open.push(kept(e, after)),
        }
    }

    /// An empty element (at `tag`): judged, unless inside an element being taken out.
    fn empty(&mut self, e: &BytesStart<'_>, tag: Range<usize>) {
        if self.skipping.is_some() {
            return;
        }
        match self.judge(e, tag.clone()) {
            Verdict::Drop(taken) => {
                self.count(taken);
                self.cut(tag);
            }
            Verdict::Unwrap => {
                self.removed.elements += 1;
                self.cut(tag);
            }
            Verdict::Rewrite(text) => self.replace(tag, text),
            Verdict::Keep => {}
        }
    }

    /// An end tag (at `tag`): the end of an element being taken out, of an unwrapped one (its
    /// tag goes) or of a style sheet (cleaned).
    fn end(&mut self, tag: Range<usize>) {
        match &mut self.skipping {
            Some((start, depth)) => {
                *depth -= 1;
                if *depth == 0 {
                    let start = *start;
                    self.skipping = None;
                    self.cut(start..tag.end);
                }
            }
            None => match self.open.pop() {
                Some(Open::Unwrapped) => self.cut(tag),
                Some(Open::Style(start)) => self.clean_style(start..tag.start),
                _ => {}
            },
        }
    }

    /// Comments, CDATA sections, processing instructions and document types (at `at`) that
    /// could bring markup alive.
    fn other(&mut self, event: &Event<'_>, at: Range<usize>) {
        match event {
            // An HTML parser ends a comment at `<!-->`, `<!--->` or `--!>` where XML reads
            // on, and in a `style` reads none at all: markup in it could come alive there.
            Event::Comment(c)
                if c.starts_with(b">")
                    || c.starts_with(b"->")
                    || c.windows(4).any(|w| w == b"--!>")
                    || (matches!(self.open.last(), Some(Open::RawText | Open::Style(_)))
                        && c.contains(&b'<')) =>
            {
                self.cut(at)
            }
            Event::CData(c) if c.contains(&b'<') => {
                let content = String::from_utf8_lossy(c).into_owned();
                self.replace(at, escape_text(&content));
            }
            // `<?xml-stylesheet?>` applies XSLT, which can write scripts; an HTML parser
            // ends a processing instruction at the first `>`.
            Event::PI(_) => self.cut(at),
            // Entities declared in the document are expanded by XML readers, markup and all.
            Event::DocType(d) if d.contains(&b'[') => {
                let declared = String::from_utf8_lossy(d).into_owned();
                let name = declared.split('[').next().unwrap_or_default().trim();
                self.replace(at, format!("<!DOCTYPE {name}>"));
            }
            _ => {}
        }
    }

    /// What follows `at` cannot be read as XML: it is kept as text, so no markup hides in it
    /// (inside an element being taken out, it goes with that element).
    fn unreadable_from(&mut self, at: usize) {
        match self.skipping {
            Some((start, _)) => self.cut(start..self.text.len()),
            None => {
                let rest = &self.text[at..];
                self.replace(at..self.text.len(), escape_text(rest));
            }
        }
    }

    /// Takes the references outside the book out of the `style` element's sheet at `range`.
    fn clean_style(&mut self, range: Range<usize>) {
        let raw = &self.text[range.clone()];
        // A plain sheet is edited in place; one with character references, CDATA sections or
        // comments is written again as the reader reads it.
        if !raw.contains(['&', '<']) {
            let cuts = css::remote_references(raw);
            self.removed.fetches += cuts.len();
            for (cut, with) in cuts {
                self.replace(range.start + cut.start..range.start + cut.end, with.into());
            }
            return;
        }
        if let Some((clean, fetches)) = css::clean(&style_sheet(raw)) {
            self.removed.fetches += fetches;
            self.edits
                .retain(|e| e.range.start < range.start || e.range.end > range.end);
            self.replace(range, escape_style(&clean));
        }
    }

    fn count(&mut self, taken: Taken) {
        match taken {
            Taken::Active => self.removed.elements += 1,
            Taken::Remote => self.removed.fetches += 1,
        }
    }

    fn cut(&mut self, range: Range<usize>) {
        self.replace(range, String::new());
    }

    fn replace(&mut self, range: Range<usize>, text: String) {
        self.edits.push(Edit { range, text });
    }

    fn judge(&mut self, e: &BytesStart<'_>, range: Range<usize>) -> Verdict {
        let name = local_name(e.name().as_ref());
        if DROPPED.contains(&name.as_str()) {
            return Verdict::Drop(Taken::Active);
        }
        if UNWRAPPED.contains(&name.as_str()) {
            return Verdict::Unwrap;
        }
        let mut attrs = Vec::new();
        let mut unreadable = false;
        for attr in e.html_attributes() {
            match attr {
                Ok(a) => attrs.push((
                    String::from_utf8_lossy(a.key.as_ref()).into_owned(),
                    String::from_utf8_lossy(&a.value).into_owned(),
                )),
                Err(_) => unreadable = true,
            }
        }
        let value_of = |wanted: &str| {
            attrs
                .iter()
                .find(|(k, _)| local_name(k.as_bytes()) == wanted)
                .map(|(_, v)| unescape_lenient(v).trim().to_ascii_lowercase())
        };
        if name == "meta" && value_of("http-equiv").is_some_and(|v| v == "refresh") {
            return Verdict::Drop(Taken::Active);
        }
        if ANIMATIONS.contains(&name.as_str())
            && value_of("attributename").is_some_and(|a| {
                let target = local_name(a.as_bytes());
                target == "href" || target.starts_with("on")
            })
        {
            return Verdict::Drop(Taken::Active);
        }
        let before = attrs.len();
        let mut refused_address = false;
        let mut remote_addresses = 0;
        attrs.retain(|(key, value)| {
            let lower = key.to_ascii_lowercase();
            if lower.starts_with("xmlns") {
                return true;
            }
            let attr = local_name(key.as_bytes());
            if !is_name(key) || attr.starts_with("on") || lower == "xml:base" || attr == "srcdoc" {
                return false;
            }
            if URL_ATTRIBUTES.contains(&attr.as_str()) && !self.address_allowed(&name, &attr, value)
            {
                refused_address = true;
                remote_addresses += usize::from(is_remote(&unescape_lenient(value)));
                return false;
            }
            true
        });
        if refused_address && RESOURCES.contains(&name.as_str()) {
            return Verdict::Drop(if remote_addresses > 0 {
                Taken::Remote
            } else {
                Taken::Active
            });
        }
        let mut restyled = false;
        for (key, value) in &mut attrs {
            if !STYLED_ATTRIBUTES.contains(&local_name(key.as_bytes()).as_str()) {
                continue;
            }
            if let Some((clean, fetches)) = css::clean(&unescape_lenient(value)) {
                *value = escape_attr(&clean);
                self.removed.fetches += fetches;
                restyled = true;
            }
        }
        let taken = before - attrs.len();
        if taken == 0 && !unreadable && !restyled {
            return Verdict::Keep;
        }
        self.removed.fetches += remote_addresses;
        self.removed.attributes += taken - remote_addresses;
        let raw_name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
        let empty = self.text[range].ends_with("/>");
        let mut tag = format!("<{raw_name}");
        for (key, value) in attrs {
            tag.push_str(&format!(r#" {key}="{}""#, value.replace('"', "&quot;")));
        }
        tag.push_str(if empty { "/>" } else { ">" });
        Verdict::Rewrite(tag)
    }

    /// Whether the `attr` address of an `element` may stay (`raw` as written in the document).
    fn address_allowed(&self, element: &str, attr: &str, raw: &str) -> bool {
        // An address whose character references do not resolve is not guessed at.
        let Some(value) = unescape_strict(raw) else {
            return false;
        };
        if attr == "srcset" {
            return candidates(&value)
                .into_iter()
                .all(|url| self.url_allowed(element, attr, url));
        }
        self.url_allowed(element, attr, &value)
    }

    /// By allowlist: an address in the book, an image's `data:` source, and a web or mail
    /// link that the reader follows only when asked. Every other scheme (`file:`, `ms-msdt:`,
    /// `javascript:`, a drive such as `C:`) hands something to the reader's machine, and a
    /// resource from another site is fetched as the book opens.
    fn url_allowed(&self, element: &str, attr: &str, url: &str) -> bool {
        match scheme(url) {
            Some((scheme, rest)) => match scheme.as_str() {
                "data" => {
                    let image_source = matches!(
                        (element, attr),
                        ("img", "src") | ("img", "srcset") | ("image", "href")
                    );
                    image_source && rest.starts_with("image/")
                }
                "http" | "https" | "mailto" => is_followed_link(element, attr),
                _ => false,
            },
            None => {
                let path = url.split(['#', '?']).next().unwrap_or_default();
                path.is_empty()
                    || resolve(self.path, path).is_some_and(|p| !self.dropped.contains(&p))
            }
        }
    }
}

/// How a kept element whose start tag ends at `after` is open.
fn kept(e: &BytesStart<'_>, after: usize) -> Open {
    let name = local_name(e.name().as_ref());
    if name == "style" {
        Open::Style(after)
    } else if RAW_TEXT.contains(&name.as_str()) {
        Open::RawText
    } else {
        Open::Kept
    }
}

/// The CSS of a `style` element as a reader applies it: without the markers of CDATA sections
/// and without comments (an XML reader drops them; an HTML one reads their markers as CSS
/// that does nothing), with character references resolved.
fn style_sheet(raw: &str) -> String {
    let mut sheet = raw.replace("<![CDATA[", "").replace("]]>", "");
    while let Some(start) = sheet.find("<!--") {
        let end = sheet[start..]
            .find("-->")
            .map_or(sheet.len(), |i| start + i + 3);
        sheet.replace_range(start..end, "");
    }
    unescape_lenient(&sheet)
}

/// A style sheet as the text of an XHTML `style` element.
fn escape_style(css: &str) -> String {
    css.replace('&', "&amp;").replace('<', "&lt;")
}

/// Whether `key` can be an attribute's name (what a lenient reader took for one may not be).
fn is_name(key: &str) -> bool {
    key.starts_with(|c: char| c.is_alphabetic() || matches!(c, '_' | ':'))
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

fn xml_reader(text: &str) -> Reader<&[u8]> {
    let mut reader = Reader::from_str(text);
    let config = reader.config_mut();
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    reader
}

/// Where the script whose start tag ends at `from` ends: after its end tag (of any prefix, in
/// any case), else at the end of the document.
fn script_end(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(offset) = text.get(at..).and_then(|rest| rest.find("</")) {
        let name_start = at + offset + 2;
        let name_end = bytes[name_start..]
            .iter()
            .position(|b| b.is_ascii_whitespace() || *b == b'>')
            .map_or(bytes.len(), |i| name_start + i);
        if local_name(&bytes[name_start..name_end]) == "script" {
            return text[name_end..]
                .find('>')
                .map_or(text.len(), |i| name_end + i + 1);
        }
        at = name_start;
    }
    text.len()
}

/// An element or attribute name without its prefix, in lower case, up to the first character a
/// name cannot hold (`<script/x>` is a script to an HTML parser).
fn local_name(raw: &[u8]) -> String {
    let name = String::from_utf8_lossy(raw).to_ascii_lowercase();
    let local = name.rsplit(':').next().unwrap_or_default();
    local
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect()
}

/// `raw` with its character references resolved (HTML's named ones included); None when one
/// cannot be.
fn unescape_strict(raw: &str) -> Option<String> {
    quick_xml::escape::unescape_with(raw, quick_xml::escape::resolve_html5_entity)
        .ok()
        .map(|v| v.into_owned())
}

/// `raw` with its character references resolved where they can be.
fn unescape_lenient(raw: &str) -> String {
    unescape_strict(raw).unwrap_or_else(|| raw.to_string())
}

mod address;
mod css;
#[cfg(test)]
mod tests;
