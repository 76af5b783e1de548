//! Plain-text books: decoding and chapter detection.

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252};

use crate::error::FormatError;
use crate::language::detect_language;
use crate::limits;
use crate::manuscript::count_words;
use crate::manuscript::{Block, BlockKind, Chapter, Manuscript};
use crate::markup::escape_text;

/// A chapter as found in the text, before it becomes blocks.
struct TxtChapter {
    title: Option<String>,
    text: String,
}

/// Without headings, a text is cut into chapters of about this many words, at paragraph ends.
const WORDS_PER_UNTITLED_CHAPTER: u64 = 4000;
/// A heading is a short line.
const MAX_HEADING_CHARS: usize = 80;

/// Reads a plain-text book: decodes it (UTF-8, UTF-16 with a byte-order mark, else
/// Windows-1252), then splits it at chapter headings ("Chapter 1", "CHAPTER IV", "Capítulo 3",
/// "Chapitre 2", "Kapitel 5", "第一章", ...), or by size when it has none.
pub fn extract(bytes: &[u8]) -> Result<Manuscript, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    // One copy of the text alive at a time where that is possible: a text may be 50 MB.
    let mut text = decode(bytes);
    if text.contains('\r') {
        text = text.replace("\r\n", "\n");
        if text.contains('\r') {
            text = text.replace('\r', "\n");
        }
    }
    if count_words(&text) == 0 {
        return Err(FormatError::NoText);
    }
    let chapters = match split_at_headings(&text)? {
        Some(chapters) => chapters,
        None => split_by_size(&text),
    };
    // Counted before any block is built: a text of blank-line-separated letters would make
    // millions of them.
    let paragraphs: usize = chapters.iter().map(|c| paragraphs(&c.text).count()).sum();
    limits::check_blocks(paragraphs)?;
    Ok(Manuscript {
        language: detect_language(&text),
        chapters: chapters.into_iter().map(into_blocks).collect(),
        ..Manuscript::default()
    })
}

/// A chapter's paragraphs: the text between blank lines.
fn paragraphs(text: &str) -> impl Iterator<Item = &str> {
    text.split("\n\n").map(str::trim).filter(|p| !p.is_empty())
}

/// Paragraphs are separated by blank lines; line breaks inside one are kept as `<br/>` only for
/// short lines (verse, addresses), and folded for prose wrapped at a fixed width.
fn into_blocks(chapter: TxtChapter) -> Chapter {
    let blocks = paragraphs(&chapter.text)
        .map(|paragraph| {
            let lines: Vec<&str> = paragraph.lines().map(str::trim).collect();
            let verse = lines.len() > 1 && lines.iter().all(|l| l.chars().count() < 45);
            let text = if verse {
                lines
                    .iter()
                    .map(|l| escape_text(l))
                    .collect::<Vec<_>>()
                    .join("<br/>")
            } else {
                escape_text(&lines.join(" "))
            };
            Block::new(BlockKind::Paragraph, text)
        })
        .collect();
    Chapter {
        title: chapter.title,
        blocks,
    }
}

/// Decodes text in the encodings books are found in. A byte-order mark wins; otherwise valid
/// UTF-8 is UTF-8, and anything else is read as Windows-1252 (a superset of Latin-1 that every
/// byte decodes in), which is what legacy Western e-texts use.
pub fn decode(bytes: &[u8]) -> String {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        return encoding
            .decode_without_bom_handling(&bytes[bom_len..])
            .0
            .into_owned();
    }
    // UTF-16 without a BOM: every other byte is NUL in Latin-script text.
    let nuls_even = bytes.iter().step_by(2).filter(|&&b| b == 0).count();
    let nuls_odd = bytes.iter().skip(1).step_by(2).filter(|&&b| b == 0).count();
    let half = bytes.len() / 2;
    if half > 0 && nuls_odd * 10 > half * 4 && nuls_even * 10 < half {
        return UTF_16LE.decode_without_bom_handling(bytes).0.into_owned();
    }
    if half > 0 && nuls_even * 10 > half * 4 && nuls_odd * 10 < half {
        return UTF_16BE.decode_without_bom_handling(bytes).0.into_owned();
    }
    match UTF_8.decode_without_bom_handling_and_without_replacement(bytes) {
        Some(text) => text.into_owned(),
        None => WINDOWS_1252
            .decode_without_bom_handling(bytes)
            .0
            .into_owned(),
    }
}

/// The chapters between heading lines; None when the text has no heading. Reads the text in
/// place: a text of 50 MB may have tens of millions of lines.
fn split_at_headings(text: &str) -> Result<Option<Vec<TxtChapter>>, FormatError> {
    let mut chapters = Vec::new();
    let mut title: Option<String> = None;
    let mut body_start = 0;
    let mut offset = 0;
    let mut after_blank = true;
    let mut found = false;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let line = line.strip_suffix('\n').unwrap_or(line);
        if after_blank && is_heading(line) {
            push_chapter(&mut chapters, title.take(), &text[body_start..start]);
            if chapters.len() > limits::MAX_CHAPTERS {
                return Err(limits::too_many_chapters());
            }
            title = Some(line.trim().to_string());
            body_start = offset;
            found = true;
        }
        after_blank = line.trim().is_empty();
    }
    push_chapter(&mut chapters, title, &text[body_start..]);
    Ok(found.then_some(chapters))
}

/// Adds a chapter unless it has no text: the entries of a table of contents are headings with
/// nothing under them, and are not chapters.
fn push_chapter(chapters: &mut Vec<TxtChapter>, title: Option<String>, body: &str) {
    let text = body.trim();
    if count_words(text) > 0 {
        chapters.push(TxtChapter {
            title,
            text: text.to_string(),
        });
    }
}

