//! The writer and the reader together: what is written reads back as it was, book text cannot
//! add markup to the file, and hostile files are refused whole or unit by unit.

use super::*;

const LIMITS: ReadLimits = ReadLimits {
    max_bytes: 1 << 20,
    max_units: 100,
    max_depth: 16,
};

/// Text a book could hold that would break a file written carelessly.
const HOSTILE: &str = "</target></trans-unit><trans-unit id=\"evil\"><target>x</target> \
     ]]> <![CDATA[ &amp; &lt; &#38; \" ' \r\n \u{1}\u{B}\u{FFFE} <!DOCTYPE a> &lol;";

fn unit(id: &str, source: &str, target: Option<&str>, state: State) -> Unit {
    Unit {
        id: id.into(),
        source: source.into(),
        target: target.map(str::to_string),
        state,
        notes: vec![format!("note of {id}: {HOSTILE}")],
    }
}

fn document() -> Document {
    let source = "Call <i>me</i> <a href=\"#n&amp;1\">Ishmael</a>.<br/><num class=\"l&quot;n\" text=\"10\"/>";
    let hostile_source = crate::markup::escape_text(HOSTILE);
    Document {
        source_lang: "en\"><evil".into(),
        target_lang: "es".into(),
        files: vec![
            File {
                original: format!("booktr/b1/chapter-1 {HOSTILE}"),
                notes: vec![format!("Chapter 1: {HOSTILE}")],
                units: vec![
                    unit(
                        "c1-p0",
                        source,
                        Some("Llamadme <i>yo</i> <a href=\"#n&amp;1\">Ismael</a>.<br/><num class=\"l&quot;n\" text=\"10\"/>"),
                        State::Translated,
                    ),
                    unit("c1-p1", &hostile_source, Some(&hostile_source), State::SignedOff),
                ],
            },
            File {
                original: "booktr/b1/chapter-2".into(),
                notes: Vec::new(),
                units: vec![
                    unit(&format!("c2-p0 {HOSTILE}"), "Plain.", Some("Llano."), State::NeedsReviewTranslation),
                    unit("c2-p1", "No target.", None, State::Translated),
                ],
            },
        ],
    }
}

fn content(unit: &ReadUnit) -> &[Inline] {
    match &unit.target {
        Target::Content(content) => content,
        other => panic!("{}: {other:?}", unit.id),
    }
}

#[test]
fn every_unit_written_reads_back_with_its_id_file_and_target() {
    let document = document();
    let xml = write(&document);
    let units = read(xml.as_bytes(), LIMITS).unwrap();
    let written: Vec<&Unit> = document.files.iter().flat_map(|f| &f.units).collect();
    assert_eq!(units.len(), written.len(), "{xml}");
    for (read, (file, unit)) in units.iter().zip(
        document
            .files
            .iter()
            .flat_map(|f| f.units.iter().map(move |u| (f, u))),
    ) {
        assert_eq!(
            read.id,
            unit.id.chars().map(escape::xml_char).collect::<String>()
        );
        assert_eq!(
            read.original.as_deref(),
            Some(
                file.original
                    .chars()
                    .map(escape::xml_char)
                    .collect::<String>()
                    .as_str()
            )
        );
        match &unit.target {
            None => assert_eq!(read.target, Target::Missing),
            Some(target) => assert_eq!(
                from_inline(&unit.source, content(read)).unwrap(),
                canonical(target),
                "{}",
                read.id
            ),
        }
    }
}

#[test]
fn book_text_never_adds_an_element_to_the_file() {
    let xml = write(&document());
    assert!(!xml.contains("<trans-unit id=\"evil\""), "{xml}");
    assert!(!xml.contains("<!DOCTYPE"), "{xml}");
    assert!(!xml.contains("<evil"), "{xml}");
    // Every element is one the writer writes.
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut names = std::collections::BTreeSet::new();
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                names.insert(String::from_utf8(e.name().as_ref().to_vec()).unwrap());
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    let expected = [
        "body",
        "file",
        "g",
        "header",
        "note",
        "source",
        "target",
        "trans-unit",
        "x",
        "xliff",
    ];
    assert_eq!(names.into_iter().collect::<Vec<_>>(), expected);
}

#[test]
fn states_and_approval_are_written_as_xliff_1_2_says() {
    let xml = write(&document());
    assert!(xml.contains("<xliff version=\"1.2\" xmlns=\"urn:oasis:names:tc:xliff:document:1.2\">"));
    assert!(xml.contains("<target state=\"translated\">"));
    assert!(xml.contains("<target state=\"needs-review-translation\">"));
    assert!(xml.contains("approved=\"yes\">"));
    assert_eq!(xml.matches("approved=").count(), 1);
    assert!(xml.contains("source-language=\"en&quot;&gt;&lt;evil\""));
    assert!(xml.contains(
        "<trans-unit id=\"c2-p1\" xml:space=\"preserve\">\n<source>No target.</source>\n<note"
    ));
}

fn xliff(body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xliff version=\"1.2\" \
         xmlns=\"urn:oasis:names:tc:xliff:document:1.2\"><file original=\"f\" \
         source-language=\"en\" target-language=\"es\" datatype=\"plaintext\"><body>{body}\
         </body></file></xliff>"
    )
}

