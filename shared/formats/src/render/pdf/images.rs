//! The images a PDF rendition draws: decoded within the budget's pixels, each image and the
//! book's together, and why the others were left out.

use std::collections::HashMap;

use printpdf::{PdfDocument, PdfParseErrorSeverity, RawImage, XObjectId};

use crate::budget::Budget;
use crate::manuscript::Manuscript;

/// The images drawn, by asset id: the document's image and its size in pixels.
pub(super) type Images = HashMap<String, (XObjectId, f32, f32)>;

/// An image's size in pixels from its header alone, without decoding it.
pub(super) fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .ok()?
        .into_dimensions()
        .ok()
}

/// Why images were left out of the PDF, by image file name.
#[derive(Debug, Default)]
pub(super) struct LeftOut {
    too_large: Vec<String>,
    past_book_budget: Vec<String>,
    undecodable: Vec<String>,
}

impl LeftOut {
    /// One sentence per reason, naming the first few images.
    pub(super) fn warnings(&self, budget: Budget) -> Vec<String> {
        let name = |names: &[String]| {
            let shown = names.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
            match names.len() {
                0..=5 => shown,
                n => format!("{shown} and {} more", n - 5),
            }
        };
        let count = |n: usize| {
            if n == 1 {
                "1 image".to_string()
            } else {
                format!("{n} images")
            }
        };
        let mut out = Vec::new();
        if !self.too_large.is_empty() {
            out.push(format!(
                "{} left out, each past the limit of {} megapixels per image: {}",
                count(self.too_large.len()),
                budget.image_pixels() / 1_000_000,
                name(&self.too_large)
            ));
        }
        if !self.past_book_budget.is_empty() {
            out.push(format!(
                "{} left out, past the limit of {} megapixels for all of a book's images: {}",
                count(self.past_book_budget.len()),
                budget.book_pixels() / 1_000_000,
                name(&self.past_book_budget)
            ));
        }
        if !self.undecodable.is_empty() {
            out.push(format!(
                "{} left out, not readable as images: {}",
                count(self.undecodable.len()),
                name(&self.undecodable)
            ));
        }
        out
    }
}

/// Decoded images by asset id, with their pixel size, and the images left out: one that cannot
/// be decoded, or would take an image or the book past its pixel budget (read from the header
/// before decoding). A left-out image's alternative text is still printed.
pub(super) fn load_images(
    doc: &mut PdfDocument,
    manuscript: &Manuscript,
    budget: Budget,
) -> (Images, LeftOut) {
    load_images_within(doc, manuscript, budget.image_pixels(), budget.book_pixels())
}

pub(super) fn load_images_within(
    doc: &mut PdfDocument,
    manuscript: &Manuscript,
    max_image_pixels: u64,
    max_book_pixels: u64,
) -> (Images, LeftOut) {
    let mut images = HashMap::new();
    let mut left_out = LeftOut::default();
    let mut pixels_left = max_book_pixels;
    for asset in &manuscript.assets {
        let name = asset.file_name.clone();
        let Some((w, h)) = dimensions(&asset.bytes) else {
            left_out.undecodable.push(name);
            continue;
        };
        let pixels = u64::from(w) * u64::from(h);
        if pixels > max_image_pixels {
            left_out.too_large.push(name);
            continue;
        }
        if pixels > pixels_left {
            left_out.past_book_budget.push(name);
            continue;
        }
        pixels_left -= pixels;
        let mut messages = Vec::new();
        let decoded = RawImage::decode_from_bytes(&asset.bytes, &mut messages);
        // An image that does not decode is left out, and the rendition's warnings say so;
        // what printpdf said of it goes to the log.
        for message in &messages {
            let (image, message_text) = (name.as_str(), message.msg.as_str());
            if message.severity == PdfParseErrorSeverity::Info {
                tracing::debug!(image, message = message_text, "the PDF writer's note");
            } else {
                tracing::warn!(
                    image,
                    message = message_text,
                    "the PDF writer reported a problem"
                );
            }
        }
        match decoded {
            Ok(raw) if raw.width > 0 && raw.height > 0 => {
                let (w, h) = (raw.width as f32, raw.height as f32);
                images.insert(asset.id.clone(), (doc.add_image(&raw), w, h));
            }
            _ => left_out.undecodable.push(name),
        }
    }
    (images, left_out)
}

#[cfg(test)]
mod image_budget_tests {
    use super::*;
    use crate::manuscript::Asset;

    use crate::test_images::png;

    fn asset(id: &str, bytes: Vec<u8>) -> Asset {
        Asset {
            id: id.into(),
            media_type: "image/png".into(),
            file_name: format!("{id}.png"),
            bytes,
        }
    }

    #[test]
    fn images_past_the_pixel_budget_are_left_out_before_they_are_decoded() {
        let manuscript = Manuscript {
            assets: vec![
                asset("small", png(20, 10)),
                asset("huge", png(400, 400)),
                // Each within the per-image limit, together past the book's.
                asset("big1", png(100, 100)),
                asset("big2", png(100, 100)),
                asset("big3", png(100, 100)),
            ],
            ..Manuscript::default()
        };
        let mut doc = PdfDocument::new("t");
        let (images, left_out) = load_images_within(&mut doc, &manuscript, 20_000, 25_000);
        assert!(images.contains_key("small"));
        assert!(!images.contains_key("huge"));
        assert!(images.contains_key("big1") && images.contains_key("big2"));
        assert!(!images.contains_key("big3"), "past the book's budget");
        assert_eq!(left_out.too_large, ["huge.png"]);
        assert_eq!(left_out.past_book_budget, ["big3.png"]);
        let warnings = left_out.warnings(Budget::default());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].starts_with("1 image left out, each past"),
            "{warnings:?}"
        );
        assert!(warnings[0].ends_with(": huge.png"), "{warnings:?}");
    }

    #[test]
    fn an_image_size_is_read_from_its_header() {
        assert_eq!(dimensions(&png(8000, 2)), Some((8000, 2)));
        assert_eq!(dimensions(b"not an image"), None);
    }
}
