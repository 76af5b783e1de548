//! The book-wide term pass: before any chapter is translated, the names and key terms of the
//! whole book are found locally and translated once, with a context sentence each. Every pass of
//! every chapter then enforces that list like the glossary, so chapters translated at the same
//! time (or on different days) agree on "Queequeg" without waiting for each other.
//!
//! Candidates are runs of capitalised words that recur in the book and appear capitalised in the
//! middle of sentences (so "The" at a sentence start is not a name), minus the glossary's terms
//! (already fixed), function words and contractions ("I'll" is capitalised wherever it stands).
//! The most frequent [`MAX_CANDIDATES`] are kept.
//!
//! A small model asked for the list often answers a term with itself. For a name that is right;
//! for a common noun that the book also writes in lower case (a character called "the
//! Creature" among "creatures") it would bind the source word into every chapter, so such an
//! answer is left off the list and the word translated freely.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use futures::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use tracing::{info, warn};

use crate::checks::is_refusal_or_remark;
use crate::glossary::{self, GlossaryEntry};
use crate::model::{estimate_tokens, ChatError, ChatModel, ChatRequest};
use crate::pipeline::{PassUsage, PipelineConfig};
use crate::protocol::{language_name, quote};
use crate::reading::{clean_characters, read_answer};
use crate::retry::complete_with_retries;

/// At most this many terms per book: a novel has a few dozen names that matter, and the list
/// goes into the prompt of every chunk that mentions one.
pub const MAX_CANDIDATES: usize = 300;
/// A term must occur at least this often in the book.
const MIN_OCCURRENCES: usize = 3;
/// ...and at least this often mid-sentence, capitalised.
const MIN_MID_SENTENCE: usize = 2;
/// Terms per request.
const PER_REQUEST: usize = 60;
/// Longest context sentence sent, in characters.
const MAX_CONTEXT: usize = 200;
/// Longest term, in words.
const MAX_WORDS: usize = 4;

/// A name or term found in the book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub term: String,
    /// A sentence of the book where it occurs.
    pub context: String,
    pub occurrences: usize,
    /// How often the book writes it in lower case (a one-word term only): a common noun that
    /// also serves as a name.
    pub lowercase: usize,
}

/// The book's terms: source -> translation, and what finding them cost.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TermList {
    pub terms: BTreeMap<String, String>,
    pub usage: PassUsage,
    /// Answers left out of the list because they failed a check (see [`usable_terms`]).
    #[serde(default)]
    pub rejected: u32,
    /// Where an entry came from when that is not the term pass: only the owner's entries are
    /// named, so a list stored before owners could edit reads as the model's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub origins: BTreeMap<String, TermOrigin>,
    /// How often the book has each term the term pass found (an owner's own term is not
    /// counted).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub occurrences: BTreeMap<String, u32>,
}

/// Where an entry of the terms a chapter enforces came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TermOrigin {
    /// The term pass: the run's model translated a term found in the book.
    Model,
    /// The user's glossary, which the run was started with; it wins over the list.
    Glossary,
    /// The book's owner set or confirmed it, which wins over the model's answer.
    Owner,
}

impl TermOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            TermOrigin::Model => "model",
            TermOrigin::Glossary => "glossary",
            TermOrigin::Owner => "owner",
        }
    }
}

/// One entry of the terms a chapter enforces, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermEntry {
    pub source: String,
    pub target: String,
    pub origin: TermOrigin,
    /// How often the book has the term, when the term pass counted it.
    pub occurrences: Option<u32>,
}

impl TermList {
    /// The list as glossary entries, after the user's glossary: a term the glossary already
    /// fixes is left to the glossary.
    pub fn with_glossary(&self, glossary: &[GlossaryEntry]) -> Vec<GlossaryEntry> {
        self.entries(glossary)
            .into_iter()
            .map(|entry| {
                let context = match entry.origin {
                    TermOrigin::Glossary => glossary
                        .iter()
                        .find(|e| e.source == entry.source)
                        .and_then(|e| e.context.clone()),
                    TermOrigin::Model | TermOrigin::Owner => {
                        Some("a name or term of this book".into())
                    }
                };
                GlossaryEntry {
                    source: entry.source,
                    target: entry.target,
                    context,
                }
            })
            .collect()
    }

