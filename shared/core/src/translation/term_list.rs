//! The book's term list as its owner reads and changes it: every term its chapters enforce (the
//! run's glossary, then the term pass's list), each saying where it came from, and the owner's
//! changes to the list. A chapter reads the list when it starts, so a change holds for the
//! chapters translated after it; a run started with `pauseAtTerms` waits for the owner before
//! the first.
//!
//! The glossary's entries are shown but not changed here: they are part of the run's
//! translation key, and the glossary is where they are edited.

use booktr_translate::terms::{TermEntry, MAX_CANDIDATES};
use tracing::{info, instrument};

use super::error::TranslationError;
use super::model::BookTerms;
use super::passages::{check_characters, PassageError};
use super::service::Translations;
use crate::books::{store, Book};

/// The most changes in one request.
pub const MAX_CHANGES: usize = MAX_CANDIDATES;
/// The most entries a list may hold after the owner's changes: the term pass's, and as many
/// again of the owner's own.
pub const MAX_TERMS: usize = 2 * MAX_CANDIDATES;
/// The longest term or rendering, in characters.
pub const MAX_TERM_CHARS: usize = 200;

/// The terms a book's chapters enforce.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BookTermList {
    /// Whether the term pass of the book's run has stored its list; until then only the
    /// glossary's entries are listed and the list cannot be changed.
    pub ready: bool,
    /// The glossary's entries, then the list's.
    pub terms: Vec<TermEntry>,
}

/// The owner's changes to a term list: renderings to set (the owner's from then on, a term
/// given as its own rendering included) and terms to take off.
#[derive(Debug, Clone, Default)]
pub struct TermListChanges {
    pub set: Vec<(String, String)>,
    pub remove: Vec<String>,
}

