//! The translated book as Markdown (for a book that was Markdown): CommonMark with GitHub's
//! tables and footnotes, and a YAML front matter (title, author, language), which pandoc and
//! this crate's reader both read.
//!
//! Text is escaped so that a translation cannot make structure: every character that starts
//! or ends a Markdown construct inline (`\`, `` ` ``, `*`, `_`, `[`, `]`, `<`, `>`, `|`, `~`,
//! `&`) is backslash-escaped wherever it is, and those that start a block (`#`, `+`, `-`, `=`,
//! a number's `.` or `)`) where a line starts; leading white space is dropped and line breaks
//! inside text are spaces. The only structure in the file is what this writer makes from the
//! blocks' kinds and marks; code, which is the source's, is written in fences or code spans
//! longer than any run of backticks in it. HTML appears only as tags this writer makes (`sup`,
//! `sub`, and a `span` with its class for the book's own marks), their attributes escaped.

use std::collections::HashMap;
use std::fmt::Write;

use super::RenderOptions;
use crate::error::FormatError;
use crate::manuscript::{Block, BlockKind, GroupKind, Manuscript};
use crate::markup::{self, escape_attr, Piece, Tag};

/// The manuscript as a Markdown file, in UTF-8.
pub fn render(manuscript: &Manuscript, options: &RenderOptions) -> Result<Vec<u8>, FormatError> {
    let mut notes = manuscript.note_numbers();
    // A note nothing refers to is numbered after the others, so that none shares a label.
    for block in manuscript.chapters.iter().flat_map(|c| &c.blocks) {
        if let BlockKind::Footnote { id } = &block.kind {
            let next = notes.len() + 1;
            notes.entry(id.clone()).or_insert(next);
        }
    }
    let mut writer = Writer {
        out: front_matter(manuscript, options),
        notes,
        list_depth: 0,
    };
    let blocks: Vec<&Block> = manuscript
        .chapters
        .iter()
        .flat_map(|c| &c.blocks)
        .filter(|b| !b.text.trim().is_empty())
        .collect();
    let mut i = 0;
    let mut previous: Option<&Block> = None;
    while i < blocks.len() {
        let block = blocks[i];
        let run = run_length(&blocks[i..]);
        writer.separate(previous, block);
        match block.kind {
            BlockKind::TableCell { .. } => writer.table(&blocks[i..i + run]),
            BlockKind::Line => writer.verse(&blocks[i..i + run]),
            _ => writer.block(block, previous),
        }
        previous = Some(blocks[i + run - 1]);
        i += run;
    }
    writer.out.push('\n');
    Ok(writer.out.into_bytes())
}

/// `title`, `author` and `lang` as YAML strings, in double quotes.
fn front_matter(manuscript: &Manuscript, options: &RenderOptions) -> String {
    let quoted = |value: &str| {
        let mut out = String::from("\"");
        for c in value.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => out.push(' '),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    };
    let mut out = String::from("---\n");
    let title = options.title.as_ref().or(manuscript.title.as_ref());
    if let Some(title) = title {
        let _ = writeln!(out, "title: {}", quoted(title));
    }
    if let Some(author) = options.author.as_ref().or(manuscript.author.as_ref()) {
        let _ = writeln!(out, "author: {}", quoted(author));
    }
    let _ = writeln!(out, "lang: {}", quoted(&options.language));
    out.push_str("---\n");
    out
}

/// How many blocks from the first are written together: the cells of one table, the lines of
/// one poem (in the same groups); one for any other block.
fn run_length(blocks: &[&Block]) -> usize {
    let first = blocks[0];
    let together = |b: &&&Block| match (&first.kind, &b.kind) {
        (BlockKind::TableCell { table: a, .. }, BlockKind::TableCell { table: b, .. }) => a == b,
        (BlockKind::Line, BlockKind::Line) => b.groups == first.groups,
        _ => false,
    };
    1 + blocks[1..].iter().take_while(together).count()
}

/// How deep in block quotes a block is.
fn quotes(block: &Block) -> usize {
    block
        .groups
        .iter()
        .filter(|g| g.kind == GroupKind::Quote)
        .count()
}

/// The quotes two blocks share, outermost first.
fn shared_quotes(a: &Block, b: &Block) -> usize {
    let quote = |block: &Block| {
        block
            .groups
            .iter()
            .filter(|g| g.kind == GroupKind::Quote)
            .copied()
            .collect::<Vec<_>>()
    };
    quote(a)
        .iter()
        .zip(quote(b).iter())
        .take_while(|(x, y)| x == y)
        .count()
}

