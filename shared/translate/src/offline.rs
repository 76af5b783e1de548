//! The offline engine: a `ChatModel` that needs no network and no key. It is a stand-in, not a
//! translator: its "translation" is a pseudo-translation (vowels accented: "Call me Ishmael" ->
//! "Càll mé Ìshmàél") so that output is visibly not real, while it keeps every block, every
//! inline mark and applies the glossary, so the whole pipeline can be seen working end to end.
//! It reads the prompts this crate writes (see `protocol`).

use async_trait::async_trait;

use crate::glossary::TermSet;
use crate::model::{estimate_tokens, ChatError, ChatModel, ChatRequest, ChatResponse};
use crate::pipeline::edited;
use crate::protocol::quote;
use crate::reading::read_answer;

pub const NAME: &str = "offline-pseudo";

#[derive(Debug, Default, Clone, Copy)]
pub struct OfflineEngine;

#[async_trait]
impl ChatModel for OfflineEngine {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let text = if request.user.starts_with("TASK: ") {
            answer(&request.user)
        } else {
            simple_answer(&request.system, &request.user)
        };
        Ok(ChatResponse {
            input_tokens: estimate_tokens(&request.system) + estimate_tokens(&request.user),
            output_tokens: estimate_tokens(&text),
            text,
            truncated: false,
        })
    }

    fn name(&self) -> &str {
        NAME
    }

    fn writes_language(&self) -> bool {
        false
    }
}

fn section<'a>(user: &'a str, name: &str) -> &'a str {
    let Some(start) = user.find(&format!("{name}:\n")) else {
        return "";
    };
    let body = &user[start + name.len() + 2..];
    // Sections end where the next upper-case header line begins.
    let end = body
        .lines()
        .scan(0, |offset, line| {
            let at = *offset;
            *offset += line.len() + 1;
            Some((at, line))
        })
        .find(|(_, line)| {
            line.ends_with(':')
                && line
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == ' ' || c == ':')
        })
        .map_or(body.len(), |(at, _)| at);
    &body[..end]
}

fn glossary(user: &str) -> Vec<(String, String)> {
    section(user, "GLOSSARY")
        .lines()
        .filter_map(|line| {
            let line = line.strip_prefix("- ")?;
            let line = line.split(" // ").next()?;
            let (source, target) = line.split_once(" => ")?;
            Some((
                serde_json::from_str(source).ok()?,
                serde_json::from_str(target).ok()?,
            ))
        })
        .collect()
}

/// The last rung's prompt (see `protocol::simple_request`): the text alone, the glossary in
/// the instructions as `Translate "x" as "y".`
fn simple_answer(system: &str, user: &str) -> String {
    let Some(text) = crate::protocol::read_simple_request(user) else {
        return String::new();
    };
    let glossary: Vec<(String, String)> = system
        .split(" Translate ")
        .skip(1)
        .filter_map(|rule| {
            let (source, target) = rule.trim_end_matches('.').split_once(" as ")?;
            Some((
                serde_json::from_str(source).ok()?,
                serde_json::from_str(target).ok()?,
            ))
        })
        .collect();
    pseudo(text, &glossary)
}

fn answer(user: &str) -> String {
    let task = user
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("TASK: "))
        .unwrap_or("translate");
    let glossary = glossary(user);
    let (terms, targets) = replacements(&glossary);
    let mut out = String::new();
    match task {
        "translate" => {
            for (id, text) in read_answer(section(user, "BLOCKS"), None).blocks {
                out.push_str(&format!(
                    "[[{id}]] {}\n",
                    pseudo_markup(&text, &terms, &targets)
                ));
            }
        }
        _ => {
            // Review and polish answer with the blocks they change. Blocks the prompt says
            // miss a glossary term are translated again from the source, which applies the
            // glossary. The share of blocks an editor is assumed to change ([`edited`]) is
            // answered too, as it stands: the pseudo-translation has nothing to improve, but
            // a run without a key then spends the tokens the quote foresees. The review also
            // reports the glossary terms it used, as a real reviewer reports names and terms.
            let to_fix: Vec<usize> = section(user, "FIX")
                .lines()
                .filter_map(|l| l.strip_prefix("- [[")?.split_once("]]")?.0.parse().ok())
                .collect();
            let sources = read_answer(section(user, "SOURCE"), None).blocks;
            let drafts = read_answer(section(user, "DRAFT"), None).blocks;
            for (id, text) in &drafts {
                let (text, why) = match sources.get(id).filter(|_| to_fix.contains(id)) {
                    Some(source) => (pseudo_markup(source, &terms, &targets), "glossary term"),
                    None if edited(*id) => (text.clone(), "reads well as it is"),
                    None => continue,
                };
                out.push_str(&format!("[[{id}]] {text}\nWHY: {why}\n"));
            }
            if out.is_empty() {
                out.push_str("NO CHANGES\n");
            }
            if task == "review" {
                for (source, target) in &glossary {
                    out.push_str(&format!("TERM: {} => {}\n", quote(source), quote(target)));
                }
            }
        }
    }
    out
}

