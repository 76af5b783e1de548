//! Whether a block's translation belongs to *that* block: the checks that compare an answer with
//! its own source beyond its language and marks (`checks`), and those that compare the blocks of
//! a chapter with each other.
//!
//! - numbers: the numbers of two digits or more in the source are in the translation, and the
//!   translation has none the source lacks (a hallucinated year);
//! - names: the translation names none of the book's names (capitalised entries of the
//!   glossary and term list) that the source lacks (the names the source has are the glossary
//!   check's);
//! - short lines: headings and lines too short for language identification are untranslated
//!   when they come back as they were and hold words of the source language, and in the wrong
//!   language when they keep the source language's function words;
//! - the same translation for different sources: two blocks whose sources differ and whose
//!   answers are the same or nearly (a model writing one paragraph where it was asked for
//!   several) are both wrong;
//! - length out of proportion: the ratio of translation to source learned from the chapter's
//!   own accepted blocks, with a floor below which blocks are not judged by it.

use std::collections::{BTreeMap, BTreeSet};

use crate::glossary::contains_term;

/// Numbers in `text` (markup already removed), each as its digits: "1,000", "1.000" and
/// "1 000" are all "1000", so the grouping a language writes them with does not matter.
/// Numbers of one digit are left out: "1" often becomes "one" or "un" in a translation.
pub fn numbers(text: &str) -> BTreeSet<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = BTreeSet::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let mut digits = String::new();
        let mut group = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_ascii_digit() {
                digits.push(c);
                group += 1;
                i += 1;
                continue;
            }
            // A separator inside a number: a decimal point or comma before a digit, or a
            // thin or plain space between groups of three.
            let next_digits = chars[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            let inside = match c {
                '.' | ',' | '\'' => next_digits > 0,
                ' ' | '\u{a0}' | '\u{202f}' => next_digits == 3 && group <= 3,
                _ => false,
            };
            if !inside {
                break;
            }
            group = 0;
            i += 1;
        }
        if digits.len() >= 2 {
            found.insert(digits);
        }
    }
    found
}

/// Whether the answer carries the source's numbers and no others.
pub fn numbers_match(source: &str, answer: &str) -> bool {
    numbers(source) == numbers(answer)
}

/// A name of the book and its translation (a capitalised glossary or term list entry).
pub struct Name<'a> {
    pub source: &'a str,
    pub target: &'a str,
}

/// The names of `entries` (source, target): the entries whose source and target both begin
/// with a capital, which is what a name is in the scripts that have capitals.
pub fn names<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<Name<'a>> {
    let capital = |s: &str| s.chars().next().is_some_and(char::is_uppercase);
    entries
        .into_iter()
        .filter(|(source, target)| capital(source) && capital(target))
        .map(|(source, target)| Name { source, target })
        .collect()
}

