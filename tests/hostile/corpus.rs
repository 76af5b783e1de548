//! A corpus of hostile files, made on demand (nothing large is committed): inflation bombs in
//! PDF streams and zip entries, oversized and countless images, markup nested past any reason,
//! and structures that loop, in each format that can carry them. Each says how the service must
//! answer it.
//!
//! Test code with two users, each including this file as a module: the formats crate's
//! `tests/hostile.rs` feeds every file to the readers and the PDF renderer, and the black-box
//! suite's `tests/api/hostile.rs` uploads them to `booktr serve` and measures its memory. It
//! only writes to memory, so its `expect`s cannot fail short of running out of it.
#![allow(clippy::expect_used)]

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;

/// How the service answers a hostile file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Extraction refuses it; the refusal names the limit with these words.
    Refused(&'static str),
    /// It is read; rendered as a PDF, `images_left_out` of its images are left out for their
    /// size (each named in a warning), the rest of the book intact.
    Read { images_left_out: usize },
}

/// One file of the corpus.
#[derive(Debug, Clone)]
pub struct HostileFile {
    /// What it attacks, as a file name with the format's extension.
    pub file_name: &'static str,
    pub bytes: Vec<u8>,
    pub answer: Answer,
}

/// The words the refusals of an inflating PDF stream, an inflating archive and nested markup use.
pub const PDF_STREAM_LIMIT: &str = "decompresses to more than";
pub const ARCHIVE_LIMIT: &str = "inflates past the limit";
pub const NESTING_LIMIT: &str = "nested deeper than";
pub const LOOP_REFUSAL: &str = "loops back on itself";
/// The words of the refusals of what extraction builds (`booktr_formats::limits`) and of an archive
/// of too many entries.
pub const PARAGRAPHS_LIMIT: &str = "paragraphs, the limit for one book";
pub const CHAPTERS_LIMIT: &str = "chapters, the limit for one book";
pub const PARAGRAPH_LENGTH_LIMIT: &str = "characters, the limit for one paragraph";
pub const ENTRIES_LIMIT: &str = "entries, more than the limit";
/// The words of the refusal of a Markdown file of more lines and marks than its parser may hold.
pub const MARKS_LIMIT: &str = "lines and marks";

/// Deep enough for any recursive reader to blow its stack; a few hundred kilobytes of markup.
const DEEP: usize = 100_000;

/// The whole corpus. Building it takes a second or two (most of it deflating the bombs).
pub fn corpus() -> Vec<HostileFile> {
    let mut files = attacks_on_readers();
    files.extend(attacks_on_limits());
    files.extend(attacks_on_markdown_and_fictionbook());
    files
}

