//! What extraction may build from one file, whatever its size in bytes.
//!
//! The [`crate::Budget`] bounds the bytes a file inflates to; these bound what the readers
//! build from them. A few megabytes of `<p>a b</p>` repeated are millions of blocks, each a
//! few hundred bytes in memory and then a job of its own in every pass: bounded only by the
//! bytes, a 52 MB upload of them takes the server past 2.8 GB. Each limit leaves room for the
//! largest real books: a 2,000-page novel has about 700,000 words in some 25,000 paragraphs
//! and a few hundred chapters (the corpus books stay below a tenth of every limit; see the
//! test below).
//!
//! The readers count blocks as they build them and stop at [`MAX_BLOCKS`], so memory stays
//! bounded while reading; the other limits are checked on the finished manuscript, whose
//! size the block count and the inflated bytes already bound.

use crate::error::FormatError;
use crate::manuscript::Manuscript;

/// Chapters in one book.
pub const MAX_CHAPTERS: usize = 2_000;
/// Blocks (paragraphs, headings, lines of verse, table cells ...) in one book.
pub const MAX_BLOCKS: usize = 200_000;
/// Blocks in one chapter: a chapter is translated as one job.
pub const MAX_CHAPTER_BLOCKS: usize = 50_000;
/// Words in one book.
pub const MAX_WORDS: u64 = 3_000_000;
/// Characters of text in one block.
pub const MAX_BLOCK_CHARS: usize = 100_000;
/// Bytes of one PDF page's content (its drawing instructions, decompressed, spaces not
/// counted): the reader holds them parsed, at twenty times their size or more. A page of text
/// has a few kilobytes; a page past this is left out, and the book's warnings say so.
pub const MAX_PAGE_CONTENT_BYTES: usize = 2 << 20;
/// Bytes of text a PDF's pages give, before it is cut into blocks: three million words of
/// text in a script of two-byte letters, with room.
pub const MAX_TEXT_BYTES: usize = 64 << 20;

/// The refusal of a reader that has built [`MAX_BLOCKS`] blocks and finds another.
pub(crate) fn too_many_blocks() -> FormatError {
    FormatError::TooLarge(format!(
        "the book has more than {} paragraphs, the limit for one book",
        thousands(MAX_BLOCKS as u64)
    ))
}

/// The refusal of a reader that has found more than [`MAX_CHAPTERS`] chapters.
pub(crate) fn too_many_chapters() -> FormatError {
    FormatError::TooLarge(format!(
        "the book has more than {} chapters, the limit for one book",
        thousands(MAX_CHAPTERS as u64)
    ))
}

/// The refusal of a reader building a block of more than [`MAX_BLOCK_CHARS`].
pub(crate) fn paragraph_too_long() -> FormatError {
    FormatError::TooLarge(format!(
        "a paragraph has more than {} characters, the limit for one paragraph",
        thousands(MAX_BLOCK_CHARS as u64)
    ))
}

/// Refuses a reader's output past [`MAX_BLOCKS`]: for the readers that build blocks in bulk
/// and check between steps.
pub(crate) fn check_blocks(count: usize) -> Result<(), FormatError> {
    if count > MAX_BLOCKS {
        return Err(too_many_blocks());
    }
    Ok(())
}

/// Refuses a reader that has gathered more than [`MAX_TEXT_BYTES`] of text.
pub(crate) fn check_text_bytes(bytes: usize) -> Result<(), FormatError> {
    if bytes > MAX_TEXT_BYTES {
        return Err(FormatError::TooLarge(format!(
            "the book has more than {} MiB of text, the limit for one book",
            MAX_TEXT_BYTES >> 20
        )));
    }
    Ok(())
}

