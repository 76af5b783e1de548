use super::*;
use crate::test_images::png;

fn book_with(binary: &str) -> String {
    format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE FictionBook [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0" xmlns:l="http://www.w3.org/1999/xlink">
<stylesheet type="text/css">p {{ color: red }}</stylesheet>
<description><title-info><genre>prose</genre>
<author><first-name>Ann</first-name><last-name>Writer</last-name></author>
<author><first-name>Other</first-name></author>
<book-title>The Voyage</book-title><lang>en</lang>
<coverpage><image l:href="#cover.png"/></coverpage>
<annotation><p>Not the book's text.</p></annotation>
</title-info><document-info><program-used>x</program-used></document-info></description>
<body><title><p>The Voyage</p><p>A Novel</p></title>
<epigraph><p>Call it what you will.</p><text-author>Someone</text-author></epigraph>
<section id="part1"><title><p>Part One</p></title>
<section id="ch1"><title><p>Loomings</p></title>
<p>Call me <strong>Ishmael</strong>.<a l:href="#n1" type="note">[1]</a> Some <emphasis>years</emphasis> ago &lol2;.</p>
<image l:href="#pic.png"/>
<poem><title><p>A Song</p></title><stanza><v>Line one</v><v>Line two, <emphasis>10</emphasis></v></stanza><stanza><v>Line three</v></stanza><text-author>Poet</text-author></poem>
<cite><p>A quotation.</p></cite>
<empty-line/>
<p>See <a l:href="#ch2">the next</a> and <a l:href="javascript:alert(1)">this</a>.</p>
</section>
<section id="ch2"><title><p>The Carpet-Bag</p></title>
<subtitle>* * *</subtitle>
<table><tr><th>Name</th><th>Words</th></tr><tr><td>Ishmael</td><td>many</td></tr></table>
<section><title><p>Deeper</p></title><p>Inside.</p></section>
</section>
</section>
</body>
<body name="notes"><title><p>Notes</p></title>
<section id="n1"><title><p>1</p></title><p>A note.</p><p>Its second paragraph.</p></section>
</body>
<binary id="cover.png" content-type="image/png">{binary}</binary>
<binary id="pic.png" content-type="image/png">{binary}</binary>
<binary id="unused.png" content-type="image/png">{binary}</binary>
</FictionBook>"##
    )
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn book() -> Manuscript {
    extract(book_with(&base64(&png(4, 4))).as_bytes()).unwrap()
}

fn texts(chapter: &Chapter) -> Vec<(&BlockKind, &str)> {
    chapter
        .blocks
        .iter()
        .map(|b| (&b.kind, b.text.as_str()))
        .collect()
}

#[test]
fn the_title_info_gives_the_metadata_and_the_cover() {
    let m = book();
    assert_eq!(m.title.as_deref(), Some("The Voyage"));
    assert_eq!(m.author.as_deref(), Some("Ann Writer"));
    assert_eq!(m.language.as_deref(), Some("en"));
    assert_eq!(m.cover.as_deref(), Some("img0001"));
    assert_eq!(m.assets.len(), 2, "the unused binary is not decoded");
    assert_eq!(m.assets[1].media_type, "image/png");
}

#[test]
fn sections_at_the_shallowest_depth_used_twice_are_chapters_and_notes_come_last() {
    let m = book();
    let titles: Vec<_> = m.chapters.iter().map(|c| c.title.as_deref()).collect();
    assert_eq!(
        titles,
        [
            Some("The Voyage\nA Novel"),
            Some("Loomings"),
            Some("The Carpet-Bag"),
            Some("Notes")
        ]
    );
    // A part's title alone opens the chapter after it.
    assert_eq!(
        texts(&m.chapters[1])[..2],
        [
            (&BlockKind::Heading { level: 2 }, "Part One"),
            (&BlockKind::Heading { level: 3 }, "Loomings")
        ]
    );
    let front = texts(&m.chapters[0]);
    assert_eq!(
        front[0],
        (&BlockKind::Heading { level: 1 }, "The Voyage<br/>A Novel")
    );
    assert_eq!(front[1], (&BlockKind::Quote, "Call it what you will."));
    assert_eq!(front[2], (&BlockKind::Quote, "Someone"));
    let carpet = texts(&m.chapters[2]);
    assert_eq!(carpet[0].0, &BlockKind::Heading { level: 3 });
    assert_eq!(carpet[1], (&BlockKind::Heading { level: 4 }, "* * *"));
    assert!(carpet.contains(&(&BlockKind::Heading { level: 4 }, "Deeper")));
    assert!(carpet.contains(&(&BlockKind::Paragraph, "Inside.")));
}

#[test]
fn paragraphs_marks_note_references_and_links_are_the_markup_of_the_other_formats() {
    let m = book();
    let loomings = texts(&m.chapters[1]);
    assert_eq!(
        loomings[2],
        (
            &BlockKind::Paragraph,
            r#"Call me <b>Ishmael</b>.<ref id="n1"/> Some <i>years</i> ago &amp;lol2;."#
        )
    );
    let last = loomings.last().unwrap();
    assert_eq!(last.1, r##"See <a href="#ch2">the next</a> and this."##);
    assert_eq!(m.chapters[2].blocks[0].anchors, ["ch2"]);
    let notes = texts(&m.chapters[3]);
    assert_eq!(
        notes,
        [
            (&BlockKind::Footnote { id: "n1".into() }, "A note."),
            (
                &BlockKind::Footnote { id: "n1".into() },
                "Its second paragraph."
            )
        ]
    );
}

#[test]
fn each_verse_line_is_a_line_of_its_own_in_its_poem_and_stanza() {
    let m = book();
    let blocks = &m.chapters[1].blocks;
    let lines: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.kind == BlockKind::Line)
        .collect();
    let text: Vec<&str> = lines.iter().map(|b| b.text.as_str()).collect();
    assert_eq!(text, ["Line one", "Line two, <i>10</i>", "Line three"]);
    let verse = |b: &Block| b.groups.iter().all(|g| g.kind == GroupKind::Verse);
    assert!(lines.iter().all(|b| b.groups.len() == 2 && verse(b)));
    assert_eq!(lines[0].groups, lines[1].groups, "one stanza");
    assert_ne!(lines[1].groups[1], lines[2].groups[1], "two stanzas");
    assert_eq!(lines[1].groups[0], lines[2].groups[0], "one poem");
    let title = blocks.iter().find(|b| b.text == "A Song").unwrap();
    assert_eq!(title.kind, BlockKind::Heading { level: 4 });
    let image = blocks
        .iter()
        .find(|b| matches!(b.kind, BlockKind::Image { .. }));
    assert_eq!(
        image.map(|b| &b.kind),
        Some(&BlockKind::Image {
            asset: "img0002".into()
        })
    );
}

#[test]
fn images_past_the_limit_not_images_or_missing_are_left_out_and_said() {
    let huge = "A".repeat(MAX_IMAGE_BYTES / 3 * 4 + 8192);
    let m = extract(book_with(&huge).as_bytes()).unwrap();
    assert!(m.assets.is_empty());
    assert!(m
        .chapters
        .iter()
        .flat_map(|c| &c.blocks)
        .all(|b| !matches!(b.kind, BlockKind::Image { .. })));
    assert!(
        m.warnings.iter().any(|w| w.contains("past the limit")),
        "{:?}",
        m.warnings
    );
    let m = extract(book_with(&base64(b"not an image")).as_bytes()).unwrap();
    assert!(m
        .warnings
        .iter()
        .any(|w| w.contains("not a PNG, JPEG or GIF")));
    assert_eq!(m.cover, None);
}

#[test]
fn a_zipped_book_windows_1251_text_and_deep_nesting() {
    let mut zipped = Vec::new();
    {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(&mut zipped));
        zip.start_file("book.fb2", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, book_with("").as_bytes()).unwrap();
        zip.finish().unwrap();
    }
    assert_eq!(extract(&zipped).unwrap().chapters.len(), 4);

    let (cyrillic, _, _) = encoding_rs::WINDOWS_1251.encode("Зовите меня Измаил.");
    let mut russian =
        br#"<?xml version="1.0" encoding="windows-1251"?><FictionBook><body><section><p>"#.to_vec();
    russian.extend_from_slice(&cyrillic);
    russian.extend_from_slice(b"</p></section></body></FictionBook>");
    let m = extract(&russian).unwrap();
    assert_eq!(m.chapters[0].blocks[0].text, "Зовите меня Измаил.");

    let deep = format!(
        "<FictionBook><body>{}<p>x</p></body></FictionBook>",
        "<section>".repeat(MAX_DEPTH + 5)
    );
    let refused = extract(deep.as_bytes()).unwrap_err();
    assert!(
        refused.to_string().contains("nested deeper than"),
        "{refused}"
    );
    assert_eq!(extract(b""), Err(FormatError::Empty));
    assert!(extract(b"<FictionBook><body></body></FictionBook>").is_err());
}

#[test]
fn no_more_than_the_limit_of_images_is_kept() {
    let png = base64(&png(1, 1));
    let count = MAX_IMAGES + 20;
    let images: String = (0..count)
        .map(|i| format!(r##"<image l:href="#i{i}"/>"##))
        .collect();
    let binaries: String = (0..count)
        .map(|i| format!(r#"<binary id="i{i}" content-type="image/png">{png}</binary>"#))
        .collect();
    let book = format!(
        r#"<FictionBook xmlns:l="http://www.w3.org/1999/xlink"><body><section><p>Words here.</p>{images}</section></body>{binaries}</FictionBook>"#
    );
    let m = extract(book.as_bytes()).unwrap();
    assert_eq!(m.assets.len(), MAX_IMAGES);
    let left_out = m
        .warnings
        .iter()
        .filter(|w| w.contains("past the limit"))
        .count();
    assert_eq!(left_out, 20);
}