impl TermListChanges {
    /// The changes trimmed and checked: at most [`MAX_CHANGES`], each text 1 to
    /// [`MAX_TERM_CHARS`] characters a book can hold, no term named twice.
    fn checked(self) -> Result<TermListChanges, TranslationError> {
        if self.set.len() + self.remove.len() > MAX_CHANGES {
            return Err(TranslationError::Invalid(format!(
                "at most {MAX_CHANGES} changes at once ({} terms set, {} removed)",
                self.set.len(),
                self.remove.len()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        let mut named = |field: &str, term: &str| {
            if seen.insert(term.to_lowercase()) {
                Ok(())
            } else {
                Err(TranslationError::Invalid(format!(
                    "{field}: '{term}' is named more than once"
                )))
            }
        };
        let mut set = Vec::with_capacity(self.set.len());
        for (position, (source, target)) in self.set.into_iter().enumerate() {
            let field = format!("terms[{position}]");
            let source = text(&format!("{field}.source"), "", &source)?;
            let target = text(&format!("{field}.target"), &source, &target)?;
            named(&field, &source)?;
            set.push((source, target));
        }
        let mut remove = Vec::with_capacity(self.remove.len());
        for (position, source) in self.remove.into_iter().enumerate() {
            let field = format!("remove[{position}]");
            let source = text(&field, "", &source)?;
            named(&field, &source)?;
            remove.push(source);
        }
        Ok(TermListChanges { set, remove })
    }
}

/// `value` trimmed, or 400 naming `field`: empty, too long, a control character (a term is one
/// line), or a character the book's files cannot hold.
fn text(field: &str, source: &str, value: &str) -> Result<String, TranslationError> {
    let value = value.trim();
    if value.is_empty() || value.chars().count() > MAX_TERM_CHARS {
        return Err(TranslationError::Invalid(format!(
            "{field}: 1 to {MAX_TERM_CHARS} characters"
        )));
    }
    if let Some((place, c)) = value.chars().enumerate().find(|(_, c)| c.is_control()) {
        return Err(TranslationError::Invalid(format!(
            "{field}: character {place} is U+{:04X}, a control character (a term is one line)",
            c as u32
        )));
    }
    // The source is checked against itself: a bidirectional control the book's own text has
    // is allowed in a rendering of it, as in an edit.
    let source = if source.is_empty() { value } else { source };
    check_characters(field, source, value).map_err(|e| match e {
        PassageError::Characters(m) => TranslationError::Invalid(m),
        other => TranslationError::Invalid(other.to_string()),
    })?;
    Ok(value.to_string())
}

impl Translations {
    /// The terms the chapters of the caller's book enforce, each with where it came from.
    #[instrument(skip(self))]
    pub async fn term_list(
        &self,
        user_id: &str,
        book_id: &str,
    ) -> Result<BookTermList, TranslationError> {
        let book = self.books.get(user_id, book_id).await?;
        let glossary = self.run_glossary(&book.id).await?;
        let list = self.book_terms(&book).await?;
        Ok(BookTermList {
            ready: list.is_some(),
            terms: list.unwrap_or_default().entries(&glossary),
        })
    }

    /// Applies the owner's changes to the list of the book's run: each rendering set becomes
    /// the owner's, each term removed is translated freely. 400 before the term pass has
    /// stored the list, for a term the run's glossary fixes, or for a list grown past
    /// [`MAX_TERMS`]; a term to remove that is not on the list is no change.
    #[instrument(skip(self, changes), fields(set = changes.set.len(), remove = changes.remove.len()))]
    pub async fn change_term_list(
        &self,
        user_id: &str,
        book_id: &str,
        changes: TermListChanges,
    ) -> Result<BookTermList, TranslationError> {
        let changes = changes.checked()?;
        let book = self.books.get(user_id, book_id).await?;
        let (key, mut stored) = self.stored_terms(&book).await?;
        let glossary = self.run_glossary(&book.id).await?;
        for (source, _) in &changes.set {
            if let Some(entry) = glossary.iter().find(|e| same_term(&e.source, source)) {
                return Err(TranslationError::Invalid(format!(
                    "terms: '{}' is fixed by the run's glossary (as '{}'); change it in the \
                     glossary and start the translation again",
                    entry.source, entry.target
                )));
            }
        }
        let list = &mut stored.list;
        let mut removed = 0;
        for source in &changes.remove {
            let listed = listed_as(list.terms.keys(), source);
            if list.remove(&listed) {
                removed += 1;
            }
        }
        for (source, target) in &changes.set {
            // The list's own spelling of the term, so a change never adds it twice.
            let listed = listed_as(list.terms.keys(), source);
            list.set_by_owner(&listed, target);
        }
        if list.terms.len() > MAX_TERMS {
            return Err(TranslationError::Invalid(format!(
                "terms: a list holds at most {MAX_TERMS} terms; this change would make it {}",
                list.terms.len()
            )));
        }
        self.put_json(&store::terms_key(&book.id, &key)?, &stored)
            .await?;
        info!(
            set = changes.set.len(),
            removed,
            terms = stored.list.terms.len(),
            "the owner changed the book's term list"
        );
        Ok(BookTermList {
            ready: true,
            terms: stored.list.entries(&glossary),
        })
    }

    /// The stored list of the book's run and its key, or 400 saying how to have one made.
    async fn stored_terms(&self, book: &Book) -> Result<(String, BookTerms), TranslationError> {
        let not_yet = || {
            TranslationError::Invalid(format!(
                "the book has no term list yet (it is {}): its list is made when a translation \
                 starts, before the chapters; start with pauseAtTerms to change it before any \
                 chapter is translated",
                book.status
            ))
        };
        let key = book.translation_key.clone().ok_or_else(not_yet)?;
        let stored = self
            .read_json::<BookTerms>(&store::terms_key(&book.id, &key)?)
            .await?
            .filter(|terms| terms.key == key)
            .ok_or_else(not_yet)?;
        Ok((key, stored))
    }
}

fn same_term(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

/// How the list spells `source` (the model's "Pequod" for the owner's "pequod"), or `source`.
fn listed_as<'a>(mut listed: impl Iterator<Item = &'a String>, source: &str) -> String {
    listed
        .find(|term| same_term(term, source))
        .cloned()
        .unwrap_or_else(|| source.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(set: &[(&str, &str)], remove: &[&str]) -> TermListChanges {
        TermListChanges {
            set: set
                .iter()
                .map(|(s, t)| (s.to_string(), t.to_string()))
                .collect(),
            remove: remove.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn refusal(changes: TermListChanges) -> String {
        match changes.checked() {
            Err(TranslationError::Invalid(m)) => m,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn changes_are_trimmed_and_a_term_may_be_its_own_rendering() {
        let checked = changes(&[(" Ishmael ", "Ishmael")], &["Pequod"])
            .checked()
            .unwrap();
        assert_eq!(checked.set, [("Ishmael".into(), "Ishmael".into())]);
        assert_eq!(checked.remove, ["Pequod"]);
    }

    #[test]
    fn empty_long_control_or_unholdable_texts_and_twice_named_terms_are_refused() {
        assert!(refusal(changes(&[("", "x")], &[])).starts_with("terms[0].source"));
        let long = "a".repeat(MAX_TERM_CHARS + 1);
        assert!(refusal(changes(&[("Ahab", &long)], &[])).starts_with("terms[0].target"));
        assert!(refusal(changes(&[("Ahab", "A\u{0}cab")], &[])).contains("U+0000"));
        assert!(refusal(changes(&[("Ahab", "Acab\u{FFFE}")], &[])).contains("U+FFFE"));
        assert!(refusal(changes(&[("Ahab", "\u{202E}bacA")], &[])).contains("U+202E"));
        assert!(refusal(changes(&[("Ahab", "Acab")], &["ahab"])).contains("more than once"));
        let many: Vec<String> = (0..=MAX_CHANGES).map(|i| format!("T{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(refusal(changes(&[], &many)).starts_with("at most"));
    }

    #[test]
    fn a_change_finds_the_term_as_the_list_spells_it() {
        let listed = ["Pequod".to_string(), "Queequeg".to_string()];
        assert_eq!(listed_as(listed.iter(), "pequod"), "Pequod");
        assert_eq!(listed_as(listed.iter(), "Starbuck"), "Starbuck");
    }
}
