//! Every block of every answer is checked against its source before it may be kept. Each check
//! names one way real models fail (see [`Problem`]); a block that fails is asked for again down
//! the repair ladder (`ladder`), and one that never passes keeps the text it had before the
//! pass and is listed by kind in its chapter's quality record.
//!
//! The checks are built not to cry wolf on a correct translation: language is judged only on
//! blocks long enough to tell, a passage quoted in a third language may stay as it is, and
//! length bounds are wide (a block that swallowed its neighbour is caught by its neighbour's
//! absence as well). `cargo bench -p booktr-translate --bench checks` measures the false-flag
//! rate on the corpus.

use booktr_formats::markup;
use serde::{Deserialize, Serialize};

use crate::adequacy::{self, ShortLine};

/// Why a block's answer cannot be kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Problem {
    /// Not in the answer.
    Missing,
    /// The inline marks differ from the source's, or the markup is not well-formed.
    BrokenMarks,
    /// The source again, or nearly (a few words changed).
    Untranslated,
    /// Written in another language than the target: the source's (a model drifting back), or
    /// another script than the target's.
    WrongLanguage,
    /// Far longer or shorter than a translation of the block can be.
    Length,
    /// A refusal, or remarks about the translation, instead of (or beside) the translation.
    Refusal,
    /// Holds its neighbour's text as well as its own (the neighbour's marker was dropped).
    Merged,
    /// Says the same thing two or three times over.
    Repeated,
    /// Cut off where the answer reached its token limit.
    Truncated,
    /// The same translation as another block whose source differs (a model writing one
    /// paragraph where it was asked for several).
    Duplicate,
    /// Numbers the source has are missing, or numbers it lacks were added (a hallucinated year).
    Numbers,
    /// A name of the book the source has is missing, or one it lacks was added.
    Names,
}

impl Problem {
    pub const ALL: [Problem; 12] = [
        Problem::Missing,
        Problem::BrokenMarks,
        Problem::Untranslated,
        Problem::WrongLanguage,
        Problem::Length,
        Problem::Refusal,
        Problem::Merged,
        Problem::Repeated,
        Problem::Truncated,
        Problem::Duplicate,
        Problem::Numbers,
        Problem::Names,
    ];

    /// The name used in quality records, warnings and payloads.
    pub fn name(self) -> &'static str {
        match self {
            Problem::Missing => "missing",
            Problem::BrokenMarks => "brokenMarks",
            Problem::Untranslated => "untranslated",
            Problem::WrongLanguage => "wrongLanguage",
            Problem::Length => "length",
            Problem::Refusal => "refusal",
            Problem::Merged => "merged",
            Problem::Repeated => "repeated",
            Problem::Truncated => "truncated",
            Problem::Duplicate => "duplicate",
            Problem::Numbers => "numbers",
            Problem::Names => "names",
        }
    }

    /// For people: "3 untranslated", "2 in the wrong language".
    pub fn describe(self) -> &'static str {
        match self {
            Problem::Missing => "not returned",
            Problem::BrokenMarks => "with broken formatting",
            Problem::Untranslated => "untranslated",
            Problem::WrongLanguage => "in the wrong language",
            Problem::Length => "of implausible length",
            Problem::Refusal => "refused or commented on",
            Problem::Merged => "merged with a neighbour",
            Problem::Repeated => "repeated",
            Problem::Truncated => "cut off",
            Problem::Duplicate => "the same as another passage's",
            Problem::Numbers => "with numbers unlike the source's",
            Problem::Names => "with names unlike the source's",
        }
    }
}

/// What the checks need to know besides the block.
#[derive(Debug, Clone)]
pub struct Checks {
    /// The book's source language code ("und" when unknown).
    source_lang: String,
    target_lang: String,
    /// Whether the answers are in a real language (not the offline engine's pseudo-text).
    judge_language: bool,
}

impl Checks {
    pub fn new(source_lang: &str, target_lang: &str, judge_language: bool) -> Checks {
        Checks {
            source_lang: primary(source_lang),
            target_lang: primary(target_lang),
            judge_language,
        }
    }

