//! Attribute names and key prefixes are spelled only in the record modules: each aggregate's
//! item is mapped onto the table in one typed place, keys included, and everything else calls
//! its operations. This reads the crate's sources and fails on a string literal given as an
//! attribute name to the item API anywhere else, and on a key prefix literal (`"USER#"`,
//! `"BOOK#{id}"`) anywhere else.

// A test reading the crate's own sources: a file it cannot read is a failure.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The modules that map items onto the table, where attribute names belong (paths under `src/`).
/// `items.rs` holds the readers every record uses, and the ownership condition (`userId`) of
/// the purge's sweep over every indexed item a user owns.
const RECORD_MODULES: &[&str] = &[
    "accounts/record.rs",
    "books/record.rs",
    "community/record.rs",
    "developer/record.rs",
    "email/record.rs",
    "events/record.rs",
    "glossaries/record.rs",
    "items.rs",
    "limits/record.rs",
    "memory/record.rs",
    "preferences/record.rs",
    "privacy/record.rs",
    "translation/passages/proposals/record.rs",
    "translation/passages/record.rs",
    "usage/record.rs",
];

/// Files that still spell key prefixes outside a record module; none is left. A file that
/// spelled them would be listed here until its keys moved, and the list may only shrink
/// (`every_file_still_to_move_spells_a_key_prefix`).
const KEYS_STILL_TO_MOVE: &[&str] = &[];

/// Methods whose first argument is an attribute name: `Item::{with, str, i64, bool}`,
/// `Update::{set, remove, add}`, the readers of `items::Fields`, and the attribute map's own.
const NAME_FIRST_METHODS: &[&str] = &[
    ".with(",
    ".str(",
    ".i64(",
    ".bool(",
    ".set(",
    ".remove(",
    ".add(",
    ".opt_str(",
    ".string(",
    ".opt_string(",
    ".int(",
    ".opt_int(",
    ".opt_bool(",
    ".time(",
    ".opt_time(",
    ".parsed(",
    ".strings(",
    ".json(",
    ".corrupt(",
    "Condition::equals(",
    "Condition::Equals(",
    "Condition::In(",
    "Condition::AtMost(",
];

/// Methods of the attribute map (`item.attrs.get("quality")`), wherever the call is broken
/// across lines.
const ATTRS_METHODS: &[&str] = &[".get(", ".insert(", ".remove(", ".contains_key("];

/// Functions of `items` whose second argument is an attribute name (`parse_time(&item, "x")`).
const NAME_SECOND_FUNCTIONS: &[&str] = &[
    "parse_time(",
    "required_time(",
    "required_str(",
    "parsed(",
    "opt_string(",
    "corrupt(",
    "CorruptItem::of(",
];

/// Where `text` passes a string literal as an attribute name: (line, the call).
fn violations(text: &str) -> Vec<(usize, String)> {
    let code = without_comments(text);
    let mut found = Vec::new();
    let mut check = |at: usize, call: &str, literal_at: Option<usize>| {
        if let Some(start) = literal_at {
            if code[start..].starts_with('"') {
                let line = code[..at].matches('\n').count() + 1;
                let end = code[start + 1..]
                    .find('"')
                    .map_or(code.len(), |e| start + e + 2);
                found.push((line, format!("{call}{}", &code[start..end])));
            }
        }
    };
    for call in NAME_FIRST_METHODS {
        for (at, _) in code.match_indices(call) {
            let args = at + call.len();
            check(at, call, Some(skip_space(&code, args)));
        }
    }
    for method in ATTRS_METHODS {
        for (at, _) in code.match_indices(method) {
            if code[..at].trim_end().ends_with("attrs") {
                let args = at + method.len();
                check(at, "attrs", Some(skip_space(&code, args)));
            }
        }
    }
    for call in NAME_SECOND_FUNCTIONS {
        for (at, _) in code.match_indices(call) {
            // A free function, not a method or a longer name ending the same way.
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c == '.' || c == '_' || c.is_alphanumeric()) {
                continue;
            }
            let args = at + call.len();
            let second = top_level_comma(&code, args).map(|comma| skip_space(&code, comma + 1));
            check(at, call, second);
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Where `text` spells a key prefix: a string literal opening with two or more capitals (or `_`) and a
/// `#` (`"USER#"`, `"BOOK#{book_id}"`, `"RATE#IP#{a}"`), outside comments and the file's
/// `#[cfg(test)] mod tests`: (line, the literal's opening).
fn key_prefixes(text: &str) -> Vec<(usize, String)> {
    let tests = text.match_indices("#[cfg(test)]").find(|(at, attr)| {
        text[at + attr.len()..]
            .trim_start()
            .starts_with("mod tests")
    });
    let text = tests.map_or(text, |(end, _)| &text[..end]);
    let code = without_comments(text);
    let mut found = Vec::new();
    for (at, _) in code.match_indices('"') {
        let rest = &code[at + 1..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || *c == '_')
            .collect();
        let opens_with_a_capital =
            name.len() >= 2 && rest.starts_with(|c: char| c.is_ascii_uppercase());
        if opens_with_a_capital && rest[name.len()..].starts_with('#') {
            let line = code[..at].matches('\n').count() + 1;
            found.push((line, format!("\"{name}#")));
        }
    }
    found
}

fn skip_space(code: &str, from: usize) -> usize {
    from + code[from..]
        .find(|c: char| !c.is_whitespace())
        .unwrap_or(code.len() - from)
}

/// The first comma of the argument list starting at `from`, outside nested brackets and strings.
fn top_level_comma(code: &str, from: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in code[from..].char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return None,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => return Some(from + i),
            _ => {}
        }
    }
    None
}

