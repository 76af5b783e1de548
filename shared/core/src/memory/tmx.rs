//! A language pair's entries as a TMX 1.4 file, and TMX files read back (a CAT tool's, another
//! service's, ours).
//!
//! Written: one `tu` per entry (`tuid` its key, `changedate` its time, its origin and book as
//! `x-booktr-origin` and `x-booktr-book` props), a `tuv` per language; a passage's inline marks
//! are TMX's inline codes, each holding the mark as written (`<bpt i="1">&lt;i&gt;</bpt>`,
//! `<ept i="1">&lt;/i&gt;</ept>`, `<ph>&lt;br/&gt;</ph>`), so a tool that reads the text of a
//! segment reads our markup, and one that knows TMX reads codes.
//!
//! Read: every `tu` with a `tuv` in each of the pair's languages (`xml:lang`, or TMX 1.1's
//! `lang`; `en-US` counts as `en` when the pair names no region). A segment's text is its
//! text; its inline codes are marks when together with the text they are our markup, else
//! they are left out (a code is the source tool's, not words; a unit whose two segments then
//! differ in marks is refused as any passage is). Refused: a file over
//! [`MAX_TMX_BYTES`] or of more than [`super::MAX_ENTRIES`] units, one that is not well-formed,
//! a DOCTYPE with an internal subset (where entities would be declared; an external DTD is
//! never fetched), and any entity but XML's five and character references.

use booktr_formats::markup::{self, Piece, Tag};
use quick_xml::escape::escape;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::model::{Entry, Pair, MAX_ENTRIES};
use crate::types::LanguageCode;

/// The largest TMX file read, and the most a written file holds (another is written from where
/// it stopped).
pub const MAX_TMX_BYTES: usize = 4 * 1024 * 1024;

/// A TMX file written from a pair's entries.
pub struct Written {
    pub tmx: String,
    /// How many of the entries it holds: all, or those that fit in [`MAX_TMX_BYTES`] (at
    /// least one).
    pub entries: usize,
}

/// The entries (in order) as a TMX 1.4 file, as many as fit in `max_bytes`.
pub fn write(pair: &Pair, entries: &[Entry], max_bytes: usize) -> Written {
    let mut tmx = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tmx version=\"1.4\">\n  <header \
         creationtool=\"booktr\" creationtoolversion=\"{}\" segtype=\"paragraph\" \
         o-tmf=\"booktr\" adminlang=\"en\" srclang=\"{}\" datatype=\"xml\"/>\n  <body>\n",
        env!("CARGO_PKG_VERSION"),
        escape(pair.source.as_str())
    );
    const END: &str = "  </body>\n</tmx>\n";
    let mut written = 0;
    for entry in entries {
        let unit = unit(pair, entry);
        if written > 0 && tmx.len() + unit.len() + END.len() > max_bytes {
            break;
        }
        tmx.push_str(&unit);
        written += 1;
    }
    tmx.push_str(END);
    Written {
        tmx,
        entries: written,
    }
}

fn unit(pair: &Pair, entry: &Entry) -> String {
    let when = entry.updated_at.format("%Y%m%dT%H%M%SZ");
    let mut unit = format!(
        "    <tu tuid=\"{}\" creationdate=\"{when}\" changedate=\"{when}\">\n      <prop \
         type=\"x-booktr-origin\">{}</prop>\n",
        escape(entry.id.as_str()),
        entry.origin.name()
    );
    if let Some(book) = &entry.book_id {
        unit.push_str(&format!(
            "      <prop type=\"x-booktr-book\">{}</prop>\n",
            escape(book.as_str())
        ));
    }
    for (lang, text) in [(&pair.source, &entry.source), (&pair.target, &entry.target)] {
        unit.push_str(&format!(
            "      <tuv xml:lang=\"{}\"><seg>{}</seg></tuv>\n",
            escape(lang.as_str()),
            segment(text)
        ));
    }
    unit.push_str("    </tu>\n");
    unit
}