/// Markdown nested past reason or cut into countless paragraphs, and FictionBooks that declare
/// a billion laughs, nest past reason, carry an image of tens of megabytes in base64 or come
/// zipped as a bomb.
fn attacks_on_markdown_and_fictionbook() -> Vec<HostileFile> {
    let deep_list: String = (0..300)
        .map(|depth| format!("{}- {PROSE}\n", "  ".repeat(depth)))
        .collect();
    vec![
        HostileFile {
            file_name: "md-deep-quotes.md",
            bytes: format!("{}{PROSE}", "> ".repeat(DEEP)).into_bytes(),
            answer: Answer::Refused(NESTING_LIMIT),
        },
        HostileFile {
            file_name: "md-deep-lists.md",
            bytes: deep_list.into_bytes(),
            answer: Answer::Refused(NESTING_LIMIT),
        },
        HostileFile {
            file_name: "md-deep-emphasis.md",
            // Delimiters a backtracking parser would pair in quadratic time (within one
            // paragraph's length), then emphasis nested past the limit.
            bytes: format!(
                "{PROSE}\n\n{}\n\n{}\n\n{}deep{}",
                "*_".repeat(DEEP / 5),
                "[a]( ".repeat(DEEP / 5),
                "*a ".repeat(DEEP / 5),
                " b*".repeat(DEEP / 5)
            )
            .into_bytes(),
            answer: Answer::Refused(NESTING_LIMIT),
        },
        HostileFile {
            file_name: "md-deep-inline-html.md",
            bytes: format!(
                "{PROSE}\n\n{}deep",
                "<em><span class=\"x\">".repeat(DEEP / 10)
            )
            .into_bytes(),
            answer: Answer::Read { images_left_out: 0 },
        },
        HostileFile {
            file_name: "md-paragraph-bomb.md",
            bytes: "a b\n\n".repeat(1_000_000).into_bytes(),
            answer: Answer::Refused(MARKS_LIMIT),
        },
        HostileFile {
            file_name: "md-delimiter-bomb.md",
            bytes: format!("{PROSE}\n\n{}", "*a".repeat(4 << 20)).into_bytes(),
            answer: Answer::Refused(MARKS_LIMIT),
        },
        HostileFile {
            file_name: "md-paragraphs-within-the-marks.md",
            bytes: "a b\n\n".repeat(240_000).into_bytes(),
            answer: Answer::Refused(PARAGRAPHS_LIMIT),
        },
        HostileFile {
            file_name: "fb2-entity-expansion.fb2",
            bytes: fictionbook(
                &entity_expansion_doctype("FictionBook"),
                "<p>&lol9;</p>",
                "",
            ),
            answer: Answer::Read { images_left_out: 0 },
        },
        HostileFile {
            file_name: "fb2-deep-nesting.fb2",
            bytes: fictionbook("", &"<section>".repeat(DEEP), ""),
            answer: Answer::Refused(NESTING_LIMIT),
        },
        HostileFile {
            file_name: "fb2-giant-base64.fb2",
            bytes: fictionbook(
                "",
                "<image l:href=\"#big\"/>",
                &format!(
                    "<binary id=\"big\" content-type=\"image/png\">{}</binary>",
                    "A".repeat(20 << 20)
                ),
            ),
            answer: Answer::Read { images_left_out: 0 },
        },
        HostileFile {
            file_name: "fb2-zip-bomb.fb2",
            bytes: zipped_fictionbook_bomb(),
            answer: Answer::Refused(ARCHIVE_LIMIT),
        },
    ]
}

/// A FictionBook of prose with `doctype` before its root, `extra` in its one section after the
/// prose, and `binaries` after its body.
fn fictionbook(doctype: &str, extra: &str, binaries: &str) -> Vec<u8> {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>{doctype}<FictionBook \
         xmlns=\"http://www.gribuser.ru/xml/fictionbook/2.0\" \
         xmlns:l=\"http://www.w3.org/1999/xlink\"><body><section><title><p>One</p></title>\
         <p>{PROSE}</p>{extra}</section></body>{binaries}</FictionBook>"
    )
    .into_bytes()
}

/// A zip archive of one `book.fb2` padded to 64 MiB of spaces (about 64 KB deflated).
fn zipped_fictionbook_bomb() -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file("book.fb2", SimpleFileOptions::default())
        .expect("writing to memory");
    zip.write_all(&fictionbook("", "", ""))
        .expect("writing to memory");
    spaces(64)(&mut zip);
    zip.finish().expect("writing to memory").into_inner()
}

