//! Every file of the hostile corpus (`tests/hostile/corpus.rs` at the repository's root, shared
//! with the black-box suite) read through the crate's public API: refused naming the limit it
//! hit, or read with its prose and rendered as a PDF with the images past the budget left out
//! and named in its warnings.
#![allow(clippy::panic)]

#[path = "../../../tests/hostile/corpus.rs"]
mod corpus;

use booktr_formats::render::{pdf, RenderOptions};
use booktr_formats::{extract, Budget, Format};
use corpus::{corpus, Answer};

fn format_of(file_name: &str) -> Format {
    match file_name.rsplit('.').next() {
        Some("pdf") => Format::Pdf,
        Some("epub") => Format::Epub,
        Some("docx") => Format::Docx,
        Some("html") => Format::Html,
        Some("txt") => Format::Txt,
        Some("md") => Format::Markdown,
        Some("fb2") => Format::Fb2,
        other => panic!("no format for {other:?}"),
    }
}

/// The images a rendition's warnings count as left out: "2 images left out, ...".
fn images_left_out(warnings: &[String]) -> usize {
    warnings
        .iter()
        .filter_map(|w| w.split_whitespace().next()?.parse::<usize>().ok())
        .sum()
}

#[test]
fn every_hostile_file_is_refused_naming_its_limit_or_read_and_rendered_within_budget() {
    for file in corpus() {
        let name = file.file_name;
        let started = std::time::Instant::now();
        let read = extract(format_of(name), &file.bytes);
        eprintln!("{name}: read in {:?}", started.elapsed());
        match (file.answer, read) {
            (Answer::Refused(words), Err(e)) => {
                assert!(e.to_string().contains(words), "{name}: {e}")
            }
            (Answer::Read { images_left_out: n }, Ok(manuscript)) => {
                assert!(
                    manuscript
                        .chapters
                        .iter()
                        .any(|c| c.plain_text().contains("Ishmael")),
                    "{name}: the prose is lost"
                );
                let options = RenderOptions {
                    language: "en".into(),
                    title: None,
                    author: None,
                    identifier: "urn:hostile".into(),
                    modified: "2026-11-25T00:00:00Z".into(),
                    budget: Budget::default(),
                };
                let rendition = pdf::render(&manuscript, &options, &[])
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                eprintln!("{name}: rendered at {:?}", started.elapsed());
                assert_eq!(
                    images_left_out(&rendition.warnings),
                    n,
                    "{name}: {:?}",
                    rendition.warnings
                );
            }
            (answer, read) => panic!("{name}: expected {answer:?}, got {read:?}"),
        }
    }
}
