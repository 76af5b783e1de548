//! The repository stands alone: no file in it (code, script, document, CI) names a path outside
//! it. The test books, the API contract and the house plan are in the repository (`corpus/`,
//! `docs/spec/API.md`, `docs/DESIGN.md`), so a clone with nothing beside it builds, runs the
//! README's commands and finds every file its tests and benches read.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// Every file of the working tree git knows or would add: tracked, and new ones it does not
/// ignore (so a file is checked before it is committed). Not `target/`, not `.git/`.
fn repository_files(root: &Path) -> Vec<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output()
        .expect("git runs (the check lists the repository's files with `git ls-files`)");
    assert!(
        output.status.success(),
        "git ls-files: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut files: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .split('\0')
        .filter(|f| !f.is_empty())
        .map(String::from)
        .collect();
    files.sort();
    files.dedup();
    files
}

/// What the folder named `shared` beside the repository held: the test books, the API
/// contract, the house plan and the hooks. The repository's own `shared/` holds crates of other
/// names. Spelled in two pieces so that this file does not name them itself.
const SIBLING: [[&str; 2]; 4] = [
    ["shared/", "corpus"],
    ["shared/", "spec"],
    ["shared/", "DESIGN"],
    ["shared/", "hooks"],
];

/// The places in `file`'s `text` that name a path outside the repository, as `file:line: path`:
///
/// - a relative path that climbs (`../`) to a folder named `shared` and does not go on into
///   one of the repository's own `shared/` crates, read from the file's folder or any folder
///   above it up to the root (where a crate's manifest, a script's `cd` or a link starts);
/// - a name from the folder that lay beside the repository (`SIBLING`), however reached.
///
/// An ellipsis in a route (a `/files/` path with dots before `/shared/{token}`) is not a climb.
fn outside_paths(root: &Path, file: &str, text: &str) -> Vec<String> {
    let folders: Vec<&str> = match file.rsplit_once('/') {
        Some((folder, _)) => folder.split('/').collect(),
        None => Vec::new(),
    };
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let at = |what: &str| format!("{file}:{}: {what}", number + 1);
        for [a, b] in SIBLING {
            let name = format!("{a}{b}");
            if line.contains(&name) {
                found.push(at(&name));
            }
        }
        let bytes = line.as_bytes();
        let mut i = 0;
        while let Some(start) = line[i..].find("../").map(|s| s + i) {
            let mut end = start;
            let mut climbs = 0;
            while line[end..].starts_with("../") {
                end += 3;
                climbs += 1;
            }
            i = end;
            if start > 0 && bytes[start - 1] == b'.' {
                continue;
            }
            let path: String = line[end..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "_-./{}$<>*".contains(*c))
                .collect();
            let mut parts = path.split('/');
            if parts.next() != Some("shared") {
                continue;
            }
            let next = parts.next().filter(|p| !p.is_empty());
            let inside = next.is_some_and(|next| {
                (0..=folders.len()).any(|depth| {
                    depth >= climbs && {
                        let mut reached = root.to_path_buf();
                        reached.extend(&folders[..depth - climbs]);
                        reached.join("shared").join(next).exists()
                    }
                })
            });
            if !inside {
                found.push(at(&line[start..end + path.len()]));
            }
        }
    }
    found
}

#[test]
fn no_file_in_the_repository_names_a_path_outside_it() {
    let root = root();
    let files = repository_files(&root);
    let mut scanned = Vec::new();
    let mut found = Vec::new();
    for file in &files {
        let Ok(bytes) = std::fs::read(root.join(file)) else {
            continue; // deleted in the working tree, not yet in the index
        };
        if bytes.contains(&0) {
            continue; // binary: the EPUBs, PDFs, fonts, images
        }
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        found.extend(outside_paths(&root, file, &text));
        scanned.push(file.as_str());
    }
    // Not vacuous: the whole tree was read, every kind of file that has named such a path.
    assert!(scanned.len() >= 300, "only {} files scanned", scanned.len());
    for file in [
        "README.md",
        "ARCHITECTURE.md",
        "docs/benchmarks.md",
        "docs/DESIGN.md",
        ".ci/run",
        "scripts/fuzz.sh",
        "scripts/quality_bench.py",
        "shared/formats/src/corpus_tests.rs",
        "shared/translate/benches/checks.rs",
        "tests/api/helpers.rs",
        "tests/api/standalone.rs",
    ] {
        assert!(scanned.contains(&file), "{file} was not scanned");
    }
    assert!(
        found.is_empty(),
        "paths outside the repository (the test books are in corpus/, the API contract in \
         docs/spec/API.md, the house plan in docs/DESIGN.md):\n{}",
        found.join("\n")
    );
}

/// The check itself, on the paths the repository once named and on those it names rightly.
#[test]
fn the_check_finds_climbs_out_of_the_repository_and_leaves_its_own_crates_alone() {
    let root = root();
    let up = |n: usize| "../".repeat(n);
    let sibling = |rest: &str| format!("shared/{rest}");
    let outside = [
        (
            "README.md",
            format!(
                "translate {}{} --to es",
                up(1),
                sibling("corpus/moby-dick.epub")
            ),
        ),
        (
            "README.md",
            format!("The contract is `{}{}`.", up(1), sibling("spec/API.md")),
        ),
        (
            ".ci/run",
            format!("# a clean clone with {}shared beside it", up(1)),
        ),
        (
            "tests/api/cli.rs",
            format!(r#".join("{}{}")"#, up(2), sibling("corpus/x.epub")),
        ),
        (
            "shared/formats/src/epub.rs",
            format!(r#".join("{}shared")"#, up(3)),
        ),
        (
            "shared/formats/src/epub.rs",
            format!(r#".join("{}shared/formats")"#, up(4)),
        ),
        (
            "scripts/fuzz.sh",
            format!("cp {}{} x", up(3), sibling("corpus/wasteland.epub")),
        ),
        (
            "tests/api/answers.rs",
            format!("/// extracted from `{}`", sibling("corpus/reference")),
        ),
    ];
    for (file, text) in &outside {
        assert!(
            !outside_paths(&root, file, text).is_empty(),
            "{file}: {text} is outside"
        );
    }
    // Climbs into the repository's own `shared/` crates (spelled here from parts, so that the
    // repository holds no such climb itself).
    let inside = [
        (
            "tests/api/openapi.rs".to_string(),
            format!(r#".join("{}shared/api/src")"#, up(1)),
        ),
        (
            "scripts/fuzz.sh".to_string(),
            format!(r#"cd "$(dirname "$0")/{}shared/formats""#, up(1)),
        ),
        (
            "shared/api/src/middleware.rs".to_string(),
            format!("/// `/files/.{}shared/{{token}}/`) is replaced", up(1)),
        ),
        (
            "shared/formats/benches/formats.rs".to_string(),
            format!(r#"root.join("{}corpus/moby-dick.epub")"#, up(2)),
        ),
        (
            "docs/api.md".to_string(),
            "The contract is [spec/API.md](spec/API.md).".to_string(),
        ),
        (
            "docs/web.md".to_string(),
            "| `/shared/{token}` | the public reader |".to_string(),
        ),
    ];
    for (file, text) in &inside {
        assert_eq!(
            outside_paths(&root, file, text),
            Vec::<String>::new(),
            "{file}: {text} is inside"
        );
    }
}
