//! The manuscript: a book as the service keeps it between extraction, translation and rendering.
//! Metadata, chapters in reading order, each a sequence of blocks whose text carries inline
//! marks (see [`crate::markup`]), and the images the blocks refer to.

use serde::{Deserialize, Serialize};

use crate::markup;

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
        }
    }

    pub fn plain_text(&self) -> String {
        markup::plain_text(&self.text)
    }

    pub fn word_count(&self) -> u64 {
        match self.kind {
            // Alternative text is translated but is not part of the book's running text.
            BlockKind::Image { .. } => 0,
            _ => crate::count_words(&self.plain_text()),
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
