//! PDF books: text page by page in reading order, chapters from the outline (bookmarks) when the
//! file has one, else from heading-like lines, else by page ranges. A PDF without a text layer
//! (a scan) is refused with a message that says so.
//!
//! PDF readers are notoriously fragile, so every step is bounded: the page tree and the outline
//! are walked with visited sets and depth limits (a looping page tree is refused, a looping
//! outline is read up to the loop), each page's text is read under `catch_unwind`, and the whole
//! extraction has a time budget.

use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use pdf_extract::{Dictionary, Document, Object, ObjectId};

use crate::budget::Budget;
use crate::error::FormatError;
use crate::limits;
use crate::manuscript::{count_words, Block, BlockKind, Chapter, Manuscript};
use crate::markup::escape_text;

const MAX_PAGES: usize = 10_000;
const MAX_OUTLINE_ITEMS: usize = 10_000;
const MAX_TREE_DEPTH: usize = 64;
const TIME_BUDGET: Duration = Duration::from_secs(120);

/// Without headings or an outline, a chapter is this many pages.
const PAGES_PER_CHAPTER: usize = 10;

pub fn extract(bytes: &[u8]) -> Result<Manuscript, FormatError> {
    extract_within(bytes, Budget::default())
}

/// Every stream (a page's content, an object stream, a font) decompresses within `budget`'s
/// [`Budget::pdf_stream_bytes`]. Real books stay far below it; an inflation bomb (a few hundred
/// kilobytes of Flate that would become gigabytes) is stopped at it, inside the decoder, before
/// the memory is taken.
pub fn extract_within(bytes: &[u8], budget: Budget) -> Result<Manuscript, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    let started = Instant::now();
    let budget = budget.pdf_stream_bytes(bytes.len());
    let doc = load(bytes, budget)?;
    let pages = pages(&doc)?;
    let outline = read_outline(&doc, &pages)?;

    let (texts, heavy_pages) = read_pages(&doc, &pages, budget, started)?;
    let pages_text = remove_running_lines(texts);
    if pages_text.iter().all(|p| count_words(p) == 0) {
        return Err(FormatError::NoTextLayer);
    }
    // Counted before any block is built (page breaks only ever join paragraphs).
    limits::check_blocks(pages_text.iter().map(|p| count_paragraphs(p)).sum())?;

    let mut manuscript = Manuscript::default();
    if !heavy_pages.is_empty() {
        let listed: Vec<String> = heavy_pages.iter().take(10).map(u32::to_string).collect();
        manuscript.warnings.push(format!(
            "{} pages were left out (page {}{}): each has more than {} MiB of drawing \
             instructions, where a page of text has a few kilobytes",
            heavy_pages.len(),
            listed.join(", "),
            if heavy_pages.len() > 10 { " ..." } else { "" },
            limits::MAX_PAGE_CONTENT_BYTES >> 20
        ));
    }
    if let Ok(info) = doc
        .trailer
        .get(b"Info")
        .and_then(|i| doc.dereference(i))
        .and_then(|(_, o)| o.as_dict())
    {
        manuscript.title = info_string(&doc, info, b"Title");
        manuscript.author = info_string(&doc, info, b"Author");
    }
    manuscript.chapters = if outline.is_empty() {
        chapters_without_outline(&pages_text)
    } else {
        chapters_from_outline(&pages_text, &outline)
    };
    manuscript.chapters.retain(|c| !c.blocks.is_empty());
    manuscript.detect_language_if_missing();
    Ok(manuscript)
}

