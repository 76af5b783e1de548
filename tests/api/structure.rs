//! The code's shape, measured: no import cycle between the modules of a crate, no import up a
//! floor of `shared/core`, no production function over 100 lines (`scripts/structure.py`,
//! whose report says where, when this fails).

use std::path::Path;
use std::process::Command;

#[test]
fn no_crate_has_an_import_cycle_core_no_upward_import_and_no_function_is_over_100_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = Command::new("python3")
        .arg(root.join("scripts/structure.py"))
        .arg("--check")
        .output()
        .expect("python3 runs scripts/structure.py (the README's test command needs python3)");
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(report.contains("\n0 cycle(s)\n"), "{report}");
    assert!(report.contains("\n0 upward import(s)\n"), "{report}");
    assert!(report.contains("\n0 of "), "{report}");
}
