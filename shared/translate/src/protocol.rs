//! What is said to the model and how its answer is read and checked.
//!
//! Blocks travel as lines `[[id]] text`, text in the manuscript's inline markup; the answer must
//! carry the same markers. The checks here decide whether an answer may be accepted: every
//! block present, no extra ones, inline marks intact, the text actually translated, glossary
//! terms used.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use booktr_formats::markup;

use crate::glossary::{self, contains_term, GlossaryEntry};
use crate::model::ChatRequest;

/// The three passes of every chapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Pass {
    Translate,
    Review,
    Polish,
}

impl Pass {
    pub const ALL: [Pass; 3] = [Pass::Translate, Pass::Review, Pass::Polish];

    pub fn task(self) -> &'static str {
        match self {
            Pass::Translate => "translate",
            Pass::Review => "review",
            Pass::Polish => "polish",
        }
    }
}

/// One block as sent: its source and, after the first pass, the current translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub id: usize,
    pub source: String,
    pub draft: Option<String>,
}

/// Everything besides the blocks that a prompt carries.
#[derive(Debug, Clone, Default)]
pub struct PromptContext<'a> {
    pub source_lang: &'a str,
    pub target_lang: &'a str,
    /// Only the entries whose source term occurs in these blocks.
    pub glossary: Vec<&'a GlossaryEntry>,
    /// Earlier chapters' choices for names and terms that occur in these blocks.
    pub ledger: Vec<(String, String)>,
    /// Glossary terms the draft failed to use: (block id, source, target).
    pub violations: Vec<(usize, String, String)>,
}

const MARKS: &str = "<i>, <b>, <sup>, <sub>, <a href=\"...\">, <br/> and <ref id=\"...\"/>";

pub fn build_request(
    pass: Pass,
    ctx: &PromptContext<'_>,
    units: &[Unit],
    max_output_tokens: u32,
) -> ChatRequest {
    let (from, to) = (ctx.source_lang, ctx.target_lang);
    let system = match pass {
        Pass::Translate => format!(
            "You are a literary translator. Translate every block from {from} to {to}, faithfully and naturally. \
             Keep every tag ({MARKS}) exactly as written, in the same order, around the matching words. \
             Always use the glossary's translations. Answer with one line per block, starting with the block's \
             marker [[n]], and nothing else."
        ),
        Pass::Review => format!(
            "You are reviewing a translation from {from} to {to} for consistency. Make names, terms and style \
             consistent with the glossary and with the terms this book already uses; fix every listed glossary \
             problem (the SOURCE of those blocks is given). Keep every tag ({MARKS}) exactly as written. Answer with every DRAFT block, revised, one line \
             per block starting with its marker [[n]]; then, one per line, the names and key terms you used as \
             TERM: \"source\" => \"translation\"."
        ),
        Pass::Polish => format!(
            "You are polishing a translation from {from} to {to} for fluency and naturalness without changing its \
             meaning, names or terms. Keep every tag ({MARKS}) exactly as written and keep the glossary's \
             translations. Answer with every DRAFT block, polished, one line per block starting with its marker \
             [[n]], and nothing else."
        ),
    };
    let mut user = String::new();
    let _ = writeln!(user, "TASK: {}\nFROM: {from}\nTO: {to}", pass.task());
    if !ctx.glossary.is_empty() {
        user.push_str("GLOSSARY:\n");
        for entry in &ctx.glossary {
            let _ = write!(
                user,
                "- {} => {}",
                quote(&entry.source),
                quote(&entry.target)
            );
            if let Some(context) = entry.context.as_deref().filter(|c| !c.trim().is_empty()) {
                let _ = write!(user, " // {}", one_line(context));
            }
            user.push('\n');
        }
    }
    if !ctx.ledger.is_empty() {
        user.push_str("BOOK TERMS:\n");
        for (source, target) in &ctx.ledger {
            let _ = writeln!(user, "- {} => {}", quote(source), quote(target));
        }
    }
    if !ctx.violations.is_empty() {
        user.push_str("FIX:\n");
        for (id, source, target) in &ctx.violations {
            let _ = writeln!(
                user,
                "- [[{id}]] must translate {} as {}",
                quote(source),
                quote(target)
            );
        }
    }
    match pass {
        Pass::Translate => {
            user.push_str("BLOCKS:\n");
            for unit in units {
                let _ = writeln!(user, "[[{}]] {}", unit.id, one_line(&unit.source));
            }
        }
        Pass::Review | Pass::Polish => {
            // The source goes along only for blocks that need fixing against it: sending every
            // block twice would nearly double what the later passes cost.
            let to_fix: Vec<&Unit> = units
                .iter()
                .filter(|u| ctx.violations.iter().any(|(id, _, _)| *id == u.id))
                .collect();
            if !to_fix.is_empty() {
                user.push_str("SOURCE:\n");
                for unit in to_fix {
                    let _ = writeln!(user, "[[{}]] {}", unit.id, one_line(&unit.source));
                }
            }
            user.push_str("DRAFT:\n");
            for unit in units {
                let draft = unit.draft.as_deref().unwrap_or(&unit.source);
                let _ = writeln!(user, "[[{}]] {}", unit.id, one_line(draft));
            }
        }
    }
    ChatRequest {
        system,
        user,
        max_output_tokens,
    }
}