struct Writer {
    out: String,
    notes: HashMap<String, usize>,
    /// The depth the last list item was written at.
    list_depth: u8,
}

impl Writer {
    /// The blank line between two blocks: inside the quotes they share, so that one quotation
    /// goes on; two list items of one list are not separated.
    fn separate(&mut self, previous: Option<&Block>, block: &Block) {
        let Some(previous) = previous else {
            self.out.push('\n');
            return;
        };
        let items = matches!(previous.kind, BlockKind::ListItem { .. })
            && matches!(block.kind, BlockKind::ListItem { .. })
            && previous.groups == block.groups;
        if items {
            return;
        }
        let shared = shared_quotes(previous, block);
        self.out.push_str(&"> ".repeat(shared));
        trim_line_end(&mut self.out);
        self.out.push('\n');
    }

    fn block(&mut self, block: &Block, previous: Option<&Block>) {
        let prefix = "> ".repeat(quotes(block));
        match &block.kind {
            BlockKind::Heading { level } => {
                let mut line = format!("{} ", "#".repeat(usize::from((*level).clamp(1, 6))));
                line.push_str(&self.inline(&block.text, Context::Heading));
                if let Some(anchor) = block.anchors.first().filter(|a| is_plain_id(a)) {
                    let _ = write!(line, " {{#{anchor}}}");
                }
                self.line(&prefix, &line);
            }
            BlockKind::ListItem { ordered, depth } => {
                // An item is at most one deeper than the one before it: deeper, its indent
                // would make it code.
                let before = match previous.map(|p| (&p.kind, &p.groups)) {
                    Some((BlockKind::ListItem { .. }, groups)) if *groups == block.groups => {
                        self.list_depth
                    }
                    _ => 0,
                };
                let depth = (*depth).min(before + 1);
                self.list_depth = depth;
                let indent = "    ".repeat(usize::from(depth.saturating_sub(1)));
                let marker = if *ordered { "1. " } else { "- " };
                let continuation = format!("{prefix}{indent}{}", " ".repeat(marker.len()));
                let text = self.inline(&block.text, Context::Text(&continuation));
                self.line(&prefix, &format!("{indent}{marker}{text}"));
            }
            BlockKind::Preformatted => {
                let code = markup::plain_text(&block.text);
                let fence = "`".repeat(longest_run(&code, '`').max(2) + 1);
                self.line(&prefix, &fence);
                for line in code.lines() {
                    self.line(&prefix, line);
                }
                self.line(&prefix, &fence);
            }
            BlockKind::Footnote { id } => {
                let number = self.notes.get(id).copied().unwrap_or(0);
                let continuation = format!("{prefix}    ");
                let text = self.inline(&block.text, Context::Text(&continuation));
                let same_note = previous.is_some_and(|p| p.kind == block.kind);
                if same_note {
                    self.line(&prefix, &format!("    {text}"));
                } else {
                    self.line(&prefix, &format!("[^{number}]: {text}"));
                }
            }
            BlockKind::Paragraph
            | BlockKind::Quote
            | BlockKind::Line
            | BlockKind::Image { .. }
            | BlockKind::TableCell { .. } => {
                let text = self.inline(&block.text, Context::Text(&prefix));
                self.line(&prefix, &text);
            }
        }
    }

    /// Lines of verse, one to a line (hard line breaks), as one paragraph.
    fn verse(&mut self, lines: &[&Block]) {
        let prefix = "> ".repeat(quotes(lines[0]));
        let text: Vec<String> = lines
            .iter()
            .map(|line| self.inline(&line.text, Context::Text(&prefix)))
            .collect();
        self.line(&prefix, &text.join(&format!("\\\n{prefix}")));
    }

    /// A table's cells as a GitHub table: the first row is its head.
    fn table(&mut self, cells: &[&Block]) {
        let prefix = "> ".repeat(quotes(cells[0]));
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut keys: Vec<u32> = Vec::new();
        let mut columns = 1;
        for cell in cells {
            let BlockKind::TableCell { row, col, .. } = cell.kind else {
                continue;
            };
            if keys.last() != Some(&row) {
                keys.push(row);
                rows.push(Vec::new());
            }
            let Some(current) = rows.last_mut() else {
                continue;
            };
            let col = usize::try_from(col).unwrap_or(0).min(current.len() + 64);
            while current.len() < col {
                current.push(String::new());
            }
            current.push(self.inline(&cell.text, Context::Cell));
            columns = columns.max(current.len());
        }
        let line = |cells: &[String]| {
            let mut line = String::from("|");
            for i in 0..columns {
                let _ = write!(line, " {} |", cells.get(i).map_or("", String::as_str));
            }
            line
        };
        let mut rows = rows.into_iter();
        let head = rows.next().unwrap_or_default();
        self.line(&prefix, &line(&head));
        self.line(&prefix, &format!("|{}", "---|".repeat(columns)));
        for row in rows {
            self.line(&prefix, &line(&row));
        }
    }

