use super::*;
use crate::budget::Budget;
use crate::manuscript::{Block, BlockKind, Chapter, Group};

fn options() -> RenderOptions {
    RenderOptions {
        language: "fr".into(),
        title: Some("Le \"Voyage\"".into()),
        author: Some("Ann Writer".into()),
        identifier: "urn:booktr:x".into(),
        modified: "2026-11-29T00:00:00Z".into(),
        budget: Budget::default(),
    }
}

fn written(manuscript: &Manuscript) -> String {
    String::from_utf8(render(manuscript, &options()).unwrap()).unwrap()
}

/// Each block's kind and plain text, as the Markdown reader reads them.
fn reread(markdown: &str) -> Vec<(BlockKind, String)> {
    crate::markdown::extract(markdown.as_bytes())
        .unwrap()
        .chapters
        .iter()
        .flat_map(|c| &c.blocks)
        .map(|b| (b.kind.clone(), b.plain_text()))
        .collect()
}

fn book(blocks: Vec<Block>) -> Manuscript {
    Manuscript {
        chapters: vec![Chapter {
            title: None,
            blocks,
        }],
        ..Manuscript::default()
    }
}

#[test]
fn a_markdown_book_written_and_read_again_has_the_same_blocks_and_marks() {
    let source = r##"---
title: The Voyage
---

# The Voyage

A preface of *seven* words stands here.

## Loomings

Call me **Ishmael**.[^1] Type `ls -l` and see [the sea](https://example.org/sea?a=(1)).

> A quotation
>
> > And one inside it.

> Another quotation.

1. First
2. Second
    - Inner

```rust
fn main() { let s = "```"; }
```

## The Carpet-Bag

| Name | Words |
|------|-------|
| Ish\|mael | `a\|b` |

Line one<br>
Line two<span class="lnum">10</span>

[^1]: A large *animal*.
"##;
    let read = crate::markdown::extract(source.as_bytes()).unwrap();
    let markdown = written(&read);
    let again = crate::markdown::extract(markdown.as_bytes()).unwrap();
    let blocks = |m: &Manuscript| {
        m.chapters
            .iter()
            .flat_map(|c| &c.blocks)
            .map(|b| (b.kind.clone(), b.text.clone(), b.groups.len()))
            .collect::<Vec<_>>()
    };
    assert_eq!(blocks(&again), blocks(&read), "{markdown}");
    assert_eq!(again.chapters.len(), read.chapters.len());
    // Two quotations stay two.
    let quotes: Vec<_> = again.chapters[1]
        .blocks
        .iter()
        .filter_map(|b| b.groups.first())
        .collect();
    assert_ne!(quotes.first(), quotes.last(), "{markdown}");
    assert!(markdown.starts_with(
        "---\ntitle: \"Le \\\"Voyage\\\"\"\nauthor: \"Ann Writer\"\nlang: \"fr\"\n---\n"
    ));
}

#[test]
fn translated_text_cannot_make_markdown_or_html_structure() {
    let attacks = [
        "# Not a heading",
        "- not a list",
        "+ nor this",
        "1. nor this",
        "2024) nor this",
        "> not a quote",
        "```\nnot code",
        "~~~ nor code",
        "    indented, not code",
        "---",
        "***",
        "___",
        "===",
        "<script>alert(1)</script>",
        "<div onclick=\"x()\">html</div>",
        "[a link](javascript:alert(1))",
        "![an image](https://evil.example/x.png)",
        "[ref]: https://evil.example",
        "[^1]: a note",
        "<https://autolink.example>",
        "*emphasis* and __strong__ and `code` and ~~struck~~",
        "| a | b |\n|---|---|",
        "a backslash at the end \\",
        "&lt;entity&gt; &amp; &#60;",
        "trailing hashes ##",
    ];
    for attack in attacks {
        let text = crate::markup::escape_text(attack);
        for kind in [
            BlockKind::Paragraph,
            BlockKind::Heading { level: 2 },
            BlockKind::ListItem {
                ordered: true,
                depth: 1,
            },
        ] {
            let markdown = written(&book(vec![Block::new(kind.clone(), text.clone())]));
            let expected = attack.replace('\n', " ");
            let expected = expected.split_whitespace().collect::<Vec<_>>().join(" ");
            let read = reread(&markdown);
            assert_eq!(read.len(), 1, "{attack:?} as {kind:?}: {markdown}");
            assert_eq!(read[0].0, kind, "{attack:?}: {markdown}");
            assert_eq!(read[0].1, expected, "{attack:?}: {markdown}");
        }
    }
}

#[test]
fn a_list_item_deeper_than_the_one_before_it_is_still_an_item() {
    let item = |depth| BlockKind::ListItem {
        ordered: false,
        depth,
    };
    let markdown = written(&book(vec![
        Block::new(BlockKind::Paragraph, "Before".into()),
        Block::new(item(3), "Deep".into()),
        Block::new(item(5), "Deeper".into()),
    ]));
    let kinds: Vec<_> = reread(&markdown).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds,
        [BlockKind::Paragraph, item(1), item(2)],
        "{markdown}"
    );
}

#[test]
fn line_breaks_in_translated_text_stay_inside_their_block() {
    let text = "first line<br/># second<br/>- third<br/>&gt; fourth";
    let markdown = written(&book(vec![Block::new(BlockKind::Paragraph, text.into())]));
    let read = reread(&markdown);
    assert_eq!(read.len(), 1, "{markdown}");
    assert_eq!(read[0].1, "first line\n# second\n- third\n> fourth");
}

#[test]
fn verse_lines_are_one_to_a_line_and_code_comes_back_as_the_source_has_it() {
    let verse = Group {
        kind: GroupKind::Verse,
        n: 1,
    };
    let mut lines: Vec<Block> = ["April is the cruellest month,", "breeding 10"]
        .into_iter()
        .map(|t| {
            let mut b = Block::new(BlockKind::Line, t.into());
            b.groups = vec![verse];
            b
        })
        .collect();
    lines.push(Block::new(
        BlockKind::Preformatted,
        "<code>  a ``` b<br/>    c</code>".into(),
    ));
    lines.push(Block::new(
        BlockKind::Paragraph,
        "Run <code>`x`</code> and <code>a  b</code><sup>2</sup>".into(),
    ));
    let markdown = written(&book(lines));
    assert!(
        markdown.contains("April is the cruellest month,\\\nbreeding 10\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("````\n  a ``` b\n    c\n````\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("Run `` `x` `` and `a  b`<sup>2</sup>"),
        "{markdown}"
    );
}

#[test]
fn whitespace_never_breaks_emphasis_and_empty_marks_write_nothing() {
    let text = "a<i> word </i>b <b></b>c";
    let markdown = written(&book(vec![Block::new(BlockKind::Paragraph, text.into())]));
    assert!(markdown.contains("a *word* b c"), "{markdown}");
}