/// A JSON string literal: unambiguous for any term, and easy for a model to copy.
pub fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// A model's answer, as far as it could be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    pub blocks: BTreeMap<usize, String>,
    /// Markers that appeared more than once (the first is kept).
    pub duplicates: Vec<usize>,
    /// `TERM:` lines of a review answer.
    pub terms: Vec<(String, String)>,
}

pub fn parse_answer(text: &str) -> Answer {
    let mut answer = Answer::default();
    let mut current: Option<usize> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("TERM:") {
            if let Some(term) = parse_term(rest) {
                answer.terms.push(term);
            }
            current = None;
            continue;
        }
        if let Some((id, rest)) = marker(trimmed) {
            match answer.blocks.entry(id) {
                std::collections::btree_map::Entry::Occupied(_) => {
                    answer.duplicates.push(id);
                    current = None;
                }
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(rest.trim().to_string());
                    current = Some(id);
                }
            }
            continue;
        }
        // A block the model wrapped over several lines continues here.
        if let (Some(id), false) = (current, trimmed.is_empty()) {
            if let Some(text) = answer.blocks.get_mut(&id) {
                text.push(' ');
                text.push_str(trimmed);
            }
        }
    }
    answer
}

fn marker(line: &str) -> Option<(usize, &str)> {
    let rest = line.strip_prefix("[[")?;
    let end = rest.find("]]")?;
    let id = rest[..end].trim().parse().ok()?;
    Some((id, &rest[end + 2..]))
}

fn parse_term(rest: &str) -> Option<(String, String)> {
    let (source, target) = rest.split_once("=>")?;
    let unquote = |s: &str| {
        let s = s.trim();
        serde_json::from_str::<String>(s).unwrap_or_else(|_| s.trim_matches('"').to_string())
    };
    let (source, target) = (unquote(source), unquote(target));
    (!source.is_empty() && !target.is_empty()).then_some((source, target))
}

/// Why a block's answer cannot be accepted as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    Missing,
    /// The tags differ from the source's (or the markup is not well-formed).
    BrokenMarks,
    /// The answer is the source again.
    Untranslated,
}

/// Checks one block's answer against its source.
pub fn check(source: &str, answer: Option<&str>, expect_change: bool) -> Result<String, Problem> {
    let Some(answer) = answer.filter(|a| !a.trim().is_empty() || source.trim().is_empty()) else {
        return Err(Problem::Missing);
    };
    match (markup::tags(source), markup::tags(answer)) {
        (Ok(a), Ok(b)) if a == b => {}
        _ => return Err(Problem::BrokenMarks),
    }
    if expect_change && is_untranslated(source, answer) {
        return Err(Problem::Untranslated);
    }
    Ok(answer.to_string())
}

/// The same words as the source, when the source has enough words for that to mean anything
/// (names, numbers and one-word headings legitimately stay the same).
fn is_untranslated(source: &str, answer: &str) -> bool {
    let words = |s: &str| {
        markup::plain_text(s)
            .split_whitespace()
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
    };
    let source_words = words(source);
    source_words
        .iter()
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count()
        >= 3
        && source_words == words(answer)
}

/// Glossary entries whose source term is in `source` but whose target is not in `translation`.
pub fn glossary_violations<'a>(
    entries: &'a [GlossaryEntry],
    source: &str,
    translation: &str,
) -> Vec<&'a GlossaryEntry> {
    let (source, translation) = (markup::plain_text(source), markup::plain_text(translation));
    glossary::sources(entries)
        .keep_present(entries, &source)
        .into_iter()
        .filter(|e| !contains_term(&translation, &e.target))
        .collect()
}