    fn line(&mut self, prefix: &str, text: &str) {
        self.out.push_str(prefix);
        self.out.push_str(text);
        trim_line_end(&mut self.out);
        self.out.push('\n');
    }

    /// A block's markup as Markdown inline text.
    fn inline(&self, text: &str, context: Context<'_>) -> String {
        let pieces = markup::parse(text).unwrap_or_else(|_| vec![Piece::Text(text.to_string())]);
        let mut inline = Inline {
            out: String::new(),
            context,
            line_start: true,
            just_opened: 0,
            links: Vec::new(),
            spans: Vec::new(),
            notes: &self.notes,
        };
        let mut i = 0;
        while i < pieces.len() {
            i += inline.piece(&pieces[i..]);
        }
        inline.out.trim_end().to_string()
    }
}

/// Where inline text goes: a heading and a table cell are one line; other text goes on after
/// a line break with its block's continuation prefix.
#[derive(Clone, Copy)]
enum Context<'a> {
    Heading,
    Cell,
    Text(&'a str),
}

struct Inline<'a> {
    out: String,
    context: Context<'a>,
    /// Whether the next text starts a line (where block markers would be read).
    line_start: bool,
    /// The length of the emphasis mark that ends the output, when nothing followed it yet.
    just_opened: usize,
    /// The open links' destinations.
    links: Vec<String>,
    /// The open spans: whether each was written as a tag.
    spans: Vec<bool>,
    notes: &'a HashMap<String, usize>,
}

