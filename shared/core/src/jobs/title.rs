//! A translated chapter's title, taken from its translated headings.

use booktr_formats::manuscript::{Block, BlockKind};

/// A chapter's title in the target language, so that the navigation, a PDF's contents and the
/// share page name a chapter as its heading reads: the translation of the block that carries
/// the same words as `title`, else of the headings that carry them one after the other (a
/// number and a name are often two headings apart: `<h3>190</h3>` ... `<h4>A FOUR-LEAVED
/// CLOVER</h4>` under the label "190 A FOUR-LEAVED CLOVER"). None when no block carries them
/// (a navigation label of its own): the title then stays as the book had it.
pub(super) fn translated_title(
    title: &str,
    source: &[Block],
    translated: &[Block],
) -> Option<String> {
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let title = words(title);
    let texts: Vec<String> = source.iter().map(|b| words(&b.plain_text())).collect();
    let parts: Vec<usize> = match texts.iter().position(|t| *t == title) {
        Some(whole) => vec![whole],
        None => {
            let mut rest = title.as_str();
            let mut parts = Vec::new();
            for (i, text) in texts.iter().enumerate() {
                let heading = matches!(source[i].kind, BlockKind::Heading { .. });
                if rest.is_empty() || !heading || text.is_empty() {
                    continue;
                }
                if rest == text {
                    rest = "";
                    parts.push(i);
                } else if let Some(after) = rest
                    .strip_prefix(text.as_str())
                    .and_then(|r| r.strip_prefix(' '))
                {
                    rest = after;
                    parts.push(i);
                }
            }
            if !rest.is_empty() {
                return None;
            }
            parts
        }
    };
    if title.is_empty() || parts.is_empty() {
        return None;
    }
    let translated: Vec<String> = parts
        .iter()
        .map(|&i| translated.get(i).map(|b| words(&b.plain_text())))
        .collect::<Option<_>>()?;
    let translated: Vec<String> = translated.into_iter().filter(|t| !t.is_empty()).collect();
    // A heading that came back empty names nothing: the book's own title is better.
    (!translated.is_empty()).then(|| translated.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_carried_by_a_number_and_a_name_is_translated_from_both() {
        let block = |text: &str| Block::new(BlockKind::Heading { level: 3 }, text.into());
        let source = [
            block("174"),
            block("190"),
            block("A FOUR-LEAVED CLOVER"),
            block("Once"),
        ];
        let translated = [
            block("174"),
            block("190"),
            block("UN TRÈFLE"),
            block("Il était"),
        ];
        assert_eq!(
            translated_title("190 A FOUR-LEAVED CLOVER", &source, &translated).as_deref(),
            Some("190 UN TRÈFLE")
        );
        assert_eq!(
            translated_title("A FOUR-LEAVED  CLOVER", &source, &translated).as_deref(),
            Some("UN TRÈFLE")
        );
        assert_eq!(translated_title("Contents", &source, &translated), None);
        let emptied = [block(""), block(""), block(""), block("")];
        assert_eq!(
            translated_title("190 A FOUR-LEAVED CLOVER", &source, &emptied),
            None,
            "a heading that came back empty names nothing"
        );
    }
}