/// A passage's markup as a TMX segment: its text escaped, its marks as inline codes.
fn segment(text: &str) -> String {
    let Ok(pieces) = markup::parse(text) else {
        // Never stored (entries are checked), but never lose text either.
        return escape(text).into_owned();
    };
    let (mut out, mut open, mut next) = (String::new(), Vec::new(), 1);
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(&escape(t.as_str())),
            Piece::Tag(tag) => {
                let code = escape(markup::tag_text(&tag)).into_owned();
                match tag {
                    Tag::Open { .. } => {
                        out.push_str(&format!("<bpt i=\"{next}\">{code}</bpt>"));
                        open.push(next);
                        next += 1;
                    }
                    Tag::Close(_) => {
                        let i = open.pop().unwrap_or(0);
                        out.push_str(&format!("<ept i=\"{i}\">{code}</ept>"));
                    }
                    Tag::Empty { .. } | Tag::Num { .. } => {
                        out.push_str(&format!("<ph>{code}</ph>"));
                    }
                }
            }
        }
    }
    out
}

/// A TMX file that cannot be read, with why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadTmx(pub String);

/// What a TMX file holds for a pair.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Units {
    /// (source, target) in the manuscript's markup, in the file's order.
    pub pairs: Vec<(String, String)>,
    /// Units without a segment in each of the pair's languages.
    pub skipped: usize,
}

/// The units of a TMX file in `pair`'s languages.
pub fn read(text: &str, pair: &Pair) -> Result<Units, BadTmx> {
    if text.len() > MAX_TMX_BYTES {
        return Err(BadTmx(format!(
            "the TMX file is larger than {} MB",
            MAX_TMX_BYTES / (1024 * 1024)
        )));
    }
    let mut reader = Reader::from_str(text);
    reader.config_mut().expand_empty_elements = true;
    let mut units = Units::default();
    let mut seen_tmx = false;
    let mut unit: Option<Unit> = None;
    // Elements open (a segment's own are read with it).
    let mut open = 0usize;
    loop {
        let event = reader.read_event().map_err(|e| bad(text, &reader, &e))?;
        match &event {
            Event::Start(e) if e.local_name().as_ref() != b"seg" => open += 1,
            Event::End(_) => open = open.saturating_sub(1),
            _ => {}
        }
        match event {
            Event::Eof if open > 0 => {
                return Err(BadTmx(
                    "the TMX file ends before its elements are closed".into(),
                ))
            }
            Event::Eof => break,
            Event::DocType(d) if d.contains(&b'[') => {
                return Err(BadTmx(
                    "a TMX file with a DOCTYPE that declares anything (entities) is not taken"
                        .into(),
                ))
            }
            Event::Start(e) => match e.local_name().as_ref() {
                b"tmx" => seen_tmx = true,
                b"tu" => unit = Some(Unit::default()),
                b"tuv" => {
                    if let Some(unit) = unit.as_mut() {
                        unit.lang = language(&e).and_then(|lang| side(pair, &lang));
                    }
                }
                b"seg" => {
                    if let Some(unit) = unit.as_mut() {
                        let segment = read_segment(&mut reader, text)?;
                        match unit.lang {
                            Some(Side::Source) => unit.source = Some(segment),
                            Some(Side::Target) => unit.target = Some(segment),
                            None => {}
                        }
                    }
                }
                _ => {}
            },
            Event::End(e) if e.local_name().as_ref() == b"tu" => {
                match unit.take() {
                    Some(Unit {
                        source: Some(source),
                        target: Some(target),
                        ..
                    }) => units.pairs.push((source, target)),
                    _ => units.skipped += 1,
                }
                if units.pairs.len() as u64 > MAX_ENTRIES {
                    return Err(BadTmx(format!(
                        "the TMX file holds more than {MAX_ENTRIES} units, the most a pair holds"
                    )));
                }
            }
            _ => {}
        }
    }
    if !seen_tmx {
        return Err(BadTmx("not a TMX file: no <tmx> element".into()));
    }
    Ok(units)
}