/// Pseudo-translates markup: text outside tags is accented, glossary terms become their targets;
/// tags and entities are kept as they are.
pub fn pseudo(markup: &str, glossary: &[(String, String)]) -> String {
    let (terms, targets) = replacements(glossary);
    pseudo_markup(markup, &terms, &targets)
}

/// The glossary's source terms as one set, and the target each is replaced with (same order).
fn replacements(glossary: &[(String, String)]) -> (TermSet, Vec<&str>) {
    let terms = TermSet::new(glossary.iter().map(|(source, _)| source.as_str()));
    let targets = glossary.iter().map(|(_, target)| target.as_str()).collect();
    (terms, targets)
}

fn pseudo_markup(markup: &str, terms: &TermSet, targets: &[&str]) -> String {
    let mut out = String::with_capacity(markup.len() + 16);
    let mut rest = markup;
    while let Some(lt) = rest.find('<') {
        out.push_str(&pseudo_text(&rest[..lt], terms, targets));
        let Some(gt) = rest[lt..].find('>') else {
            out.push_str(&rest[lt..]);
            return out;
        };
        out.push_str(&rest[lt..lt + gt + 1]);
        rest = &rest[lt + gt + 1..];
    }
    out.push_str(&pseudo_text(rest, terms, targets));
    out
}

fn pseudo_text(text: &str, terms: &TermSet, targets: &[&str]) -> String {
    // The earliest glossary term in the text is replaced; what precedes it is accented.
    match terms.earliest(text) {
        Some(found) => format!(
            "{}{}{}",
            accent(&text[..found.start]),
            targets[found.term],
            pseudo_text(&text[found.end..], terms, targets)
        ),
        None => accent(text),
    }
}

fn accent(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut word = String::new();
    let mut in_entity = false;
    for c in text.chars() {
        if c == '&' {
            in_entity = true;
        }
        if !in_entity && c.is_alphabetic() {
            word.push(c);
        } else {
            out.push_str(&pseudo_word(&word));
            word.clear();
            out.push(c);
        }
        if c == ';' {
            in_entity = false;
        }
    }
    out.push_str(&pseudo_word(&word));
    out
}

/// A word made visibly not the source's: Latin vowels accented; a word of another script (which
/// has no such vowels) marked after its first letter, with a tatweel in Arabic script ("كـتاب")
/// and a dot above elsewhere, so that no script comes back looking untranslated.
fn pseudo_word(word: &str) -> String {
    let accented: String = word
        .chars()
        .map(|c| match c {
            'a' => 'à',
            'e' => 'é',
            'i' => 'ì',
            'o' => 'ö',
            'u' => 'ü',
            'A' => 'À',
            'E' => 'É',
            'I' => 'Ì',
            'O' => 'Ö',
            'U' => 'Ü',
            other => other,
        })
        .collect();
    let Some(first) = word.chars().next() else {
        return accented;
    };
    // Beyond Latin (and its extensions): Greek, Cyrillic, Hebrew, Arabic, Indic, CJK ...
    if accented != word || !word.chars().any(|c| c > '\u{024F}') {
        return accented;
    }
    let mark = if matches!(first as u32, 0x0600..=0x06FF | 0x0750..=0x077F | 0x08A0..=0x08FF) {
        '\u{0640}'
    } else {
        '\u{0307}'
    };
    let mut out = String::with_capacity(word.len() + 3);
    out.push(first);
    out.push(mark);
    out.push_str(&word[first.len_utf8()..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudo_translation_keeps_marks_and_entities_and_applies_the_glossary() {
        let glossary = vec![("whale".to_string(), "ballena".to_string())];
        let out = pseudo(
            r##"Call me <i>Ishmael</i> &amp; the <a href="#n1">White Whale</a>."##,
            &glossary,
        );
        assert_eq!(
            out,
            r##"Càll mé <i>Ìshmàél</i> &amp; thé <a href="#n1">Whìté ballena</a>."##
        );
    }

    #[test]
    fn every_script_comes_back_visibly_marked() {
        assert_eq!(pseudo("كتاب جميل", &[]), "كـتاب جـميل");
        assert_eq!(
            pseudo("Война и мир", &[]),
            "В\u{307}ойна и\u{307} м\u{307}ир"
        );
        // Latin words without a vowel to accent stay as they are.
        assert_eq!(pseudo("Why try", &[]), "Why try");
    }
}
