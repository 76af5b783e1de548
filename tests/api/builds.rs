//! How `sam build` makes the bootstraps: every function in `template.yaml` is a binary of the
//! Lambdas' package and is built there, where cargo lambda reads that package's build settings.

use std::collections::BTreeSet;
use std::path::Path;

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).unwrap()
}

/// The lines of a manifest's `[section]`, trimmed, without its comments (one mentions opt-level).
fn manifest_section(manifest: &str, section: &str) -> Vec<String> {
    let header = format!("{section}]");
    repo_file(manifest)
        .split("\n[")
        .find(|s| s.starts_with(&header))
        .unwrap_or_else(|| panic!("{manifest} has no [{section}]"))
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|line| !line.starts_with('#'))
        .map(String::from)
        .collect()
}

/// `(Binary, CodeUri)` of every function in the template, in order.
fn template_functions() -> Vec<(String, String)> {
    let template = repo_file("template.yaml");
    let mut functions = Vec::new();
    let mut binary: Option<String> = None;
    for line in template.lines() {
        if let Some(at) = line.find("Binary: ") {
            let name = &line[at + "Binary: ".len()..];
            binary = Some(name.trim_end_matches([' ', '}']).to_string());
        } else if let Some(uri) = line.trim().strip_prefix("CodeUri: ") {
            let name = binary
                .take()
                .expect("a CodeUri follows its function's Binary");
            functions.push((name, uri.to_string()));
        }
    }
    functions
}

/// At the workspace root, cargo picks the default member (the local `booktr`'s package), where
/// no Lambda binary is: `cargo lambda build --bin http-books` there fails.
#[test]
fn every_function_in_the_template_is_a_binary_built_in_the_lambdas_package() {
    let functions = template_functions();
    let in_template: BTreeSet<String> = functions.iter().map(|(bin, _)| bin.clone()).collect();
    let mut in_package = BTreeSet::new();
    let bins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lambdas/src/bin");
    for entry in std::fs::read_dir(bins).unwrap() {
        let path = entry.unwrap().path();
        in_package.insert(path.file_stem().unwrap().to_string_lossy().into_owned());
    }
    assert_eq!(in_template, in_package);
    assert_eq!(functions.len(), in_template.len(), "a binary built twice");
    for (bin, uri) in &functions {
        assert_eq!(uri, "lambdas", "{bin} is built from {uri}");
    }
}

/// cargo lambda applies `[package.metadata.lambda.build]`'s `env_var` to the build of one
/// `--bin` (what `sam build` asks for): the Lambdas are built for size with fat LTO, the local
/// binary is not.
#[test]
fn sam_build_builds_the_lambdas_for_size_with_fat_lto_and_leaves_the_local_profile_alone() {
    let settings = manifest_section("lambdas/Cargo.toml", "package.metadata.lambda.build");
    assert!(
        settings.iter().any(|line| line
            == r#"env_var = ["CARGO_PROFILE_RELEASE_OPT_LEVEL=z", "CARGO_PROFILE_RELEASE_LTO=fat"]"#),
        "{settings:?}"
    );
    let release = manifest_section("Cargo.toml", "profile.release");
    assert!(
        !release.iter().any(|line| line.starts_with("opt-level")),
        "{release:?}"
    );
    // Named, or cargo lambda passes `--config profile.release.lto="thin"`, which outranks the
    // environment's fat.
    assert!(
        release.iter().any(|line| line == "lto = false"),
        "{release:?}"
    );
}

/// What keeps the jobs worker under 15 MB: the `aws` feature of booktr-functions, which the
/// Lambdas turn on, caps both logging facades at `info` in release builds, for every crate of the
/// bootstrap; the features the local binary builds with do not.
#[test]
fn the_lambdas_compile_debug_and_trace_events_out_and_the_local_binary_keeps_them() {
    let features = manifest_section("functions/Cargo.toml", "features").join(" ");
    let feature = |name: &str| {
        let start = features
            .find(&format!("{name} = ["))
            .unwrap_or_else(|| panic!("no {name} feature: {features}"));
        let end = start + features[start..].find(']').unwrap();
        features[start..end].to_string()
    };
    for facade in ["tracing", "log"] {
        let cap = format!(r#""{facade}/release_max_level_info""#);
        assert!(feature("aws").contains(&cap), "{facade}: {features}");
        for local in ["default", "serve"] {
            assert!(!feature(local).contains("max_level"), "{local}: {features}");
        }
    }
    let lambdas = manifest_section("lambdas/Cargo.toml", "dependencies");
    assert!(
        lambdas
            .iter()
            .any(|line| line.starts_with("booktr-functions = ") && line.contains(r#""aws""#)),
        "{lambdas:?}"
    );
    let local = manifest_section("functions/Cargo.toml", "dependencies");
    assert!(
        !local.iter().any(|line| line.contains("max_level")),
        "{local:?}"
    );
}