/// The text with comment lines (`//`, `///`, `//!`) blanked, lines kept in place.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("//") {
                ""
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// Every file under `src/` with its violations, by path relative to `src/` (`/`-separated).
fn scan() -> BTreeMap<String, Vec<(usize, String)>> {
    scan_with(violations)
}

fn scan_with(check: fn(&str) -> Vec<(usize, String)>) -> BTreeMap<String, Vec<(usize, String)>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 50, "the sources were not found under {src:?}");
    files
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(&src)
                .unwrap()
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let text = std::fs::read_to_string(&path).unwrap();
            (name, check(&text))
        })
        .collect()
}

#[test]
fn no_attribute_name_is_spelled_outside_the_record_modules() {
    let scanned = scan();
    let mut report = Vec::new();
    for (file, found) in &scanned {
        if RECORD_MODULES.contains(&file.as_str()) {
            continue;
        }
        for (line, call) in found {
            report.push(format!("src/{file}:{line}: {call}"));
        }
    }
    assert!(
        report.is_empty(),
        "attribute names outside the record modules (give the aggregate's record module an \
         operation for it):\n{}",
        report.join("\n")
    );
}

#[test]
fn no_key_prefix_is_spelled_outside_the_record_modules() {
    let mut report = Vec::new();
    for (file, found) in &scan_with(key_prefixes) {
        if RECORD_MODULES.contains(&file.as_str()) || KEYS_STILL_TO_MOVE.contains(&file.as_str()) {
            continue;
        }
        for (line, literal) in found {
            report.push(format!("src/{file}:{line}: {literal}"));
        }
    }
    assert!(
        report.is_empty(),
        "key prefixes outside the record modules (give the record module a key function or \
         const for it; the user's partition is items::user_pk):\n{}",
        report.join("\n")
    );
}

#[test]
fn every_file_still_to_move_spells_a_key_prefix() {
    let scanned = scan_with(key_prefixes);
    for file in KEYS_STILL_TO_MOVE {
        assert!(
            scanned.get(*file).is_some_and(|found| !found.is_empty()),
            "src/{file} spells no key prefix any more: take it off KEYS_STILL_TO_MOVE"
        );
    }
}

#[test]
fn the_check_sees_key_prefixes_and_leaves_other_capitals_alone() {
    let text = r#"
        // A comment may say "USER#<id>".
        let pk = format!("USER#{user_id}");
        let q = Query::partition(pk).prefix("WEBHOOK#");
        let ok = ("PROFILE", "C#", "a#b", "{}#{id}");
        #[cfg(test)]
        mod tests {
            const K: &str = "BOOK#1";
        }
    "#;
    assert_eq!(
        key_prefixes(text),
        [
            (3, r#""USER#"#.to_string()),
            (4, r#""WEBHOOK#"#.to_string())
        ]
    );
}

#[test]
fn every_record_module_exists() {
    let scanned = scan();
    for file in RECORD_MODULES {
        assert!(scanned.contains_key(*file), "src/{file} does not exist");
    }
}

#[test]
fn the_check_sees_attribute_names_given_to_the_item_api() {
    let text = r#"
        let update = Update::default()
            .set("currentChapter", title)
            .remove(
                "pauseReason",
            );
        let spent = item.i64("costMicros").unwrap_or(0);
        let cond = Condition::In("status".into(), allowed);
        let at = crate::items::parse_time(&item, "runStartedAt")?;
        let q = item.attrs.get("quality");
        let d = marker
            .attrs
            .get("deliveries");
        let w = Fields::of(&item).opt_int("wordCount")?;
    "#;
    let found: Vec<String> = violations(text).into_iter().map(|(_, c)| c).collect();
    assert_eq!(
        found,
        [
            r#".set("currentChapter""#,
            r#".remove("pauseReason""#,
            r#".i64("costMicros""#,
            r#"Condition::In("status""#,
            r#"parse_time("runStartedAt""#,
            r#"attrs"quality""#,
            r#"attrs"deliveries""#,
            r#".opt_int("wordCount""#,
        ]
    );
    assert_eq!(violations(text)[0].0, 3, "the line of the first call");
}

#[test]
fn the_check_leaves_other_strings_alone() {
    let text = r#"
        // A comment may say .set("status", ..).
        let update = BookChange::current_chapter("Loomings").into_update();
        let name = item.str(name);
        let period = format!("{}", parse_time(&item, name)?);
        info!(book_id, "set(\"x\")");
        map.entry("flagged").or_default();
        let v = value["quality"].clone();
        let s = my_required_str(&x, "y");
    "#;
    assert_eq!(violations(text), Vec::<(usize, String)>::new());
}
