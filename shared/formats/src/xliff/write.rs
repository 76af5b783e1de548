//! An XLIFF 1.2 document written out: one `<file>` per part of the book (a chapter), one
//! `<trans-unit>` per passage with its source, its target and its state, notes for people.
//! Every text and attribute is escaped ([`super::escape`]); inline marks are codes
//! ([`super::codes`]).

use super::codes::to_inline;
use super::escape;

/// The XLIFF 1.2 namespace.
pub const NAMESPACE: &str = "urn:oasis:names:tc:xliff:document:1.2";

/// The media type an XLIFF 1.2 file is served as (1.2 registered none; tools use this one).
pub const MEDIA_TYPE: &str = "application/x-xliff+xml";

/// What is written: the languages and the files.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub source_lang: String,
    pub target_lang: String,
    pub files: Vec<File>,
}

/// One `<file>`: a chapter.
#[derive(Debug, Clone, PartialEq)]
pub struct File {
    /// `original`, the name tools show for the file.
    pub original: String,
    /// Notes in the file's header (the chapter's title).
    pub notes: Vec<String>,
    pub units: Vec<Unit>,
}

/// One `<trans-unit>`: a passage.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub id: String,
    /// The source, in inline markup.
    pub source: String,
    /// The target, in inline markup; None for a passage without one (written without a
    /// `<target>`).
    pub target: Option<String>,
    /// The target's state.
    pub state: State,
    pub notes: Vec<String>,
}

/// A target's `state` (XLIFF 1.2 has no "reviewed": `signed-off` is the state past
/// `translated`, and a signed-off unit is `approved="yes"`, as tools expect).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// A target a tool should show as needing a look.
    NeedsReviewTranslation,
    Translated,
    SignedOff,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::NeedsReviewTranslation => "needs-review-translation",
            State::Translated => "translated",
            State::SignedOff => "signed-off",
        }
    }
}

/// The document as XLIFF 1.2, UTF-8.
pub fn write(document: &Document) -> String {
    let mut out = String::with_capacity(4096);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!("<xliff version=\"1.2\" xmlns=\"{NAMESPACE}\">\n"));
    for file in &document.files {
        out.push_str(&format!(
            "<file original=\"{}\" source-language=\"{}\" target-language=\"{}\" datatype=\"plaintext\">\n",
            escape::attr(&file.original),
            escape::attr(&document.source_lang),
            escape::attr(&document.target_lang),
        ));
        if !file.notes.is_empty() {
            out.push_str("<header>\n");
            for note in &file.notes {
                push_note(&mut out, note);
            }
            out.push_str("</header>\n");
        }
        out.push_str("<body>\n");
        for unit in &file.units {
            push_unit(&mut out, unit);
        }
        out.push_str("</body>\n</file>\n");
    }
    out.push_str("</xliff>\n");
    out
}

fn push_unit(out: &mut String, unit: &Unit) {
    let approved = match unit.state {
        State::SignedOff => " approved=\"yes\"",
        _ => "",
    };
    out.push_str(&format!(
        "<trans-unit id=\"{}\" xml:space=\"preserve\"{approved}>\n<source>{}</source>\n",
        escape::attr(&unit.id),
        to_inline(&unit.source, &unit.source)
    ));
    if let Some(target) = &unit.target {
        out.push_str(&format!(
            "<target state=\"{}\">{}</target>\n",
            unit.state.name(),
            to_inline(target, &unit.source)
        ));
    }
    for note in &unit.notes {
        push_note(out, note);
    }
    out.push_str("</trans-unit>\n");
}

fn push_note(out: &mut String, note: &str) {
    out.push_str("<note from=\"booktr\">");
    escape::push_text(out, note);
    out.push_str("</note>\n");
}
