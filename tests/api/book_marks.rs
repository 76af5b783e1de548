//! The book's own marks (issue 48, item 1): every corpus book translated by the offline engine
//! through the three passes, as a run does chapter by chapter, then written as the service
//! writes it. Its EPUB, translated in place, has every inline element of the source, counted by
//! element and class (The Waste Land's 43 line numbers among them); its PDF sets each line
//! number at its line's end, apart from the verse. A model that drops the line numbers, or
//! writes them as words, has them put back.

use std::collections::HashMap;

use async_trait::async_trait;
use booktr_formats::manuscript::{BlockKind, Chapter, Manuscript};
use booktr_formats::markup::{self, Piece, Tag};
use booktr_formats::render::{self, Layout, RenderOptions};
use booktr_formats::structure::count_inline_epub;
use booktr_translate::ladder::Ladder;
use booktr_translate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};
use booktr_translate::offline::OfflineEngine;
use booktr_translate::pipeline::{translate_chapter, ChapterInput, PipelineConfig};

use crate::helpers::corpus;

fn options(language: &str) -> RenderOptions {
    RenderOptions {
        language: language.into(),
        title: Some("Translated".into()),
        author: None,
        identifier: "urn:booktr:book-marks".into(),
        modified: "2026-01-01T00:00:00Z".into(),
        budget: booktr_formats::Budget::default(),
    }
}

/// Every chapter of `book` through the offline engine's three passes.
async fn translated(book: &Manuscript, from: &str, to: &str) -> Vec<Option<Chapter>> {
    translated_by(&OfflineEngine, book, from, to).await
}

/// Every chapter of `book` through `model`'s three passes, none of its blocks flagged.
async fn translated_by(
    model: &dyn ChatModel,
    book: &Manuscript,
    from: &str,
    to: &str,
) -> Vec<Option<Chapter>> {
    let (ladder, ledger, config) = (Ladder::default(), HashMap::new(), PipelineConfig::default());
    let mut chapters = Vec::new();
    for chapter in &book.chapters {
        let input = ChapterInput {
            blocks: &chapter.blocks,
            source_lang: from,
            target_lang: to,
            glossary: &[],
            ledger: &ledger,
            ladder: &ladder,
            instruction: None,
            memory: &booktr_translate::memory::NOTHING,
        };
        let done = translate_chapter(model, &input, &config)
            .await
            .expect("the offline engine answers");
        assert!(
            done.quality.flagged_blocks().is_empty(),
            "{:?}: {:?}",
            chapter.title,
            done.quality.flag_counts()
        );
        chapters.push(Some(Chapter {
            title: chapter.title.clone(),
            blocks: done.blocks,
        }));
    }
    chapters
}

/// The number of each verse line that ends with one, and the line's last word as printed.
pub(crate) fn numbered_lines(book: &Manuscript) -> Vec<(String, String)> {
    let notes = book.note_numbers();
    let mut lines = Vec::new();
    for block in book.chapters.iter().flat_map(|c| &c.blocks) {
        if block.kind != BlockKind::Line {
            continue;
        }
        let mut pieces = markup::parse(&block.text).unwrap();
        while matches!(pieces.last(), Some(Piece::Text(t)) if t.trim().is_empty()) {
            pieces.pop();
        }
        let Some(Piece::Tag(Tag::Num { text: number, .. })) = pieces.pop() else {
            continue;
        };
        let printed: String = pieces
            .into_iter()
            .map(|p| match p {
                Piece::Text(t) | Piece::Tag(Tag::Num { text: t, .. }) => t,
                Piece::Tag(Tag::Empty {
                    name: "ref",
                    attr: Some(id),
                }) => format!("[{}]", notes[&id]),
                Piece::Tag(Tag::Empty { .. }) => " ".into(),
                Piece::Tag(_) => String::new(),
            })
            .collect();
        let last = printed.split_whitespace().last().unwrap_or_default();
        lines.push((last.to_string(), number));
    }
    lines
}