fn split_by_size(text: &str) -> Vec<TxtChapter> {
    let mut chapters = Vec::new();
    let mut current = String::new();
    let mut words = 0;
    for paragraph in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        if !current.is_empty() {
            current.push_str("\n\n");
        }
        current.push_str(paragraph);
        words += count_words(paragraph);
        if words >= WORDS_PER_UNTITLED_CHAPTER {
            chapters.push(TxtChapter {
                title: None,
                text: std::mem::take(&mut current),
            });
            words = 0;
        }
    }
    if words > 0 {
        chapters.push(TxtChapter {
            title: None,
            text: current,
        });
    }
    chapters
}

const CHAPTER_WORDS: &[&str] = &[
    "chapter",
    "chap.",
    "capítulo",
    "capitulo",
    "cap.",
    "chapitre",
    "kapitel",
    "capitolo",
    "hoofdstuk",
    "rozdział",
    "kapitola",
    "глава",
    "luku",
    "kapittel",
    "kapitel.",
];

const NUMBER_WORDS: &[&str] = &[
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "first",
    "second",
    "third",
    "last",
    "uno",
    "dos",
    "tres",
    "un",
    "une",
    "premier",
    "eins",
    "erstes",
];

fn is_heading(line: &str) -> bool {
    let line = line.trim();
    if line.is_empty() || line.chars().count() > MAX_HEADING_CHARS {
        return false;
    }
    if is_cjk_heading(line) || is_numbered_caps_heading(line) {
        return true;
    }
    let mut words = line.split_whitespace();
    let (Some(first), Some(second)) = (words.next(), words.next()) else {
        return false;
    };
    if !CHAPTER_WORDS.contains(&first.to_lowercase().as_str()) {
        return false;
    }
    let number = second
        .trim_end_matches(['.', ':', ',', '-', '—', '–'])
        .to_lowercase();
    !number.is_empty()
        && (number.chars().all(|c| c.is_ascii_digit())
            || number.chars().all(|c| "ivxlcdm".contains(c))
            || NUMBER_WORDS.contains(&number.as_str())
            || NUMBER_WORDS
                .iter()
                .any(|w| number.starts_with(w) && number.contains('-')))
}

/// "IV. DEATH BY WATER", "12 THE NIGHTINGALE": a number or roman numeral, then a title in
/// capitals (at least two letters, no lower case).
fn is_numbered_caps_heading(line: &str) -> bool {
    let Some((number, title)) = line.split_once(' ') else {
        return false;
    };
    let number = number.trim_end_matches(['.', ':']);
    let numeric = !number.is_empty()
        && (number.chars().all(|c| c.is_ascii_digit())
            || number.chars().all(|c| "IVXLCDM".contains(c)));
    let letters = title.chars().filter(|c| c.is_alphabetic()).count();
    numeric && letters >= 2 && !title.chars().any(char::is_lowercase)
}

/// 第一章, 第12章, 第三回 ...
fn is_cjk_heading(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('第') else {
        return false;
    };
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || "一二三四五六七八九十百千零〇两".contains(*c))
        .collect();
    !digits.is_empty() && rest[digits.len()..].starts_with(['章', '回', '节', '節'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn titles(e: &Manuscript) -> Vec<Option<&str>> {
        e.chapters.iter().map(|c| c.title.as_deref()).collect()
    }

    #[test]
    fn chapters_split_at_headings_in_several_languages() {
        let text = "Preface words here.\n\nChapter 1\n\nOne two three.\n\nCHAPTER IV. The Storm\n\nFour five.\n\nCapítulo 3\n\nseis siete\n\n第一章\n\n中文 文本\n";
        let book = extract(text.as_bytes()).unwrap();
        assert_eq!(
            titles(&book),
            vec![
                None,
                Some("Chapter 1"),
                Some("CHAPTER IV. The Storm"),
                Some("Capítulo 3"),
                Some("第一章")
            ]
        );
        assert_eq!(book.chapters[1].plain_text(), "One two three.");
        assert_eq!(book.word_count(), 3 + 3 + 2 + 2 + 2);
    }

    #[test]
    fn a_table_of_contents_does_not_make_empty_chapters() {
        let text = "Contents\n\nChapter 1\n\nChapter 2\n\nChapter 1\n\nText one.\n\nChapter 2\n\nText two.";
        let book = extract(text.as_bytes()).unwrap();
        assert_eq!(
            titles(&book),
            vec![None, Some("Chapter 1"), Some("Chapter 2")]
        );
    }

    #[test]
    fn mid_paragraph_mentions_are_not_headings() {
        let text = "He read\nChapter 2 of the report\nwith care.";
        let book = extract(text.as_bytes()).unwrap();
        assert_eq!(book.chapters.len(), 1);
        assert_eq!(book.chapters[0].title, None);
    }

    #[test]
    fn text_without_headings_is_split_by_size_at_paragraphs() {
        let paragraph = "word ".repeat(1000);
        let text = [paragraph.trim(); 9].join("\n\n");
        let book = extract(text.as_bytes()).unwrap();
        assert_eq!(
            book.chapters
                .iter()
                .map(|c| c.word_count())
                .collect::<Vec<_>>(),
            vec![4000, 4000, 1000]
        );
    }

    #[test]
    fn encodings_are_detected() {
        assert_eq!(decode(b"caf\xe9"), "café");
        assert_eq!(decode("café".as_bytes()), "café");
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend("día".encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decode(&utf16), "día");
        let bomless: Vec<u8> = "Chapter"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(decode(&bomless), "Chapter");
    }

    #[test]
    fn empty_or_blank_files_are_errors() {
        assert_eq!(extract(b""), Err(FormatError::Empty));
        assert_eq!(extract(b"  \n\n "), Err(FormatError::NoText));
    }
}
