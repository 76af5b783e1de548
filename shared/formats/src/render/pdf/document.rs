//! The PDF file around the pages: its document information and how it is written, with what
//! the writer reported.

use printpdf::{PdfDocument, PdfParseErrorSeverity, PdfSaveOptions};

use crate::error::FormatError;
use crate::render::RenderOptions;

/// The document's information dictionary: title, author, identifier and dates.
pub(super) fn describe(
    doc: &mut PdfDocument,
    title: String,
    author: String,
    options: &RenderOptions,
) {
    let made = made_at(&options.modified);
    let info = &mut doc.metadata.info;
    info.document_title = title;
    info.author = author;
    info.creator = "booktr".into();
    info.identifier = options.identifier.clone();
    info.creation_date = made;
    info.modification_date = made;
    info.metadata_date = made;
}

/// Writes the document out, with its language.
pub(super) fn serialise(
    doc: &PdfDocument,
    language: &str,
    writer: &mut WriterNotes,
) -> Result<Vec<u8>, FormatError> {
    // Whole fonts are embedded: subsetting needs printpdf's layout feature, a much larger build.
    let save = PdfSaveOptions {
        subset_fonts: false,
        ..PdfSaveOptions::default()
    };
    let mut messages = Vec::new();
    let mut pdf = doc.to_lopdf_document(&save, &mut messages);
    for message in &messages {
        let serious = message.severity != PdfParseErrorSeverity::Info;
        writer.note("writing the file", serious, &message.msg);
    }
    if save.optimize {
        pdf.compress();
    }
    // The document's language (ISO 32000 `/Lang`), which printpdf does not write: screen
    // readers and search pick their rules by it.
    if let Ok(catalog) = pdf.catalog_mut() {
        catalog.set(
            "Lang",
            pdf_extract::Object::String(
                language.as_bytes().to_vec(),
                pdf_extract::StringFormat::Literal,
            ),
        );
    }
    let mut bytes = Vec::new();
    pdf.save_to(&mut bytes)
        .map_err(|e| FormatError::Malformed(format!("writing the PDF failed: {e}")))?;
    Ok(bytes)
}

/// What printpdf said while it read the fonts and wrote the file. Each message is logged,
/// naming what it was about; its warnings and errors (a font that maps no text to glyphs, a
/// font left out of the file ...) say the file lacks something, so the rendition's warnings
/// say so too. Its notes of what it did ("Image decoded successfully") are logged at debug.
#[derive(Default)]
pub(super) struct WriterNotes {
    serious: Vec<String>,
}

impl WriterNotes {
    pub(super) fn note(&mut self, about: &str, serious: bool, message: &str) {
        if serious {
            tracing::warn!(about, message, "the PDF writer reported a problem");
            self.serious.push(format!("{about}: {message}"));
        } else {
            tracing::debug!(about, message, "the PDF writer's note");
        }
    }

    /// One sentence for the rendition's warnings, naming the first few problems.
    pub(super) fn warning(&self) -> Option<String> {
        let shown = self.serious.iter().take(3).cloned().collect::<Vec<_>>();
        let more = match self.serious.len().saturating_sub(shown.len()) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        (!shown.is_empty()).then(|| {
            format!(
                "the PDF writer reported problems, so parts of the file may not show: {}{more}",
                shown.join("; ")
            )
        })
    }
}

/// When the file was made, from `RenderOptions::modified` (`YYYY-MM-DDThh:mm:ssZ`); the clock
/// when that does not parse, never 1970.
pub(super) fn made_at(modified: &str) -> printpdf::DateTime {
    parse_utc(modified).unwrap_or_else(printpdf::DateTime::now_utc)
}

pub(super) fn parse_utc(text: &str) -> Option<printpdf::DateTime> {
    let text = text.trim().trim_end_matches('Z');
    let (date, time) = text.split_once('T').unwrap_or((text, "00:00:00"));
    let mut date = date.split('-').map(|p| p.parse::<u32>().ok());
    let (year, month, day) = (date.next()??, date.next()??, date.next()??);
    let mut time = time
        .split(':')
        .map(|p| p.split('.').next()?.parse::<u32>().ok());
    let (hour, minute) = (time.next()??, time.next()??);
    let second = time.next().flatten().unwrap_or(0);
    let valid = (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && hour < 24
        && minute < 60
        && second < 61;
    valid.then_some(printpdf::DateTime {
        date: printpdf::Date {
            year: year as i32,
            month: month as u8,
            day: day as u8,
        },
        time: printpdf::Time {
            hour: hour as u8,
            minute: minute as u8,
            second: second as u8,
            millisecond: 0,
        },
        offset: printpdf::Offset {
            hours: 0,
            minutes: 0,
            seconds: 0,
            milliseconds: 0,
        },
    })
}

#[cfg(test)]
mod writer_tests {
    use super::super::*;
    use super::*;

    #[test]
    fn the_built_in_fonts_read_without_a_problem() {
        let mut doc = PdfDocument::new("t");
        let mut writer = WriterNotes::default();
        Layout::with_fonts(&mut doc, &[], &mut writer).unwrap();
        assert_eq!(writer.serious, Vec::<String>::new());
    }

    #[test]
    fn a_problem_the_pdf_writer_reports_becomes_a_warning_of_the_rendition() {
        let mut doc = PdfDocument::new("t");
        let mut writer = WriterNotes::default();
        let mut layout = Layout::with_fonts(&mut doc, &[], &mut writer).unwrap();
        let word = layout.shape("word", Weight::Regular);
        // Text outside a text section, which most viewers do not show.
        let ops = vec![
            Op::SetFont {
                font: PdfFontHandle::External(layout.fonts[word.font].id.clone()),
                size: Pt(BODY),
            },
            Op::ShowText {
                items: vec![TextItem::GlyphIds(word.glyphs.clone())],
            },
        ];
        let page = PdfPage::new(Mm::from(Pt(PAGE_W)), Mm::from(Pt(PAGE_H)), ops);
        serialise(doc.with_pages(vec![page]), "en", &mut writer).unwrap();
        let warning = writer.warning().expect("a warning");
        let expected = "the PDF writer reported problems, so parts of the file may not show: \
                        writing the file: Op::ShowText outside of a text section";
        assert!(warning.starts_with(expected), "{warning}");
    }

    #[test]
    fn the_writers_warning_names_the_first_three_problems_and_counts_the_rest() {
        let mut writer = WriterNotes::default();
        assert_eq!(writer.warning(), None);
        writer.note("reading a font", false, "a note, not a problem");
        assert_eq!(writer.warning(), None);
        for n in 1..=5 {
            writer.note("writing the file", true, &format!("problem {n}"));
        }
        assert_eq!(
            writer.warning().as_deref(),
            Some(
                "the PDF writer reported problems, so parts of the file may not show: writing \
                 the file: problem 1; writing the file: problem 2; writing the file: problem 3 \
                 and 2 more"
            )
        );
    }
}
