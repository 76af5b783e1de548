//! Whether a block's answer carries a neighbour's text as well as (or instead of) its own. A
//! model that drops a block's marker runs that block's text onto the line before it, and the
//! line that holds both reads as a fluent, if long, translation: a short block merged with a
//! short neighbour stays inside every length bound (bilingual_book_maker#454). So the answer is
//! compared with the neighbour's text itself:
//!
//! - with the neighbour's translation where there is one (its answer in the same response, or
//!   the text it holds so far): half or more of that translation's three-word runs are in the
//!   answer;
//! - with the neighbour's source, whose words a translation keeps when they are names, numbers
//!   or text left untranslated: of the next block's first twelve words (the previous block's
//!   last twelve), two four-word runs, or two thirds of the names and numbers (two at least),
//!   are in the answer while the block's own source has none of them.
//!
//! Words are compared lower-cased and without accents, so that "Queequeg" is found in
//! "Quéequeg" and the offline engine's pseudo-translation in its source. What the two sources
//! share is no merge: a block that quotes the next one, a refrain both have.

use std::collections::HashSet;

use booktr_formats::markup;

/// Which side of the block a neighbour is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

/// A block next to the one judged.
#[derive(Debug, Clone, Copy)]
pub struct Neighbour<'a> {
    pub side: Side,
    /// Its source (markup).
    pub source: &'a str,
    /// Its translation (markup): its answer in the same response, or the text it holds so far;
    /// None while it has none (it is still its source).
    pub translation: Option<&'a str>,
}

/// Source words of a neighbour looked at: its first ones (the next block) or its last ones
/// (the previous block), where a merge joins it to the block.
const EDGE_WORDS: usize = 12;
/// A run of words this long that the answer and the neighbour's source share is text left
/// untranslated (or the pseudo-translation), not a coincidence.
const RUN: usize = 4;
/// Share of the neighbour translation's three-word runs that must be in the answer.
const COVERED: f64 = 0.5;

/// Whether `answer` (the block's answer, markup) carries `neighbour`'s text, judged against
/// the block's own `source`.
pub fn carries(source: &str, answer: &str, neighbour: &Neighbour<'_>) -> bool {
    let own = folded_words(&markup::translatable_text(source));
    let answer = folded_words(&markup::translatable_text(answer));
    let theirs = markup::translatable_text(neighbour.source);
    let their_words = folded_words(&theirs);
    if their_words.is_empty() || answer.is_empty() {
        return false;
    }
    // A block that quotes its neighbour, or shares a refrain with it, shares it in translation.
    if sources_overlap(&own, &their_words) {
        return false;
    }
    if let Some(translation) = neighbour.translation {
        let translated = folded_words(&markup::translatable_text(translation));
        if translation_carried(&answer, &translated, neighbour.side) {
            return true;
        }
    }
    source_words_carried(&own, &answer, &theirs, neighbour.side)
}

/// Half or more of the neighbour translation's three-word runs in the answer; a neighbour of
/// fewer than five words (too few runs to count), whole at the answer's edge on its side.
fn translation_carried(answer: &[String], translated: &[String], side: Side) -> bool {
    let runs = shingles(translated, 3);
    if runs.len() >= 3 {
        let in_answer = shingles(answer, 3);
        let found = runs.iter().filter(|r| in_answer.contains(*r)).count();
        return found as f64 >= runs.len() as f64 * COVERED;
    }
    // With letters enough not to be a common phrase ("Sí, señor"; a name of one word, as an
    // epigraph's author, "—HACKLUYT").
    let letters: usize = translated.iter().map(|w| w.chars().count()).sum();
    let enough = match translated.len() {
        0 => false,
        1 => letters >= 6,
        _ => letters >= 10,
    };
    let at_edge = match side {
        Side::After => answer.ends_with(translated),
        Side::Before => answer.starts_with(translated),
    };
    enough && answer.len() > translated.len() && at_edge
}

/// Whether the neighbour's source words at the edge where it joins the block, those a
/// translation keeps, are in the answer and not in the block's own source.
fn source_words_carried(own: &[String], answer: &[String], theirs: &str, side: Side) -> bool {
    let edge = edge_words(theirs, side);
    let folded: Vec<String> = edge.iter().map(|(w, _)| fold_word(w)).collect();
    // Runs of four words: text given untranslated (or the offline engine's accents).
    let own_runs = shingles(own, RUN);
    let answer_runs = shingles(answer, RUN);
    let runs: Vec<&[String]> = folded
        .windows(RUN)
        .filter(|r| r.iter().map(|w| w.chars().count()).sum::<usize>() >= 12)
        .filter(|r| !own_runs.contains(*r))
        .collect();
    let shared = runs.iter().filter(|r| answer_runs.contains(**r)).count();
    let needed = if folded.len() <= RUN { 1 } else { 2 };
    if !runs.is_empty() && shared >= needed {
        return true;
    }
    // Names and numbers, which a translation keeps as they are.
    let own: HashSet<&String> = own.iter().collect();
    let answer: HashSet<&String> = answer.iter().collect();
    let kept: HashSet<String> = edge
        .iter()
        .filter(|(word, starts_sentence)| {
            let number = word.chars().filter(char::is_ascii_digit).count() >= 2;
            let name = !starts_sentence
                && word.chars().count() >= 3
                && word.chars().next().is_some_and(char::is_uppercase);
            number || name
        })
        .map(|(word, _)| fold_word(word))
        .filter(|word| !own.contains(word))
        .collect();
    // Two thirds of them: a title among them may be translated ("Captain", "capitán").
    let found = kept.iter().filter(|word| answer.contains(word)).count();
    found >= 2 && found * 3 >= kept.len() * 2
}

