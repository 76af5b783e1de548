//! HTML books: one document; a chapter starts at every `h1` and `h2`. Scripts, styles and
//! navigation are dropped. Images outside the file cannot be fetched, so they keep their
//! alternative text.

use crate::error::FormatError;
use crate::manuscript::{Block, BlockKind, Chapter, Manuscript};
use crate::xhtml::{self, Context};

pub fn extract(bytes: &[u8]) -> Result<Manuscript, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    let source = crate::txt::decode(bytes);
    let doc = xhtml::parse(&source, &Context::new("index.html"))?;
    let mut chapters: Vec<Chapter> = Vec::new();
    let mut current = Chapter::default();
    for mut block in doc.blocks {
        if let BlockKind::Heading { level: 1 | 2 } = block.kind {
            if !current.blocks.is_empty() {
                chapters.push(std::mem::take(&mut current));
            }
            current.title = Some(block.plain_text()).filter(|t| !t.trim().is_empty());
        }
        if let BlockKind::Image { .. } = block.kind {
            if block.text.is_empty() {
                continue;
            }
            block = Block {
                kind: BlockKind::Paragraph,
                ..block
            };
        }
        current.blocks.push(block);
    }
    if !current.blocks.is_empty() {
        chapters.push(current);
    }
    let mut manuscript = Manuscript {
        title: doc.title,
        language: doc.language,
        chapters,
        ..Manuscript::default()
    };
    if manuscript.word_count() == 0 {
        return Err(FormatError::NoText);
    }
    manuscript.prune_anchors();
    manuscript.detect_language_if_missing();
    Ok(manuscript)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chapters_start_at_h1_and_h2() {
        let html = br##"<!DOCTYPE html><html lang="en"><head><title>Book</title><script>x()</script></head>
            <body><p>Front matter words.</p><h1>Part One</h1><p>Alpha <em>beta</em>.</p>
            <h3>Sub</h3><p>Gamma.</p><h2 id="c2">Two</h2><p>Delta<sup><a href="#fn1" class="footnote-ref" role="doc-noteref">1</a></sup>.</p>
            <section class="footnotes" role="doc-endnotes"><ol><li id="fn1"><p>A note.<a href="#fnref1" class="footnote-back" role="doc-backlink">&#8617;</a></p></li></ol></section>
            </body></html>"##;
        let m = extract(html).unwrap();
        let titles: Vec<_> = m.chapters.iter().map(|c| c.title.clone()).collect();
        assert_eq!(titles, [None, Some("Part One".into()), Some("Two".into())]);
        assert_eq!(m.title.as_deref(), Some("Book"));
        assert_eq!(m.chapters[1].blocks[1].text, "Alpha <i>beta</i>.");
        let two = &m.chapters[2].blocks;
        assert_eq!(two[1].text, r#"Delta<sup><ref id="fn1"/></sup>."#);
        assert_eq!(two[2].kind, BlockKind::Footnote { id: "fn1".into() });
        assert_eq!(two[2].text, "A note.");
    }
}