    fn translating(&self) -> bool {
        self.source_lang != self.target_lang
    }

    /// Checks one block's answer against its source, in any pass: a review that gives the
    /// source back undoes the translation as surely as a first pass that never made one.
    pub fn check(&self, source: &str, answer: Option<&str>) -> Result<(), Problem> {
        let Some(answer) = answer.filter(|a| !a.trim().is_empty() || source.trim().is_empty())
        else {
            return Err(Problem::Missing);
        };
        if marks_problem(source, answer).is_some() {
            return Err(Problem::BrokenMarks);
        }
        // Judged on what is translated: code and `translate="no"` text stay as they are.
        let (source_plain, answer_plain) = (
            markup::translatable_text(source),
            markup::translatable_text(answer),
        );
        if is_refusal_or_remark(&source_plain, &answer_plain) {
            return Err(Problem::Refusal);
        }
        if repeats_itself(&answer_plain) && !repeats_itself(&source_plain) {
            return Err(Problem::Repeated);
        }
        if !self.translating() || self.quoted_in_another_language(&source_plain) {
            return Ok(());
        }
        if nearly_identical(&source_plain, &answer_plain)
            || mostly_copied(&source_plain, &answer_plain)
        {
            return Err(Problem::Untranslated);
        }
        if !self.length_plausible(&source_plain, &answer_plain) {
            return Err(Problem::Length);
        }
        if !adequacy::numbers_match(&source_plain, &answer_plain) {
            return Err(Problem::Numbers);
        }
        if self.judge_language && self.in_wrong_language(&source_plain, &answer_plain) {
            return Err(Problem::WrongLanguage);
        }
        // Too short for language identification: judged by the source language's words.
        if letters(&answer_plain) < MIN_LETTERS_FOR_WORDS {
            match adequacy::short_line_problem(
                &source_plain,
                &answer_plain,
                &self.source_lang,
                &self.target_lang,
            ) {
                Some(ShortLine::AsItWas) => return Err(Problem::Untranslated),
                Some(ShortLine::SourceWords) => return Err(Problem::WrongLanguage),
                None => {}
            }
        }
        Ok(())
    }

    /// Whether the final text of a block is still its source (for the quality record).
    pub fn untranslated(&self, source: &str, text: &str) -> bool {
        let (source_plain, text_plain) = (
            markup::translatable_text(source),
            markup::translatable_text(text),
        );
        self.translating()
            && !source_plain.trim().is_empty()
            && !self.quoted_in_another_language(&source_plain)
            && (nearly_identical(&source_plain, &text_plain)
                || adequacy::short_line_problem(
                    &source_plain,
                    &text_plain,
                    &self.source_lang,
                    &self.target_lang,
                ) == Some(ShortLine::AsItWas))
    }

    /// The answer's length against what a translation of the source into the target could
    /// have: about the same amount of meaning, so about the same length once each script's
    /// density is allowed for, within a factor of 2.5 either way (BabelDOC allows 0.3 to 3
    /// in tokens). Short blocks get room: a heading may become a longer phrase.
    pub fn length_plausible(&self, source: &str, answer: &str) -> bool {
        let (source_len, answer_len) = (letters(source) as f64, letters(answer) as f64);
        let expected =
            source_len * density(&self.target_lang, answer) / density(&self.source_lang, source);
        let too_long = answer_len > expected * MAX_RATIO + SHORT_SLACK;
        let too_short = source_len >= 40.0 && answer_len < expected / MAX_RATIO - 4.0;
        !(too_long || too_short)
    }

    /// Letters a translation of `source` is expected to have (for the neighbour check).
    pub fn expected_letters(&self, source: &str) -> f64 {
        let plain = markup::plain_text(source);
        letters(&plain) as f64 * density(&self.target_lang, "") / density(&self.source_lang, &plain)
    }