/// Splits units into chunks of about `budget` estimated tokens, never splitting a block.
pub fn chunk(units: Vec<Unit>, budget: u64) -> Vec<Vec<Unit>> {
    let mut chunks = Vec::new();
    let mut current: Vec<Unit> = Vec::new();
    let mut size = 0;
    for unit in units {
        let tokens = crate::model::estimate_tokens(&unit.source) + 4;
        if !current.is_empty() && size + tokens > budget {
            chunks.push(std::mem::take(&mut current));
            size = 0;
        }
        size += tokens;
        current.push(unit);
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_by_marker_even_when_wrapped() {
        let answer = parse_answer("Sure!\n[[1]] Llamadme <i>Ismael</i>.\n[[2]] Hace unos\naños.\n[[2]] again\nTERM: \"Ishmael\" => \"Ismael\"\nTERM: Ahab => Acab");
        assert_eq!(answer.blocks[&1], "Llamadme <i>Ismael</i>.");
        assert_eq!(answer.blocks[&2], "Hace unos años.");
        assert_eq!(answer.duplicates, [2]);
        assert_eq!(
            answer.terms,
            [
                ("Ishmael".into(), "Ismael".into()),
                ("Ahab".into(), "Acab".into())
            ]
        );
    }

    #[test]
    fn checks_catch_missing_blocks_broken_marks_and_echoes() {
        let source = "Call me <i>Ishmael</i>, said he.";
        assert_eq!(check(source, None, true), Err(Problem::Missing));
        assert_eq!(
            check(source, Some("Llamadme Ismael, dijo."), true),
            Err(Problem::BrokenMarks)
        );
        assert_eq!(
            check(source, Some("Llamadme <b>Ismael</b>, dijo."), true),
            Err(Problem::BrokenMarks)
        );
        assert_eq!(
            check(source, Some("Call me <i>Ishmael</i>, said he."), true),
            Err(Problem::Untranslated)
        );
        assert!(check(source, Some("Llamadme <i>Ismael</i>, dijo."), true).is_ok());
        assert!(
            check("<i>Moby-Dick</i>", Some("<i>Moby-Dick</i>"), true).is_ok(),
            "a title may stay"
        );
    }

    #[test]
    fn glossary_violations_name_the_missing_terms() {
        let entries = vec![GlossaryEntry {
            source: "whale".into(),
            target: "ballena".into(),
            context: None,
        }];
        assert_eq!(
            glossary_violations(&entries, "the white whale", "la blanca cachalote").len(),
            1
        );
        assert!(glossary_violations(&entries, "the white whale", "la Ballena blanca").is_empty());
        assert!(glossary_violations(&entries, "the sea", "el mar").is_empty());
    }

    #[test]
    fn chunks_respect_the_budget_and_block_boundaries() {
        let units: Vec<Unit> = (0..10)
            .map(|id| Unit {
                id,
                source: "word ".repeat(40),
                draft: None,
            })
            .collect();
        let chunks = chunk(units, 130);
        assert!(
            chunks.iter().all(|c| !c.is_empty() && c.len() <= 3),
            "{:?}",
            chunks.iter().map(Vec::len).collect::<Vec<_>>()
        );
        assert_eq!(chunks.iter().map(Vec::len).sum::<usize>(), 10);
    }

    #[test]
    fn prompts_carry_glossary_ledger_fixes_and_blocks() {
        let entry = GlossaryEntry {
            source: "whale".into(),
            target: "ballena".into(),
            context: Some("the animal".into()),
        };
        let ctx = PromptContext {
            source_lang: "en",
            target_lang: "es",
            glossary: vec![&entry],
            ledger: vec![("Ahab".into(), "Acab".into())],
            violations: vec![(2, "whale".into(), "ballena".into())],
        };
        let units = [Unit {
            id: 2,
            source: "The whale.".into(),
            draft: Some("El cachalote.".into()),
        }];
        let request = build_request(Pass::Review, &ctx, &units, 1000);
        assert!(request
            .user
            .contains("- \"whale\" => \"ballena\" // the animal"));
        assert!(request.user.contains("BOOK TERMS:\n- \"Ahab\" => \"Acab\""));
        assert!(request
            .user
            .contains("- [[2]] must translate \"whale\" as \"ballena\""));
        assert!(request
            .user
            .contains("SOURCE:\n[[2]] The whale.\nDRAFT:\n[[2]] El cachalote."));
        let clean = PromptContext {
            violations: Vec::new(),
            ..ctx
        };
        let request = build_request(Pass::Polish, &clean, &units, 1000);
        assert!(
            !request.user.contains("SOURCE:"),
            "no source without something to fix against it"
        );
    }
}