    /// Every term a chapter enforces, with its origin: the glossary's entries first, then the
    /// list's for the terms the glossary does not fix.
    pub fn entries(&self, glossary: &[GlossaryEntry]) -> Vec<TermEntry> {
        let mut entries: Vec<TermEntry> = glossary
            .iter()
            .map(|e| TermEntry {
                source: e.source.clone(),
                target: e.target.clone(),
                origin: TermOrigin::Glossary,
                occurrences: None,
            })
            .collect();
        for (source, target) in &self.terms {
            if !glossary
                .iter()
                .any(|e| e.source.eq_ignore_ascii_case(source))
            {
                entries.push(TermEntry {
                    source: source.clone(),
                    target: target.clone(),
                    origin: self.origin(source),
                    occurrences: self.occurrences.get(source).copied(),
                });
            }
        }
        entries
    }

    /// Where the list's entry for `source` came from.
    pub fn origin(&self, source: &str) -> TermOrigin {
        self.origins
            .get(source)
            .copied()
            .unwrap_or(TermOrigin::Model)
    }

    /// The owner's rendering of `source`, replacing the model's. A term answered with itself is
    /// kept as the owner gives it: the filter that leaves such answers off (see
    /// [`usable_terms`]) is for the model's guesses, not for a binding the owner chose.
    pub fn set_by_owner(&mut self, source: &str, target: &str) {
        self.terms.insert(source.to_string(), target.to_string());
        self.origins.insert(source.to_string(), TermOrigin::Owner);
    }

    /// Takes `source` off the list (its chapters translate it freely); false when it was not on.
    pub fn remove(&mut self, source: &str) -> bool {
        self.origins.remove(source);
        self.occurrences.remove(source);
        self.terms.remove(source).is_some()
    }
}

#[derive(Default)]
struct Tally {
    total: usize,
    mid_sentence: usize,
    context: Option<String>,
}

/// The book's candidate terms from its blocks' plain text, most frequent first.
pub fn candidates(texts: &[String], glossary: &[GlossaryEntry]) -> Vec<Candidate> {
    let mut tallies: HashMap<String, Tally> = HashMap::new();
    let mut lowercase: HashMap<String, usize> = HashMap::new();
    for text in texts {
        for sentence in sentences(text) {
            let words = words(sentence);
            let mut i = 0;
            while i < words.len() {
                if !is_capitalised(words[i]) {
                    *lowercase.entry(words[i].to_lowercase()).or_default() += 1;
                    i += 1;
                    continue;
                }
                let mut start = i;
                while i < words.len() && is_capitalised(words[i]) && i - start < MAX_WORDS {
                    i += 1;
                }
                if start == 0 {
                    // A sentence's first word is capitalised anyway: counted alone, as a
                    // sentence start, and the rest of the run ("The Pequod") on its own.
                    tallies.entry(words[0].to_string()).or_default().total += 1;
                    start = 1;
                    if start == i {
                        continue;
                    }
                }
                let tally = tallies.entry(words[start..i].join(" ")).or_default();
                tally.total += 1;
                tally.mid_sentence += 1;
                if tally.context.is_none() {
                    tally.context = Some(context_of(sentence));
                }
            }
        }
    }
    let glossary_sources = glossary::sources(glossary);
    let mut found: Vec<Candidate> = tallies
        .into_iter()
        .filter(|(term, t)| {
            t.total >= MIN_OCCURRENCES
                && t.mid_sentence >= MIN_MID_SENTENCE
                // A word written lower-case more often than capitalised is a common word
                // (capitalised in headings), not a name.
                && lowercase.get(&term.to_lowercase()).copied().unwrap_or(0) < t.total
                && term.chars().filter(|c| c.is_alphabetic()).count() >= 2
                && !term.split(' ').any(is_function_word)
                && !glossary_sources.any_in(term)
        })
        .map(|(term, t)| Candidate {
            lowercase: lowercase.get(&term.to_lowercase()).copied().unwrap_or(0),
            term,
            context: t.context.unwrap_or_default(),
            occurrences: t.total,
        })
        .collect();
    found.sort_by(|a, b| {
        b.occurrences
            .cmp(&a.occurrences)
            .then_with(|| a.term.cmp(&b.term))
    });
    found.truncate(MAX_CANDIDATES);
    found
}

fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(['.', '!', '?', ';', ':', '\n', '“', '"'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// A sentence's words, without the apostrophes and hyphens around them and without a
/// possessive `'s` ("Ahab's" is Ahab).
fn words(sentence: &str) -> Vec<&str> {
    sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’' || c == '-'))
        .map(|w| w.trim_matches(|c: char| c == '\'' || c == '’' || c == '-'))
        .map(|w| {
            w.strip_suffix("'s")
                .or_else(|| w.strip_suffix("’s"))
                .unwrap_or(w)
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// English words that are never a book's term however they are written: pronouns,
/// determiners, prepositions, conjunctions, auxiliaries and interjections, which a sentence
/// starting after a quotation mark or a dash capitalises mid-line.
const FUNCTION_WORDS: &[&str] = &[
    "a", "about", "after", "ah", "alas", "all", "also", "although", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "but", "by", "can", "could", "did", "do",
    "does", "each", "even", "every", "for", "from", "had", "has", "have", "he", "her", "here",
    "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "let", "may",
    "me", "might", "mine", "more", "most", "must", "my", "no", "nor", "not", "now", "o", "of",
    "oh", "on", "once", "one", "only", "or", "our", "ours", "shall", "she", "should", "so", "some",
    "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "thou", "thee", "thy", "to", "too", "upon", "us", "very", "was", "we", "well", "were",
    "what", "when", "where", "which", "while", "who", "whom", "whose", "why", "will", "with",
    "would", "ye", "yes", "yet", "you", "your", "yours",
];

/// Whether `word` is a function word or a contraction ("I'll", "Don't", "We're").
fn is_function_word(word: &str) -> bool {
    let lower = word.to_lowercase().replace('’', "'");
    if FUNCTION_WORDS.contains(&lower.as_str()) {
        return true;
    }
    ["'ll", "'re", "'ve", "'d", "'m", "n't"]
        .iter()
        .any(|ending| lower.ends_with(ending))
}

fn is_capitalised(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase)
        // "I", "OK", "CHAPTER": all capitals are not names.
        && chars.clone().any(char::is_lowercase)
}

fn context_of(sentence: &str) -> String {
    let one_line = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    one_line.chars().take(MAX_CONTEXT).collect()
}

/// Translates the candidates in requests of [`PER_REQUEST`] (in parallel, bounded by the
/// pipeline's concurrency). A term the model does not answer for is left out of the list: its
/// chapters translate it freely.
pub async fn translate_terms(
    model: &dyn ChatModel,
    candidates: &[Candidate],
    source_lang: &str,
    target_lang: &str,
    glossary: &[GlossaryEntry],
    config: &PipelineConfig,
) -> Result<TermList, ChatError> {
    let results: Vec<Result<TermList, ChatError>> =
        // Owned batches: a stream over borrowed ones makes the future impossible to prove
        // `Send` (a higher-ranked lifetime).
        stream::iter(candidates.chunks(PER_REQUEST).map(<[Candidate]>::to_vec))
            .map(|batch| translate_batch(model, batch, source_lang, target_lang, glossary, config))
            .buffer_unordered(config.concurrency.max(1))
            .collect()
            .await;
    let mut list = TermList::default();
    for result in results {
        let batch = result?;
        list.terms.extend(batch.terms);
        list.occurrences.extend(batch.occurrences);
        list.usage += batch.usage;
        list.rejected += batch.rejected;
    }
    info!(
        candidates = candidates.len(),
        terms = list.terms.len(),
        rejected = list.rejected,
        "book terms translated"
    );
    Ok(list)
}

/// What [`translate_terms`] will use, estimated before any request: its requests, counted as
/// the offline engine counts, each answered with one line per term about as long as the term.
pub fn estimate_terms(
    candidates: &[Candidate],
    source_lang: &str,
    target_lang: &str,
    glossary: &[GlossaryEntry],
) -> PassUsage {
    candidates
        .chunks(PER_REQUEST)
        .map(|batch| {
            let answer: String = batch
                .iter()
                .enumerate()
                .map(|(id, c)| format!("[[{id}]] {}\n", c.term))
                .collect();
            PassUsage::estimated(&request(batch, source_lang, target_lang, glossary), &answer)
        })
        .sum()
}

/// One request: the batch's terms with their translations, and what the request cost.
async fn translate_batch(
    model: &dyn ChatModel,
    batch: Vec<Candidate>,
    source_lang: &str,
    target_lang: &str,
    glossary: &[GlossaryEntry],
    config: &PipelineConfig,
) -> Result<TermList, ChatError> {
    let request = request(&batch, source_lang, target_lang, glossary);
    let response = complete_with_retries(model, request, config.max_model_retries).await?;
    let usage = PassUsage {
        input_tokens: response.input_tokens,
        output_tokens: response.output_tokens,
        requests: 1,
    };
    let ids: Vec<usize> = (0..batch.len()).collect();
    let answer = read_answer(&response.text, Some(&ids));
    let (terms, rejected) = usable_terms(&batch, &answer.blocks);
    if answer.removed.total() > 0 || rejected > 0 {
        warn!(
            removed = answer.removed.total(),
            rejected, "the term list's answer had text around its lines or unusable lines"
        );
    }
    let occurrences = batch
        .iter()
        .filter(|c| terms.contains_key(&c.term))
        .map(|c| {
            (
                c.term.clone(),
                u32::try_from(c.occurrences).unwrap_or(u32::MAX),
            )
        })
        .collect();
    Ok(TermList {
        terms,
        usage,
        rejected,
        origins: BTreeMap::new(),
        occurrences,
    })
}

/// The answers that may go on the book's list, which every pass of every chapter enforces: a
/// bad entry would spoil the whole book, so an answer is left out (and its term translated
/// freely) when it is implausible for a term, talks instead of translating, is another
/// term of the batch (the answers shifted by a line), or is given for two different terms.
/// Returns the list and how many answers were left out.
fn usable_terms(
    batch: &[Candidate],
    answers: &BTreeMap<usize, String>,
) -> (BTreeMap<String, String>, u32) {
    let mut chosen: Vec<(&str, String)> = Vec::new();
    let mut rejected = 0;
    for (id, candidate) in batch.iter().enumerate() {
        let Some(target) = answers
            .get(&id)
            .map(|t| clean_characters(&candidate.term, t.trim()))
        else {
            warn!(term = %candidate.term, "no translation for a book term");
            continue;
        };
        let shifted = batch
            .iter()
            .enumerate()
            .any(|(other, c)| other != id && c.term.eq_ignore_ascii_case(&target));
        if !is_plausible(&candidate.term, &target)
            || is_refusal_or_remark(&candidate.term, &target)
            || shifted
        {
            warn!(term = %candidate.term, answer = %target, "unusable translation for a book term");
            rejected += 1;
            continue;
        }
        if candidate.lowercase > 0 && target.eq_ignore_ascii_case(&candidate.term) {
            info!(
                term = %candidate.term,
                lowercase = candidate.lowercase,
                "a book term answered with itself is also a common word: translated freely"
            );
            continue;
        }
        chosen.push((&candidate.term, target));
    }
    let mut terms = BTreeMap::new();
    for (term, target) in &chosen {
        let shared = chosen
            .iter()
            .filter(|(_, t)| t.eq_ignore_ascii_case(target))
            .count();
        if shared > 1 {
            rejected += 1;
            continue;
        }
        terms.insert(term.to_string(), target.to_string());
    }
    (terms, rejected)
}

/// One line, no markup, and not wildly longer than the term.
fn is_plausible(term: &str, target: &str) -> bool {
    !target.is_empty()
        && !target.contains(['<', '>', '\n'])
        && target.chars().count() <= term.chars().count() * 4 + 20
}

fn request(
    batch: &[Candidate],
    source_lang: &str,
    target_lang: &str,
    glossary: &[GlossaryEntry],
) -> ChatRequest {
    let (from, to) = (language_name(source_lang), language_name(target_lang));
    let system = format!(
        "You are a literary translator preparing a book's term list. Translate each name or key term \
         from {from} to {to} exactly as it should appear everywhere in the book; keep a \
         name as it is when names are not translated into {to}. Follow the glossary. Answer with \
         one line per term, starting with the term's marker [[n]], and nothing else."
    );
    let mut user = format!("TASK: translate\nFROM: {source_lang}\nTO: {target_lang}\n");
    // One line per context: a line break is no part of any term, so none matches across two.
    let contexts: Vec<&str> = batch.iter().map(|c| c.context.as_str()).collect();
    let relevant = glossary::sources(glossary).keep_present(glossary, &contexts.join("\n"));
    if !relevant.is_empty() {
        user.push_str("GLOSSARY:\n");
        for entry in relevant {
            let _ = writeln!(
                user,
                "- {} => {}",
                quote(&entry.source),
                quote(&entry.target)
            );
        }
    }
    user.push_str("CONTEXT:\n");
    for candidate in batch {
        let _ = writeln!(user, "- {}: {}", quote(&candidate.term), candidate.context);
    }
    user.push_str("BLOCKS:\n");
    for (id, candidate) in batch.iter().enumerate() {
        let _ = writeln!(user, "[[{id}]] {}", candidate.term);
    }
    let max_output_tokens = (estimate_tokens(&user) + 256).min(8_000) as u32;
    ChatRequest {
        system,
        user,
        max_output_tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::OfflineEngine;

    fn book() -> Vec<String> {
        vec![
            "Call me Ishmael. Some years ago I went to sea with Queequeg.".into(),
            "The harpooneer was Queequeg, and Ishmael shared his bed. The Pequod waited.".into(),
            "When Captain Ahab came, Queequeg and Ishmael saw him. The Pequod sailed.".into(),
            "Then Ishmael wrote of Queequeg. The sea was grey. The Pequod was lost.".into(),
        ]
    }

    #[test]
    fn recurring_names_are_found_and_sentence_starts_are_not() {
        let found = candidates(&book(), &[]);
        let terms: Vec<&str> = found.iter().map(|c| c.term.as_str()).collect();
        assert!(terms.contains(&"Queequeg"), "{terms:?}");
        assert!(terms.contains(&"Ishmael"), "{terms:?}");
        assert!(terms.contains(&"Pequod"), "{terms:?}");
        assert!(!terms.contains(&"The"), "{terms:?}");
        assert!(!terms.contains(&"Captain Ahab"), "once only: {terms:?}");
        let queequeg = found.iter().find(|c| c.term == "Queequeg").unwrap();
        assert_eq!(queequeg.occurrences, 4);
        assert!(queequeg.context.contains("Queequeg"));
    }

    #[test]
    fn function_words_and_contractions_are_not_terms_and_possessives_count_for_the_name() {
        let book: Vec<String> = vec![
            "He said that I'll go, and I'll stay, as I'll see with Ahab's men.".into(),
            "When she said Oh, and Oh, and Oh again, Ahab's leg hurt and Ahab wept.".into(),
            "Later he said Don't, and Don't, and Don't, said Ahab to Ahab’s crew.".into(),
        ];
        let found = candidates(&book, &[]);
        let terms: Vec<&str> = found.iter().map(|c| c.term.as_str()).collect();
        assert_eq!(terms, ["Ahab"], "{found:?}");
        assert_eq!(found[0].occurrences, 5);
        assert_eq!(found[0].lowercase, 0);
    }

    #[test]
    fn a_common_noun_answered_with_itself_is_not_bound_but_a_name_is() {
        let book: Vec<String> = vec![
            "I saw the Creature and Victor. The Creature fled from Victor.".into(),
            "Then the Creature spoke to Victor of every creature alive.".into(),
        ];
        let found = candidates(&book, &[]);
        let creature = found.iter().find(|c| c.term == "Creature").unwrap();
        assert_eq!(creature.lowercase, 1);
        let victor = found.iter().find(|c| c.term == "Victor").unwrap();
        assert_eq!(victor.lowercase, 0);
        // As a small model answers: both terms given back as written.
        let batch = vec![creature.clone(), victor.clone()];
        let answer = read_answer("[[0]] Creature\n[[1]] Victor\n", Some(&[0, 1]));
        let (terms, rejected) = usable_terms(&batch, &answer.blocks);
        assert_eq!(terms, [("Victor".to_string(), "Victor".to_string())].into());
        assert_eq!(rejected, 0);
        // A translation of the common noun is bound.
        let answer = read_answer("[[0]] Geschöpf\n[[1]] Victor\n", Some(&[0, 1]));
        let (terms, _) = usable_terms(&batch, &answer.blocks);
        assert_eq!(terms["Creature"], "Geschöpf");
    }

    #[test]
    fn glossary_terms_are_left_to_the_glossary() {
        let glossary = vec![GlossaryEntry {
            source: "Queequeg".into(),
            target: "Quiquegue".into(),
            context: None,
        }];
        let found = candidates(&book(), &glossary);
        assert!(found.iter().all(|c| c.term != "Queequeg"));
        let list = TermList {
            terms: [("Queequeg".to_string(), "Kikeg".to_string())].into(),
            ..TermList::default()
        };
        let merged = list.with_glossary(&glossary);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].target, "Quiquegue");
    }

    #[test]
    fn every_entry_says_where_it_came_from_and_the_glossary_wins_over_the_list() {
        let glossary = vec![GlossaryEntry {
            source: "Queequeg".into(),
            target: "Quiquegue".into(),
            context: None,
        }];
        let mut list = TermList {
            terms: [
                ("queequeg".to_string(), "Kikeg".to_string()),
                ("Pequod".to_string(), "Pécod".to_string()),
                ("Ishmael".to_string(), "Ismael".to_string()),
            ]
            .into(),
            occurrences: [("Pequod".to_string(), 3)].into(),
            ..TermList::default()
        };
        // The owner's rendering replaces the model's and is named as theirs; the glossary still
        // wins over whatever the list holds for its own terms.
        list.set_by_owner("Ishmael", "Ishmael");
        let entries = list.entries(&glossary);
        let seen: Vec<(&str, &str, TermOrigin, Option<u32>)> = entries
            .iter()
            .map(|e| {
                (
                    e.source.as_str(),
                    e.target.as_str(),
                    e.origin,
                    e.occurrences,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("Queequeg", "Quiquegue", TermOrigin::Glossary, None),
                ("Ishmael", "Ishmael", TermOrigin::Owner, None),
                ("Pequod", "Pécod", TermOrigin::Model, Some(3)),
            ]
        );
        let enforced = list.with_glossary(&glossary);
        let ishmael = enforced.iter().find(|e| e.source == "Ishmael").unwrap();
        assert_eq!(
            ishmael.target, "Ishmael",
            "an owner may bind a term to itself"
        );
        assert!(list.remove("Pequod"));
        assert!(!list.remove("Pequod"));
        assert!(list.occurrences.is_empty());
    }

    #[test]
    fn a_list_stored_before_origins_were_kept_reads_as_the_models() {
        let stored =
            r#"{"terms":{"Ahab":"Acab"},"usage":{"inputTokens":1,"outputTokens":1,"requests":1}}"#;
        let list: TermList = serde_json::from_str(stored).unwrap();
        assert_eq!(list.origin("Ahab"), TermOrigin::Model);
        assert!(list.occurrences.is_empty());
        let mut edited = list.clone();
        edited.set_by_owner("Ahab", "Ajab");
        let again: TermList =
            serde_json::from_str(&serde_json::to_string(&edited).unwrap()).unwrap();
        assert_eq!(again.origin("Ahab"), TermOrigin::Owner);
        assert_eq!(again.terms["Ahab"], "Ajab");
    }

    #[test]
    fn a_garbage_term_answer_never_reaches_the_list() {
        let batch: Vec<Candidate> = ["Queequeg", "Ishmael", "Pequod", "Ahab", "Starbuck", "Stubb"]
            .iter()
            .map(|term| Candidate {
                term: term.to_string(),
                context: String::new(),
                occurrences: 3,
                lowercase: 0,
            })
            .collect();
        let answer = read_answer(
            "Sure! Here are the terms:\n[[0]] Quiqueg\n[[1]] I'm sorry, but I can't help with that\n\
             [[2]] Ahab\n[[3]] Acab\n[[4]] <b>Starbuck</b>\n[[5]] Acab\nI hope this helps!",
            Some(&[0, 1, 2, 3, 4, 5]),
        );
        let (terms, rejected) = usable_terms(&batch, &answer.blocks);
        // Kept: Queequeg. Refused: Ishmael (a refusal), Pequod (another term: shifted), Starbuck
        // (markup), Ahab and Stubb (the same answer for two terms).
        assert_eq!(
            terms,
            [("Queequeg".to_string(), "Quiqueg".to_string())].into()
        );
        assert_eq!(rejected, 5);
        assert_eq!((answer.removed.before, answer.removed.after), (1, 1));
    }

    #[tokio::test]
    async fn the_offline_engine_translates_the_list() {
        let found = candidates(&book(), &[]);
        let list = translate_terms(
            &OfflineEngine,
            &found,
            "en",
            "es",
            &[],
            &PipelineConfig::default(),
        )
        .await
        .unwrap();
        assert_eq!(list.terms["Ishmael"], "Ìshmàél");
        assert_eq!(list.occurrences["Ishmael"], 4);
        assert_eq!(list.origin("Ishmael"), TermOrigin::Model);
        assert_eq!(list.usage.requests, 1);
    }
}
