//! A small element tree for the little XML files of a container (OPF, NCX, container.xml,
//! navigation), with namespace prefixes dropped. Not for content: see `xhtml` for that.

use quick_xml::escape::{resolve_html5_entity, unescape_with};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::error::FormatError;

const MAX_DEPTH: usize = 256;
const MAX_NODES: usize = 500_000;

#[derive(Debug, Default, Clone)]
pub struct Element {
    /// Local name, lower-cased.
    pub name: String,
    /// Attributes by local name (lower-cased), prefixes dropped.
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
}

#[derive(Debug, Clone)]
pub enum Node {
    Element(Element),
    Text(String),
}

impl Element {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|n| {
            if let Node::Element(e) = n {
                Some(e)
            } else {
                None
            }
        })
    }

    /// Every descendant element named `name`, in document order.
    pub fn descendants<'a>(&'a self, name: &'a str) -> Vec<&'a Element> {
        let mut out = Vec::new();
        self.collect(name, &mut out);
        out
    }

    fn collect<'a>(&'a self, name: &str, out: &mut Vec<&'a Element>) {
        for child in self.elements() {
            if child.name == name {
                out.push(child);
            }
            child.collect(name, out);
        }
    }

    pub fn first<'a>(&'a self, name: &'a str) -> Option<&'a Element> {
        self.descendants(name).into_iter().next()
    }

    /// All text inside, whitespace folded.
    pub fn text(&self) -> String {
        let mut raw = String::new();
        self.gather(&mut raw);
        raw.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn gather(&self, out: &mut String) {
        for child in &self.children {
            match child {
                Node::Text(t) => out.push_str(t),
                Node::Element(e) => {
                    out.push(' ');
                    e.gather(out);
                }
            }
        }
    }
}

fn element(e: &BytesStart<'_>) -> Element {
    let local = |raw: &[u8]| {
        let s = String::from_utf8_lossy(raw).to_ascii_lowercase();
        s.rsplit(':').next().unwrap_or_default().to_string()
    };
    let attrs = e
        .html_attributes()
        .flatten()
        .map(|a| {
            let value = String::from_utf8_lossy(&a.value).into_owned();
            let value = unescape_with(&value, resolve_html5_entity)
                .map(|v| v.into_owned())
                .unwrap_or(value);
            (local(a.key.as_ref()), value)
        })
        .collect();
    Element {
        name: local(e.name().as_ref()),
        attrs,
        children: Vec::new(),
    }
}

/// Parses a document into its root element (a synthetic element holding the top level).
pub fn parse(source: &str, what: &str) -> Result<Element, FormatError> {
    let mut reader = Reader::from_str(source);
    reader.config_mut().check_end_names = false;
    reader.config_mut().allow_unmatched_ends = true;
    let mut stack = vec![Element::default()];
    let mut nodes = 0usize;
    loop {
        let event = reader.read_event().map_err(|e| {
            FormatError::Malformed(format!("{what}: {e} at byte {}", reader.buffer_position()))
        })?;
        nodes += 1;
        if nodes > MAX_NODES {
            return Err(FormatError::TooLarge(format!(
                "{what} has more than {MAX_NODES} XML nodes"
            )));
        }
        match event {
            Event::Start(e) => {
                if stack.len() > MAX_DEPTH {
                    return Err(FormatError::Malformed(format!(
                        "{what}: nested deeper than {MAX_DEPTH} levels"
                    )));
                }
                stack.push(element(&e));
            }
            Event::Empty(e) => {
                if let Some(parent) = stack.last_mut() {
                    parent.children.push(Node::Element(element(&e)));
                }
            }
            Event::End(_) if stack.len() > 1 => {
                if let (Some(done), Some(parent)) = (stack.pop(), stack.last_mut()) {
                    parent.children.push(Node::Element(done));
                }
            }
            Event::Text(e) => {
                let raw = String::from_utf8_lossy(e.as_ref()).into_owned();
                let text = unescape_with(&raw, resolve_html5_entity)
                    .map(|t| t.into_owned())
                    .unwrap_or(raw);
                if let Some(parent) = stack.last_mut() {
                    parent.children.push(Node::Text(text));
                }
            }
            Event::CData(e) => {
                if let Some(parent) = stack.last_mut() {
                    parent
                        .children
                        .push(Node::Text(String::from_utf8_lossy(e.as_ref()).into_owned()));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    // Close anything left open (truncated or sloppy files).
    while stack.len() > 1 {
        if let (Some(done), Some(parent)) = (stack.pop(), stack.last_mut()) {
            parent.children.push(Node::Element(done));
        }
    }
    stack
        .pop()
        .ok_or_else(|| FormatError::Malformed(format!("{what} is empty")))
}
