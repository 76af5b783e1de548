//! `cargo bench -p booktr-formats`: extraction and rendering times for Moby-Dick (212k words),
//! beside pandoc's time for the same conversions when pandoc is installed, and the peak heap each
//! step uses relative to the file size.
//!
//! Targets: EPUB extraction at least 5x faster than pandoc; rendering to EPUB under 1 s and to
//! PDF under 5 s; peak memory under 10x the file.

// The one use of unsafe in the project: a global allocator must implement an unsafe trait. It
// only forwards to the system allocator and counts.
#![allow(unsafe_code)]
// A benchmark that cannot read its input has nothing to report: stopping is the right answer.
#![allow(clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use booktr_formats::render::{self, RenderOptions};
use booktr_formats::{docx, epub, html, pdf, txt};

/// Counts live heap bytes and their peak, so each step's memory can be reported.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Best of `runs` timings, and the peak heap above what was live before the first run.
fn measure<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        std::hint::black_box(f());
        best = best.min(start.elapsed());
    }
    (best, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

fn pandoc(args: &[&str]) -> Option<Duration> {
    let mut best = None::<Duration>;
    for _ in 0..3 {
        let start = Instant::now();
        let ok = Command::new("pandoc")
            .args(args)
            .output()
            .ok()?
            .status
            .success();
        if !ok {
            return None;
        }
        let t = start.elapsed();
        best = Some(best.map_or(t, |b| b.min(t)));
    }
    best
}

fn row(step: &str, time: Duration, peak: usize, file: usize, pandoc: Option<Duration>) {
    let ratio = pandoc.map_or("pandoc not installed".to_string(), |p| {
        format!(
            "pandoc {:>8.1} ms  ({:.1}x faster)",
            p.as_secs_f64() * 1e3,
            p.as_secs_f64() / time.as_secs_f64()
        )
    });
    println!(
        "{step:<28} {:>8.1} ms   peak heap {:>6.1} MiB ({:>4.1}x file)   {ratio}",
        time.as_secs_f64() * 1e3,
        peak as f64 / (1 << 20) as f64,
        peak as f64 / file as f64
    );
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = root.join("../../corpus/moby-dick.epub");
    let fixtures = root.join("../../tests/fixtures");
    let bytes = std::fs::read(&corpus).expect("corpus/moby-dick.epub");
    let corpus_str = corpus.to_string_lossy().to_string();
    let out = std::env::temp_dir().join("booktr-bench-out.epub");
    let out_str = out.to_string_lossy().to_string();

    println!("Moby-Dick: {} KiB EPUB", bytes.len() / 1024);
    let (t, peak) = measure(5, || epub::extract(&bytes).expect("extract"));
    row(
        "extract EPUB",
        t,
        peak,
        bytes.len(),
        pandoc(&[&corpus_str, "-t", "plain", "-o", "/dev/null"]),
    );

    for (name, extract) in [
        ("extract DOCX", docx::extract as fn(&[u8]) -> _),
        ("extract HTML", html::extract),
        ("extract TXT", txt::extract),
        ("extract PDF", pdf::extract),
    ] {
        let ext = name.rsplit(' ').next().unwrap_or_default().to_lowercase();
        let file = fixtures.join(format!("moby-dick.{ext}"));
        let data = std::fs::read(&file).expect("fixture");
        let (t, peak) = measure(3, || extract(&data).expect("extract"));
        let pandoc_time = (ext != "pdf")
            .then(|| pandoc(&[&file.to_string_lossy(), "-t", "plain", "-o", "/dev/null"]))
            .flatten();
        row(name, t, peak, data.len(), pandoc_time);
    }

    let manuscript = epub::extract(&bytes).expect("extract");
    println!(
        "{} words in {} chapters",
        manuscript.word_count(),
        manuscript.chapters.len()
    );
    let options = RenderOptions {
        language: "en".into(),
        title: None,
        author: None,
        identifier: "urn:booktr:bench".into(),
        modified: "2026-01-01T00:00:00Z".into(),
        budget: booktr_formats::Budget::default(),
    };
    let (t, peak) = measure(5, || {
        render::epub::render(&manuscript, &options).expect("render")
    });
    // pandoc cannot write this book from its own EPUB ("not found in reftable"), so its time is
    // for the same book from the HTML fixture.
    let html_fixture = fixtures
        .join("moby-dick.html")
        .to_string_lossy()
        .to_string();
    row(
        "render EPUB",
        t,
        peak,
        bytes.len(),
        pandoc(&[&html_fixture, "-o", &out_str]),
    );
    let (t, peak) = measure(3, || {
        render::pdf::render(&manuscript, &options, &[])
            .expect("render")
            .bytes
    });
    row("render PDF", t, peak, bytes.len(), None);

    // The book as the service returns an EPUB source: translated in place (every block's text
    // changed, so every block is rewritten), and bilingual, each original with its translation.
    let translated: Vec<_> = manuscript
        .chapters
        .iter()
        .map(|chapter| {
            let mut chapter = chapter.clone();
            for block in &mut chapter.blocks {
                block.text.push_str(" (fr)");
            }
            Some(chapter)
        })
        .collect();
    let sources = || render::Sources {
        language: "en",
        chapters: &manuscript.chapters,
    };
    for (name, layout) in [
        ("render EPUB in place", render::Layout::Translated),
        ("render EPUB in place, bilingual", render::Layout::Bilingual),
    ] {
        let (t, peak) = measure(3, || {
            render::translated_epub(
                Some(&bytes),
                &manuscript,
                &translated,
                Some(sources()),
                &options,
                layout,
            )
            .expect("render")
            .bytes
        });
        row(name, t, peak, bytes.len(), None);
    }
    let mut translated_book = manuscript.clone();
    translated_book.chapters = translated.iter().flatten().cloned().collect();
    let (t, peak) = measure(2, || {
        render::pdf::render_bilingual(&translated_book, sources(), &options, &[])
            .expect("render")
            .bytes
    });
    row("render PDF, bilingual", t, peak, bytes.len(), None);
}