    /// A passage in a third language (a German song in an English poem): a translation may
    /// rightly leave it as it is, so it is neither untranslated nor in the wrong language.
    fn quoted_in_another_language(&self, source: &str) -> bool {
        letters(source) >= MIN_LETTERS_TO_JUDGE
            && identify(source)
                .is_some_and(|lang| lang != self.source_lang && self.source_lang != "und")
    }

    /// The wrong-language check alone, on plain text (the false-flag benchmark measures it on
    /// real text).
    pub fn in_wrong_language(&self, source: &str, answer: &str) -> bool {
        // A script is told from a few letters: Chinese where Spanish was asked for is wrong
        // even in a heading, unless the source is in that script too (a name kept as written).
        if letters(answer) >= 4 {
            let found = main_script(answer);
            if let (Some(expected), Some(found)) = (scripts_of(&self.target_lang), found) {
                if !expected.contains(&found) && main_script(source) != Some(found) {
                    return true;
                }
            }
        }
        // Within one script, only a drift back into the source language is judged: other
        // same-script languages are too easily mistaken for each other on a paragraph (names
        // and loanwords), and a model translating into a third language is rare.
        letters(answer) >= MIN_LETTERS_FOR_WORDS
            && identify(answer).is_some_and(|l| l == self.source_lang)
    }
}

/// Languages are told apart only on blocks with this many letters: a heading or a short line
/// of dialogue does not say enough.
const MIN_LETTERS_TO_JUDGE: usize = 24;
/// ...and by their words (not their script) only on this many.
const MIN_LETTERS_FOR_WORDS: usize = 60;
/// A translation is at most this many times as long, or as short, as expected.
const MAX_RATIO: f64 = 2.5;
/// Letters a short block may grow by beyond the ratio ("I" -> "Capítulo I").
const SHORT_SLACK: f64 = 40.0;

