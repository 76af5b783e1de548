//! The text side of terms from edits, on a passage's inline markup: where a term's rendering
//! occurs, what replacing it gives, and which renderings an edit changed.
//!
//! A rendering is looked for as the glossary is (`booktr_translate::glossary`): whole words,
//! ignoring case; and only in the passage's own words, never inside a tag (a link's address),
//! an entity or a kept mark (`<code>`, `<keep>`: text that is never translated).
//!
//! The rule an edit is read by ([`suggestions`]): a term of the book whose source occurs in the
//! passage's source, whose rendering the text had before the edit and has no longer after it,
//! was renamed to what the edit put where that rendering stood. "Where it stood" is found by a
//! word-level comparison of the two texts: the changed stretch around the rendering's first
//! occurrence that a usable rendering came from (non-empty, without marks, at most
//! [`MAX_RENDERING`] characters, not the old rendering again).

use booktr_formats::markup;
use booktr_translate::glossary::{self, GlossaryEntry, TermSet};

/// The longest rendering taken from an edit or given to apply: a glossary entry's limit.
pub const MAX_RENDERING: usize = 500;
/// The most token pairs the word-level comparison of a passage's two texts weighs; past it the
/// changed middle of the texts counts as one change (still right for a one-word rename).
const MAX_COMPARED: usize = 1_000_000;

/// A change of how a term is rendered: the term in the source, its old rendering, its new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermChange {
    pub source: String,
    pub from: String,
    pub to: String,
}

/// The byte ranges of the whole-word occurrences of `term` (plain text) in `markup`'s words.
pub fn occurrences(markup: &str, term: &str) -> Vec<(usize, usize)> {
    let escaped = markup::escape_text(term.trim());
    let set = TermSet::new([escaped.as_str()]);
    let mut found = Vec::new();
    for (start, end) in translated_text(markup) {
        let segment = &markup[start..end];
        let mut at = 0;
        while let Some(hit) = set.earliest(&segment[at..]) {
            let (from, to) = (start + at + hit.start, start + at + hit.end);
            // `amp` in `&amp;` is an entity, not a word.
            let in_entity = markup[..from].ends_with('&') && markup[to..].starts_with(';');
            if !in_entity {
                found.push((from, to));
            }
            at += hit.end.max(hit.start + 1);
            while at < segment.len() && !segment.is_char_boundary(at) {
                at += 1;
            }
        }
    }
    found
}

/// `markup` with every occurrence of `from` replaced by `to` (both plain text), None when it
/// holds none. An occurrence that starts with a capital (a sentence's first word) gets `to`
/// with a capital first letter; otherwise `to` is written as given. Tags are left as they are,
/// so the marks stay the source's.
pub fn replace(markup: &str, from: &str, to: &str) -> Option<String> {
    let found = occurrences(markup, from);
    if found.is_empty() {
        return None;
    }
    let escaped = markup::escape_text(to.trim());
    let capitalised = capitalise(&escaped);
    let mut out = String::with_capacity(markup.len() + found.len() * escaped.len());
    let mut last = 0;
    for (start, end) in found {
        out.push_str(&markup[last..start]);
        let upper = markup[start..end]
            .chars()
            .next()
            .is_some_and(char::is_uppercase);
        out.push_str(if upper { &capitalised } else { &escaped });
        last = end;
    }
    out.push_str(&markup[last..]);
    Some(out)
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The term changes an edit of a passage suggests: for each of `entries` whose source occurs in
/// `source` (the passage's source, markup), by the rule of this module, comparing `before` and
/// `after` (the passage's text before and after the edit).
pub fn suggestions(
    entries: &[GlossaryEntry],
    source: &str,
    before: &str,
    after: &str,
) -> Vec<TermChange> {
    let source = markup::plain_text(source);
    let mut changes: Vec<TermChange> = Vec::new();
    let mut comparison: Option<Comparison> = None;
    for entry in glossary::matching(entries, &source) {
        if changes
            .iter()
            .any(|c| c.source.to_lowercase() == entry.source.to_lowercase())
        {
            continue;
        }
        let old = occurrences(before, &entry.target);
        if old.is_empty() || !occurrences(after, &entry.target).is_empty() {
            continue;
        }
        let comparison = comparison.get_or_insert_with(|| Comparison::of(before, after));
        let rendering = old
            .iter()
            .filter_map(|&range| comparison.counterpart(range))
            .filter_map(|raw| usable(raw, &entry.target))
            .next();
        if let Some(to) = rendering {
            changes.push(TermChange {
                source: entry.source.clone(),
                from: entry.target.clone(),
                to,
            });
        }
    }
    changes
}

/// `raw` (a stretch of the edited markup) as a rendering, if it is one.
fn usable(raw: &str, old: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() || raw.contains('<') {
        return None;
    }
    let text = markup::plain_text(raw).trim().to_string();
    let fits = !text.is_empty() && text.chars().count() <= MAX_RENDERING;
    (fits && text.to_lowercase() != old.trim().to_lowercase()).then_some(text)
}

/// The byte ranges of `markup` that are translated text: between tags, outside kept marks.
fn translated_text(markup: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut kept = 0usize;
    let mut at = 0;
    while at < markup.len() {
        let Some(lt) = markup[at..].find('<').map(|i| at + i) else {
            if kept == 0 {
                ranges.push((at, markup.len()));
            }
            break;
        };
        if lt > at && kept == 0 {
            ranges.push((at, lt));
        }
        let Some(gt) = markup[lt..].find('>').map(|i| lt + i) else {
            break;
        };
        let tag = &markup[lt + 1..gt];
        let name = tag.trim_start_matches('/').split([' ', '/']).next();
        if name.is_some_and(|n| markup::KEPT.contains(&n)) && !tag.ends_with('/') {
            if tag.starts_with('/') {
                kept = kept.saturating_sub(1);
            } else {
                kept += 1;
            }
        }
        at = gt + 1;
    }
    ranges
}

/// A passage's two texts compared token by token (a tag, an entity, a word, a run of spaces or
/// one other character each): which token of the first stands unchanged in the second.
struct Comparison<'a> {
    before: Vec<(usize, usize)>,
    after: Vec<(usize, usize)>,
    after_text: &'a str,
    /// For each token of `before`, its unchanged counterpart in `after`.
    kept: Vec<Option<usize>>,
}