/// Files that attack the readers themselves: decompression bombs, loops, deep nesting, entity
/// expansion, images too large to decode.
fn attacks_on_readers() -> Vec<HostileFile> {
    let huge = png(8_000, 8_000);
    let megapixel = png(1_000, 1_000);
    vec![
        HostileFile {
            file_name: "pdf-one-bomb.pdf",
            bytes: pdf_one_bomb(1),
            answer: Answer::Refused(PDF_STREAM_LIMIT),
        },
        HostileFile {
            file_name: "pdf-chained-bomb.pdf",
            bytes: pdf_one_bomb(2),
            answer: Answer::Refused(PDF_STREAM_LIMIT),
        },
        HostileFile {
            file_name: "pdf-many-streams.pdf",
            bytes: pdf_many_streams(60),
            answer: Answer::Read { images_left_out: 0 },
        },
        HostileFile {
            file_name: "pdf-page-tree-loop.pdf",
            bytes: pdf_page_tree_loop(),
            answer: Answer::Refused(LOOP_REFUSAL),
        },
        HostileFile {
            file_name: "pdf-deep-arrays.pdf",
            bytes: pdf_deep_arrays(),
            answer: Answer::Read { images_left_out: 0 },
        },
        HostileFile {
            file_name: "epub-huge-images.epub",
            bytes: epub(&[chapter_with_images(0..2)], &[&huge, &huge]),
            answer: Answer::Read { images_left_out: 2 },
        },
        HostileFile {
            file_name: "epub-many-images.epub",
            bytes: epub(&[chapter_with_images(0..300)], &[&megapixel; 300]),
            // The renderer's book-wide budget takes 32 one-megapixel images.
            answer: Answer::Read {
                images_left_out: 268,
            },
        },
        HostileFile {
            file_name: "epub-zip-bomb.epub",
            bytes: epub(&[zip_bomb_chapter()], &[]),
            answer: Answer::Refused(ARCHIVE_LIMIT),
        },
        HostileFile {
            file_name: "epub-deep-nesting.epub",
            bytes: epub(&[deep_chapter()], &[]),
            answer: Answer::Refused(NESTING_LIMIT),
        },
        HostileFile {
            file_name: "epub-entity-expansion.epub",
            bytes: epub(&[entity_expansion_chapter()], &[]),
            answer: Answer::Read { images_left_out: 0 },
        },
        HostileFile {
            file_name: "docx-huge-images.docx",
            bytes: docx(&[&huge, &huge], false),
            answer: Answer::Read { images_left_out: 2 },
        },
        HostileFile {
            file_name: "docx-deep-nesting.docx",
            bytes: docx(&[], true),
            answer: Answer::Refused(NESTING_LIMIT),
        },
    ]
}

/// Files that pass the readers but build more than a book may hold: paragraphs, chapters, one
/// paragraph's length, an archive's entries, a page's drawing instructions.
fn attacks_on_limits() -> Vec<HostileFile> {
    vec![
        HostileFile {
            file_name: "epub-paragraph-bomb.epub",
            bytes: epub_paragraph_bomb(),
            answer: Answer::Refused(PARAGRAPHS_LIMIT),
        },
        HostileFile {
            file_name: "epub-one-huge-paragraph.epub",
            bytes: epub(&[format!("<p>{}</p>", "word ".repeat(3 << 20))], &[]),
            answer: Answer::Refused(PARAGRAPH_LENGTH_LIMIT),
        },
        HostileFile {
            file_name: "epub-many-tiny-chapters.epub",
            bytes: epub(&vec![format!("<p>{PROSE}</p>"); 2_500], &[]),
            answer: Answer::Refused(CHAPTERS_LIMIT),
        },
        HostileFile {
            file_name: "epub-20000-entries.epub",
            bytes: epub_many_entries(20_000),
            answer: Answer::Refused(ENTRIES_LIMIT),
        },
        HostileFile {
            file_name: "docx-paragraph-bomb.docx",
            bytes: docx_with_body(&"<w:p><w:r><w:t>a b</w:t></w:r></w:p>".repeat(400_000), &[]),
            answer: Answer::Refused(PARAGRAPHS_LIMIT),
        },
        HostileFile {
            file_name: "pdf-paragraph-bomb.pdf",
            bytes: pdf_paragraph_bomb(),
            answer: Answer::Refused(PARAGRAPHS_LIMIT),
        },
        HostileFile {
            file_name: "pdf-heavy-page.pdf",
            bytes: pdf_heavy_page(),
            answer: Answer::Read { images_left_out: 0 },
        },
        HostileFile {
            file_name: "txt-paragraph-bomb.txt",
            bytes: "a b\n\n".repeat(1_000_000).into_bytes(),
            answer: Answer::Refused(PARAGRAPHS_LIMIT),
        },
        HostileFile {
            file_name: "txt-many-tiny-chapters.txt",
            bytes: (1..=3_000)
                .map(|n| format!("Chapter {n}\n\n{PROSE}\n\n"))
                .collect::<String>()
                .into_bytes(),
            answer: Answer::Refused(CHAPTERS_LIMIT),
        },
        HostileFile {
            file_name: "html-deep-nesting.html",
            bytes: format!("<html><body>{}</body></html>", deep_chapter()).into_bytes(),
            answer: Answer::Refused(NESTING_LIMIT),
        },
    ]
}

