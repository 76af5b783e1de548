//! The units of an XLIFF 1.2 file as an import needs them: each `<trans-unit>`'s id, the
//! `original` of its `<file>`, and its `<target>`'s inline content.
//!
//! The file is untrusted: it must be UTF-8, within [`ReadLimits`] (its bytes, its units, how
//! deep its elements nest), and may not declare a DTD. Without one, the only entities are XML's
//! five and character references: nothing expands. A file that breaks one of these, or is not
//! well-formed, is refused whole ([`ReadError`]); a unit whose target holds what booktr cannot
//! read (an inline element it never writes) is read as [`Target::Unreadable`], so the rest of
//! the file still counts. Targets inside `<alt-trans>` (a tool's suggestions) are not the
//! unit's and are left alone.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::codes::Inline;

/// What a file read may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    pub max_bytes: usize,
    pub max_units: usize,
    /// Elements open at once, the root's included.
    pub max_depth: usize,
}

/// A `<trans-unit>` as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadUnit {
    /// Its `id` (empty when it has none).
    pub id: String,
    /// Its `<file>`'s `original`, if it says one.
    pub original: Option<String>,
    pub target: Target,
}

/// A unit's `<target>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The unit has none.
    Missing,
    Content(Vec<Inline>),
    /// Why it cannot be read (an inline element booktr never writes, a code without an id).
    Unreadable(String),
}

/// Why a file was refused whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("the file is larger than {0} bytes")]
    TooLarge(usize),
    #[error("the file must be UTF-8 text: {0}")]
    Encoding(String),
    #[error(
        "the file declares a DTD (<!DOCTYPE>): an XLIFF file needs none, and none is read, so \
         that no entity is ever declared or expanded"
    )]
    Doctype,
    #[error("the file is not well-formed XML (at byte {at}): {reason}")]
    Malformed { at: u64, reason: String },
    #[error("the file is not XLIFF 1.2: {0}")]
    NotXliff(String),
    #[error("the file has more than {0} trans-units")]
    TooManyUnits(usize),
    #[error("the file's elements nest more than {0} deep")]
    TooDeep(usize),
}

/// The units of `bytes`, an XLIFF 1.2 file, in the file's order.
pub fn read(bytes: &[u8], limits: ReadLimits) -> Result<Vec<ReadUnit>, ReadError> {
    if bytes.len() > limits.max_bytes {
        return Err(ReadError::TooLarge(limits.max_bytes));
    }
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(ReadError::Encoding("it is UTF-16; save it as UTF-8".into()));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ReadError::Encoding(format!("byte {} is not UTF-8", e.valid_up_to())))?;
    let mut reader = Reader::from_str(text);
    let config = reader.config_mut();
    config.trim_text(false);
    config.expand_empty_elements = false;
    config.check_end_names = true;
    config.check_comments = true;
    let mut walk = Walk::new(limits);
    loop {
        let event = reader.read_event().map_err(|e| ReadError::Malformed {
            at: reader.error_position(),
            reason: e.to_string(),
        })?;
        if matches!(event, Event::Eof) {
            break;
        }
        walk.event(event)
            .map_err(|problem| problem.at(reader.buffer_position()))?;
    }
    walk.finish()
}

/// A refusal found by the walk, placed by the reader.
enum Problem {
    Refused(ReadError),
    Malformed(String),
}

impl Problem {
    fn at(self, at: u64) -> ReadError {
        match self {
            Problem::Refused(e) => e,
            Problem::Malformed(reason) => ReadError::Malformed { at, reason },
        }
    }
}

impl From<ReadError> for Problem {
    fn from(e: ReadError) -> Self {
        Problem::Refused(e)
    }
}

impl From<quick_xml::Error> for Problem {
    fn from(e: quick_xml::Error) -> Self {
        Problem::Malformed(e.to_string())
    }
}

impl From<quick_xml::events::attributes::AttrError> for Problem {
    fn from(e: quick_xml::events::attributes::AttrError) -> Self {
        Problem::Malformed(e.to_string())
    }
}

