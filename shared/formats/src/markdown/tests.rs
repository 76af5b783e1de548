use super::*;
use crate::markup;

const BOOK: &str = r##"---
title: "The Voyage"
author: Ann Writer
lang: en
---

# The Voyage

A preface of *seven* words stands here.

## Loomings

Call me **Ishmael**.[^whale] Type `ls -l` and see [the sea](https://example.org/sea) or
[the next chapter](#carpet).

> A quotation
> over lines.
>
> > And one inside it.

1. First
2. Second
   - Inner

```rust
fn main() {
    println!("<b>&</b>");
}
```

## The Carpet-Bag {#carpet}

| Name | Words |
|------|-------|
| Ishmael | `many` |

Line one<br>
Line two and a number<span class="lnum">10</span>

[^whale]: A large *animal*.
"##;

fn book() -> Manuscript {
    extract(BOOK.as_bytes()).unwrap()
}

#[test]
fn the_front_matter_gives_the_title_author_and_language() {
    let m = book();
    assert_eq!(m.title.as_deref(), Some("The Voyage"));
    assert_eq!(m.author.as_deref(), Some("Ann Writer"));
    assert_eq!(m.language.as_deref(), Some("en"));
}

#[test]
fn chapters_start_at_the_highest_level_used_twice_and_a_lone_title_starts_one_too() {
    let m = book();
    let titles: Vec<_> = m.chapters.iter().map(|c| c.title.as_deref()).collect();
    assert_eq!(
        titles,
        [Some("The Voyage"), Some("Loomings"), Some("The Carpet-Bag")]
    );
    let one_level = "# One\n\ntext\n\n# Two\n\ntext\n\n## Two a\n\ntext\n";
    let m = extract(one_level.as_bytes()).unwrap();
    assert_eq!(m.chapters.len(), 2, "## stays inside its chapter");
    let no_split = "Intro words.\n\n# Only\n\ntext\n\n## Also only\n\nmore\n";
    let m = extract(no_split.as_bytes()).unwrap();
    assert_eq!(m.chapters.len(), 1);
}

#[test]
fn marks_become_the_markup_the_other_formats_use() {
    let m = book();
    let loomings = &m.chapters[1].blocks;
    assert_eq!(loomings[0].kind, BlockKind::Heading { level: 2 });
    assert_eq!(
        m.chapters[2].blocks[0].anchors,
        ["carpet"],
        "a link's target"
    );
    assert_eq!(
        loomings[1].text,
        r##"Call me <b>Ishmael</b>.<ref id="fn1"/> Type <code>ls -l</code> and see <a href="https://example.org/sea">the sea</a> or <a href="#carpet">the next chapter</a>."##
    );
    assert_eq!(
        m.chapters[0].blocks[1].text,
        "A preface of <i>seven</i> words stands here."
    );
}

#[test]
fn quotes_lists_and_tables_are_blocks_in_their_groups() {
    let m = book();
    let blocks = &m.chapters[1].blocks;
    let quote = &blocks[2];
    assert_eq!(quote.kind, BlockKind::Quote);
    assert_eq!(quote.text, "A quotation over lines.");
    assert_eq!(quote.groups.len(), 1);
    assert_eq!(blocks[3].groups.len(), 2, "the inner quote is in both");
    assert_eq!(blocks[3].groups[0], quote.groups[0]);
    assert_eq!(
        blocks[4].kind,
        BlockKind::ListItem {
            ordered: true,
            depth: 1
        }
    );
    assert_eq!(
        blocks[6].kind,
        BlockKind::ListItem {
            ordered: false,
            depth: 2
        }
    );
    assert_eq!(blocks[6].text, "Inner");
    let cells: Vec<_> = m.chapters[2]
        .blocks
        .iter()
        .filter_map(|b| match b.kind {
            BlockKind::TableCell {
                row, col, header, ..
            } => Some((row, col, header, b.text.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        cells,
        [
            (0, 0, true, "Name"),
            (0, 1, true, "Words"),
            (1, 0, false, "Ishmael"),
            (1, 1, false, "<code>many</code>")
        ]
    );
}

#[test]
fn code_blocks_keep_their_spacing_and_are_never_translated() {
    let m = book();
    let code = m.chapters[1]
        .blocks
        .iter()
        .find(|b| b.kind == BlockKind::Preformatted)
        .unwrap();
    assert_eq!(
        code.text,
        "<code>fn main() {<br/>    println!(\"&lt;b&gt;&amp;&lt;/b&gt;\");<br/>}</code>"
    );
    assert!(markup::parse(&code.text).is_ok());
    assert_eq!(markup::translatable_text(&code.text), "");
    assert!(markup::has_kept(&code.text));
}

#[test]
fn footnotes_are_notes_and_inline_html_gives_its_marks() {
    let m = book();
    let last = &m.chapters[2].blocks;
    let note = last.last().unwrap();
    assert_eq!(note.kind, BlockKind::Footnote { id: "fn1".into() });
    assert_eq!(note.text, "A large <i>animal</i>.");
    let lines = &last[last.len() - 2];
    assert_eq!(
        lines.text,
        r#"Line one<br/>Line two and a number<num class="lnum" text="10"/>"#
    );
}

#[test]
fn html_blocks_are_read_as_html_without_their_scripts() {
    let md = "# A\n\ntext\n\n<div class=\"x\">\n<p>Inside <em>html</em></p>\n<script>alert(1)</script>\n</div>\n\n# B\n\nmore\n";
    let m = extract(md.as_bytes()).unwrap();
    let texts: Vec<_> = m.chapters[0]
        .blocks
        .iter()
        .map(|b| b.text.as_str())
        .collect();
    assert_eq!(texts, ["A", "text", "Inside <i>html</i>"]);
}

#[test]
fn unsafe_links_keep_their_text_only() {
    let md =
        "[click](javascript:alert(1)) and <a href=\"data:x\">this</a> and ![alt text](pic.png)";
    let m = extract(md.as_bytes()).unwrap();
    assert_eq!(m.chapters[0].blocks[0].text, "click and this and alt text");
}

#[test]
fn nesting_past_the_limit_is_refused_and_empty_books_are_errors() {
    let deep = format!("{}deep", "> ".repeat(MAX_DEPTH + 1));
    let refused = extract(deep.as_bytes()).unwrap_err();
    assert!(
        refused.to_string().contains("nested deeper than"),
        "{refused}"
    );
    let lists = (0..MAX_DEPTH + 1)
        .map(|i| format!("{}- x", "  ".repeat(i)))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(extract(lists.as_bytes()).is_err());
    let emphasis = format!(
        "{}deep{}",
        "*a ".repeat(MAX_DEPTH + 1),
        " b*".repeat(MAX_DEPTH + 1)
    );
    let refused = extract(emphasis.as_bytes()).unwrap_err();
    assert!(
        refused.to_string().contains("nested deeper than"),
        "{refused}"
    );
    // Inline HTML past the limit loses its marks, not its text.
    let html = format!("{}deep", "<em>".repeat(MAX_DEPTH * 10));
    let m = extract(html.as_bytes()).unwrap();
    assert_eq!(m.chapters[0].blocks[0].plain_text(), "deep");
    assert_eq!(
        markup::tags(&m.chapters[0].blocks[0].text).unwrap().len(),
        2 * MAX_DEPTH
    );
    assert_eq!(extract(b""), Err(FormatError::Empty));
    assert_eq!(extract(b"---\ntitle: x\n---\n\n"), Err(FormatError::NoText));
}

#[test]
fn a_file_of_more_lines_and_marks_than_the_limit_is_refused_before_it_is_parsed() {
    let bomb = "*a".repeat(MAX_MARKS + 1);
    let refused = extract(bomb.as_bytes()).unwrap_err();
    assert!(refused.to_string().contains("lines and marks"), "{refused}");
    let lines = "a\n".repeat(MAX_MARKS + 1);
    assert!(extract(lines.as_bytes()).is_err());
    // Within the limit: 150,000 paragraphs of 4 marks each.
    assert!(extract("a *b* c\n\n".repeat(150_000).as_bytes()).is_ok());
}