/// "pt-BR" -> "pt".
fn primary(lang: &str) -> String {
    lang.split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

fn letters(text: &str) -> usize {
    text.chars().filter(|c| c.is_alphabetic()).count()
}

/// The language whatlang finds in `text` (ISO 639-1 code), for blocks long enough to tell by
/// their words; None for shorter ones. Reports count blocks in the target language with it.
pub fn language_of(text: &str) -> Option<String> {
    if letters(text) < MIN_LETTERS_FOR_WORDS {
        return None;
    }
    whatlang::detect(text).map(|info| booktr_formats::language::code_of(info.lang()))
}

/// The language of `text` as an ISO 639-1 code, when whatlang is sure.
fn identify(text: &str) -> Option<String> {
    let info = whatlang::detect(text)?;
    info.is_reliable()
        .then(|| booktr_formats::language::code_of(info.lang()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    Latin,
    Cyrillic,
    Greek,
    Arabic,
    Hebrew,
    Devanagari,
    Thai,
    Hangul,
    Han,
    Kana,
}

fn script_of(c: char) -> Option<Script> {
    let script = match c as u32 {
        0x41..=0x5A | 0x61..=0x7A | 0xC0..=0x24F | 0x1E00..=0x1EFF => Script::Latin,
        0x370..=0x3FF | 0x1F00..=0x1FFF => Script::Greek,
        0x400..=0x52F => Script::Cyrillic,
        0x590..=0x5FF => Script::Hebrew,
        0x600..=0x6FF | 0x750..=0x77F | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => Script::Arabic,
        0x900..=0x97F => Script::Devanagari,
        0xE00..=0xE7F => Script::Thai,
        0x1100..=0x11FF | 0xAC00..=0xD7AF | 0x3130..=0x318F => Script::Hangul,
        0x3040..=0x30FF => Script::Kana,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF => Script::Han,
        _ => return None,
    };
    Some(script)
}

/// The script most of the text's letters are in.
fn main_script(text: &str) -> Option<Script> {
    let mut counts: Vec<(Script, usize)> = Vec::new();
    for script in text.chars().filter_map(script_of) {
        match counts.iter_mut().find(|(s, _)| *s == script) {
            Some((_, n)) => *n += 1,
            None => counts.push((script, 1)),
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(s, _)| s)
}

/// Whether `lang` is written in the Latin script alone (as listed; an unlisted language is not).
pub fn latin_only(lang: &str) -> bool {
    scripts_of(lang) == Some(&[Script::Latin])
}

/// The scripts a language is written in; None for languages not listed (not judged).
fn scripts_of(lang: &str) -> Option<&'static [Script]> {
    use Script::*;
    let scripts: &'static [Script] = match lang {
        "ru" | "uk" | "bg" | "be" | "mk" | "kk" | "ky" | "mn" | "tg" => &[Cyrillic],
        "sr" => &[Cyrillic, Latin],
        "el" => &[Greek],
        "ar" | "fa" | "ur" | "ps" | "ug" => &[Arabic],
        "he" | "yi" => &[Hebrew],
        "hi" | "mr" | "ne" | "sa" => &[Devanagari],
        "th" => &[Thai],
        "ko" => &[Hangul, Han],
        "ja" => &[Kana, Han],
        "zh" => &[Han],
        "en" | "es" | "fr" | "de" | "it" | "pt" | "nl" | "pl" | "cs" | "sk" | "sv" | "da"
        | "nb" | "nn" | "no" | "fi" | "hu" | "ro" | "tr" | "vi" | "id" | "ms" | "ca" | "hr"
        | "sl" | "lt" | "lv" | "et" | "eo" | "la" | "ga" | "is" | "sq" | "eu" | "gl" | "af"
        | "sw" | "tl" | "az" | "uz" => &[Latin],
        _ => return None,
    };
    Some(scripts)
}

/// Letters per unit of meaning, relative to Latin-script languages: what the length bounds
/// allow for between scripts (Chinese says in one character what English says in three).
/// From the language's script, else from the text's.
fn density(lang: &str, text: &str) -> f64 {
    let script = scripts_of(lang)
        .and_then(|s| s.first().copied())
        .or_else(|| main_script(text));
    match script {
        Some(Script::Han) if lang == "ja" => 0.45,
        Some(Script::Kana) => 0.45,
        Some(Script::Han) => 0.3,
        Some(Script::Hangul) => 0.45,
        Some(Script::Hebrew) => 0.75,
        Some(Script::Arabic) => 0.85,
        Some(Script::Thai) => 0.9,
        _ => 1.0,
    }
}

/// The words of a text, lower-cased, letters and digits only.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// How many protocol markers (`[[12]]`, `[[n]]`: a word or number of up to 8 characters
/// between double brackets) the text holds.
/// Why `text` cannot stand for `source` as far as its inline marks go, for people: markup that
/// is not well-formed, the first mark that differs from the source's, or the translation
/// protocol's markers (`[[12]]`) left in it. None when the marks are the source's. The check of
/// every answer ([`Checks::check`]: `BrokenMarks`) and of an owner's edit.
pub fn marks_problem(source: &str, text: &str) -> Option<String> {
    let theirs = match markup::tags(text) {
        Ok(tags) => tags,
        Err(e) => return Some(format!("the text's markup is not well-formed: {e}")),
    };
    // A source that does not parse was never stored (extractors write valid markup); no text
    // can match it.
    let Ok(ours) = markup::tags(source) else {
        return Some("the source's markup is not well-formed".into());
    };
    if ours != theirs {
        let at = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
        return Some(match (ours.get(at), theirs.get(at)) {
            (Some(expected), Some(found)) => format!(
                "mark {} is {} where the source has {}",
                at + 1,
                markup::tag_text(found),
                markup::tag_text(expected)
            ),
            (Some(expected), None) => format!(
                "the source's mark {} ({}) is missing",
                at + 1,
                markup::tag_text(expected)
            ),
            (None, Some(found)) => format!(
                "mark {} ({}) is not in the source",
                at + 1,
                markup::tag_text(found)
            ),
            (None, None) => "the marks differ from the source's".into(),
        });
    }
    // The protocol's own markers left in a block's text ("[[12]] [[n]] Adieu…"): a model
    // echoing the instructions' placeholder or a marker twice.
    if protocol_markers(text) > protocol_markers(source) {
        return Some("the text holds a passage marker ([[n]]) the source does not".into());
    }
    None
}

fn protocol_markers(text: &str) -> usize {
    text.split("[[")
        .skip(1)
        .filter(|rest| {
            rest.split_once("]]").is_some_and(|(inner, _)| {
                let inner = inner.trim();
                !inner.is_empty()
                    && inner.len() <= 8
                    && inner.chars().all(|c| c.is_alphanumeric() || c == '_')
            })
        })
        .count()
}

/// The answer is the source again, the source with a few words changed, or words of the source
/// alone (four at least). Judged only on sources with enough ordinary words: names, numbers
/// and short headings may stay the same.
fn nearly_identical(source: &str, answer: &str) -> bool {
    // Words not capitalised (every word, in scripts without capitals, and in a text written
    // all in capitals, such as a headline).
    let shouted = !source.chars().any(char::is_lowercase);
    let ordinary = source
        .split_whitespace()
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() && (shouted || !c.is_uppercase()))
        })
        .count();
    let (source_words, answer_words) = (words(source), words(answer));
    if source_words.len() < 3 || ordinary < 2 {
        return false;
    }
    // Words in common, counted with their multiplicity.
    let mut pool = source_words.clone();
    let mut common = 0;
    for word in &answer_words {
        if let Some(at) = pool.iter().position(|w| w == word) {
            pool.swap_remove(at);
            common += 1;
        }
    }
    let longer = source_words.len().max(answer_words.len());
    // Or a part of the source and nothing else: a headline given back with words left out.
    let only_source_words = answer_words.len() >= 4 && common == answer_words.len();
    common * 10 >= longer * 9 || only_source_words
}

