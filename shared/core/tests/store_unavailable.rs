//! `StoreError::Unavailable` says a storage backend failed, so only the adapters (`shared/local`,
//! `shared/aws`, and the ports' conformance suites and test doubles) build it. This test reads
//! the sources of the crates above the ports and fails on any construction outside test code;
//! matching on it (to map it, or to decide on a retry) stays allowed.

// A test reading the workspace's sources: a file it cannot read is a failure.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// The crates that may match on the variant but never build it.
const ABOVE_THE_ADAPTERS: &[&str] = &[
    "shared/core/src",
    "shared/api/src",
    "shared/translate/src",
    "functions/src",
    "lambdas/src",
];

const VARIANT: &str = "StoreError::Unavailable";

#[test]
fn no_store_unavailable_is_built_outside_an_adapter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    for dir in ABOVE_THE_ADAPTERS {
        for path in rust_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&path).unwrap();
            for line in constructions(&text) {
                let shown = path.strip_prefix(&root).unwrap_or(&path).display();
                found.push(format!("{shown}:{line}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "{VARIANT} built outside an adapter (a store failure is the adapters' to say; use the \
         domain's own error or a Fault):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_construction_is_found_and_a_match_is_not() {
    let source = r#"
fn build() -> Result<(), StoreError> {
    Err(StoreError::Unavailable(format!("not a store failure")))
}

fn wrap(e: String) -> StoreError {
    StoreError::Unavailable(e)
}

fn by_path(r: Result<(), String>) -> Result<(), StoreError> {
    r.map_err(StoreError::Unavailable)
}

fn map(e: StoreError) -> u16 {
    match e {
        StoreError::Unavailable(_) => 503,
        StoreError::Conflict | StoreError::Unavailable(..) => 500,
        _ => 500,
    }
}

fn retry(r: Result<(), StoreError>) -> bool {
    if let Err(StoreError::Unavailable(why)) = r {
        return !why.is_empty();
    }
    matches!(r, Err(StoreError::Unavailable(m)) if m.len() > 1)
}

#[cfg(test)]
mod tests {
    fn down() -> StoreError {
        StoreError::Unavailable("down".into())
    }
}
"#;
    assert_eq!(constructions(source), vec![3, 7, 11]);
}

#[test]
fn test_code_comments_and_strings_are_told_apart_from_code() {
    let source = r##"
#[cfg(test)]
mod helpers;
fn real() -> StoreError {
    StoreError::Unavailable("x".into())
}
#[cfg(test)]
mod tests {
    const BRACE: char = '}';
    const TEXT: &str = "}}";
    fn down() -> StoreError {
        StoreError::Unavailable("down".into())
    }
}
fn after() -> StoreError {
    StoreError::Unavailable("y".into())
}
/// Mapped from `StoreError::Unavailable` by the API.
const NAME: &str = "StoreError::Unavailable(x)";
/* StoreError::Unavailable(e) */
fn last<'a>() -> StoreError { StoreError::Unavailable(r#"z"#.into()) }
"##;
    assert_eq!(constructions(source), vec![5, 16, 21]);
}

/// The `.rs` files under `dir`, leaving out test files.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if path.is_dir() {
                if name != "tests" {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                files.push(path);
            }
        }
    }
    files
}

/// The lines (from 1) of `source` outside test code where the variant is built: called with
/// an expression, or named as a function (`map_err(StoreError::Unavailable)`). A pattern (a
/// `match` arm, an `if let`, `matches!`) binds a name or `_`/`..` and is not counted.
fn constructions(source: &str) -> Vec<usize> {
    let code = without_test_code(&code_only(source));
    let mut lines = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(VARIANT) {
        let start = from + at;
        let after = start + VARIANT.len();
        from = after;
        let built = match code[after..].strip_prefix('(') {
            None => true,
            Some(rest) => {
                let close = rest.find(')').unwrap_or(rest.len());
                let argument = rest[..close].trim();
                let binding = argument == "_"
                    || argument == ".."
                    || argument.chars().all(|c| c.is_alphanumeric() || c == '_');
                !(binding && is_pattern(&code[..start], &rest[close..]))
            }
        };
        if built {
            lines.push(code[..start].matches('\n').count() + 1);
        }
    }
    lines
}

/// Whether a variant with a binding, between `before` and `after`, stands in a pattern: what
/// follows its closing parentheses is `=>`, `|`, `=` or an `if` guard, or it is inside
/// `matches!`.
fn is_pattern(before: &str, after: &str) -> bool {
    let rest = after.trim_start_matches(|c: char| c == ')' || c.is_whitespace());
    let arm = rest.starts_with("=>")
        || rest.starts_with('|')
        || rest.starts_with("if ")
        || (rest.starts_with('=') && !rest.starts_with("=="));
    let statement = before.rsplit([';', '{', '}']).next().unwrap_or_default();
    arm || statement.contains("matches!(")
}

/// `source` with each item marked `#[cfg(test)]` blanked out (its lines kept, so that line
/// numbers hold): a `mod name;` line, or a `mod name { ... }` to its closing brace.
fn without_test_code(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let end = item_end(item);
        out.extend(item[..end].chars().filter(|&c| c == '\n'));
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Where the item starting in `text` (code only, see [`code_only`]) ends: after its `;` when
/// that comes before any `{`, else after the brace that closes its first `{`.
fn item_end(text: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            ';' if depth == 0 => return i + 1,
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// `source` with its comments and the insides of its string and character literals blanked
/// (line breaks kept): what is left is code, in the same places.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                out.push(blank(chars[i]));
                i += 1;
            }
            out.push_str("  ");
            i += 2;
            continue;
        }
        // A raw string: r"..." or r#"..."#, with as many hashes to close as it opened with.
        if c == 'r' && matches!(next, Some('"' | '#')) && !is_ident(chars.get(i.wrapping_sub(1))) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) == Some(&'"') {
                let close: String = std::iter::once('"')
                    .chain("#".repeat(hashes).chars())
                    .collect();
                let body_start = i + 2 + hashes;
                let rest: String = chars[body_start..].iter().collect();
                let body = rest
                    .find(&close)
                    .map_or(rest.chars().count(), |b| rest[..b].chars().count());
                out.push('"');
                out.extend(
                    chars[body_start..body_start + body]
                        .iter()
                        .map(|&c| blank(c)),
                );
                out.push('"');
                i = body_start + body + close.chars().count();
                continue;
            }
        }
        if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let step = if chars[i] == '\\' { 2 } else { 1 };
                out.extend(
                    chars[i..(i + step).min(chars.len())]
                        .iter()
                        .map(|&c| blank(c)),
                );
                i += step;
            }
            out.push('"');
            i += 1;
            continue;
        }
        // A character literal ('x', '\n', '\''), not a lifetime ('a).
        if c == '\'' {
            let len = match (next, chars.get(i + 2), chars.get(i + 3)) {
                (Some('\\'), _, Some('\'')) => Some(4),
                (Some('\\'), _, _) => chars[i + 2..]
                    .iter()
                    .position(|&q| q == '\'')
                    .map(|p| p + 3),
                (Some(_), Some('\''), _) => Some(3),
                _ => None,
            };
            if let Some(len) = len {
                out.push_str(&" ".repeat(len));
                i += len;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

fn is_ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}