#[derive(Default)]
struct Unit {
    lang: Option<Side>,
    source: Option<String>,
    target: Option<String>,
}

#[derive(Clone, Copy)]
enum Side {
    Source,
    Target,
}

/// A `tuv`'s language, parsed.
fn language(tuv: &BytesStart<'_>) -> Option<LanguageCode> {
    tuv.attributes().flatten().find_map(|a| {
        let name = a.key.as_ref();
        (name == b"xml:lang" || name == b"lang")
            .then(|| a.unescape_value().ok())
            .flatten()
            .and_then(|v| LanguageCode::parse(&v).ok())
    })
}

/// Which of the pair's languages `lang` is: the same code, or the same language with a region
/// the pair does not name.
fn side(pair: &Pair, lang: &LanguageCode) -> Option<Side> {
    let lang = lang.as_str();
    let primary = lang.split('-').next().unwrap_or(lang);
    let is = |code: &str| code == lang || (!code.contains('-') && code == primary);
    if is(&pair.source) {
        Some(Side::Source)
    } else if is(&pair.target) {
        Some(Side::Target)
    } else {
        None
    }
}

/// The segment the reader is in, as markup, up to its end tag: with its inline codes as marks
/// when together they are our markup, else its text alone.
fn read_segment(reader: &mut Reader<&[u8]>, text: &str) -> Result<String, BadTmx> {
    let (mut marked, mut plain) = (String::new(), String::new());
    // Inside an inline code: its name and the code's text so far.
    let mut code: Option<(Vec<u8>, String)> = None;
    let mut depth = 0usize;
    loop {
        let event = reader.read_event().map_err(|e| bad(text, reader, &e))?;
        let words = match event {
            Event::Eof => return Err(BadTmx("the TMX file ends inside a segment".into())),
            Event::Text(t) => t
                .unescape()
                .map_err(|e| bad(text, reader, &e))?
                .into_owned(),
            Event::CData(c) => String::from_utf8_lossy(&c).into_owned(),
            Event::Start(e) => {
                depth += 1;
                let name = e.local_name().as_ref().to_vec();
                if code.is_none() && matches!(name.as_slice(), b"bpt" | b"ept" | b"ph" | b"it") {
                    code = Some((name, String::new()));
                }
                continue;
            }
            Event::End(e) => {
                if depth == 0 {
                    break;
                }
                depth -= 1;
                if code
                    .as_ref()
                    .is_some_and(|(name, _)| name == e.local_name().as_ref())
                {
                    if let Some((_, held)) = code.take() {
                        marked.push_str(&held);
                    }
                }
                continue;
            }
            _ => continue,
        };
        match code.as_mut() {
            Some((_, held)) => held.push_str(&words),
            None => {
                marked.push_str(&markup::escape_text(&words));
                plain.push_str(&markup::escape_text(&words));
            }
        }
    }
    // One of our marks stays a mark; another tool's codes are not words.
    Ok(match markup::parse(&marked) {
        Ok(_) => marked,
        Err(_) => plain,
    })
}