/// Half or more of the answer's ordinary words (lower-case, four letters or more: not names,
/// not the short words languages share, such as "no" and "me") are copied from the source,
/// eight at least: a block left half in the source language, as small models do when a
/// paragraph is long. A real translation shares few such words with its source ("animal",
/// "general"; more between English and French, still far from half).
fn mostly_copied(source: &str, answer: &str) -> bool {
    let ordinary = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphabetic())
            .filter(|w| w.chars().count() >= 4 && w.chars().all(char::is_lowercase))
            .map(str::to_string)
            .collect()
    };
    let source_words: std::collections::HashSet<String> = ordinary(source).into_iter().collect();
    let answer_words = ordinary(answer);
    let copied = answer_words
        .iter()
        .filter(|w| source_words.contains(*w))
        .count();
    copied >= 8 && copied * 2 >= answer_words.len()
}

/// Some sentence of at least 20 letters appears twice, or the whole text is one phrase said
/// two to four times.
fn repeats_itself(text: &str) -> bool {
    let mut seen: Vec<String> = Vec::new();
    for sentence in text.split_inclusive(['.', '!', '?', '。', '！', '？']) {
        let folded = words(sentence).join(" ");
        if letters(&folded) < 20 {
            continue;
        }
        if seen.contains(&folded) {
            return true;
        }
        seen.push(folded);
    }
    let all = words(text);
    (2..=4).any(|n| {
        all.len() >= 2 * n
            && all.len().is_multiple_of(n)
            && all
                .chunks(all.len() / n)
                .all(|part| part == &all[..all.len() / n])
    })
}

/// Phrases of a model talking instead of translating, in the languages models chat in. Each
/// is specific enough not to begin a sentence of a book ("no puedo" alone would).
const REFUSALS: &[&str] = &[
    "i'm sorry, but",
    "i am sorry, but",
    "sorry, but i",
    "i cannot translate",
    "i can't translate",
    "i can't help with",
    "i cannot help with",
    "i'm unable to",
    "i am unable to",
    "as an ai",
    "as a language model",
    "i apologize, but",
    "i hope this helps",
    "let me know if you",
    "feel free to ask",
    "lo siento, pero",
    "no puedo traducir",
    "espero que esto",
    "je suis désolé, mais",
    "je ne peux pas traduire",
    "n'hésitez pas",
    "es tut mir leid, aber",
    "ich kann nicht übersetzen",
    "我无法",
    "抱歉",
    "申し訳",
];