impl<'a> Comparison<'a> {
    fn of(before: &str, after: &'a str) -> Comparison<'a> {
        let (a, b) = (tokens(before), tokens(after));
        let text_a = |i: usize| &before[a[i].0..a[i].1];
        let text_b = |j: usize| &after[b[j].0..b[j].1];
        let mut kept = vec![None; a.len()];
        let mut prefix = 0;
        while prefix < a.len().min(b.len()) && text_a(prefix) == text_b(prefix) {
            kept[prefix] = Some(prefix);
            prefix += 1;
        }
        let mut suffix = 0;
        while suffix < (a.len() - prefix).min(b.len() - prefix)
            && text_a(a.len() - 1 - suffix) == text_b(b.len() - 1 - suffix)
        {
            kept[a.len() - 1 - suffix] = Some(b.len() - 1 - suffix);
            suffix += 1;
        }
        let (n, m) = (a.len() - prefix - suffix, b.len() - prefix - suffix);
        if n > 0 && m > 0 && n.saturating_mul(m) <= MAX_COMPARED {
            // The longest common subsequence of the changed middles.
            let width = m + 1;
            let mut lengths = vec![0u32; (n + 1) * width];
            for i in (0..n).rev() {
                for j in (0..m).rev() {
                    lengths[i * width + j] = if text_a(prefix + i) == text_b(prefix + j) {
                        lengths[(i + 1) * width + j + 1] + 1
                    } else {
                        lengths[(i + 1) * width + j].max(lengths[i * width + j + 1])
                    };
                }
            }
            let (mut i, mut j) = (0, 0);
            while i < n && j < m {
                if text_a(prefix + i) == text_b(prefix + j) {
                    kept[prefix + i] = Some(prefix + j);
                    i += 1;
                    j += 1;
                } else if lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
                    i += 1;
                } else {
                    j += 1;
                }
            }
        }
        Comparison {
            before: a,
            after: b,
            after_text: after,
            kept,
        }
    }

    /// What the second text has where the first has the byte range `range` (token-aligned): the
    /// changed stretch around it, from the unchanged token before it to the one after it.
    fn counterpart(&self, (start, end): (usize, usize)) -> Option<&'a str> {
        let first = self.before.iter().position(|t| t.0 == start)?;
        let last = self.before.iter().position(|t| t.1 == end)?;
        let mut lo = first;
        while lo > 0 && self.kept[lo - 1].is_none() {
            lo -= 1;
        }
        let mut hi = last + 1;
        while hi < self.before.len() && self.kept[hi].is_none() {
            hi += 1;
        }
        let from = match lo {
            0 => 0,
            _ => self.kept[lo - 1]? + 1,
        };
        let to = self
            .kept
            .get(hi)
            .copied()
            .flatten()
            .unwrap_or(self.after.len());
        if from >= to {
            return None;
        }
        let (start, end) = (self.after[from].0, self.after[to - 1].1);
        Some(&self.after_text[start..end])
    }
}

