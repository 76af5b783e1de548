//! The translated book as EPUB: the source package translated in place when it can be, else the
//! manuscript rebuilt.

use super::{epub, epub_in_place, Layout, RenderOptions, Rendition, Sources};
use crate::error::FormatError;
use crate::manuscript::{Chapter, Manuscript};

/// The translated book as EPUB: the source package translated in place when the source was an
/// EPUB (`original`), in `layout`, else the manuscript rebuilt with this crate's own
/// stylesheet. A source whose walk does not give the blocks it was translated from (a book read
/// by another version of the extractor) is rebuilt too, as is one the in-place writer refuses (past a limit),
/// saying so in the warnings. `manuscript` holds the book's metadata and images;
/// `translated[i]` is chapter i's translation, or None to leave it out of a rebuilt book (a
/// partial download) and keep its source text in a book translated in place.
///
/// `sources` is the source text a rebuilt bilingual book sets beside the translation:
/// `sources.chapters[i]` is what `translated[i]` was translated from (one source chapter for
/// each entry of `translated`, a left-out one's included), else
/// [`FormatError::Mismatch`].
///
/// In [`Layout::Bilingual`], an EPUB source is translated in place when it can be; when it
/// cannot (its walk does not match, a limit) or there is no EPUB source, the book is
/// rebuilt bilingual ([`epub::render_bilingual`]) from `sources`, the warnings saying why when
/// the EPUB was refused. Without sources, a bilingual book that cannot be translated in place
/// is refused (a `Mismatch` that says the source text is missing) rather than rebuilt
/// translated only. [`Layout::Translated`] ignores `sources`.
///
/// Both renderers leave nothing active in the file (scripts, event handlers, `javascript:`
/// links, frames, zip entries named to land outside the package: see `render::inert`).
pub fn translated_epub(
    original: Option<&[u8]>,
    manuscript: &Manuscript,
    translated: &[Option<Chapter>],
    sources: Option<Sources<'_>>,
    options: &RenderOptions,
    layout: Layout,
) -> Result<Rendition, FormatError> {
    // The sources are checked only when the book is rebuilt from them: a book translated in
    // place needs no more than its own walk.
    let rebuilds = layout == Layout::Translated || sources.is_some();
    let mut warnings = Vec::new();
    if let Some(original) = original {
        match epub_in_place::render(original, translated, options, layout, options.budget) {
            // The book is better rebuilt than refused, when it can be in its layout.
            Err(e) if rebuilds => warnings.push(match e {
                FormatError::Mismatch(why) => format!(
                    "rebuilt with a plain style: the source EPUB no longer matches its chapters \
                     ({why})"
                ),
                other => format!(
                    "rebuilt with a plain style: the source EPUB could not be translated in \
                     place ({other})"
                ),
            }),
            done => return done,
        }
    }
    let mut rebuilt = manuscript.clone();
    rebuilt.chapters = translated.iter().flatten().cloned().collect();
    let bytes = match layout {
        Layout::Translated => epub::render(&rebuilt, options)?,
        Layout::Bilingual => {
            let sources = sources.ok_or_else(|| {
                FormatError::Mismatch(
                    "a bilingual book rebuilt from its manuscript needs the source text of \
                     every translated chapter, and none was given"
                        .into(),
                )
            })?;
            sources.check_each(translated.iter().map(Option::as_ref), translated.len())?;
            // The sources of the chapters the book keeps.
            let kept: Vec<Chapter> = translated
                .iter()
                .zip(sources.chapters)
                .filter(|(t, _)| t.is_some())
                .map(|(_, s)| s.clone())
                .collect();
            let sources = Sources {
                language: sources.language,
                chapters: &kept,
            };
            epub::render_bilingual(&rebuilt, sources, options)?
        }
    };
    Ok(Rendition { bytes, warnings })
}