/// The PDF's text as `pdftotext` reads it (`-layout`: each line as it stands on the page).
pub(crate) fn pdftotext(pdf: &[u8], layout: bool) -> String {
    // A folder of each call's own: tests that run at the same time write their own PDF.
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("book.pdf");
    std::fs::write(&path, pdf).unwrap();
    let mut command = std::process::Command::new("pdftotext");
    if layout {
        command.arg("-layout");
    }
    let out = command
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext is not installed: run scripts/test.sh, which installs it");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn every_corpus_books_inline_elements_survive_the_offline_engines_passes_into_its_epub() {
    for (name, from, to) in [
        ("moby-dick.epub", "en", "fr"),
        ("wasteland.epub", "en", "fr"),
        ("childrens-literature.epub", "en", "fr"),
        ("regime-anticancer-arabic.epub", "ar", "en"),
    ] {
        let source = corpus(name);
        let book = booktr_formats::epub::extract(&source).unwrap();
        let chapters = translated(&book, from, to).await;
        let epub = render::translated_epub(
            Some(&source),
            &book,
            &chapters,
            None,
            &options(to),
            Layout::Translated,
        )
        .unwrap();
        assert!(
            !epub.warnings.iter().any(|w| w.contains("original text")),
            "{name}: {:?}",
            epub.warnings
        );
        let (before, after) = (
            count_inline_epub(&source).unwrap(),
            count_inline_epub(&epub.bytes).unwrap(),
        );
        assert_eq!(after, before, "{name}: inline elements by (element, class)");
        if name == "wasteland.epub" {
            let lnum = ("span".to_string(), "lnum".to_string());
            assert_eq!(after.get(&lnum), Some(&43), "{name}: {after:?}");
            // Each still holds its number, and none of them is glued into a verse.
            let again = booktr_formats::epub::extract(&epub.bytes).unwrap();
            let numbers: Vec<String> = numbered_lines(&again).into_iter().map(|(_, n)| n).collect();
            let sources: Vec<String> = numbered_lines(&book).into_iter().map(|(_, n)| n).collect();
            assert_eq!(numbers, sources, "{name}");
            assert!(numbers.contains(&"10".to_string()) && numbers.contains(&"70".to_string()));
        }
    }
}

#[tokio::test]
async fn the_waste_lands_line_numbers_stand_at_their_lines_end_in_the_translated_pdf() {
    let book = booktr_formats::epub::extract(&corpus("wasteland.epub")).unwrap();
    let mut translation = book.clone();
    translation.chapters = translated(&book, "en", "fr")
        .await
        .into_iter()
        .flatten()
        .collect();
    let numbered = numbered_lines(&translation);
    assert_eq!(numbered.len(), 43);
    let pdf = render::pdf::render(&translation, &options("fr"), &[])
        .unwrap()
        .bytes;
    let text = pdftotext(&pdf, false);
    let layout = pdftotext(&pdf, true);
    for (last, number) in &numbered {
        // "…into the Hofgàrtén,10" is what the book printed before.
        assert!(
            !text.contains(&format!("{last}{number}")),
            "{number} glued to {last:?}"
        );
        // By position: the verse's line ends with its number, apart from the last word.
        let ends_apart = |line: &str| {
            line.trim_end()
                .strip_suffix(number.as_str())
                .is_some_and(|rest| {
                    rest.len() > rest.trim_end().len() && rest.trim_end().ends_with(last.as_str())
                })
        };
        assert!(
            layout.lines().any(ends_apart),
            "no line ends with {last:?} and then {number}"
        );
    }
}

/// The offline engine, with every `<num/>` mark of its answers left out, or (every other one)
/// written as its text alone, as a model that takes the number for words does.
struct LosesNumbers;

#[async_trait]
impl ChatModel for LosesNumbers {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut answer = OfflineEngine.complete(request).await?;
        let mut text = String::with_capacity(answer.text.len());
        let mut rest = answer.text.as_str();
        let mut n = 0;
        while let Some(at) = rest.find("<num ") {
            text.push_str(&rest[..at]);
            let end = rest[at..].find("/>").map_or(rest.len(), |e| at + e + 2);
            if n % 2 == 1 {
                let tag = markup::tags(&rest[at..end]).unwrap();
                if let [Tag::Num { text: number, .. }] = &tag[..] {
                    text.push_str(number);
                }
            }
            n += 1;
            rest = &rest[end..];
        }
        text.push_str(rest);
        answer.text = text;
        Ok(answer)
    }

    fn name(&self) -> &str {
        "loses-numbers"
    }

    fn writes_language(&self) -> bool {
        false
    }
}

#[tokio::test]
async fn line_numbers_a_model_drops_or_writes_as_words_are_put_back_unflagged() {
    let book = booktr_formats::epub::extract(&corpus("wasteland.epub")).unwrap();
    let chapters = translated_by(&LosesNumbers, &book, "en", "fr").await;
    let mut translation = book.clone();
    translation.chapters = chapters.into_iter().flatten().collect();
    let numbers = |book: &Manuscript| -> Vec<String> {
        numbered_lines(book).into_iter().map(|(_, n)| n).collect()
    };
    assert_eq!(numbers(&translation), numbers(&book));
    assert_eq!(numbers(&book).len(), 43);
    // Translated, the number not among the verse's words.
    let hofgarten = translation
        .chapters
        .iter()
        .flat_map(|c| &c.blocks)
        .find(|b| b.text.contains("Höfgàrtén,"))
        .expect("the line of the Hofgarten, translated");
    assert!(
        hofgarten
            .text
            .ends_with(r#",<num class="lnum" text="10"/>"#),
        "{}",
        hofgarten.text
    );
}
