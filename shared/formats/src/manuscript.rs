//! The manuscript: a book as the service keeps it between extraction, translation and rendering.
//! Metadata, chapters in reading order, each a sequence of blocks whose text carries inline
//! marks (see [`crate::markup`]), and the images the blocks refer to.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::markup::{self, Tag};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manuscript {
    pub title: Option<String>,
    pub author: Option<String>,
    /// A language code, when the file declares one or it was detected.
    pub language: Option<String>,
    pub chapters: Vec<Chapter>,
    /// Images, by id; the bytes live beside the manuscript (blobs), not inside it.
    pub assets: Vec<Asset>,
    /// The asset id of the cover image.
    pub cover: Option<String>,
    /// What the reader skipped or could not use although the book was read, in words for the
    /// user (e.g. a manifest entry that points outside the book).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chapter {
    pub title: Option<String>,
    pub blocks: Vec<Block>,
}

/// One unit of text: a heading, a paragraph, a verse line, a table cell, a footnote ...
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    #[serde(flatten)]
    pub kind: BlockKind,
    /// Inline markup (see [`crate::markup`]); for an image, its alternative text.
    pub text: String,
    /// Element ids that pointed here in the source, so in-book links keep a target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<String>,
    /// The source elements that hold this block with its neighbours (a block quote, a poem, a
    /// sidebar, a figure), outermost first. Consecutive blocks that share a group sat in the
    /// same element, so a renderer can set them in one; two quotations one after the other stay
    /// two. Empty when no such element holds it, and in a manuscript stored without groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Group>,
}

/// A source element around blocks; `n` tells apart elements of the same kind in a chapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Group {
    pub kind: GroupKind,
    pub n: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GroupKind {
    /// A block quotation (`blockquote`, a DOCX quote style).
    Quote,
    /// A poem, stanza or line group: its lines are set one to a line.
    Verse,
    /// A sidebar or annotation (`aside`) that is not a footnote.
    Aside,
    /// A figure: its images and their caption.
    Figure,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum BlockKind {
    Heading {
        level: u8,
    },
    Paragraph,
    Quote,
    ListItem {
        ordered: bool,
        depth: u8,
    },
    /// Preformatted text: line breaks are `<br/>` and spacing matters.
    Preformatted,
    /// A line of verse.
    Line,
    TableCell {
        table: u32,
        row: u32,
        col: u32,
        header: bool,
    },
    Image {
        asset: String,
    },
    /// A note's text; `<ref id>` in other blocks points at it.
    #[serde(rename_all = "camelCase")]
    Footnote {
        id: String,
    },
}

/// An image carried over from the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Asset {
    pub id: String,
    pub media_type: String,
    /// The file name it is stored and rendered under.
    pub file_name: String,
    /// Not serialized: assets are stored as blobs of their own.
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

impl Block {
    pub fn new(kind: BlockKind, text: String) -> Self {
        Block {
            kind,
            text,
            anchors: Vec::new(),
            groups: Vec::new(),
        }
    }

    pub fn plain_text(&self) -> String {
        markup::plain_text(&self.text)
    }

    pub fn word_count(&self) -> u64 {
        match self.kind {
            // Alternative text is translated but is not part of the book's running text.
            BlockKind::Image { .. } => 0,
            _ => count_words(&self.plain_text()),
        }
    }
}

impl Chapter {
    pub fn word_count(&self) -> u64 {
        self.blocks.iter().map(Block::word_count).sum()
    }

    /// The chapter as plain text, blocks separated by blank lines.
    pub fn plain_text(&self) -> String {
        self.blocks
            .iter()
            .map(Block::plain_text)
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

impl Manuscript {
    /// Adds an image read from `source_path` (its extension is kept) and returns its new id.
    pub fn add_asset(&mut self, source_path: &str, media_type: String, bytes: Vec<u8>) -> String {
        let id = format!("img{:04}", self.assets.len() + 1);
        let extension = source_path
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_else(|| "bin".into());
        self.assets.push(Asset {
            id: id.clone(),
            media_type,
            file_name: format!("{id}.{extension}"),
            bytes,
        });
        id
    }

    /// Footnote numbers by note id, in order of first reference: what renderers print.
    pub fn note_numbers(&self) -> HashMap<String, usize> {
        let mut numbers = HashMap::new();
        for block in self.chapters.iter().flat_map(|c| &c.blocks) {
            for tag in markup::tags(&block.text).unwrap_or_default() {
                if let Tag::Empty {
                    name: "ref",
                    attr: Some(id),
                } = tag
                {
                    let next = numbers.len() + 1;
                    numbers.entry(id).or_insert(next);
                }
            }
        }
        numbers
    }

    /// Keeps only anchors something links to: sources put ids on every sentence, and carrying
    /// them all through translation and rendering would only add noise.
    pub fn prune_anchors(&mut self) {
        let mut targets: HashSet<String> = HashSet::new();
        for block in self.chapters.iter().flat_map(|c| &c.blocks) {
            for tag in markup::tags(&block.text).unwrap_or_default() {
                match tag {
                    Tag::Open {
                        name: "a",
                        attr: Some(href),
                    } => {
                        if let Some(anchor) = href.strip_prefix('#') {
                            targets.insert(anchor.to_string());
                        }
                    }
                    Tag::Empty {
                        name: "ref",
                        attr: Some(id),
                    } => {
                        targets.insert(id);
                    }
                    _ => {}
                }
            }
        }
        for block in self.chapters.iter_mut().flat_map(|c| &mut c.blocks) {
            block.anchors.retain(|a| targets.contains(a));
        }
    }

    pub fn word_count(&self) -> u64 {
        self.chapters.iter().map(Chapter::word_count).sum()
    }

    /// Fills `language` from the text when the file did not say.
    pub fn detect_language_if_missing(&mut self) {
        if self.language.is_none() {
            let sample: String = self
                .chapters
                .iter()
                .flat_map(|c| c.blocks.iter())
                .map(Block::plain_text)
                .take(200)
                .collect::<Vec<_>>()
                .join(" ");
            self.language = crate::detect_language(&sample);
        }
    }
}

/// Joins each chapter of nothing but headings (a title page, a part's title) to the chapter
/// after it, which it opens: a chapter is translated as a job, and one of a title alone is
/// none worth having. The chapter keeps the next one's title.
pub(crate) fn join_title_pages(chapters: Vec<Chapter>) -> Vec<Chapter> {
    let mut joined: Vec<Chapter> = Vec::with_capacity(chapters.len());
    let mut pending: Vec<Block> = Vec::new();
    for mut chapter in chapters {
        let headings_only = chapter
            .blocks
            .iter()
            .all(|b| matches!(b.kind, BlockKind::Heading { .. }));
        if headings_only {
            pending.append(&mut chapter.blocks);
            continue;
        }
        if !pending.is_empty() {
            pending.append(&mut chapter.blocks);
            chapter.blocks = std::mem::take(&mut pending);
        }
        joined.push(chapter);
    }
    if !pending.is_empty() {
        joined.push(Chapter {
            title: pending.first().map(Block::plain_text),
            blocks: pending,
        });
    }
    joined
}

/// The media type of an image file, from its extension.
pub fn media_type_of(path: &str) -> String {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "jpg" | "jpeg" => "image/jpeg",
        "png" => "image/png",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        _ => "application/octet-stream",
    }
    .to_string()
}

/// Words as `wc -w` counts them: runs of non-whitespace.
pub fn count_words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}