/// The tokens of a markup text, as byte ranges.
fn tokens(text: &str) -> Vec<(usize, usize)> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let close = match c {
            '<' => Some('>'),
            '&' => Some(';'),
            _ => None,
        };
        let mut end = start + c.len_utf8();
        if let Some(close) = close {
            for (at, d) in chars.by_ref() {
                end = at + d.len_utf8();
                if d == close {
                    break;
                }
            }
        } else if is_word(c) || c.is_whitespace() {
            let word = is_word(c);
            while let Some(&(at, d)) = chars.peek() {
                if (word && is_word(d)) || (!word && d.is_whitespace()) {
                    end = at + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
        }
        tokens.push((start, end));
    }
    tokens
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(source: &str, target: &str) -> GlossaryEntry {
        GlossaryEntry {
            source: source.into(),
            target: target.into(),
            context: None,
        }
    }

    fn change(source: &str, from: &str, to: &str) -> TermChange {
        TermChange {
            source: source.into(),
            from: from.into(),
            to: to.into(),
        }
    }

    #[test]
    fn a_rendering_is_found_in_words_never_in_tags_entities_or_kept_marks() {
        let text = r#"La ballena, <a href="ballena.html">Ballena</a> &amp; <code>ballena</code> ballenas."#;
        let found: Vec<&str> = occurrences(text, "ballena")
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect();
        assert_eq!(found, ["ballena", "Ballena"]);
        assert!(occurrences("a &amp; b", "amp").is_empty());
        assert_eq!(occurrences("AT&amp;T llama", "AT&T"), [(0, 8)]);
    }

    #[test]
    fn replacing_keeps_the_marks_and_a_capital_where_a_sentence_starts() {
        let text = "Ballena a la vista. La <i>ballena</i> blanca, la ballenera.";
        assert_eq!(
            replace(text, "ballena", "cachalote").as_deref(),
            Some("Cachalote a la vista. La <i>cachalote</i> blanca, la ballenera.")
        );
        assert_eq!(replace(text, "arpón", "lanza"), None);
        assert_eq!(
            replace("Tom y Jerry", "Tom", "T<o>m").as_deref(),
            Some("T&lt;o&gt;m y Jerry")
        );
    }

    #[test]
    fn an_edit_that_renames_a_term_suggests_the_new_rendering() {
        let entries = [entry("whale", "ballena"), entry("sea", "mar")];
        let source = "The white <i>whale</i> swam in the sea.";
        let before = "La <i>ballena</i> blanca nadaba en el mar.";
        let after = "El <i>cachalote</i> blanco nadaba en el mar.";
        assert_eq!(
            suggestions(&entries, source, before, after),
            [change("whale", "ballena", "cachalote")]
        );
    }

    #[test]
    fn a_rendering_of_several_words_is_taken_whole() {
        let entries = [entry("Captain Ahab", "Capitán Ahab")];
        let source = "Then Captain Ahab spoke.";
        let before = "Entonces el Capitán Ahab habló.";
        let after = "Entonces el capitán Acab habló.";
        assert_eq!(
            suggestions(&entries, source, before, after),
            [change("Captain Ahab", "Capitán Ahab", "capitán Acab")]
        );
    }

    #[test]
    fn an_edit_that_keeps_drops_or_never_had_the_rendering_suggests_nothing() {
        let entries = [entry("whale", "ballena")];
        let source = "The whale and the whale.";
        let before = "La ballena y la ballena.";
        // One occurrence kept: the owner did not rename the term.
        assert!(suggestions(&entries, source, before, "La orca y la ballena.").is_empty());
        // Only the case changed.
        assert!(suggestions(&entries, source, before, "La Ballena y la Ballena.").is_empty());
        // Dropped, not renamed.
        assert!(suggestions(&entries, "The whale.", "La ballena.", "La.").is_empty());
        // The term is not in this passage's source.
        assert!(suggestions(&entries, "The sea.", "La ballena.", "La orca.").is_empty());
        // The model's text never had the rendering.
        assert!(suggestions(&entries, "The whale.", "La orca.", "El cetáceo.").is_empty());
        // Changed into markup: not a rendering.
        assert!(suggestions(&entries, "The whale.", "La ballena.", "La <i>orca</i>.",).is_empty());
    }

    #[test]
    fn other_changes_elsewhere_in_the_passage_leave_the_rendering_found() {
        let entries = [entry("whale", "ballena")];
        let source = "Call me Ishmael; the whale waits there.";
        let before = "Llamadme Ismael; la ballena espera allí.";
        let after = "Me llamo Ismael; el cachalote aguarda allí.";
        assert_eq!(
            suggestions(&entries, source, before, after),
            [change("whale", "ballena", "cachalote")]
        );
    }
}