/// Ordinary prose, so that what survives the attack is a book worth translating.
const PROSE: &str = "Call me Ishmael. Some years ago, never mind how long precisely, having \
                     little or no money in my purse, I thought I would sail about a little.";

/// `bytes` through zlib, `times` over.
pub fn deflated(bytes: impl FnOnce(&mut dyn Write), times: usize) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::best());
    bytes(&mut encoder);
    let mut out = encoder.finish().expect("deflating to memory");
    for _ in 1..times {
        let mut again = ZlibEncoder::new(Vec::new(), Compression::best());
        again.write_all(&out).expect("deflating to memory");
        out = again.finish().expect("deflating to memory");
    }
    out
}

/// `mib` MiB of spaces, a megabyte at a time.
fn spaces(mib: usize) -> impl FnOnce(&mut dyn Write) {
    move |w: &mut dyn Write| {
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..mib {
            w.write_all(&chunk).expect("writing to memory");
        }
    }
}

/// A PNG of `w` x `h` grey pixels, written row by row (a large one never sits in memory
/// decoded; 8,000 x 8,000 is about 60 KB).
pub fn png(w: u32, h: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    }
    let mut header = Vec::new();
    header.extend_from_slice(&w.to_be_bytes());
    header.extend_from_slice(&h.to_be_bytes());
    // 8-bit greyscale, deflate, no filter, no interlace.
    header.extend_from_slice(&[8, 0, 0, 0, 0]);
    let pixels = deflated(
        |out| {
            // Each row: filter type 0, then the row's pixels.
            let mut row = vec![128u8; w as usize + 1];
            row[0] = 0;
            for _ in 0..h {
                out.write_all(&row).expect("writing to memory");
            }
        },
        1,
    );
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &pixels);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// A PDF of `objects` (object 1 the catalog) with its cross-reference table.
fn pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (n, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", n + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A stream object of `data` decoded by `flates` FlateDecode filters.
fn stream(data: &[u8], flates: usize) -> Vec<u8> {
    let filters = vec!["/FlateDecode"; flates].join(" ");
    let mut out =
        format!("<< /Length {} /Filter [{filters}] >>\nstream\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\nendstream");
    out
}

/// A page's text operators: one line of prose, told apart by `n`.
fn shown_text(n: usize) -> Vec<u8> {
    format!("BT /F1 12 Tf 72 700 Td (Page {n}. {PROSE}) Tj ET\n").into_bytes()
}

/// A PDF whose pages show `contents` (object references or inline streams, per page), objects
/// 1 to 3 being the catalog, the page tree and the font, `extra` after the pages.
fn pdf_of_pages(pages: Vec<Vec<u8>>, extra: Vec<Vec<u8>>) -> Vec<u8> {
    let first_page = 4 + extra.len();
    let kids: Vec<String> = (0..pages.len())
        .map(|n| format!("{} 0 R", first_page + 2 * n + 1))
        .collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            kids.len()
        )
        .into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ];
    objects.extend(extra);
    for (n, contents) in pages.into_iter().enumerate() {
        let content_id = first_page + 2 * n;
        objects.push(contents);
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
                 /Resources << /Font << /F1 3 0 R >> >> /Contents {content_id} 0 R >>"
            )
            .into_bytes(),
        );
    }
    pdf(&objects)
}

/// One page whose content is 256 MiB of spaces after its text, in about 260 KB: deflated
/// once, or `flates` times over (each pass shrinks it again).
fn pdf_one_bomb(flates: usize) -> Vec<u8> {
    let content = deflated(
        |w| {
            w.write_all(&shown_text(1)).expect("writing to memory");
            spaces(256)(w)
        },
        flates,
    );
    pdf_of_pages(vec![stream(&content, flates)], Vec::new())
}

