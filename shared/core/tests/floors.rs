//! The floors of this crate (`ARCHITECTURE.md` at the repository's root), checked from the
//! imports: a module may use modules on its own floor or below, never above, and no chain of
//! imports between modules may come back to where it started. This reads the crate's sources
//! under `src/`; `scripts/structure.py` reads the table below from this file.

// A test reading the crate's own sources: a file it cannot read is a failure.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top to bottom. Every module of `src/` stands on exactly one floor.
const FLOORS: [(&str, &[&str]); 5] = [
    (
        "application",
        &["services", "jobs", "privacy", "config", "health"],
    ),
    (
        "books",
        &["books", "translation", "glossaries", "memory", "community"],
    ),
    ("notify", &["events", "email"]),
    (
        "accounts",
        &["accounts", "limits", "usage", "preferences", "developer"],
    ),
    (
        "base",
        // `ports` and `ids` are booktr-ports, re-exported.
        &["ports", "ids", "fault", "job", "types", "items", "metrics"],
    ),
];

/// The floor of `module`, 0 at the top.
fn floor_of(module: &str) -> Option<usize> {
    FLOORS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// The modules each module imports: every `crate::name` outside comments, `crate::{a, b}`
/// included. Names that are not modules (the crate root's re-exports, macros) are left out.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let relative = path
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let module = relative
                .split('/')
                .next()
                .unwrap()
                .trim_end_matches(".rs")
                .to_string();
            // The crate root only declares and re-exports.
            if module == "lib" || !relative.ends_with(".rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code: String = text
                .lines()
                .map(|line| line.split("//").next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n");
            let mut names = Vec::new();
            for (at, _) in code.match_indices("crate::") {
                let rest = &code[at + "crate::".len()..];
                if let Some(group) = rest.strip_prefix('{') {
                    let group = group.split('}').next().unwrap_or_default();
                    names.extend(group.split(',').map(|n| first_name(n.trim())));
                } else {
                    names.push(first_name(rest));
                }
            }
            let entry = found.entry(module.clone()).or_default();
            for name in names {
                if name != module && floor_of(&name).is_some() {
                    entry.insert(name);
                }
            }
        }
    }
    found
}

fn first_name(path: &str) -> String {
    path.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

#[test]
fn every_module_stands_on_one_floor_and_imports_only_its_own_floor_or_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = imports(&src);
    let unplaced: Vec<&String> = graph.keys().filter(|m| floor_of(m).is_none()).collect();
    assert!(unplaced.is_empty(), "modules on no floor: {unplaced:?}");
    let mut upward = Vec::new();
    for (module, used) in &graph {
        for target in used {
            if floor_of(target) < floor_of(module) {
                upward.push(format!("{module} -> {target}"));
            }
        }
    }
    assert_eq!(upward, Vec::<String>::new(), "imports that run up a floor");
}

#[test]
fn no_chain_of_imports_between_modules_comes_back_to_its_start() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = imports(&src);
    // Depth-first search; a module met again while still on the path closes a circle.
    fn visit(
        module: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        circles: &mut Vec<String>,
    ) {
        if let Some(start) = path.iter().position(|m| m == module) {
            circles.push(format!("{} -> {module}", path[start..].join(" -> ")));
            return;
        }
        if !done.insert(module.to_string()) {
            return;
        }
        path.push(module.to_string());
        for next in graph.get(module).into_iter().flatten() {
            visit(next, graph, path, done, circles);
        }
        path.pop();
    }
    let mut circles = Vec::new();
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        visit(module, &graph, &mut Vec::new(), &mut done, &mut circles);
    }
    assert_eq!(circles, Vec::<String>::new(), "import circles");
}

#[test]
fn the_check_sees_an_upward_import() {
    // The parser itself: a base module naming an application module is caught.
    let dir = tempfile_dir();
    std::fs::write(
        dir.join("ports.rs"),
        "use crate::jobs::JobHandler; // crate::books\n",
    )
    .unwrap();
    std::fs::write(dir.join("jobs.rs"), "use crate::{ports::Ports, types};\n").unwrap();
    let graph = imports(&dir);
    assert_eq!(graph["ports"], BTreeSet::from(["jobs".to_string()]));
    assert_eq!(
        graph["jobs"],
        BTreeSet::from(["ports".to_string(), "types".to_string()])
    );
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("booktr-floors-{}", booktr_core::ids::new_id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
