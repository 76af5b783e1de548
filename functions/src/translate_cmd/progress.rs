//! What the run shows as it goes, told by the jobs ([`RunObserver`]): one bar for every pass
//! of the book and a line per chapter in flight; and, with `--pass-texts`, each chapter's text
//! after each pass.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use anyhow::anyhow;
use booktr_core::jobs::RunObserver;
use booktr_formats::manuscript::{Block, Chapter};
use booktr_formats::render;
use booktr_translate::protocol::Pass;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

pub struct Progress {
    bars: MultiProgress,
    total: ProgressBar,
    in_flight: Mutex<HashMap<u32, ProgressBar>>,
    /// The chapters translated, known once the book is read: per chapter number, its place
    /// among them (from 0) and its title.
    chapters: OnceLock<HashMap<u32, (usize, String)>>,
    chapter_style: ProgressStyle,
    /// `--pass-texts`: where each chapter's text goes after each pass.
    pass_texts: Option<PathBuf>,
}

impl Progress {
    pub fn new(pass_texts: Option<PathBuf>) -> anyhow::Result<Progress> {
        let bars = MultiProgress::new();
        let total = bars.add(ProgressBar::new(0));
        total.set_style(
            ProgressStyle::with_template("{spinner} [{bar:40}] {pos}/{len} passes · {msg} ({eta})")
                .map_err(|e| anyhow!("{e}"))?
                .progress_chars("=> "),
        );
        total.set_message("reading the book");
        let chapter_style = ProgressStyle::with_template("    {bar:3} {msg}")
            .map_err(|e| anyhow!("{e}"))?
            .progress_chars("## ");
        Ok(Progress {
            bars,
            total,
            in_flight: Mutex::new(HashMap::new()),
            chapters: OnceLock::new(),
            chapter_style,
            pass_texts,
        })
    }

    /// The chapters to translate, each with its number in the book, once the book is read.
    pub fn begin(&self, chapters: &[(u32, Chapter)]) {
        let places = chapters
            .iter()
            .enumerate()
            .map(|(i, (number, c))| (*number, (i, render::chapter_title(c, i))))
            .collect();
        let _ = self.chapters.set(places);
        self.total.set_length(3 * chapters.len() as u64);
        self.total.set_message("finding the book's names and terms");
    }

    pub fn finish(&self) {
        for (_, bar) in self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
        {
            bar.finish_and_clear();
        }
        self.total.finish_and_clear();
    }

    fn label(&self, number: u32, what: &str) -> String {
        let chapters = self.chapters.get();
        let count = chapters.map_or(0, HashMap::len);
        match chapters.and_then(|c| c.get(&number)) {
            Some((place, title)) => format!("chapter {}/{count} {title}: {what}", place + 1),
            None => format!("chapter {number}: {what}"),
        }
    }

    /// The chapter's place among those translated, counted from 1 (as `--chapters` counts
    /// them, the pass texts are named by it).
    fn place(&self, number: u32) -> usize {
        self.chapters
            .get()
            .and_then(|c| c.get(&number))
            .map_or(number as usize, |(place, _)| place + 1)
    }
}

impl RunObserver for Progress {
    fn terms_listed(&self, _book_id: &str, found: usize) {
        self.total
            .set_message(format!("{found} names and terms listed"));
    }

    fn chapter_started(&self, _book_id: &str, number: u32) {
        let bar = self.bars.add(ProgressBar::new(3));
        bar.set_style(self.chapter_style.clone());
        bar.set_message(self.label(number, "translating"));
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(number, bar);
    }

    fn pass_done(&self, _book_id: &str, number: u32, pass: Pass, blocks: &[Block]) {
        if let Some(dir) = &self.pass_texts {
            write_pass_text(dir, self.place(number), pass, blocks);
        }
        self.total.inc(1);
        let in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bar) = in_flight.get(&number) {
            bar.inc(1);
            bar.set_message(self.label(number, &format!("{} done", pass.task())));
        }
    }

    fn chapter_done(&self, _book_id: &str, number: u32) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bar) = in_flight.remove(&number) {
            bar.finish_and_clear();
            self.bars.remove(&bar);
        }
        self.total
            .set_message(format!("{} chapters in flight", in_flight.len()));
    }
}

/// `DIR/chapter-N.PASS.txt`: the chapter's text after a pass, a block per paragraph, for
/// scoring each pass against a reference (`scripts/quality-bench.sh`).
fn write_pass_text(dir: &Path, place: usize, pass: Pass, blocks: &[Block]) {
    let text: Vec<String> = blocks.iter().map(Block::plain_text).collect();
    let path = dir.join(format!("chapter-{place}.{}.txt", pass.task()));
    if let Err(e) = std::fs::write(&path, text.join("\n\n") + "\n") {
        eprintln!("warning: writing {}: {e}", path.display());
    }
}
