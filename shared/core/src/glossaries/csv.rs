//! Glossaries as CSV files, for import and export (the web app) and `booktr translate
//! --glossary`: `source,target[,context]` per line, an optional header line starting with
//! `source`, fields quoted as RFC 4180 says (a quoted field does not span lines). The rules on
//! the entries themselves (non-empty, lengths, no duplicate) are the glossary's, checked when
//! they are stored.

use super::{Entry, EntryInput};

/// A line that is not `source,target[,context]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: expected source,target[,context]")]
pub struct BadLine {
    /// From 1.
    pub line: usize,
}

/// The entries of a CSV text, with their line numbers (from 1).
pub fn rows(text: &str) -> Result<Vec<(usize, EntryInput)>, BadLine> {
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let fields = fields(line);
        if index == 0
            && fields
                .first()
                .is_some_and(|f| f.trim().eq_ignore_ascii_case("source"))
        {
            continue;
        }
        let (Some(source), Some(target)) = (fields.first(), fields.get(1)) else {
            return Err(BadLine { line: number });
        };
        rows.push((
            number,
            EntryInput {
                id: None,
                source: Some(source.trim().to_string()),
                target: Some(target.trim().to_string()),
                context: fields
                    .get(2)
                    .map(|c| c.trim().to_string())
                    .filter(|c| !c.is_empty()),
            },
        ));
    }
    Ok(rows)
}

/// The entries as a CSV text with a header, every field quoted.
pub fn write(entries: &[Entry]) -> String {
    let quote = |field: &str| format!("\"{}\"", field.replace('"', "\"\""));
    let mut out = String::from("source,target,context\n");
    for entry in entries {
        out.push_str(&format!(
            "{},{},{}\n",
            quote(&entry.source),
            quote(&entry.target),
            quote(entry.context.as_deref().unwrap_or(""))
        ));
    }
    out
}

fn fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_glossary_reads_back_the_same_quotes_commas_and_context_included() {
        let entries = vec![
            Entry {
                id: "1".into(),
                source: "Captain \"Ahab\", of the Pequod".into(),
                target: "Capitán \"Acab\", del Pequod".into(),
                context: None,
            },
            Entry {
                id: "2".into(),
                source: "whale".into(),
                target: "ballena".into(),
                context: Some("the animal".into()),
            },
        ];
        let text = write(&entries);
        let read = rows(&text).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].0, 2, "the header is line 1");
        assert_eq!(
            read[0].1.source.as_deref(),
            Some("Captain \"Ahab\", of the Pequod")
        );
        assert_eq!(read[0].1.context, None);
        assert_eq!(read[1].1.context.as_deref(), Some("the animal"));
        assert_eq!(
            rows("whale\n").unwrap_err().to_string(),
            "line 1: expected source,target[,context]"
        );
    }
}