#[test]
fn a_tools_markers_are_read_through_and_its_suggestions_left_alone() {
    let xml = xliff(
        "<trans-unit id=\"a\"><source>s</source><target><mrk mtype=\"seg\" mid=\"1\">Hola <g id=\"1\">mundo</g><g id=\"2\"/></mrk></target>\
         <alt-trans><target>suggestion</target></alt-trans></trans-unit>\
         <group id=\"g\"><trans-unit id=\"b\"><source>s</source></trans-unit></group>\
         <trans-unit id=\"c\"><source>s</source><target/></trans-unit>",
    );
    let units = read(xml.as_bytes(), LIMITS).unwrap();
    assert_eq!(
        units[0].target,
        Target::Content(vec![
            Inline::Text("Hola ".into()),
            Inline::Open("1".into()),
            Inline::Text("mundo".into()),
            Inline::Close,
            Inline::Open("2".into()),
            Inline::Close,
        ])
    );
    assert_eq!(
        (units[1].id.as_str(), &units[1].target),
        ("b", &Target::Missing)
    );
    assert_eq!(units[2].target, Target::Content(Vec::new()));
    assert_eq!(units[0].original.as_deref(), Some("f"));
}

#[test]
fn a_unit_with_codes_booktr_never_writes_is_unreadable_and_the_others_still_count() {
    let xml = xliff(
        "<trans-unit id=\"a\"><source>s</source><target>a <ph id=\"1\">&lt;b&gt;</ph></target></trans-unit>\
         <trans-unit id=\"b\"><source>s</source><target>a <x/></target></trans-unit>\
         <trans-unit id=\"c\"><source>s</source><target>one</target><target>two</target></trans-unit>\
         <trans-unit id=\"d\"><source>s</source><target>fine</target></trans-unit>",
    );
    let units = read(xml.as_bytes(), LIMITS).unwrap();
    let problem = |k: usize| match &units[k].target {
        Target::Unreadable(why) => why.clone(),
        other => panic!("{other:?}"),
    };
    assert!(problem(0).contains("<ph>"), "{}", problem(0));
    assert!(problem(1).contains("without an id"), "{}", problem(1));
    assert!(
        problem(2).contains("more than one target"),
        "{}",
        problem(2)
    );
    assert_eq!(
        units[3].target,
        Target::Content(vec![Inline::Text("fine".into())])
    );
}

fn refusal(bytes: &[u8]) -> ReadError {
    read(bytes, LIMITS).expect_err("refused")
}

#[test]
fn a_dtd_is_refused_so_no_entity_is_ever_expanded() {
    let laughs = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">\
         <!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>\
         <xliff version=\"1.2\"><file><body><trans-unit id=\"a\"><target>&lol2;</target></trans-unit></body></file></xliff>";
    assert_eq!(refusal(laughs.as_bytes()), ReadError::Doctype);
    let external = "<!DOCTYPE xliff SYSTEM \"file:///etc/passwd\"><xliff version=\"1.2\"/>";
    assert_eq!(refusal(external.as_bytes()), ReadError::Doctype);
    // An entity nobody declared is no entity at all.
    let undeclared = xliff("<trans-unit id=\"a\"><target>&xxe;</target></trans-unit>");
    assert!(matches!(
        refusal(undeclared.as_bytes()),
        ReadError::Malformed { .. }
    ));
}

#[test]
fn a_huge_deep_or_crowded_file_is_refused_whole() {
    let huge = xliff(&"<trans-unit id=\"a\"><target>x</target></trans-unit>".repeat(30_000));
    assert_eq!(
        refusal(huge.as_bytes()),
        ReadError::TooLarge(LIMITS.max_bytes)
    );
    let crowded = xliff(&"<trans-unit id=\"a\"/>".repeat(101));
    assert_eq!(refusal(crowded.as_bytes()), ReadError::TooManyUnits(100));
    assert_eq!(
        read(
            xliff(&"<trans-unit id=\"a\"/>".repeat(100)).as_bytes(),
            LIMITS
        )
        .unwrap()
        .len(),
        100
    );
    let deep = xliff(&format!(
        "<trans-unit id=\"a\"><target>{}{}</target></trans-unit>",
        "<g id=\"1\">".repeat(50_000),
        "</g>".repeat(50_000)
    ));
    let limits = ReadLimits {
        max_bytes: 1 << 22,
        ..LIMITS
    };
    assert_eq!(
        read(deep.as_bytes(), limits).unwrap_err(),
        ReadError::TooDeep(16)
    );
}

#[test]
fn a_file_not_utf8_not_xliff_1_2_or_not_well_formed_is_refused_whole() {
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("<xliff/>".bytes().flat_map(|b| [b, 0]))
        .collect();
    assert!(matches!(refusal(&utf16), ReadError::Encoding(_)));
    assert!(matches!(
        refusal(b"<xliff version=\"1.2\">\xE9</xliff>"),
        ReadError::Encoding(_)
    ));
    let latin = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><xliff version=\"1.2\"/>";
    assert!(matches!(refusal(latin.as_bytes()), ReadError::Encoding(_)));
    assert!(matches!(
        refusal(b"<html><body/></html>"),
        ReadError::NotXliff(_)
    ));
    let two = "<xliff version=\"2.0\" xmlns=\"urn:oasis:names:tc:xliff:document:2.0\"/>";
    assert!(refusal(two.as_bytes()).to_string().contains("XLIFF 2.0"));
    assert!(matches!(refusal(b""), ReadError::NotXliff(_)));
    for broken in [
        "<xliff version=\"1.2\"><file>",
        "<xliff version=\"1.2\"><file></body></xliff>",
        "<xliff version=\"1.2\"/><xliff/>",
        "<xliff version=\"1.2\" a=\"1\" a=\"2\"/>",
        "<xliff version=\"1.2\">&</xliff>",
        "junk<xliff version=\"1.2\"/>",
    ] {
        assert!(
            matches!(refusal(broken.as_bytes()), ReadError::Malformed { .. }),
            "{broken}"
        );
    }
    // A byte-order mark is no problem.
    let bom = [b"\xEF\xBB\xBF".as_slice(), xliff("").as_bytes()].concat();
    assert_eq!(read(&bom, LIMITS).unwrap(), Vec::new());
}