/// The first (`After`: the next block's opening) or last (`Before`) words of a source, each
/// with whether it begins a sentence (a capital there says nothing of a name).
fn edge_words(text: &str, side: Side) -> Vec<(String, bool)> {
    let mut words = Vec::new();
    let mut starts_sentence = true;
    let mut word = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if is_word_char(c) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            words.push((std::mem::take(&mut word), starts_sentence));
            starts_sentence = false;
        }
        if matches!(
            c,
            '.' | '!' | '?' | '…' | ':' | ';' | '"' | '“' | '”' | '‘' | '«' | '—' | '(' | '\n'
        ) {
            starts_sentence = true;
        }
    }
    match side {
        Side::After => words.truncate(EDGE_WORDS),
        Side::Before => {
            let skip = words.len().saturating_sub(EDGE_WORDS);
            words.drain(..skip);
        }
    }
    words
}

/// Whether the two sources share so much that their translations may too: a third of the
/// neighbour's three-word runs (or the whole of a shorter neighbour) in the block's source.
fn sources_overlap(own: &[String], theirs: &[String]) -> bool {
    let runs = shingles(theirs, 3);
    if runs.is_empty() {
        return own.windows(theirs.len()).any(|w| w == theirs);
    }
    let in_own = shingles(own, 3);
    let found = runs.iter().filter(|r| in_own.contains(*r)).count();
    found * 3 >= runs.len()
}

fn shingles(words: &[String], n: usize) -> HashSet<&[String]> {
    words.windows(n).collect()
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || ('\u{0300}'..='\u{036F}').contains(&c)
}

/// The words of a text, lower-cased and without accents.
fn folded_words(text: &str) -> Vec<String> {
    text.split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
        .map(fold_word)
        .filter(|w| !w.is_empty())
        .collect()
}

/// A word lower-cased, its Latin letters without accents, combining marks and the Arabic
/// tatweel left out.
fn fold_word(word: &str) -> String {
    word.chars()
        .flat_map(char::to_lowercase)
        .filter(|c| !('\u{0300}'..='\u{036F}').contains(c) && *c != '\u{0640}')
        .map(base_letter)
        .collect()
}