/// The walk through a file's events.
struct Walk {
    limits: ReadLimits,
    /// The local names of the elements open.
    open: Vec<String>,
    rooted: bool,
    /// The current `<file>`'s `original`.
    original: Option<String>,
    unit: Option<ReadUnit>,
    /// The unit's target being read: the depth of its `<target>` and what its elements close as.
    capture: Option<Capture>,
    units: Vec<ReadUnit>,
}

struct Capture {
    depth: usize,
    content: Vec<Inline>,
    problem: Option<String>,
    /// For each inline element open in the target: whether its end closes a code (`</g>`).
    closes: Vec<bool>,
}

impl Walk {
    fn new(limits: ReadLimits) -> Walk {
        Walk {
            limits,
            open: Vec::new(),
            rooted: false,
            original: None,
            unit: None,
            capture: None,
            units: Vec::new(),
        }
    }

    fn event(&mut self, event: Event<'_>) -> Result<(), Problem> {
        match event {
            Event::Decl(decl) => {
                if let Some(encoding) = decl.encoding() {
                    let encoding = encoding?;
                    let name = String::from_utf8_lossy(&encoding).to_ascii_lowercase();
                    if !matches!(name.as_str(), "utf-8" | "utf8" | "us-ascii") {
                        return Err(ReadError::Encoding(format!(
                            "it declares {name}; save it as UTF-8"
                        ))
                        .into());
                    }
                }
            }
            Event::DocType(_) => return Err(ReadError::Doctype.into()),
            Event::Start(element) => self.start(&element, false)?,
            Event::Empty(element) => self.start(&element, true)?,
            Event::End(_) => self.end(),
            Event::Text(text) => {
                let text = text.unescape()?;
                self.text(&text)?;
            }
            Event::CData(data) => {
                let text = std::str::from_utf8(&data)
                    .map_err(|e| Problem::Malformed(e.to_string()))?
                    .to_string();
                self.text(&text)?;
            }
            Event::Comment(_) | Event::PI(_) | Event::Eof => {}
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> Result<(), Problem> {
        if let Some(capture) = &mut self.capture {
            match capture.content.last_mut() {
                Some(Inline::Text(last)) => last.push_str(text),
                _ => capture.content.push(Inline::Text(text.to_string())),
            }
        } else if self.open.is_empty() && !text.trim().is_empty() {
            return Err(Problem::Malformed("text outside the root element".into()));
        }
        Ok(())
    }

    fn start(&mut self, element: &BytesStart<'_>, empty: bool) -> Result<(), Problem> {
        let name = String::from_utf8_lossy(element.local_name().as_ref()).into_owned();
        if self.open.len() >= self.limits.max_depth {
            return Err(ReadError::TooDeep(self.limits.max_depth).into());
        }
        // Every attribute well-formed and named once, whether it is read or not.
        for attribute in element.attributes() {
            attribute?;
        }
        if self.open.is_empty() {
            self.root(&name, element)?;
        }
        if self.capture.is_some() {
            self.inline(&name, element, empty)?;
        } else {
            self.structure(&name, element, empty)?;
        }
        if !empty {
            self.open.push(name);
        }
        Ok(())
    }

    /// The root: `<xliff>`, of version 1.x when it says one; once.
    fn root(&mut self, name: &str, element: &BytesStart<'_>) -> Result<(), Problem> {
        if self.rooted {
            return Err(Problem::Malformed("a second root element".into()));
        }
        self.rooted = true;
        if name != "xliff" {
            return Err(
                ReadError::NotXliff(format!("its root element is <{name}>, not <xliff>")).into(),
            );
        }
        match attribute(element, "version")? {
            Some(version) if !version.starts_with("1.") => Err(ReadError::NotXliff(format!(
                "it is XLIFF {version}; export XLIFF 1.2 from your tool"
            ))
            .into()),
            _ => Ok(()),
        }
    }

    /// An element outside a target: a file, a unit, a unit's target.
    fn structure(
        &mut self,
        name: &str,
        element: &BytesStart<'_>,
        empty: bool,
    ) -> Result<(), Problem> {
        match name {
            "file" => self.original = attribute(element, "original")?,
            "trans-unit" => {
                if self.unit.is_some() {
                    return Err(ReadError::NotXliff("a trans-unit inside another".into()).into());
                }
                if self.units.len() == self.limits.max_units {
                    return Err(ReadError::TooManyUnits(self.limits.max_units).into());
                }
                self.unit = Some(ReadUnit {
                    id: attribute(element, "id")?.unwrap_or_default(),
                    original: self.original.clone(),
                    target: Target::Missing,
                });
                if empty {
                    self.end_unit();
                }
            }
            "target" if self.open.last().is_some_and(|p| p == "trans-unit") => {
                let Some(unit) = &mut self.unit else {
                    return Ok(());
                };
                if unit.target != Target::Missing {
                    unit.target = Target::Unreadable("the unit has more than one target".into());
                } else if empty {
                    unit.target = Target::Content(Vec::new());
                } else {
                    self.capture = Some(Capture {
                        depth: self.open.len() + 1,
                        content: Vec::new(),
                        problem: None,
                        closes: Vec::new(),
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// An element inside a target: a code (`<g>`, `<x/>`), a marker (`<mrk>`, whose content is
    /// the target's), or what booktr never writes.
    fn inline(&mut self, name: &str, element: &BytesStart<'_>, empty: bool) -> Result<(), Problem> {
        let id = match name {
            "g" | "x" => attribute(element, "id")?,
            _ => None,
        };
        let Some(capture) = &mut self.capture else {
            return Ok(());
        };
        let mut closes = false;
        match (name, id) {
            ("g" | "x", None) => {
                capture.problem = Some(format!("a <{name}> code without an id"));
            }
            ("g", Some(id)) => {
                capture.content.push(Inline::Open(id));
                if empty {
                    capture.content.push(Inline::Close);
                }
                closes = true;
            }
            ("x", Some(id)) => capture.content.push(Inline::Placeholder(id)),
            ("mrk", _) => {}
            _ => {
                capture.problem = Some(format!(
                    "<{name}> is not an inline code booktr writes (it writes <g> and <x/>)"
                ));
            }
        }
        if !empty {
            capture.closes.push(closes);
        }
        Ok(())
    }

    fn end(&mut self) {
        // The reader matched the end with its start (`check_end_names`).
        let name = self.open.pop().unwrap_or_default();
        if let Some(capture) = &mut self.capture {
            if self.open.len() + 1 > capture.depth {
                if capture.closes.pop() == Some(true) {
                    capture.content.push(Inline::Close);
                }
                return;
            }
            let target = match capture.problem.take() {
                Some(problem) => Target::Unreadable(problem),
                None => Target::Content(std::mem::take(&mut capture.content)),
            };
            self.capture = None;
            if let Some(unit) = &mut self.unit {
                unit.target = target;
            }
            return;
        }
        match name.as_str() {
            "trans-unit" => self.end_unit(),
            "file" => self.original = None,
            _ => {}
        }
    }

    fn end_unit(&mut self) {
        if let Some(unit) = self.unit.take() {
            self.units.push(unit);
        }
    }

    fn finish(self) -> Result<Vec<ReadUnit>, ReadError> {
        if !self.rooted {
            return Err(ReadError::NotXliff("it has no root element".into()));
        }
        if let Some(open) = self.open.last() {
            return Err(ReadError::Malformed {
                at: 0,
                reason: format!("the file ends inside <{open}>"),
            });
        }
        Ok(self.units)
    }
}

/// An attribute's value, unescaped.
fn attribute(element: &BytesStart<'_>, name: &str) -> Result<Option<String>, Problem> {
    match element.try_get_attribute(name)? {
        Some(attribute) => Ok(Some(attribute.unescape_value()?.into_owned())),
        None => Ok(None),
    }
}