/// Whether the answer names no one the source does not: no name's translation is in the
/// answer whose source the source lacks in any case (a glossary applies to "part" as to
/// "Part"), unless the source has that same word (a name kept as written). A name of the source
/// missing from the answer is the glossary check's (`glossary_violations`): reported, and given
/// to the review to fix; asked for again here, it left a real model's good paragraph in English
/// when the model wrote "Margaret" where the term list said "Marguerite".
pub fn names_match(names: &[Name<'_>], source: &str, answer: &str) -> bool {
    names.iter().all(|name| {
        !has_name(answer, name.target, false)
            || has_name(source, name.source, true)
            || has_name(source, name.target, false)
    })
}

/// A name at the start of a word, capital included unless `any_case` (a name's translation
/// may be an ordinary word written small elsewhere: "Hope", "hope"), its last letters free:
/// languages decline names ("Victors", "Алисы" for "Алиса"). A name of several words is
/// matched as a phrase, in any case.
fn has_name(text: &str, name: &str, any_case: bool) -> bool {
    if name.contains(' ') {
        return contains_term(text, name);
    }
    let chars = name.chars().count();
    let stem: String = name.chars().take(chars.saturating_sub(2).max(4)).collect();
    let (text, stem) = if any_case {
        (text.to_lowercase(), stem.to_lowercase())
    } else {
        (text.to_string(), stem)
    };
    text.match_indices(stem.as_str()).any(|(at, _)| {
        !text[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
    })
}

/// Function words of a language (and, for headings, the words books' structure is named
/// with): a short line that keeps them is still in that language.
fn function_words(lang: &str) -> &'static [&'static str] {
    match lang {
        "en" => EN_WORDS,
        "fr" => FR_WORDS,
        "es" => ES_WORDS,
        "de" => DE_WORDS,
        "it" => IT_WORDS,
        "pt" => PT_WORDS,
        "nl" => NL_WORDS,
        _ => &[],
    }
}

const EN_WORDS: &[&str] = &[
    "the",
    "and",
    "of",
    "with",
    "that",
    "this",
    "which",
    "from",
    "his",
    "their",
    "were",
    "have",
    "had",
    "what",
    "when",
    "where",
    "who",
    "you",
    "your",
    "been",
    "it",
    "is",
    "to",
    "for",
    "was",
    "are",
    "not",
    "but",
    "in",
    "on",
    "chapter",
    "letter",
    "book",
    "part",
    "volume",
    "preface",
    "contents",
    "introduction",
    "epilogue",
    "prologue",
    "appendix",
    "notes",
    "end",
];

const FR_WORDS: &[&str] = &[
    "le", "la", "les", "des", "du", "et", "est", "une", "un", "dans", "pour", "qui", "que", "avec",
    "sur", "pas", "ce", "il", "elle", "nous", "vous", "je", "au", "aux", "chapitre", "lettre",
    "livre", "partie", "tome", "préface", "fin",
];

const ES_WORDS: &[&str] = &[
    "el",
    "la",
    "los",
    "las",
    "del",
    "y",
    "a",
    "es",
    "una",
    "un",
    "en",
    "para",
    "que",
    "con",
    "por",
    "no",
    "se",
    "lo",
    "su",
    "al",
    "capítulo",
    "carta",
    "libro",
    "parte",
    "tomo",
    "prólogo",
    "fin",
];

const DE_WORDS: &[&str] = &[
    "der", "die", "das", "und", "ist", "ein", "eine", "nicht", "mit", "von", "zu", "den", "dem",
    "ich", "sie", "es", "er", "wir", "auf", "für", "in", "an", "was", "kapitel", "brief", "buch",
    "teil", "band", "vorwort", "ende",
];

const IT_WORDS: &[&str] = &[
    "il", "lo", "la", "gli", "le", "di", "e", "a", "è", "che", "un", "una", "per", "con", "non",
    "del", "della", "in", "capitolo", "lettera", "libro", "parte", "fine",
];

const PT_WORDS: &[&str] = &[
    "o",
    "os",
    "a",
    "as",
    "do",
    "da",
    "dos",
    "das",
    "e",
    "é",
    "um",
    "uma",
    "em",
    "para",
    "que",
    "com",
    "não",
    "se",
    "capítulo",
    "carta",
    "livro",
    "parte",
    "fim",
];

const NL_WORDS: &[&str] = &[
    "de",
    "het",
    "een",
    "en",
    "is",
    "van",
    "niet",
    "met",
    "op",
    "te",
    "dat",
    "die",
    "in",
    "hoofdstuk",
    "brief",
    "boek",
    "deel",
    "einde",
];

/// The source language's words in `answer` that the target language does not share and that
/// the source has: what a short line copied from its source keeps.
fn source_words_kept(source: &str, answer: &str, from: &str, to: &str) -> usize {
    let (from_words, to_words) = (function_words(from), function_words(to));
    let words = |text: &str| -> BTreeSet<String> {
        text.split(|c: char| !c.is_alphabetic())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let source_words = words(source);
    words(answer)
        .into_iter()
        .filter(|w| {
            from_words.contains(&w.as_str())
                && !to_words.contains(&w.as_str())
                && source_words.contains(w)
        })
        .count()
}

/// What is wrong with a short line's answer, judged without language identification: given
/// back as it was while it has words of the source language ("CHAPTER I." for "CHAPTER I."),
/// or keeping the source language's function words ("The Modern Prometheus" half translated).
/// A line of names and numbers alone may stay as it is.
pub fn short_line_problem(source: &str, answer: &str, from: &str, to: &str) -> Option<ShortLine> {
    let kept = source_words_kept(source, answer, from, to);
    if kept == 0 {
        return None;
    }
    let fold = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    if fold(source) == fold(answer) {
        Some(ShortLine::AsItWas)
    } else {
        Some(ShortLine::SourceWords)
    }
}

/// How a short line failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShortLine {
    AsItWas,
    SourceWords,
}

/// Blocks judged by their chapter's learned length ratio have at least this many letters of
/// source: shorter ones vary too much (a heading, a line of dialogue).
pub const LENGTH_FLOOR: usize = 150;
/// Accepted blocks over the floor needed before a ratio is learned.
const LENGTH_SAMPLES: usize = 6;
/// How far a block's ratio may stray from the chapter's: a factor of 2 either way.
const LENGTH_SPREAD: f64 = 2.0;

/// The chapter's translation-to-source length ratio, the median of its accepted blocks over
/// the floor: (source letters, translation letters) each. None with too few to tell.
pub fn learned_ratio(pairs: impl IntoIterator<Item = (usize, usize)>) -> Option<f64> {
    let mut ratios: Vec<f64> = pairs
        .into_iter()
        .filter(|(source, answer)| *source >= LENGTH_FLOOR && *answer > 0)
        .map(|(source, answer)| answer as f64 / source as f64)
        .collect();
    if ratios.len() < LENGTH_SAMPLES {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    Some(ratios[ratios.len() / 2])
}

/// Whether a block's length is in proportion with the chapter's learned ratio.
pub fn in_proportion(ratio: f64, source_letters: usize, answer_letters: usize) -> bool {
    if source_letters < LENGTH_FLOOR {
        return true;
    }
    let own = answer_letters as f64 / source_letters as f64;
    own <= ratio * LENGTH_SPREAD && own >= ratio / LENGTH_SPREAD
}

/// How much of its expected length a block's answer lacks, from 0 to 1, against the chapter's
/// learned ratio: 0 for a block under the length floor or at least as long as the ratio says.
/// A small model that leaves out sentences writes a shorter answer well inside the factor
/// [`in_proportion`] rejects (Qwen2.5-1.5B gave a 566-letter paragraph of Frankenstein back at
/// 0.56 of its chapter's ratio, its last four sentences gone).
pub fn shortfall(ratio: f64, source_letters: usize, answer_letters: usize) -> f64 {
    if source_letters < LENGTH_FLOOR || ratio <= 0.0 {
        return 0.0;
    }
    let expected = ratio * source_letters as f64;
    (1.0 - answer_letters as f64 / expected).clamp(0.0, 1.0)
}

/// Answers judged for sameness have at least this many letters: short lines ("Yes.", "No!")
/// rightly come out alike for different sources.
const SAME_FLOOR: usize = 30;

/// The blocks whose answer is the same, or nearly (nine words in ten in common), as another
/// block's while their sources are not: `blocks` holds (id, source, answer) in plain text.
pub fn same_translations<S: AsRef<str>>(blocks: &[(usize, S, S)]) -> BTreeSet<usize> {
    let judged: Vec<(usize, Vec<String>, Vec<String>)> = blocks
        .iter()
        .filter(|(_, _, answer)| letters(answer.as_ref()) >= SAME_FLOOR)
        .map(|(id, source, answer)| (*id, words(source.as_ref()), words(answer.as_ref())))
        .collect();
    // Blocks with the same first words are the only candidates: a nearly equal answer starts
    // the same way, and comparing every pair of a long chapter would be quadratic.
    let mut by_start: BTreeMap<Vec<&str>, Vec<usize>> = BTreeMap::new();
    for (at, (_, _, answer)) in judged.iter().enumerate() {
        let start: Vec<&str> = answer.iter().take(3).map(String::as_str).collect();
        by_start.entry(start).or_default().push(at);
    }
    let mut same = BTreeSet::new();
    for group in by_start.values().filter(|g| g.len() > 1) {
        for (i, &a) in group.iter().enumerate() {
            for &b in &group[i + 1..] {
                let (ida, source_a, answer_a) = &judged[a];
                let (idb, source_b, answer_b) = &judged[b];
                if nearly_equal(answer_a, answer_b) && !nearly_equal(source_a, source_b) {
                    same.insert(*ida);
                    same.insert(*idb);
                }
            }
        }
    }
    same
}

fn letters(text: &str) -> usize {
    text.chars().filter(|c| c.is_alphabetic()).count()
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Nine words in ten in common, counted with their multiplicity, of the longer.
fn nearly_equal(a: &[String], b: &[String]) -> bool {
    let mut pool: Vec<&String> = a.iter().collect();
    let mut common = 0;
    for word in b {
        if let Some(at) = pool.iter().position(|w| *w == word) {
            pool.swap_remove(at);
            common += 1;
        }
    }
    common * 10 >= a.len().max(b.len()) * 9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_whatever_their_grouping() {
        let set = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(
            numbers("In 1821, 1,000 men and 3 boys; 2.5 miles."),
            set(&["1821", "1000", "25"])
        );
        assert_eq!(
            numbers("En 1821, 1.000 hombres; 2,5 millas; 1 000 000 d'hommes."),
            set(&["1821", "1000", "25", "1000000"])
        );
        assert!(numbers_match(
            "December 11th, 17—.",
            "11 de diciembre de 17—."
        ));
        assert!(
            !numbers_match(
                "The congress met at the old hall.",
                "El congreso se celebró en el antiguo salón en 2023."
            ),
            "a year the source does not have"
        );
        assert!(!numbers_match("He was 28 years old.", "Tenía años."));
        assert!(numbers_match("Chapter 1", "Capítulo uno"), "one digit");
    }

    #[test]
    fn a_translation_names_no_one_its_source_does_not() {
        let list = names([
            ("Victor", "Victor"),
            ("Elizabeth", "Élisabeth"),
            ("sea", "mer"),
        ]);
        assert_eq!(list.len(), 2, "capitalised entries only");
        assert!(names_match(
            &list,
            "Victor wrote to Elizabeth.",
            "Victor écrivit à Élisabeth."
        ));
        assert!(
            names_match(
                &list,
                "Victor wrote to Elizabeth.",
                "Victor écrivit à sa cousine."
            ),
            "a name left out is the glossary check's"
        );
        assert!(
            !names_match(&list, "He wrote to her.", "Il écrivit à Élisabeth."),
            "a name the source does not have"
        );
        assert!(names_match(&list, "He wrote to her.", "Il lui écrivit."));
        let glossary = names([("Part", "Partie")]);
        assert!(
            names_match(&glossary, "this part of the poem", "cette Partie du poème"),
            "a glossary applies in any case"
        );
    }

    #[test]
    fn a_short_line_given_back_or_half_in_the_source_language_is_caught() {
        assert_eq!(
            short_line_problem("CHAPTER I.", "CHAPTER I.", "en", "fr"),
            Some(ShortLine::AsItWas)
        );
        assert_eq!(
            short_line_problem(
                "The Modern Prometheus",
                "Le Prometheus of the modern",
                "en",
                "fr"
            ),
            Some(ShortLine::SourceWords)
        );
        assert_eq!(
            short_line_problem("CHAPTER I.", "CHAPITRE PREMIER.", "en", "fr"),
            None
        );
        assert_eq!(
            short_line_problem("Frankenstein", "Frankenstein", "en", "fr"),
            None,
            "a name may stay"
        );
        assert_eq!(
            short_line_problem("Is it in?", "Is it in?", "en", "nl"),
            Some(ShortLine::AsItWas),
            "'it' is English alone"
        );
        assert_eq!(
            short_line_problem("in de tuin", "in the garden", "nl", "en"),
            None,
            "words both languages have tell nothing"
        );
    }

    #[test]
    fn the_same_answer_for_different_sources_marks_both() {
        let answer =
            "Als Alice nun wieder auf der anderen Seite des Hauses ging, sah sie den Hasen.";
        let blocks = [
            (
                0,
                "Alice was beginning to get very tired of sitting by her sister.",
                answer,
            ),
            (
                1,
                "So she was considering in her own mind, as well as she could.",
                answer,
            ),
            (
                2,
                "There was nothing so very remarkable in that.",
                "Daran war nichts so sehr Bemerkenswertes.",
            ),
            (3, "“Yes.”", "„Ja.“"),
            (4, "“Yes!”", "„Ja.“"),
        ];
        assert_eq!(same_translations(&blocks), BTreeSet::from([0, 1]));
        let refrain = "HURRY UP PLEASE ITS TIME, said the barman again and again";
        let refrains = [
            (
                0,
                refrain,
                "DÉPÊCHEZ-VOUS S'IL VOUS PLAÎT C'EST L'HEURE, dit le barman",
            ),
            (
                1,
                refrain,
                "DÉPÊCHEZ-VOUS S'IL VOUS PLAÎT C'EST L'HEURE, dit le barman",
            ),
        ];
        assert!(
            same_translations(&refrains).is_empty(),
            "the same source may"
        );
    }

    #[test]
    fn a_length_far_from_the_chapters_own_ratio_is_out_of_proportion() {
        let pairs = (0..8).map(|i| (200 + i * 10, 220 + i * 11));
        let ratio = learned_ratio(pairs).unwrap();
        assert!((ratio - 1.1).abs() < 0.01, "{ratio}");
        assert!(in_proportion(ratio, 980, 1000));
        assert!(
            !in_proportion(ratio, 980, 219),
            "another paragraph's translation"
        );
        assert!(in_proportion(ratio, 100, 10), "under the floor");
        assert_eq!(learned_ratio([(200, 220)]), None, "too few to tell");
    }
}