/// Refuses a manuscript past any of the limits, naming the first it passes.
pub(crate) fn check(manuscript: &Manuscript) -> Result<(), FormatError> {
    let too_large = |what: String| Err(FormatError::TooLarge(what));
    if manuscript.chapters.len() > MAX_CHAPTERS {
        return Err(too_many_chapters());
    }
    let mut blocks = 0usize;
    let mut words = 0u64;
    for (index, chapter) in manuscript.chapters.iter().enumerate() {
        if chapter.blocks.len() > MAX_CHAPTER_BLOCKS {
            return too_large(format!(
                "chapter {} has more than {} paragraphs, the limit for one chapter",
                index + 1,
                thousands(MAX_CHAPTER_BLOCKS as u64)
            ));
        }
        blocks += chapter.blocks.len();
        check_blocks(blocks)?;
        for block in &chapter.blocks {
            // Bytes are at least characters: count only a block that may be too long.
            if block.text.len() > MAX_BLOCK_CHARS
                && block.plain_text().chars().count() > MAX_BLOCK_CHARS
            {
                return too_large(format!(
                    "a paragraph of chapter {} has more than {} characters, the limit for one paragraph",
                    index + 1,
                    thousands(MAX_BLOCK_CHARS as u64)
                ));
            }
            words += block.word_count();
        }
        if words > MAX_WORDS {
            return too_large(format!(
                "the book has more than {} words, the limit for one book",
                thousands(MAX_WORDS)
            ));
        }
    }
    Ok(())
}

/// 200000 as "200,000": how the limits read in a message.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manuscript::{Block, BlockKind, Chapter};

    fn book(chapters: usize, blocks: usize, text: &str) -> Manuscript {
        let chapter = Chapter {
            title: None,
            blocks: vec![Block::new(BlockKind::Paragraph, text.to_string()); blocks],
        };
        Manuscript {
            chapters: vec![chapter; chapters],
            ..Manuscript::default()
        }
    }

    fn refusal(manuscript: &Manuscript) -> String {
        check(manuscript).unwrap_err().to_string()
    }

    #[test]
    fn a_book_within_every_limit_passes() {
        assert_eq!(check(&book(MAX_CHAPTERS, 100, "a b")), Ok(()));
    }

    #[test]
    fn each_limit_refuses_the_book_past_it_and_names_itself() {
        assert!(refusal(&book(MAX_CHAPTERS + 1, 1, "a"))
            .contains("more than 2,000 chapters, the limit for one book"));
        assert!(refusal(&book(1, MAX_CHAPTER_BLOCKS + 1, "a"))
            .contains("chapter 1 has more than 50,000 paragraphs, the limit for one chapter"));
        assert!(refusal(&book(5, MAX_CHAPTER_BLOCKS, "a"))
            .contains("more than 200,000 paragraphs, the limit for one book"));
        let long = "a ".repeat(MAX_BLOCK_CHARS / 2 + 1);
        assert!(refusal(&book(1, 1, &long))
            .contains("more than 100,000 characters, the limit for one paragraph"));
        let words = "a ".repeat(1_000);
        assert!(refusal(&book(100, 31, &words))
            .contains("more than 3,000,000 words, the limit for one book"));
    }

    #[test]
    fn markup_does_not_count_towards_a_paragraphs_characters() {
        let marked = format!("<i>{}</i>", "a".repeat(MAX_BLOCK_CHARS));
        assert_eq!(check(&book(1, 1, &marked)), Ok(()));
    }

    #[test]
    fn the_corpus_books_in_every_format_stay_below_a_tenth_of_every_limit() {
        let books = [
            "moby-dick",
            "childrens-literature",
            "wasteland",
            "regime-anticancer-arabic",
        ];
        for book in books {
            for (extension, format) in [
                ("epub", crate::Format::Epub),
                ("docx", crate::Format::Docx),
                ("html", crate::Format::Html),
                ("txt", crate::Format::Txt),
                ("pdf", crate::Format::Pdf),
            ] {
                let name = format!("{book}.{extension}");
                let bytes = match format {
                    crate::Format::Epub => crate::corpus_tests::corpus_epub(&name),
                    _ => crate::corpus_tests::fixture(&name),
                };
                let read = crate::extract(format, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
                let blocks: Vec<&Block> = read.chapters.iter().flat_map(|c| &c.blocks).collect();
                let most_in_a_chapter = read.chapters.iter().map(|c| c.blocks.len()).max();
                let longest = blocks.iter().map(|b| b.plain_text().chars().count()).max();
                assert!(read.chapters.len() * 10 <= MAX_CHAPTERS, "{name}: chapters");
                assert!(blocks.len() * 10 <= MAX_BLOCKS, "{name}: blocks");
                assert!(
                    most_in_a_chapter.unwrap_or(0) * 10 <= MAX_CHAPTER_BLOCKS,
                    "{name}"
                );
                assert!(read.word_count() * 10 <= MAX_WORDS, "{name}: words");
                assert!(
                    longest.unwrap_or(0) * 10 <= MAX_BLOCK_CHARS,
                    "{name}: paragraph"
                );
            }
        }
    }
}