/// A reading error with the line it is on.
fn bad(text: &str, reader: &Reader<&[u8]>, e: &dyn std::fmt::Display) -> BadTmx {
    let at = usize::try_from(reader.buffer_position())
        .unwrap_or(text.len())
        .min(text.len());
    let line = text.as_bytes()[..at]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1;
    BadTmx(format!(
        "the TMX file is not well-formed at line {line}: {e}"
    ))
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::memory::{passage_id, Origin};

    fn entry(source: &str, target: &str) -> Entry {
        Entry {
            id: passage_id(source),
            source: source.into(),
            target: target.into(),
            origin: Origin::Model,
            book_id: Some("b1".into()),
            updated_at: Utc::now(),
        }
    }

    #[test]
    fn a_written_file_reads_back_the_same_marks_and_escapes_included() {
        let pair = Pair::of("en", "es");
        let entries = vec![
            entry(
                "Call me <i>Ishmael</i> &amp; <a href=\"#n1\">co</a>.<br/>Well.",
                "Llámame <i>Ismael</i> y <a href=\"#n1\">cía</a>.<br/>Bien.",
            ),
            entry("Tom &lt;b&gt; Jerry", "Tom &lt;b&gt; Jerry"),
        ];
        let written = write(&pair, &entries, MAX_TMX_BYTES);
        assert_eq!(written.entries, 2);
        assert!(written
            .tmx
            .contains("<bpt i=\"1\">&lt;i&gt;</bpt>Ishmael<ept i=\"1\">"));
        let read = read(&written.tmx, &pair).unwrap();
        let expected: Vec<(String, String)> = entries
            .iter()
            .map(|e| (e.source.clone(), e.target.clone()))
            .collect();
        assert_eq!(read.pairs, expected);
        assert_eq!(read.skipped, 0);
    }

    #[test]
    fn a_file_stops_at_its_size_and_holds_at_least_one_entry() {
        let pair = Pair::of("en", "es");
        let entries: Vec<Entry> = (0..10)
            .map(|i| entry(&format!("Passage {i}."), &format!("Pasaje {i}.")))
            .collect();
        let one = write(&pair, &entries, 10);
        assert_eq!(one.entries, 1);
        let all = write(&pair, &entries, MAX_TMX_BYTES);
        let some = write(&pair, &entries, all.tmx.len() - 10);
        assert_eq!(some.entries, 9);
        assert!(some.tmx.len() <= all.tmx.len() - 10);
    }

    #[test]
    fn another_tools_file_is_read_by_language_and_its_own_codes_left_out() {
        let tmx = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE tmx SYSTEM "tmx14.dtd">
<tmx version="1.4"><header srclang="en-US" datatype="plaintext"/><body>
<tu><tuv xml:lang="en-US"><seg>A <bpt i="1">&lt;span style="x"&gt;</bpt>bold<ept i="1">&lt;/span&gt;</ept> move &amp; more</seg></tuv>
<tuv lang="ES"><seg>Un gesto <![CDATA[audaz]]> &#233;</seg></tuv></tu>
<tu><tuv xml:lang="fr"><seg>Un geste</seg></tuv><tuv xml:lang="en"><seg>A move</seg></tuv></tu>
</body></tmx>"#;
        let read = read(tmx, &Pair::of("en", "es")).unwrap();
        assert_eq!(
            read.pairs,
            [(
                "A bold move &amp; more".to_string(),
                "Un gesto audaz é".to_string()
            )]
        );
        assert_eq!(read.skipped, 1);
    }

    #[test]
    fn entities_declared_in_the_file_and_broken_files_are_refused() {
        let pair = Pair::of("en", "es");
        let declared = r#"<?xml version="1.0"?><!DOCTYPE tmx [<!ENTITY lol "lol">]><tmx><body><tu><tuv xml:lang="en"><seg>&lol;</seg></tuv></tu></body></tmx>"#;
        assert!(read(declared, &pair).unwrap_err().0.contains("DOCTYPE"));
        let undeclared =
            r#"<tmx><body><tu><tuv xml:lang="en"><seg>&lol;</seg></tuv></tu></body></tmx>"#;
        assert!(read(undeclared, &pair).is_err());
        let broken = "<tmx><body><tu>\n<tuv xml:lang=\"en\"><seg>x</tuv></tu></body></tmx>";
        assert!(read(broken, &pair).unwrap_err().0.contains("line 2"));
        assert!(read("<tmx><body><tu>", &pair).is_err());
        assert!(read("<html/>", &pair).is_err());
    }
}