/// `pages` pages, each showing its own line and then one shared stream of 15 MiB of spaces
/// (just under the smallest per-stream budget): close to a gigabyte to inflate from a few
/// kilobytes, one stream at a time.
fn pdf_many_streams(pages: usize) -> Vec<u8> {
    // Objects 1 to 3 as in `pdf_of_pages`, 4 the padding, then per page its line and itself.
    let page_id = |n: usize| 5 + 2 * n + 1;
    let kids: Vec<String> = (0..pages).map(|n| format!("{} 0 R", page_id(n))).collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {pages} >>",
            kids.join(" ")
        )
        .into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
        stream(&deflated(spaces(15), 1), 1),
    ];
    for n in 0..pages {
        let line = deflated(|w| w.write_all(&shown_text(n)).expect("writing"), 1);
        objects.push(stream(&line, 1));
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
                 /Resources << /Font << /F1 3 0 R >> >> /Contents [{} 0 R 4 0 R] >>",
                page_id(n) - 1
            )
            .into_bytes(),
        );
    }
    pdf(&objects)
}

/// A page tree whose root lists itself among its kids.
fn pdf_page_tree_loop() -> Vec<u8> {
    let content = stream(
        &deflated(|w| w.write_all(&shown_text(1)).expect("writing"), 1),
        1,
    );
    pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [2 0 R 4 0 R] /Count 2 >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
          /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>"
            .to_vec(),
        content,
    ])
}

/// An object of arrays nested `DEEP` levels, beside a readable page, and a second page whose
/// content stream nests its text arrays as deep.
fn pdf_deep_arrays() -> Vec<u8> {
    let deep = format!("{}{}", "[".repeat(DEEP), "]".repeat(DEEP)).into_bytes();
    let readable = stream(
        &deflated(|w| w.write_all(&shown_text(1)).expect("writing"), 1),
        1,
    );
    let nested_text = deflated(
        |w| {
            let text = format!(
                "BT /F1 12 Tf {}(deep){} TJ ET\n",
                "[".repeat(DEEP),
                "]".repeat(DEEP)
            );
            w.write_all(text.as_bytes()).expect("writing")
        },
        1,
    );
    pdf_of_pages(vec![readable, stream(&nested_text, 1)], vec![deep])
}

/// The paragraph bomb, which takes a server whose readers stop only at the inflated bytes past
/// its memory: chapters of `<p>a b</p>` repeated, 62 MiB each (millions of paragraphs), beside
/// 40 MB of incompressible padding so that the archive's inflation budget, which grows with the
/// file, lets them through. Only the first chapter is ever read: the reader stops at the book's
/// paragraph limit.
fn epub_paragraph_bomb() -> Vec<u8> {
    let chapter = format!("<h1>One</h1><p>{PROSE}</p>{PARAGRAPH_BOMB}");
    with_entries(epub(&[chapter.clone(), chapter], &[]), |zip, stored| {
        zip.start_file("OEBPS/padding.bin", stored)
            .expect("writing to memory");
        zip.write_all(&noise(40 << 20)).expect("writing to memory");
    })
}

/// Marker of a chapter the EPUB writer fills with 62 MiB of `<p>a b</p>`.
const PARAGRAPH_BOMB: &str = "<!--paragraphs-->";

/// `len` bytes that do not compress (a linear congruential sequence's high bytes).
fn noise(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 56) as u8
        })
        .collect()
}

type ZipInMemory = zip::ZipWriter<std::io::Cursor<Vec<u8>>>;

/// The archive `zip` with the stored entries `add` writes.
fn with_entries(
    zip: Vec<u8>,
    add: impl FnOnce(&mut ZipInMemory, zip::write::SimpleFileOptions),
) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new_append(std::io::Cursor::new(zip))
        .expect("reopening an archive made here");
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    add(&mut writer, stored);
    writer.finish().expect("writing to memory").into_inner()
}

/// A readable EPUB of one chapter, then `entries` more one-byte files.
fn epub_many_entries(entries: usize) -> Vec<u8> {
    with_entries(epub(&[format!("<p>{PROSE}</p>")], &[]), |zip, stored| {
        for n in 0..entries {
            zip.start_file(format!("OEBPS/e{n}.txt"), stored)
                .expect("writing to memory");
            zip.write_all(b".").expect("writing to memory");
        }
    })
}

/// Three pages, each 100,000 paragraphs of one letter (1.5 MB of operators, under the page
/// limit): each letter shown, then the pen moved down three lines, which the reader takes for a
/// paragraph break.
fn pdf_paragraph_bomb() -> Vec<u8> {
    let page = page_of_letters(100_000);
    pdf_of_pages(vec![page.clone(), page.clone(), page], Vec::new())
}