/// The PDF's document, every stream within `budget` bytes, decrypted when its user password
/// is empty.
fn load(bytes: &[u8], budget: usize) -> Result<Document, FormatError> {
    let options = pdf_extract::LoadOptions {
        max_decompressed_size: Some(budget),
        ..Default::default()
    };
    let mut doc = catch_unwind(AssertUnwindSafe(|| {
        Document::load_mem_with_options(bytes, options)
    }))
    .map_err(|_| FormatError::Malformed("the PDF structure could not be read".into()))?
    .map_err(|e| {
        if over_budget(&e) {
            inflates_too_much(budget)
        } else {
            FormatError::Malformed(format!("not a readable PDF ({e})"))
        }
    })?;
    if doc.is_encrypted() {
        // Many PDFs are "encrypted" with an empty user password only to restrict printing.
        doc.decrypt("").map_err(|_| FormatError::Encrypted)?;
    }
    Ok(doc)
}

/// The pages, (number, object), after the page tree is checked; at least one, at most
/// [`MAX_PAGES`].
fn pages(doc: &Document) -> Result<Vec<(u32, ObjectId)>, FormatError> {
    // Before the reader lists the pages: it cuts a looping tree off only after repeating pages.
    check_page_tree_kids(doc)?;
    let pages: Vec<(u32, ObjectId)> = doc.get_pages().into_iter().collect();
    if pages.is_empty() {
        return Err(FormatError::Malformed("the PDF has no pages".into()));
    }
    if pages.len() > MAX_PAGES {
        return Err(FormatError::TooLarge(format!(
            "{} pages (at most {MAX_PAGES})",
            pages.len()
        )));
    }
    check_page_tree(doc, &pages)?;
    Ok(pages)
}

/// Every page's text (empty for a page the reader cannot handle or one left out), and the
/// numbers of the pages left out for the size of their drawing instructions.
fn read_pages(
    doc: &Document,
    pages: &[(u32, ObjectId)],
    budget: usize,
    started: Instant,
) -> Result<(Vec<String>, Vec<u32>), FormatError> {
    let mut texts = Vec::with_capacity(pages.len());
    let mut text_bytes = 0usize;
    let mut heavy_pages = Vec::new();
    for (number, id) in pages {
        limits::check_text_bytes(text_bytes)?;
        if started.elapsed() > TIME_BUDGET {
            return Err(FormatError::TooLarge(
                "the PDF takes too long to read".into(),
            ));
        }
        // The reader holds a page's operators in memory at many times their size: a page of
        // more than a few megabytes of them is a drawing (or an attack), and is left out.
        // Spaces make no operators, so they are not counted.
        let content = doc
            .get_page_content_with_limit(*id, budget)
            .map_or(0, |c| c.iter().filter(|b| !b.is_ascii_whitespace()).count());
        if content > limits::MAX_PAGE_CONTENT_BYTES {
            heavy_pages.push(*number);
            texts.push(String::new());
            continue;
        }
        let page = catch_unwind(AssertUnwindSafe(|| {
            let mut text = String::new();
            let mut output = pdf_extract::PlainTextOutput::new(&mut text);
            pdf_extract::output_doc_page_within(doc, &mut output, *number, budget).map(|()| text)
        }));
        // A page the reader cannot handle is left empty rather than failing the whole book;
        // one that inflates past the budget fails it, saying so.
        texts.push(match page {
            Ok(Ok(text)) => {
                text_bytes += text.len();
                text
            }
            Ok(Err(pdf_extract::OutputError::PdfError(e))) if over_budget(&e) => {
                return Err(inflates_too_much(budget))
            }
            _ => String::new(),
        });
    }
    limits::check_text_bytes(text_bytes)?;
    Ok((texts, heavy_pages))
}

fn over_budget(e: &pdf_extract::Error) -> bool {
    matches!(
        e,
        pdf_extract::Error::Decompress(pdf_extract::DecompressError::MemoryLimitExceeded { .. })
    )
}

fn inflates_too_much(budget: usize) -> FormatError {
    FormatError::TooLarge(format!(
        "a stream of the PDF decompresses to more than {} MiB, the limit for a file of this size",
        budget >> 20
    ))
}