impl Inline<'_> {
    /// Writes the first piece (or a code mark with all it holds); returns how many pieces it
    /// took.
    fn piece(&mut self, pieces: &[Piece]) -> usize {
        let opened = std::mem::take(&mut self.just_opened);
        match &pieces[0] {
            Piece::Text(text) if opened > 0 => {
                // Emphasis must not start before white space: the space goes before the mark.
                let mark = self.out.split_off(self.out.len() - opened);
                let rest = text.trim_start_matches([' ', '\n', '\t']);
                if rest.len() < text.len() && !self.line_start {
                    self.out.push(' ');
                }
                self.out.push_str(&mark);
                self.text(rest);
            }
            Piece::Tag(Tag::Close("i" | "b")) if opened > 0 => {
                // An empty emphasis writes nothing: its marks alone would be read as others.
                self.out.truncate(self.out.len() - opened);
            }
            Piece::Text(text) => self.text(text),
            Piece::Tag(Tag::Open { name: "code", .. }) => return self.code(pieces),
            Piece::Tag(Tag::Open { name, attr }) => self.open(name, attr.as_deref()),
            Piece::Tag(Tag::Close(name)) => self.close(name),
            Piece::Tag(Tag::Empty { name: "br", .. }) => match self.context {
                Context::Heading | Context::Cell => self.out.push(' '),
                Context::Text(prefix) => {
                    trim_line_end(&mut self.out);
                    let _ = write!(self.out, "\\\n{prefix}");
                    self.line_start = true;
                }
            },
            Piece::Tag(Tag::Empty { attr, .. }) => {
                let number = attr.as_ref().and_then(|id| self.notes.get(id));
                if let Some(number) = number {
                    let _ = write!(self.out, "[^{number}]");
                    self.line_start = false;
                }
            }
            Piece::Tag(Tag::Num { class, text }) => match class {
                Some(class) => {
                    let _ = write!(self.out, "<span class=\"{}\">", escape_attr(class));
                    self.text(text);
                    self.out.push_str("</span>");
                }
                None => self.text(text),
            },
        }
        1
    }

    fn open(&mut self, name: &str, attr: Option<&str>) {
        match name {
            "i" => {
                self.out.push('*');
                self.just_opened = 1;
            }
            "b" => {
                self.out.push_str("**");
                self.just_opened = 2;
            }
            "sup" | "sub" => {
                let _ = write!(self.out, "<{name}>");
            }
            "a" => {
                self.links.push(destination(attr.unwrap_or_default()));
                self.out.push('[');
            }
            "span" => {
                if let Some(class) = attr {
                    let _ = write!(self.out, "<span class=\"{}\">", escape_attr(class));
                }
                self.spans.push(attr.is_some());
            }
            _ => {}
        }
    }

    fn close(&mut self, name: &str) {
        // Emphasis must not end after white space: the space goes after the mark.
        let trailing = self.out.len() - self.out.trim_end_matches(' ').len();
        let mark = match name {
            "i" => "*".to_string(),
            "b" => "**".to_string(),
            "sup" | "sub" => format!("</{name}>"),
            "a" => format!("]({})", self.links.pop().unwrap_or_default()),
            "span" if self.spans.pop() == Some(true) => "</span>".to_string(),
            _ => return,
        };
        self.out.truncate(self.out.len() - trailing);
        self.out.push_str(&mark);
        self.out.push_str(&" ".repeat(trailing));
    }

    /// A code mark: its text in a code span (a table cell's pipes escaped, as GitHub's tables
    /// need even there).
    fn code(&mut self, pieces: &[Piece]) -> usize {
        let mut depth = 0usize;
        let mut code = String::new();
        let mut taken = 0;
        for piece in pieces {
            taken += 1;
            match piece {
                Piece::Tag(Tag::Open { name: "code", .. }) => depth += 1,
                Piece::Tag(Tag::Close("code")) => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                Piece::Text(text) => code.push_str(text),
                Piece::Tag(Tag::Num { text, .. }) => code.push_str(text),
                Piece::Tag(_) => code.push(' '),
            }
        }
        let mut code = code.replace(['\n', '\r'], " ");
        if matches!(self.context, Context::Cell) {
            code = code.replace('|', "\\|");
        }
        if code.is_empty() {
            return taken;
        }
        let fence = "`".repeat(longest_run(&code, '`') + 1);
        let pad = code.starts_with('`')
            || code.ends_with('`')
            || (code.starts_with(' ') && code.ends_with(' ') && !code.trim().is_empty());
        let pad = if pad { " " } else { "" };
        let _ = write!(self.out, "{fence}{pad}{code}{pad}{fence}");
        self.line_start = false;
        taken
    }

    fn text(&mut self, text: &str) {
        let mut text = text.replace(['\n', '\r', '\t'], " ");
        if self.line_start {
            text = text.trim_start().to_string();
            if text.is_empty() {
                return;
            }
        }
        let at_start = self.line_start;
        let heading = matches!(self.context, Context::Heading);
        let mut escaped = escape_inline(&text, heading);
        if at_start {
            escaped = escape_line_start(&escaped);
        }
        self.out.push_str(&escaped);
        self.line_start = false;
    }
}

/// Text with every character that makes inline structure escaped (and `#` in a heading, where
/// a closing run of them would be dropped).
fn escape_inline(text: &str, heading: bool) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&'
        ) || (heading && c == '#')
        {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Escaped text that starts a line, with what would start a block there escaped too: a
/// heading's `#`, a list's `+`, `-` or number, a setext underline's `=`.
fn escape_line_start(text: &str) -> String {
    match text.chars().next() {
        Some('#' | '+' | '-' | '=') => format!("\\{text}"),
        Some(c) if c.is_ascii_digit() => {
            let digits = text.chars().take_while(char::is_ascii_digit).count();
            match text[digits..].chars().next() {
                Some('.' | ')') if digits <= 9 => {
                    format!("{}\\{}", &text[..digits], &text[digits..])
                }
                _ => text.to_string(),
            }
        }
        _ => text.to_string(),
    }
}

/// A link's destination: parentheses and backslashes escaped, and what would end it
/// (white space, angle brackets) percent-encoded.
fn destination(href: &str) -> String {
    let mut out = String::with_capacity(href.len());
    for c in href.trim().chars() {
        match c {
            '(' | ')' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' ' | '<' | '>' => {
                let mut buffer = [0u8; 4];
                for byte in c.encode_utf8(&mut buffer).bytes() {
                    let _ = write!(out, "%{byte:02X}");
                }
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Whether an anchor can be written as a heading's `{#id}`.
fn is_plain_id(anchor: &str) -> bool {
    !anchor.is_empty()
        && anchor
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for d in text.chars() {
        run = if d == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

fn trim_line_end(out: &mut String) {
    let kept = out.trim_end_matches([' ', '\t']).len();
    // A hard break's backslash must stay at the end of its line.
    out.truncate(kept);
}

#[cfg(test)]
mod tests;