/// A Latin letter with a diacritic as its base letter (lower case).
fn base_letter(c: char) -> char {
    const FOLDS: [(&str, char); 18] = [
        ("àáâãäåāăą", 'a'),
        ("çćĉċč", 'c'),
        ("ďđ", 'd'),
        ("èéêëēĕėęě", 'e'),
        ("ĝğġģ", 'g'),
        ("ĥħ", 'h'),
        ("ìíîïĩīĭįı", 'i'),
        ("ĵ", 'j'),
        ("ķ", 'k'),
        ("ĺļľŀł", 'l'),
        ("ñńņňŉ", 'n'),
        ("òóôõöøōŏő", 'o'),
        ("ŕŗř", 'r'),
        ("śŝşšß", 's'),
        ("ţťŧ", 't'),
        ("ùúûüũūŭůűų", 'u'),
        ("ýÿŷ", 'y'),
        ("źżž", 'z'),
    ];
    if c.is_ascii() {
        return c;
    }
    FOLDS
        .iter()
        .find(|(from, _)| from.contains(c))
        .map_or(c, |(_, to)| *to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::pseudo;

    fn next<'a>(source: &'a str, translation: Option<&'a str>) -> Neighbour<'a> {
        Neighbour {
            side: Side::After,
            source,
            translation,
        }
    }

    fn previous<'a>(source: &'a str, translation: Option<&'a str>) -> Neighbour<'a> {
        Neighbour {
            side: Side::Before,
            source,
            translation,
        }
    }

    const A: &str = "It was a queer sort of place.";
    const A_ES: &str = "Era un lugar bastante extraño.";
    const B: &str = "Queequeg sat on the bench with Captain Peleg in 1851, smoking his pipe.";
    const B_ES: &str =
        "Queequeg se sentó en el banco con el capitán Peleg en 1851, fumando su pipa.";

    #[test]
    fn an_answer_with_the_next_blocks_translation_after_its_own_carries_it() {
        let merged = format!("{A_ES} {B_ES}");
        assert!(carries(A, &merged, &next(B, Some(B_ES))));
        assert!(!carries(A, A_ES, &next(B, Some(B_ES))));
    }

    #[test]
    fn an_answer_with_the_previous_blocks_translation_before_its_own_carries_it() {
        let merged = format!("{B_ES} {A_ES}");
        assert!(carries(A, &merged, &previous(B, Some(B_ES))));
        assert!(!carries(A, A_ES, &previous(B, Some(B_ES))));
    }

    #[test]
    fn a_neighbour_merged_in_other_words_is_found_by_its_names_and_numbers() {
        // The next block not translated yet: its answer is the merged one's, worded otherwise.
        let merged = format!(
            "{A_ES} Queequeg estaba sentado en el banco junto al capitán Peleg en 1851 y fumaba."
        );
        assert!(carries(A, &merged, &next(B, None)));
        // And a neighbour left in English is found by its words.
        let english = format!("{A_ES} {B}");
        assert!(carries(A, &english, &next(B, None)));
    }

    #[test]
    fn the_offline_engines_pseudo_translation_of_the_next_block_is_found_by_its_source() {
        let merged = format!("{} {}", pseudo(A, &[]), pseudo(B, &[]));
        assert!(carries(A, &merged, &next(B, None)));
        assert!(!carries(A, &pseudo(A, &[]), &next(B, None)));
    }

    #[test]
    fn a_short_neighbour_at_the_answers_edge_is_carried_and_a_common_phrase_is_not() {
        let heading = "The Carpet-Bag.";
        let heading_es = "La bolsa de viaje.";
        let merged = format!("{A_ES} {heading_es}");
        assert!(carries(A, &merged, &next(heading, Some(heading_es))));
        // "Sí, señor" inside a paragraph is no merge of the block "Yes, sir."
        let paragraph = "Él dijo: sí, señor, y se fue.";
        assert!(!carries(
            "He said yes, sir, and left.",
            paragraph,
            &next("Yes, sir.", Some("Sí, señor."))
        ));
    }

    #[test]
    fn a_neighbour_of_one_word_is_carried_only_whole_at_the_edge_where_it_joins() {
        // Moby-Dick's etymology: a heading, then an epigraph's author.
        let author = next("—HACKLUYT", Some("—HÀCKLÜYT"));
        assert!(carries("ETYMOLOGY.", "ÉTYMÖLÖGY. —HÀCKLÜYT", &author));
        assert!(!carries("ETYMOLOGY.", "ÉTYMÖLÖGY.", &author));
        assert!(
            !carries("ETYMOLOGY.", "—HÀCKLÜYT ÉTYMÖLÖGY.", &author),
            "the next block's text comes after the block's own"
        );
        // A short word ending the answer is no merge of the block "Yes.".
        assert!(!carries(
            "He said that he would.",
            "Dijo que sí.",
            &next("Yes.", Some("Sí."))
        ));
        // Nor the name the block's own source ends with.
        assert!(!carries(
            "Then up spoke Starbuck.",
            "Entonces habló Starbuck.",
            &next("Starbuck!", Some("¡Starbuck!"))
        ));
    }

    #[test]
    fn a_block_that_quotes_the_next_or_shares_its_refrain_carries_nothing() {
        let sign = "“WHALING VOYAGE BY ONE ISHMAEL.";
        let sign_es = "“VIAJE BALLENERO DE UN TAL ISMAEL.";
        let quoting = "The bill read: “WHALING VOYAGE BY ONE ISHMAEL.” and I went.";
        let quoting_es = "El cartel decía: “VIAJE BALLENERO DE UN TAL ISMAEL.” y fui.";
        assert!(!carries(quoting, quoting_es, &next(sign, Some(sign_es))));
        let refrain = "Quoth the Raven, “Nevermore.”";
        let refrain_es = "Dijo el Cuervo: «Nunca más».";
        assert!(!carries(
            refrain,
            refrain_es,
            &previous(refrain, Some(refrain_es))
        ));
        let stanza = "Much I marvelled this ungainly fowl to hear discourse so plainly. Quoth the Raven, “Nevermore.”";
        let stanza_es =
            "Mucho me asombró oír hablar tan claro a esta torpe ave. Dijo el Cuervo: «Nunca más».";
        assert!(!carries(
            stanza,
            stanza_es,
            &next(refrain, Some(refrain_es))
        ));
    }

    #[test]
    fn names_the_block_shares_with_its_neighbour_are_no_merge() {
        let own = "Queequeg and Captain Peleg went ashore in 1851.";
        let own_es = "Queequeg y el capitán Peleg bajaron a tierra en 1851.";
        assert!(!carries(own, own_es, &next(B, None)));
        assert!(!carries(own, own_es, &next(B, Some(B_ES))));
    }

    #[test]
    fn accents_and_case_are_folded() {
        assert_eq!(fold_word("Quéequeg"), "queequeg");
        assert_eq!(fold_word("ÌSHMÀÉL"), "ishmael");
        assert_eq!(folded_words("В\u{307}ойна"), vec!["война"]);
    }
}
