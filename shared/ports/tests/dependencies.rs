//! The ports crate holds the domain's traits, the values they speak and their conformance suites,
//! and nothing that implements them: it depends on no crate of this workspace (the domain and the
//! adapters depend on it, never the reverse) and on no HTTP client (calling out is an adapter's
//! work). Read from the manifest: a crate reaches the build only as a dependency named there.
#![allow(clippy::unwrap_used)]

/// Crates that make HTTP requests, or the client stacks under them.
const HTTP_CLIENTS: &[&str] = &[
    "reqwest",
    "hyper",
    "hyper-util",
    "hyper-rustls",
    "ureq",
    "isahc",
    "surf",
    "curl",
    "attohttpc",
    "aws-smithy-http-client",
];

/// The normal and build dependencies of `manifest` (dev-dependencies only build the tests) that
/// are workspace crates or HTTP clients.
fn forbidden_dependencies(manifest: &str) -> Vec<String> {
    let mut forbidden = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            let section = line.trim_matches(['[', ']']);
            // `[dependencies]`, `[target.'cfg(unix)'.dependencies]`, or one dependency's own
            // table: `[dependencies.reqwest]`.
            if let Some(name) = section
                .rsplit_once("dependencies.")
                .filter(|(before, _)| !before.ends_with("dev-"))
                .map(|(_, name)| name)
            {
                in_dependencies = false;
                if is_forbidden(name) {
                    forbidden.push(name.to_string());
                }
            } else {
                in_dependencies =
                    section.ends_with("dependencies") && !section.ends_with("dev-dependencies");
            }
            continue;
        }
        if !in_dependencies || line.starts_with('#') || line.is_empty() {
            continue;
        }
        let name = line
            .split(['=', '.'])
            .next()
            .unwrap_or_default()
            .trim()
            .trim_matches('"');
        if is_forbidden(name) {
            forbidden.push(name.to_string());
        }
    }
    forbidden
}

fn is_forbidden(name: &str) -> bool {
    name.starts_with("booktr-") || name.starts_with("booktr_") || HTTP_CLIENTS.contains(&name)
}

#[test]
fn the_ports_depend_on_no_workspace_crate_and_no_http_client() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let manifest = std::fs::read_to_string(path).unwrap();
    assert!(
        manifest.contains("[dependencies]"),
        "the manifest at {path} was not read"
    );
    assert_eq!(forbidden_dependencies(&manifest), Vec::<String>::new());
}

#[test]
fn a_domain_crate_or_an_http_client_in_any_dependency_table_is_found() {
    let manifest = r#"
[package]
name = "booktr-ports"

[dependencies]
async-trait.workspace = true
booktr-translate.workspace = true
"hyper" = { version = "1" }

[target.'cfg(unix)'.dependencies]
reqwest = "0.12"

[dependencies.ureq]
version = "2"

[dev-dependencies]
booktr-local.workspace = true
tempfile.workspace = true

[dev-dependencies.booktr-core]
path = "../core"
"#;
    assert_eq!(
        forbidden_dependencies(manifest),
        ["booktr-translate", "hyper", "reqwest", "ureq"]
    );
}