/// A page of prose after one of 300,000 paragraphs of one letter: 3 MB of operators, past
/// the page limit, so that page is left out (read, it would pass the paragraph limit) and the
/// prose is read.
fn pdf_heavy_page() -> Vec<u8> {
    let prose = deflated(
        |w| w.write_all(&shown_text(2)).expect("writing to memory"),
        1,
    );
    pdf_of_pages(
        vec![page_of_letters(300_000), stream(&prose, 1)],
        Vec::new(),
    )
}

/// A deflated content stream showing `paragraphs` paragraphs of one letter.
fn page_of_letters(paragraphs: usize) -> Vec<u8> {
    let mut content = b"BT /F1 1 Tf 72 700 Td ".to_vec();
    for _ in 0..paragraphs {
        content.extend_from_slice(b"(a) Tj 0 -3 Td ");
    }
    content.extend_from_slice(b"ET\n");
    stream(
        &deflated(|w| w.write_all(&content).expect("writing to memory"), 1),
        1,
    )
}

/// A chapter's XHTML body: a heading, prose, and `<img>`s of images `images`.
fn chapter_with_images(images: std::ops::Range<usize>) -> String {
    let imgs: String = images
        .map(|n| format!(r#"<img src="i{n}.png" alt="Picture {n}"/>"#))
        .collect();
    format!("<h1>One</h1><p>{PROSE}</p>{imgs}<p>{PROSE}</p>")
}

/// Prose inside `DEEP` nested `<div>`s.
fn deep_chapter() -> String {
    format!(
        "<h1>One</h1><p>{PROSE}</p>{}<p>{PROSE}</p>{}",
        "<div>".repeat(DEEP),
        "</div>".repeat(DEEP)
    )
}

/// Marker of the chapter [`zip_bomb_chapter`] pads; the EPUB writer deflates it.
const ZIP_BOMB_PADDING: &str = "<!--padding-->";

/// A chapter padded to 64 MiB of spaces (about 64 KB deflated): past every archive limit of a
/// file this small (16 MiB in all).
fn zip_bomb_chapter() -> String {
    format!("<h1>One</h1><p>{PROSE}</p>{ZIP_BOMB_PADDING}")
}

/// A DOCTYPE that defines an entity of a billion `lol`s (the "billion laughs"): a reader that
/// expanded internal entities would build gigabytes. The text uses the entity once.
fn entity_expansion_chapter() -> String {
    let doctype = entity_expansion_doctype("html");
    // The DOCTYPE is spliced in before <html> by the EPUB writer.
    format!("{doctype}\u{0}<h1>One</h1><p>{PROSE}</p><p>&lol9;</p>")
}

/// The billion laughs' DOCTYPE for a document whose root is `root`: `&lol9;` is a billion
/// `lol`s.
fn entity_expansion_doctype(root: &str) -> String {
    let mut doctype = format!("<!DOCTYPE {root} [<!ENTITY lol0 \"lol\">");
    for n in 1..10 {
        let previous = format!("&lol{};", n - 1).repeat(10);
        doctype.push_str(&format!("<!ENTITY lol{n} \"{previous}\">"));
    }
    doctype.push_str("]>");
    doctype
}

/// An EPUB 3 of `chapters` (XHTML bodies; a leading DOCTYPE, ended by NUL, goes before
/// `<html>`) and PNG `images` named `i0.png`, `i1.png`...
fn epub(chapters: &[String], images: &[&Vec<u8>]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let deflate = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let mut put = |name: &str, bytes: &[u8], options| {
        zip.start_file(name, options).expect("writing to memory");
        zip.write_all(bytes).expect("writing to memory");
    };
    put("mimetype", b"application/epub+zip", stored);
    put(
        "META-INF/container.xml",
        br#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#,
        deflate,
    );
    let mut manifest = String::new();
    let mut spine = String::new();
    for n in 0..chapters.len() {
        manifest.push_str(&format!(
            r#"<item id="c{n}" href="c{n}.xhtml" media-type="application/xhtml+xml"/>"#
        ));
        spine.push_str(&format!(r#"<itemref idref="c{n}"/>"#));
    }
    for n in 0..images.len() {
        manifest.push_str(&format!(
            r#"<item id="i{n}" href="i{n}.png" media-type="image/png"/>"#
        ));
    }
    let opf = format!(
        r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:hostile</dc:identifier><dc:title>Hostile</dc:title><dc:language>en</dc:language></metadata><manifest>{manifest}</manifest><spine>{spine}</spine></package>"#
    );
    put("OEBPS/content.opf", opf.as_bytes(), deflate);
    for (n, body) in chapters.iter().enumerate() {
        let (doctype, body) = body.split_once('\u{0}').unwrap_or(("", body));
        let (body, padded) = match body.strip_suffix(ZIP_BOMB_PADDING) {
            Some(body) => (body, true),
            None => (body, false),
        };
        let (body, paragraphs) = match body.strip_suffix(PARAGRAPH_BOMB) {
            Some(body) => (body, true),
            None => (body, false),
        };
        let name = format!("OEBPS/c{n}.xhtml");
        zip.start_file(name, deflate).expect("writing to memory");
        let head = format!(
            r#"<?xml version="1.0"?>{doctype}<html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title></head><body>{body}"#
        );
        zip.write_all(head.as_bytes()).expect("writing to memory");
        if padded {
            spaces(64)(&mut zip);
        }
        if paragraphs {
            let chunk = "<p>a b</p>".repeat(1 << 16);
            for _ in 0..(62 << 20) / chunk.len() {
                zip.write_all(chunk.as_bytes()).expect("writing to memory");
            }
        }
        zip.write_all(b"</body></html>").expect("writing to memory");
    }
    for (n, image) in images.iter().enumerate() {
        zip.start_file(format!("OEBPS/i{n}.png"), stored)
            .expect("writing to memory");
        zip.write_all(image).expect("writing to memory");
    }
    zip.finish().expect("writing to memory").into_inner()
}

/// A DOCX of prose and PNG `images`; with `deep`, its prose sits `DEEP` tables deep.
fn docx(images: &[&Vec<u8>], deep: bool) -> Vec<u8> {
    let paragraph = format!("<w:p><w:r><w:t>{PROSE}</w:t></w:r></w:p>");
    let pictures: String = (0..images.len())
        .map(|n| {
            format!(
                r#"<w:p><w:r><w:drawing><wp:inline><wp:docPr id="{n}" name="Picture {n}" descr="Picture {n}"/><a:graphic><a:graphicData><pic:pic><pic:blipFill><a:blip r:embed="rImg{n}"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"#
            )
        })
        .collect();
    let nested = if deep {
        format!(
            "{}{paragraph}{}",
            "<w:tbl><w:tr><w:tc>".repeat(DEEP),
            "</w:tc></w:tr></w:tbl>".repeat(DEEP)
        )
    } else {
        String::new()
    };
    docx_with_body(&format!("{paragraph}{pictures}{nested}{paragraph}"), images)
}

/// A DOCX whose body is a heading and then `body`, with PNG `images` as `rImg0`, `rImg1` ...
fn docx_with_body(body: &str, images: &[&Vec<u8>]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let mut put = |name: &str, bytes: &[u8]| {
        zip.start_file(name, options).expect("writing to memory");
        zip.write_all(bytes).expect("writing to memory");
    };
    put(
        "[Content_Types].xml",
        br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#,
    );
    put(
        "_rels/.rels",
        br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#,
    );
    let rels: String = (0..images.len())
        .map(|n| {
            format!(
                r#"<Relationship Id="rImg{n}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/i{n}.png"/>"#
            )
        })
        .collect();
    put(
        "word/_rels/document.xml.rels",
        format!(r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}</Relationships>"#).as_bytes(),
    );
    let document = format!(
        r#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><w:body><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>One</w:t></w:r></w:p>{body}</w:body></w:document>"#
    );
    put("word/document.xml", document.as_bytes());
    for (n, image) in images.iter().enumerate() {
        put(&format!("word/media/i{n}.png"), image);
    }
    zip.finish().expect("writing to memory").into_inner()
}
