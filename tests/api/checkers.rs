//! Outside checkers for what the service publishes: Python's `xmlschema` (the sitemap against
//! the sitemap 0.9 schema), `feedparser` (the RSS feed, read as feed readers read it) and
//! `openapi-spec-validator` (the API description against the OpenAPI 3.1 schema), from the
//! virtualenv `scripts/test.sh` makes under `target/venv-checks`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `script` in the checkers' Python with `input` on stdin; its stdout, which must be JSON.
fn python(script: &str, input: &[u8]) -> Value {
    let python = repo().join("target/venv-checks/bin/python");
    let mut child = Command::new(&python)
        .arg("-c")
        .arg(script)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} ({e}): run scripts/test.sh once", python.display()));
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The schema's complaints about `xml` (none when it is a valid sitemap).
pub fn sitemap_errors(xml: &str) -> Vec<String> {
    let errors = python(
        r#"
import json, sys, xmlschema
schema = xmlschema.XMLSchema("tests/fixtures/sitemap-0.9.xsd")
print(json.dumps([str(e.reason or e) for e in schema.iter_errors(sys.stdin.buffer.read().decode())]))
"#,
        xml.as_bytes(),
    );
    serde_json::from_value(errors).unwrap()
}

/// The validator's complaints about an OpenAPI 3.1 document (none when it is valid).
pub fn openapi_errors(document: &[u8]) -> Vec<String> {
    let errors = python(
        r#"
import json, sys
from openapi_spec_validator import OpenAPIV31SpecValidator
spec = json.load(sys.stdin)
print(json.dumps([f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in OpenAPIV31SpecValidator(spec).iter_errors()]))
"#,
        document,
    );
    serde_json::from_value(errors).unwrap()
}

/// A Prometheus scrape as the Prometheus client library's parser reads it:
/// `{family: {type, samples: [[name, labels, value]]}}`.
pub fn prometheus_families(text: &str) -> Value {
    python(
        r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
print(json.dumps({f.name: {"type": f.type, "samples": [[s.name, s.labels, s.value] for s in f.samples]}
                  for f in text_string_to_metric_families(sys.stdin.read())}))
"#,
        text.as_bytes(),
    )
}

/// The feed as feedparser reads it: `{version, bozo, title, entries: [{title, summary, link,
/// id, author, published}]}`. `bozo` is true when the document is not well-formed.
pub fn parsed_feed(bytes: &[u8]) -> Value {
    python(
        r#"
import json, sys, feedparser
feed = feedparser.parse(sys.stdin.buffer.read())
keys = ("title", "summary", "link", "id", "author", "published")
print(json.dumps({
    "version": feed.version,
    "bozo": bool(feed.bozo),
    "title": feed.feed.get("title"),
    "entries": [{k: e.get(k) for k in keys} for e in feed.entries],
}))
"#,
        bytes,
    )
}