fn info_string(doc: &Document, info: &Dictionary, key: &[u8]) -> Option<String> {
    let value = info.get(key).ok()?;
    let value = match value {
        Object::Reference(id) => doc.get_object(*id).ok()?,
        other => other,
    };
    pdf_extract::decode_text_string(value)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Walks the page tree down from the catalog's `/Pages`: a `/Pages` node met twice (one that
/// lists itself or an ancestor among its `/Kids`, or hangs in two places) would have its pages
/// read again each time, so the file is refused rather than read with pages repeated.
fn check_page_tree_kids(doc: &Document) -> Result<(), FormatError> {
    let Some(root) = doc
        .catalog()
        .ok()
        .and_then(|c| c.get(b"Pages").ok())
        .and_then(|p| p.as_reference().ok())
    else {
        // No tree at all: the page list comes out empty and says so.
        return Ok(());
    };
    let looped = || FormatError::Malformed("the PDF's page tree loops back on itself".into());
    let mut visited = HashSet::from([root]);
    let mut stack = vec![(root, 0usize)];
    while let Some((id, depth)) = stack.pop() {
        if depth > MAX_TREE_DEPTH {
            return Err(FormatError::Malformed(
                "the PDF's page tree is nested too deeply".into(),
            ));
        }
        let Some(kids) = doc
            .get_dictionary(id)
            .and_then(|node| node.get(b"Kids"))
            .and_then(|kids| doc.dereference(kids))
            .and_then(|(_, kids)| kids.as_array())
            .ok()
        else {
            continue;
        };
        for kid in kids {
            let Ok(kid) = kid.as_reference() else {
                continue;
            };
            // Only `/Pages` nodes are descended into (as the reader does); a leaf listed twice
            // cannot loop.
            let is_node = doc
                .get_dictionary(kid)
                .and_then(Dictionary::get_type)
                .is_ok_and(|t| t == b"Pages");
            if !is_node {
                continue;
            }
            if !visited.insert(kid) {
                return Err(looped());
            }
            stack.push((kid, depth + 1));
        }
    }
    Ok(())
}

/// Every page's chain of parents must end: a loop there makes readers recurse forever.
fn check_page_tree(doc: &Document, pages: &[(u32, ObjectId)]) -> Result<(), FormatError> {
    for (_, id) in pages {
        let mut seen = HashSet::new();
        let mut current = *id;
        loop {
            if !seen.insert(current) || seen.len() > MAX_TREE_DEPTH {
                return Err(FormatError::Malformed(
                    "the PDF's page tree loops back on itself".into(),
                ));
            }
            let Ok(dict) = doc.get_dictionary(current) else {
                break;
            };
            match dict.get(b"Parent").ok().and_then(|p| p.as_reference().ok()) {
                Some(parent) => current = parent,
                None => break,
            }
        }
    }
    Ok(())
}

/// (title, 0-based page index) of each outline item, in order; loops are cut, depth is bounded.
fn read_outline(
    doc: &Document,
    pages: &[(u32, ObjectId)],
) -> Result<Vec<(String, usize)>, FormatError> {
    let index_of: HashMap<ObjectId, usize> = pages
        .iter()
        .enumerate()
        .map(|(i, (_, id))| (*id, i))
        .collect();
    let mut out: Vec<(String, usize, usize)> = Vec::new();
    let deref = |o: &Object| -> Option<Object> {
        match o {
            Object::Reference(id) => doc.get_object(*id).ok().cloned(),
            other => Some(other.clone()),
        }
    };
    let Some(first) = doc
        .catalog()
        .ok()
        .and_then(|c| c.get(b"Outlines").ok())
        .and_then(deref)
        .and_then(|o| {
            o.as_dict()
                .ok()
                .and_then(|d| d.get(b"First").ok())
                .and_then(|f| f.as_reference().ok())
        })
    else {
        return Ok(Vec::new());
    };
    let mut seen = HashSet::new();
    let mut stack = vec![(first, 1usize)];
    'walk: while let Some((id, level)) = stack.pop() {
        let mut current = Some(id);
        while let Some(id) = current {
            if !seen.insert(id) {
                // A bookmark reached twice: the outline loops. Keep what came before.
                break;
            }
            if out.len() >= MAX_OUTLINE_ITEMS || level > MAX_TREE_DEPTH {
                break 'walk;
            }
            let Ok(item) = doc.get_dictionary(id) else {
                break;
            };
            let title = item
                .get(b"Title")
                .ok()
                .and_then(deref)
                .and_then(|t| pdf_extract::decode_text_string(&t).ok())
                .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
            if let Some(page) = destination_page(doc, item, &index_of) {
                // Only the top levels make chapters; deeper entries are sections inside them.
                if level <= 2 {
                    out.push((title, page, level));
                }
            }
            let next = item.get(b"Next").ok().and_then(|n| n.as_reference().ok());
            match item.get(b"First").ok().and_then(|f| f.as_reference().ok()) {
                Some(child) => {
                    if let Some(next) = next {
                        stack.push((next, level));
                    }
                    stack.push((child, level + 1));
                    current = None;
                }
                None => current = next,
            }
        }
    }
    // Chapters come from the top level, unless it holds a single entry (the book's title).
    let top = out.iter().filter(|(_, _, l)| *l == 1).count();
    let level = if top <= 1 && out.iter().any(|(_, _, l)| *l == 2) {
        2
    } else {
        1
    };
    let mut chapters: Vec<(String, usize)> = out
        .into_iter()
        .filter(|(_, _, l)| *l == level)
        .map(|(t, p, _)| (t, p))
        .collect();
    chapters.sort_by_key(|(_, page)| *page);
    Ok(chapters)
}