/// Words for "translation" in the languages models remark in: an answer that talks about the
/// translation while its source does not is commenting, not translating.
const TRANSLATION_WORDS: &[&str] = &[
    "translat",
    "traducc",
    "traduc",
    "traduz",
    "übersetz",
    "vertaling",
    "перевод",
    "翻译",
    "翻訳",
    "번역",
    "ترجم",
];

/// A refusal, or a remark about the translation, in the answer but not in the source.
pub fn is_refusal_or_remark(source: &str, answer: &str) -> bool {
    let (source, answer) = (source.to_lowercase(), answer.to_lowercase());
    let says = |list: &[&str]| {
        list.iter()
            .any(|p| answer.contains(p) && !source.contains(p))
    };
    says(REFUSALS) || says(TRANSLATION_WORDS) || says(&["(note:", "[note:", "(nota:", "(n. del t"])
}

/// A line of chat around an answer: a refusal, a remark about the translation, or a line that
/// announces what follows ("Spanish:", "Here you go:").
pub fn is_chatter_line(line: &str) -> bool {
    let lower = line.to_lowercase();
    is_refusal_or_remark("", line)
        || (lower.ends_with(':') && lower.split_whitespace().count() <= 8)
        || ["sure", "sure!", "certainly!", "of course!"].contains(&lower.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn es() -> Checks {
        Checks::new("en", "es", true)
    }

    const SOURCE: &str = "Call me <i>Ishmael</i>. Some years ago, never mind how long precisely, having little or no money in my purse, I thought I would sail about a little.";
    const GOOD: &str = "Llamadme <i>Ismael</i>. Hace unos años, no importa cuántos exactamente, con poco o ningún dinero en el bolsillo, pensé que navegaría un poco.";

    #[test]
    fn a_good_translation_passes_every_check() {
        assert_eq!(es().check(SOURCE, Some(GOOD)), Ok(()));
    }

    #[test]
    fn a_marks_problem_names_the_mark_that_differs() {
        let source = "Call me <i>Ishmael</i>.";
        assert_eq!(marks_problem(source, "Llamadme <i>Ismael</i>."), None);
        assert_eq!(
            marks_problem(source, "Llamadme <b>Ismael</b>.").as_deref(),
            Some("mark 1 is <b> where the source has <i>")
        );
        assert_eq!(
            marks_problem(source, "Llamadme Ismael.").as_deref(),
            Some("the source's mark 1 (<i>) is missing")
        );
        assert!(marks_problem(source, "Llamadme <i>Ismael.")
            .is_some_and(|m| m.contains("not well-formed")));
    }

    #[test]
    fn a_protocol_marker_left_in_the_text_is_broken_marks() {
        let fr = Checks::new("en", "fr", true);
        let source = "Your affectionate brother,";
        // Qwen2.5-Coder-1.5B's polish answer for Frankenstein's letter 1 began "[[12]] [[n]] …".
        assert_eq!(
            fr.check(source, Some("[[n]] Votre affectionné frère,")),
            Err(Problem::BrokenMarks)
        );
        assert_eq!(
            fr.check(source, Some("Votre [[13]] affectionné frère,")),
            Err(Problem::BrokenMarks)
        );
        assert_eq!(fr.check(source, Some("Votre affectionné frère,")), Ok(()));
        let wiki = "See [[Whaling]] for more on the trade.";
        assert!(fr
            .check(
                wiki,
                Some("Voir [[Whaling]] pour en savoir plus sur ce métier.")
            )
            .is_ok());
    }

    #[test]
    fn an_echo_or_a_near_echo_is_untranslated() {
        assert_eq!(es().check(SOURCE, Some(SOURCE)), Err(Problem::Untranslated));
        let near = SOURCE.replace("little or no", "no");
        assert_eq!(es().check(SOURCE, Some(&near)), Err(Problem::Untranslated));
        assert!(es()
            .check("<i>Moby-Dick</i>", Some("<i>Moby-Dick</i>"))
            .is_ok());
        assert!(
            es().check(
                "Queequeg, Tashtego, Daggoo.",
                Some("Queequeg, Tashtego, Daggoo.")
            )
            .is_ok(),
            "names stay"
        );
    }

    #[test]
    fn a_block_left_half_in_the_source_language_is_untranslated() {
        let source = "But look! here come more crowds, pacing straight for the water, and seemingly bound for a dive. Strange! Nothing will content them but the extremest limit of the land; loitering under the shady lee of yonder warehouses will not suffice. No. They must get just as nigh the water as they possibly can without falling in. And there they stand—miles of them—leagues. Inlanders all, they come from lanes and alleys, streets and avenues—north, east, south, and west. Yet here they all unite. Tell me, does the magnetic virtue of the needles of the compasses of all those ships attract them thither?";
        // Qwen2.5-Coder-0.5B's answer (scripts/real-model.sh), which whatlang takes for Spanish.
        let spanglish = "Pero look! aquí comienzan más crowds, pacing straight for la playa y parece que estén bound para un dive. Strange! No hay nada que contienen ellos pero el extremest limit de la land; loitering under the shady lee de yonder warehouses will not suffice. No. Ellos deben get just as nigh la playa como pueden sin fallar. Y aquí están—miles de them—leagues. Inlanders all, they come from lanes and alleys, streets and avenues—north, east, south, and west. Yet aquí están todas unite. Tell me, does the magnetic virtue of the needles of the compasses of all those ships attract them thither?";
        assert_eq!(
            es().check(source, Some(spanglish)),
            Err(Problem::Untranslated)
        );
        // Faithful translations share few ordinary words with the English, French the most.
        let translations = [
            ("es", "¡Pero mirad! Aquí llega más gente, que camina derecha hacia el agua y parece dispuesta a zambullirse. ¡Qué extraño! Nada los contenta sino el límite extremo de la tierra; no les basta holgazanear a la sombra de aquellos almacenes. No. Tienen que acercarse al agua tanto como puedan sin caerse. Y allí están, millas de ellos, leguas. Gente de tierra adentro, todos vienen de callejas y callejones, de calles y avenidas, del norte, del este, del sur y del oeste. Y aquí se unen todos. Decidme, ¿los atrae hasta aquí la virtud magnética de las agujas de las brújulas de todos esos barcos?"),
            ("fr", "Mais regardez ! Voici venir d'autres foules, qui marchent droit vers l'eau et semblent prêtes à plonger. Étrange ! Rien ne les contente que la limite extrême de la terre ; flâner à l'ombre de ces entrepôts ne suffit pas. Non. Il leur faut approcher de l'eau aussi près qu'ils le peuvent sans y tomber. Et les voilà, des milles, des lieues. Tous gens de l'intérieur, ils viennent des ruelles et des allées, des rues et des avenues, du nord, de l'est, du sud et de l'ouest. Pourtant ici ils s'unissent tous. Dites-moi, la vertu magnétique des aiguilles des compas de tous ces navires les attire-t-elle ici ?"),
            ("de", "Aber seht! Da kommen noch mehr Menschen, die geradewegs auf das Wasser zugehen und offenbar hineinspringen wollen. Seltsam! Nichts genügt ihnen als die äußerste Grenze des Landes; im Schatten jener Lagerhäuser herumzulungern reicht nicht. Nein. Sie müssen so nah ans Wasser, wie sie nur können, ohne hineinzufallen. Und da stehen sie, meilenweit, meilenlang. Alle aus dem Binnenland, kommen sie aus Gassen und Gässchen, Straßen und Alleen, aus Norden, Osten, Süden und Westen. Und hier vereinen sie sich alle. Sagt mir, zieht die magnetische Kraft der Nadeln in den Kompassen all dieser Schiffe sie hierher?"),
        ];
        for (lang, translation) in translations {
            assert_eq!(
                Checks::new("en", lang, true).check(source, Some(translation)),
                Ok(()),
                "{lang}"
            );
        }
    }

    #[test]
    fn a_passage_in_a_third_language_may_stay_as_it_is() {
        let song = "Frisch weht der Wind der Heimat zu, mein irisch Kind, wo weilest du?";
        assert_eq!(es().check(song, Some(song)), Ok(()));
        let arabic = "هذا الكتاب عن الغذاء والصحة";
        assert_eq!(
            Checks::new("ar", "fr", false).check(arabic, Some(arabic)),
            Err(Problem::Untranslated),
            "a script without capitals is judged too"
        );
        let headline = "“WHALING VOYAGE BY ONE ISHMAEL.";
        assert_eq!(
            es().check(headline, Some(headline)),
            Err(Problem::Untranslated)
        );
        // Qwen2.5-Coder-0.5B's answer to a headline: part of it, in English.
        assert_eq!(
            es().check(
                "“GRAND CONTESTED ELECTION FOR THE PRESIDENCY OF THE UNITED STATES.",
                Some("\"Election for the presidency of the United States.")
            ),
            Err(Problem::Untranslated)
        );
        assert!(es()
            .check(
                "“GRAND CONTESTED ELECTION FOR THE PRESIDENCY OF THE UNITED STATES.",
                Some("“GRAN ELECCIÓN DISPUTADA A LA PRESIDENCIA DE LOS ESTADOS UNIDOS.")
            )
            .is_ok());
    }

    #[test]
    fn another_script_or_the_source_language_is_the_wrong_language() {
        let chinese = "<i>以实玛利</i>。几年前，不管确切地说有多久，我的钱包里几乎没有钱，我想我会航行一下，看看世界上有水的部分。";
        assert_eq!(
            es().check(SOURCE, Some(chinese)),
            Err(Problem::WrongLanguage)
        );
        let english = "Call me <i>Ishmael</i>. Many years back, I do not remember exactly when, with hardly any cash in my wallet, I decided to go sailing for a while.";
        assert_eq!(
            es().check(SOURCE, Some(english)),
            Err(Problem::WrongLanguage)
        );
        let pseudo = Checks::new("en", "es", false);
        assert_eq!(pseudo.check(SOURCE, Some(english)), Ok(()), "not judged");
    }

    #[test]
    fn a_block_with_its_neighbour_or_cut_short_is_out_of_bounds() {
        let heading = "CHAPTER 1. Loomings.";
        let merged = format!("CAPÍTULO 1. Espejismos. {}", markup::plain_text(GOOD));
        assert_eq!(es().check(heading, Some(&merged)), Err(Problem::Length));
        assert_eq!(
            es().check(SOURCE, Some("Llamadme <i>Ismael</i>.")),
            Err(Problem::Length)
        );
        assert!(es().check(heading, Some("CAPÍTULO 1. Espejismos.")).is_ok());
        let japanese = Checks::new("en", "ja", true);
        let ja = "<i>イシュメール</i>と呼んでくれ。何年か前、正確にはいつだったか、財布にほとんどお金がなかったので、少し航海してみようと思った。";
        assert_eq!(japanese.check(SOURCE, Some(ja)), Ok(()));
    }

    #[test]
    fn refusals_remarks_and_repetitions_are_caught() {
        let refusal = "I'm sorry, but I can't help with translating <i>this</i> text.";
        assert_eq!(es().check(SOURCE, Some(refusal)), Err(Problem::Refusal));
        let remark = format!("{GOOD} (Nota: mantuve el nombre.)");
        assert_eq!(es().check(SOURCE, Some(&remark)), Err(Problem::Refusal));
        let tripled = format!("{GOOD} {GOOD} {GOOD}")
            .replace("<i>", "")
            .replace("</i>", "");
        let plain = markup::plain_text(SOURCE);
        assert_eq!(es().check(&plain, Some(&tripled)), Err(Problem::Repeated));
        assert!(
            es().check("I cannot tell why.", Some("No puedo decir por qué."))
                .is_ok(),
            "a sentence that happens to start like a refusal"
        );
    }
}