fn destination_page(
    doc: &Document,
    item: &Dictionary,
    index_of: &HashMap<ObjectId, usize>,
) -> Option<usize> {
    let resolve = |o: &Object| -> Option<Object> {
        match o {
            Object::Reference(id) => doc.get_object(*id).ok().cloned(),
            other => Some(other.clone()),
        }
    };
    let dest = match item.get(b"Dest").ok().and_then(resolve) {
        Some(d) => d,
        None => {
            let action = item.get(b"A").ok().and_then(resolve)?;
            action.as_dict().ok()?.get(b"D").ok().and_then(resolve)?
        }
    };
    let array = match &dest {
        Object::Array(a) => a.clone(),
        Object::Dictionary(d) => d.get(b"D").ok()?.as_array().ok()?.clone(),
        _ => return None,
    };
    match array.first()? {
        Object::Reference(id) => index_of.get(id).copied(),
        _ => None,
    }
}

/// Drops lines that are page furniture: bare page numbers, and short lines repeated on many
/// pages (running heads and feet).
fn remove_running_lines(pages: Vec<String>) -> Vec<String> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for page in &pages {
        let unique: HashSet<&str> = page
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && l.len() < 80)
            .collect();
        for line in unique {
            *counts.entry(line.to_string()).or_default() += 1;
        }
    }
    let running =
        |line: &str| pages.len() >= 6 && counts.get(line).is_some_and(|n| *n * 3 >= pages.len());
    pages
        .iter()
        .map(|page| {
            page.lines()
                .filter(|l| {
                    let t = l.trim();
                    let page_number = !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
                    !page_number && !running(t)
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

/// How many blocks [`paragraphs`] makes of `text`: its runs of non-blank lines.
fn count_paragraphs(text: &str) -> usize {
    let mut count = 0;
    let mut in_paragraph = false;
    for line in text.lines() {
        let blank = line.trim().is_empty();
        if !blank && !in_paragraph {
            count += 1;
        }
        in_paragraph = !blank;
    }
    count
}

/// Paragraph blocks from page text: blank lines separate paragraphs, wrapped lines are joined
/// (a hyphen at a line end followed by a lower-case letter is a broken word and is mended).
fn paragraphs(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, blocks: &mut Vec<Block>| {
        let t = current.split_whitespace().collect::<Vec<_>>().join(" ");
        if !t.is_empty() {
            blocks.push(Block::new(BlockKind::Paragraph, escape_text(&t)));
        }
        current.clear();
    };
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            flush(&mut current, &mut blocks);
            continue;
        }
        if current.ends_with('-') && line.starts_with(|c: char| c.is_lowercase()) {
            current.pop();
        } else if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(line);
    }
    flush(&mut current, &mut blocks);
    blocks
}

fn normalize(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Each outline entry starts a chapter at its page; on that page, at the line that carries its
/// title when one does (several chapters can begin on one page).
fn chapters_from_outline(pages: &[String], outline: &[(String, usize)]) -> Vec<Chapter> {
    // Split points as (page, line index), with titles.
    let mut starts: Vec<((usize, usize), &str)> = Vec::new();
    for (title, page) in outline {
        let lines: Vec<&str> = pages
            .get(*page)
            .map(|p| p.lines().collect())
            .unwrap_or_default();
        let wanted = normalize(title);
        let from = starts
            .last()
            .filter(|((p, _), _)| p == page)
            .map_or(0, |((_, l), _)| *l);
        let line = lines
            .iter()
            .enumerate()
            .skip(from)
            .find(|(_, l)| {
                !wanted.is_empty()
                    && normalize(l).starts_with(&wanted.chars().take(40).collect::<String>())
            })
            .map_or(from, |(i, _)| i);
        starts.push(((*page, line), title.as_str()));
    }
    starts.sort_by_key(|(position, _)| *position);
    let mut chapters = Vec::new();
    let mut front = String::new();
    let mut current: Option<(String, String)> = None;
    let mut next = starts.iter().peekable();
    for (page_index, page) in pages.iter().enumerate() {
        for (line_index, line) in page.lines().enumerate() {
            while let Some(&&(position, title)) = next.peek() {
                if position > (page_index, line_index) {
                    break;
                }
                if let Some((t, body)) = current.take() {
                    chapters.push(Chapter {
                        title: Some(t).filter(|t| !t.is_empty()),
                        blocks: paragraphs(&body),
                    });
                }
                current = Some((title.to_string(), String::new()));
                next.next();
            }
            let target = match current.as_mut() {
                Some((_, body)) => body,
                None => &mut front,
            };
            target.push_str(line);
            target.push('\n');
        }
        // A page end is a paragraph end only if the last line closes a sentence.
        let target = match current.as_mut() {
            Some((_, body)) => body,
            None => &mut front,
        };
        if target.trim_end().ends_with(['.', '!', '?', '"', '”', ':']) {
            target.push('\n');
        }
    }
    if let Some((t, body)) = current {
        chapters.push(Chapter {
            title: Some(t).filter(|t| !t.is_empty()),
            blocks: paragraphs(&body),
        });
    }
    let front = paragraphs(&front);
    if !front.is_empty() {
        chapters.insert(
            0,
            Chapter {
                title: None,
                blocks: front,
            },
        );
    }
    chapters
}

/// Chapters from heading-like lines ("Chapter 1", ...); failing that, page ranges.
fn chapters_without_outline(pages: &[String]) -> Vec<Chapter> {
    let text = pages.join("\n\n");
    if let Ok(from_headings) = crate::txt::extract(text.as_bytes()) {
        if from_headings.chapters.iter().any(|c| c.title.is_some()) {
            return from_headings.chapters;
        }
    }
    pages
        .chunks(PAGES_PER_CHAPTER)
        .enumerate()
        .map(|(i, chunk)| {
            let first = i * PAGES_PER_CHAPTER + 1;
            let last = first + chunk.len() - 1;
            Chapter {
                title: Some(format!("Pages {first}–{last}")),
                blocks: paragraphs(&chunk.join("\n\n")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus_tests::fixture;

    #[test]
    fn libreoffice_pdfs_have_their_chapters_from_the_outline() {
        let m = extract(&fixture("wasteland.pdf")).unwrap();
        let titles: Vec<_> = m.chapters.iter().filter_map(|c| c.title.clone()).collect();
        for part in ["I. THE BURIAL OF THE DEAD", "V. WHAT THE THUNDER SAID"] {
            assert!(
                titles.iter().any(|t| t == part),
                "no {part:?} in {titles:?}"
            );
        }
        let moby = extract(&fixture("moby-dick.pdf")).unwrap();
        let loomings = moby
            .chapters
            .iter()
            .find(|c| c.title.as_deref() == Some("Chapter 1. Loomings."))
            .unwrap();
        assert!(loomings.plain_text().contains("Call me Ishmael."));
    }

    #[test]
    fn word_counts_are_within_two_percent_of_pdftotext() {
        // `pdftotext FILE - | wc -w` (poppler 22.02) on each fixture.
        for (name, expected) in [
            ("moby-dick.pdf", 212_334u64),
            ("wasteland.pdf", 4_637),
            ("childrens-literature.pdf", 54_759),
        ] {
            let words = extract(&fixture(name)).unwrap().word_count();
            assert!(
                words.abs_diff(expected) * 50 <= expected,
                "{name}: {words} words, pdftotext {expected}"
            );
        }
    }

    #[test]
    fn a_pdf_without_text_is_reported_as_a_scan() {
        assert_eq!(extract(&image_only_pdf()), Err(FormatError::NoTextLayer));
    }

    #[test]
    fn garbage_and_truncated_pdfs_are_errors_not_panics() {
        assert!(extract(b"%PDF-1.7\n garbage").is_err());
        let real = fixture("wasteland.pdf");
        for cut in [20, real.len() / 3, real.len() - 30] {
            let _ = extract(&real[..cut]);
        }
    }

    /// A one-page PDF whose only content is a drawn rectangle.
    fn image_only_pdf() -> Vec<u8> {
        let mut doc = printpdf::PdfDocument::new("scan");
        let ops = vec![printpdf::Op::DrawRectangle {
            rectangle: printpdf::Rect {
                x: printpdf::Pt(10.0),
                y: printpdf::Pt(10.0),
                width: printpdf::Pt(100.0),
                height: printpdf::Pt(100.0),
                mode: None,
                winding_order: None,
            },
        }];
        let page = printpdf::PdfPage::new(printpdf::Mm(100.0), printpdf::Mm(100.0), ops);
        doc.with_pages(vec![page])
            .save(&printpdf::PdfSaveOptions::default(), &mut Vec::new())
    }

    /// How [`hostile_pdf`] breaks its structure.
    #[derive(Clone, Copy, PartialEq)]
    enum Hostility {
        /// Nothing: a well-formed one-page PDF.
        None,
        /// Two outline items, each the other's `/Next`.
        OutlineLoop,
        /// The `/Pages` node's `/Parent` is its own page.
        ParentLoop,
        /// The `/Pages` node lists itself among its `/Kids`.
        PagesListsItself,
        /// A `/Pages` node under the root lists the root among its `/Kids`.
        PagesListsItsAncestor,
    }

    /// A one-page PDF with text, broken as `hostility` says.
    fn hostile_pdf(hostility: Hostility) -> Vec<u8> {
        use pdf_extract::{dictionary, Stream};
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font = doc.add_object(
            dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" },
        );
        let content = doc.add_object(Stream::new(
            dictionary! {},
            b"BT /F1 12 Tf 72 712 Td (Chapter 1 Hello there loop) Tj ET".to_vec(),
        ));
        // With an intermediate node, the page hangs under it rather than under the root.
        let middle_id =
            (hostility == Hostility::PagesListsItsAncestor).then(|| doc.new_object_id());
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => middle_id.unwrap_or(pages_id), "Contents" => content,
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        });
        let mut root_kids: Vec<Object> = vec![page.into()];
        match hostility {
            Hostility::PagesListsItself => root_kids.push(pages_id.into()),
            Hostility::PagesListsItsAncestor => {
                if let Some(middle_id) = middle_id {
                    root_kids = vec![middle_id.into()];
                    let middle = dictionary! {
                        "Type" => "Pages", "Parent" => pages_id,
                        "Kids" => vec![page.into(), pages_id.into()], "Count" => 1,
                    };
                    doc.objects.insert(middle_id, Object::Dictionary(middle));
                }
            }
            _ => {}
        }
        let mut pages = dictionary! { "Type" => "Pages", "Kids" => root_kids, "Count" => 1 };
        if hostility == Hostility::ParentLoop {
            pages.set("Parent", page);
        }
        doc.objects.insert(pages_id, Object::Dictionary(pages));
        let mut catalog = dictionary! { "Type" => "Catalog", "Pages" => pages_id };
        if hostility == Hostility::OutlineLoop {
            let (a, b) = (doc.new_object_id(), doc.new_object_id());
            let item = |title: &str, next| dictionary! { "Title" => Object::string_literal(title), "Next" => next, "Dest" => vec![page.into(), "Fit".into()] };
            doc.objects.insert(a, Object::Dictionary(item("A", b)));
            doc.objects.insert(b, Object::Dictionary(item("B", a)));
            catalog.set(
                "Outlines",
                doc.add_object(dictionary! { "Type" => "Outlines", "First" => a, "Last" => b }),
            );
        }
        let catalog = doc.add_object(catalog);
        doc.trailer.set("Root", catalog);
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).unwrap();
        bytes
    }

    // Inflation bombs, single and chained, are in the hostile corpus (`tests/hostile/corpus.rs`).

    #[test]
    fn a_pdf_whose_outline_loops_is_read_without_following_the_loop() {
        let m = extract(&hostile_pdf(Hostility::OutlineLoop)).unwrap();
        assert!(m
            .chapters
            .iter()
            .any(|c| c.plain_text().contains("Hello there loop")));
        assert!(m.chapters.len() <= 2, "each bookmark counted once");
    }

    /// Found by the fuzzer: the reader underneath panics on a page whose inherited resources
    /// point at a missing object. The page is read as empty; nothing escapes.
    #[test]
    fn a_page_the_reader_panics_on_does_not_take_the_extraction_down() {
        let bytes = fixture("hostile/pdf-missing-inherited-object.pdf");
        let outcome = std::panic::catch_unwind(|| extract(&bytes));
        assert!(outcome.is_ok(), "the panic escaped");
    }

    #[test]
    fn a_pdf_whose_page_tree_loops_is_refused() {
        assert!(matches!(
            extract(&hostile_pdf(Hostility::ParentLoop)),
            Err(FormatError::Malformed(_))
        ));
    }

    #[test]
    fn a_pages_node_that_lists_itself_among_its_kids_is_refused() {
        let refused = extract(&hostile_pdf(Hostility::PagesListsItself));
        assert!(
            matches!(&refused, Err(FormatError::Malformed(m)) if m.contains("loops")),
            "{refused:?}"
        );
    }

    #[test]
    fn a_pages_node_that_lists_its_ancestor_among_its_kids_is_refused() {
        let refused = extract(&hostile_pdf(Hostility::PagesListsItsAncestor));
        assert!(
            matches!(&refused, Err(FormatError::Malformed(m)) if m.contains("loops")),
            "{refused:?}"
        );
    }

    #[test]
    fn a_well_formed_pdf_built_the_same_way_still_reads_once() {
        let m = extract(&hostile_pdf(Hostility::None)).unwrap();
        let copies: usize = m
            .chapters
            .iter()
            .map(|c| c.plain_text().matches("Hello there loop").count())
            .sum();
        assert_eq!(copies, 1, "{m:?}");
    }
}
