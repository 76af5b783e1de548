//! `booktr translate FILE --to LANG`: the whole job on one machine with no server: read the book,
//! translate it in three passes (offline engine unless a provider key is configured), render it,
//! and print what it cost and how it went.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{anyhow, bail, Context};
use booktr_core::books::{sniff, BookFormat};
use booktr_core::types::LanguageCode;
use booktr_formats::manuscript::{Block, Manuscript};
use booktr_formats::render::{self, Layout, RenderOptions, Sources};
use booktr_translate::book::{choose_model, translate_book, BookOptions, BookTranslation, Event};
use booktr_translate::checks::{language_of, Problem};
use booktr_translate::estimate::cost;
use booktr_translate::glossary::{self, contains_term, GlossaryEntry};
use booktr_translate::ladder::Repaired;
use booktr_translate::model::ChatModel;
use booktr_translate::pipeline::{Changed, PassUsage, Quality};
use booktr_translate::protocol::Pass;
use booktr_translate::reading::Removed;
use booktr_translate::recorded::Recording;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

pub struct TranslateArgs {
    pub file: PathBuf,
    pub to: String,
    pub from: Option<String>,
    pub model: String,
    pub glossary: Option<PathBuf>,
    pub format: String,
    /// `translated` or `bilingual`.
    pub layout: String,
    pub out: Option<PathBuf>,
    pub parallel: usize,
    pub max_cost: Option<f64>,
    /// Chapters to translate, counted from 1 (`3`, `2-5`, `1,4,7`); None: all.
    pub chapters: Option<String>,
    pub report: Option<PathBuf>,
    pub record_answers: Option<PathBuf>,
    /// A directory to write each chapter's text into after each pass.
    pub pass_texts: Option<PathBuf>,
}

/// The most chapters `--parallel` takes at once, as the server's widest window.
const MAX_PARALLEL: usize = 64;

pub async fn run(args: TranslateArgs) -> anyhow::Result<()> {
    let to = LanguageCode::parse(&args.to).map_err(|e| anyhow!("--to: {e}"))?;
    let from = args
        .from
        .as_deref()
        .map(LanguageCode::parse)
        .transpose()
        .map_err(|e| anyhow!("--from: {e}"))?;
    if !(1..=MAX_PARALLEL).contains(&args.parallel) {
        bail!("--parallel: between 1 and {MAX_PARALLEL} chapters at a time");
    }
    if let Some(max_cost) = args.max_cost {
        if !(max_cost.is_finite() && max_cost > 0.0) {
            bail!("--max-cost: a number of US dollars above 0");
        }
    }
    let output_format = match args.format.as_str() {
        "epub" | "pdf" => args.format.clone(),
        other => bail!("--format: '{other}' is not epub or pdf"),
    };
    let layout = match args.layout.as_str() {
        "translated" => Layout::Translated,
        "bilingual" => Layout::Bilingual,
        other => bail!("--layout: '{other}' is not translated or bilingual"),
    };
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let name = args
        .file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("book");
    let format = sniff(name, &bytes[..bytes.len().min(64 * 1024)]).map_err(anyhow::Error::msg)?;
    let mut manuscript = booktr_formats::extract(format.reader(), &bytes)
        .map_err(|e| anyhow!("the file could not be read: {e}"))?;
    // Every chapter's source, for a bilingual edition (which sets each block with its original).
    let all_sources = manuscript.chapters.clone();
    // Which of the book's chapters are translated (all, or those `--chapters` names).
    let mut selected: Vec<bool> = vec![true; manuscript.chapters.len()];
    if let Some(spec) = &args.chapters {
        let wanted = chapter_numbers(spec, manuscript.chapters.len())?;
        selected = (1..=selected.len()).map(|n| wanted.contains(&n)).collect();
        manuscript.chapters = manuscript
            .chapters
            .into_iter()
            .enumerate()
            .filter(|(i, _)| wanted.contains(&(i + 1)))
            .map(|(_, c)| c)
            .collect();
    }
    let source = from
        .map(|l| l.to_string())
        .or_else(|| manuscript.language.clone())
        .unwrap_or_else(|| "und".into());
    let glossary = match &args.glossary {
        Some(path) => read_glossary(path)?,
        None => Vec::new(),
    };
    let model = choose_model(&args.model, None, |name| std::env::var(name).ok())
        .map_err(|e| anyhow!("{e}"))?;
    let model: Box<dyn ChatModel> = match &args.record_answers {
        Some(path) => Box::new(
            Recording::new(model, path).with_context(|| format!("opening {}", path.display()))?,
        ),
        None => model,
    };
    let offline = model.name() == booktr_translate::offline::NAME;
    if offline {
        eprintln!(
            "No {} key is configured: using the offline engine, which writes a visibly fake \
             pseudo-translation (accented vowels) so the whole pipeline can be tried without a key.",
            args.model
        );
    }

    let progress = Progress::new(&manuscript)?;
    let options = BookOptions {
        parallel: args.parallel,
        // The offline engine is free: a cap would only stop it for nothing.
        max_cost: args.max_cost.filter(|_| !offline),
        model: args.model.clone(),
    };
    if let Some(dir) = &args.pass_texts {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let on_event = |event: Event<'_>| {
        if let (
            Some(dir),
            Event::PassDone {
                chapter,
                pass,
                blocks,
            },
        ) = (&args.pass_texts, &event)
        {
            write_pass_text(dir, *chapter, *pass, blocks);
        }
        progress.on_event(event)
    };
    // The server's setting for the pipeline, read the same way (`BOOKTR_CHUNK_TOKENS`).
    let pipeline = booktr_core::config::pipeline_config(&|name, default| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_string())
    })?;
    let started = std::time::Instant::now();
    let done = translate_book(
        model.as_ref(),
        &manuscript,
        &source,
        to.as_str(),
        &glossary,
        &pipeline,
        &options,
        &on_event,
    )
    .await
    .map_err(|e| anyhow!("{e}"))?;
    progress.finish();

    let options = RenderOptions {
        language: to.to_string(),
        // The source's; a book translated in place carries its translation first.
        title: manuscript.title.clone(),
        author: None,
        identifier: format!("urn:booktr:{}", booktr_core::ids::new_id()),
        modified: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        budget: booktr_formats::Budget::default(),
    };
    let rendered = match (output_format.as_str(), layout) {
        ("pdf", Layout::Translated) => render::pdf::render(&done.manuscript, &options, &[]),
        ("pdf", Layout::Bilingual) => {
            // The chosen chapters, each beside its source.
            let sources = Sources {
                language: &source,
                chapters: &manuscript.chapters,
            };
            render::pdf::render_bilingual(&done.manuscript, sources, &options, &[])
        }
        _ => {
            // An EPUB comes back as the same book translated in place; the chapters left out
            // keep their source text there.
            let mut done_chapters = done.manuscript.chapters.iter().cloned();
            let translated: Vec<_> = selected
                .iter()
                .map(|&chosen| chosen.then(|| done_chapters.next()).flatten())
                .collect();
            let original = (format == BookFormat::Epub).then_some(bytes.as_slice());
            let sources = Sources {
                language: &source,
                chapters: &all_sources,
            };
            render::translated_epub(
                original,
                &done.manuscript,
                &translated,
                (layout == Layout::Bilingual).then_some(sources),
                &options,
                layout,
            )
        }
    }
    .map_err(|e| anyhow!("rendering: {e}"))?;
    let out = args
        .out
        .unwrap_or_else(|| default_output(&args.file, to.as_str(), &output_format, layout));
    std::fs::write(&out, rendered.bytes).with_context(|| format!("writing {}", out.display()))?;
    for warning in &rendered.warnings {
        eprintln!("warning: {warning}");
    }

    let report = Report::of(&manuscript, &done, &source, to.as_str(), started.elapsed());
    print_summary(&args.model, offline, &glossary, &manuscript, &done, &out);
    report.print(to.as_str());
    if let Some(path) = &args.report {
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if !done.stopped_at_cap.is_empty() {
        bail!(
            "stopped before passing --max-cost ${:.2}: {} of {} chapters are translated in {}; \
             the other {} keep their source text",
            args.max_cost.unwrap_or_default(),
            manuscript.chapters.len() - done.stopped_at_cap.len(),
            manuscript.chapters.len(),
            out.display(),
            done.stopped_at_cap.len()
        );
    }
    Ok(())
}

/// The progress display: one bar for every pass of the book, and a line per chapter in flight.
struct Progress {
    bars: MultiProgress,
    total: ProgressBar,
    in_flight: Mutex<HashMap<usize, ProgressBar>>,
    titles: Vec<String>,
    chapter_style: ProgressStyle,
}

impl Progress {
    fn new(manuscript: &Manuscript) -> anyhow::Result<Progress> {
        let bars = MultiProgress::new();
        let total = bars.add(ProgressBar::new(3 * manuscript.chapters.len() as u64));
        total.set_style(
            ProgressStyle::with_template("{spinner} [{bar:40}] {pos}/{len} passes · {msg} ({eta})")
                .map_err(|e| anyhow!("{e}"))?
                .progress_chars("=> "),
        );
        total.set_message("finding the book's names and terms");
        let chapter_style = ProgressStyle::with_template("    {bar:3} {msg}")
            .map_err(|e| anyhow!("{e}"))?
            .progress_chars("## ");
        Ok(Progress {
            bars,
            total,
            in_flight: Mutex::new(HashMap::new()),
            titles: manuscript
                .chapters
                .iter()
                .enumerate()
                .map(|(i, c)| render::chapter_title(c, i))
                .collect(),
            chapter_style,
        })
    }

    fn on_event(&self, event: Event<'_>) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Event::TermsDone { found } => {
                self.total
                    .set_message(format!("{found} names and terms listed"));
            }
            Event::ChapterStarted { chapter } => {
                let bar = self.bars.add(ProgressBar::new(3));
                bar.set_style(self.chapter_style.clone());
                bar.set_message(self.label(chapter, "translating"));
                in_flight.insert(chapter, bar);
            }
            Event::PassDone { chapter, pass, .. } => {
                self.total.inc(1);
                if let Some(bar) = in_flight.get(&chapter) {
                    bar.inc(1);
                    bar.set_message(self.label(chapter, &format!("{} done", pass.task())));
                }
            }
            Event::ChapterDone { chapter, .. } => {
                if let Some(bar) = in_flight.remove(&chapter) {
                    bar.finish_and_clear();
                    self.bars.remove(&bar);
                }
                self.total
                    .set_message(format!("{} chapters in flight", in_flight.len()));
            }
        }
    }

    fn label(&self, chapter: usize, what: &str) -> String {
        let title = self
            .titles
            .get(chapter)
            .map(String::as_str)
            .unwrap_or_default();
        format!(
            "chapter {}/{} {title}: {what}",
            chapter + 1,
            self.titles.len()
        )
    }

    fn finish(&self) {
        for bar in self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
        {
            bar.1.finish_and_clear();
        }
        self.total.finish_and_clear();
    }
}

/// `moby-dick.es.epub`, or `moby-dick.es.bilingual.pdf` beside it.
fn default_output(input: &Path, lang: &str, format: &str, layout: Layout) -> PathBuf {
    let stem = input.file_stem().and_then(|s| s.to_str()).unwrap_or("book");
    let layout = match layout {
        Layout::Translated => "",
        Layout::Bilingual => ".bilingual",
    };
    PathBuf::from(format!("{stem}.{lang}{layout}.{format}"))
}

/// A glossary CSV (`booktr_core::glossaries::csv`): every entry needs a source and a target,
/// and a source may appear once (in any case).
pub fn read_glossary(path: &Path) -> anyhow::Result<Vec<GlossaryEntry>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let rows = booktr_core::glossaries::csv::rows(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut entries: Vec<GlossaryEntry> = Vec::new();
    for (number, row) in rows {
        let (source, target) = (
            row.source.unwrap_or_default(),
            row.target.unwrap_or_default(),
        );
        if source.is_empty() || target.is_empty() {
            bail!("{}:{number}: empty source or target", path.display());
        }
        if entries
            .iter()
            .any(|e| e.source.eq_ignore_ascii_case(&source))
        {
            bail!(
                "{}:{number}: '{source}' is already in the glossary",
                path.display()
            );
        }
        entries.push(GlossaryEntry {
            source,
            target,
            context: row.context,
        });
    }
    Ok(entries)
}

/// Uses of the glossary's terms in the source blocks, and how many of the translated blocks
/// carry the glossary's translation.
fn glossary_uses(
    glossary: &[GlossaryEntry],
    source: &Manuscript,
    translated: &Manuscript,
) -> (u32, u32) {
    let (mut checked, mut satisfied) = (0, 0);
    let blocks = source
        .chapters
        .iter()
        .zip(&translated.chapters)
        .flat_map(|(s, t)| s.blocks.iter().zip(&t.blocks));
    let sources = glossary::sources(glossary);
    for (source, target) in blocks {
        let (source, target) = (source.plain_text(), target.plain_text());
        for entry in sources.keep_present(glossary, &source) {
            checked += 1;
            satisfied += u32::from(contains_term(&target, &entry.target));
        }
    }
    (checked, satisfied)
}

fn print_summary(
    model: &str,
    offline: bool,
    glossary: &[GlossaryEntry],
    manuscript: &Manuscript,
    done: &BookTranslation,
    out: &Path,
) {
    let qualities = &done.qualities;
    let sum = |f: fn(&Quality) -> PassUsage| qualities.iter().map(f).sum();
    let passes = [
        ("translate", sum(|q| q.translate)),
        ("review", sum(|q| q.review)),
        ("polish", sum(|q| q.polish)),
    ];
    let passes = [("terms", done.terms.usage)].into_iter().chain(passes);
    let passes: Vec<(&str, PassUsage)> = passes.collect();
    let total: PassUsage = passes.iter().map(|(_, p)| *p).sum();
    let (input, output) = (total.input_tokens, total.output_tokens);
    // The quality records count the book's terms with the glossary (every pass enforces
    // both); the user's glossary is counted on its own here.
    let (checked, satisfied) = glossary_uses(glossary, manuscript, &done.manuscript);
    let listed: u32 = qualities.iter().map(|q| q.glossary_checked).sum();
    let followed: u32 = qualities.iter().map(|q| q.glossary_satisfied).sum();
    println!("Wrote {}", out.display());
    println!(
        "{} chapters, {} words, model {}",
        manuscript.chapters.len(),
        manuscript.word_count(),
        if offline {
            "offline pseudo-translation"
        } else {
            model
        }
    );
    println!(
        "{} names and terms listed for the whole book",
        done.terms.terms.len()
    );
    for (name, usage) in passes {
        println!(
            "  {name:<9} {:>5} requests  {:>9} tokens in  {:>9} tokens out",
            usage.requests, usage.input_tokens, usage.output_tokens
        );
    }
    let price = if offline {
        0.0
    } else {
        cost(model, input, output)
    };
    println!("Estimated cost: ${price:.4} ({input} tokens in, {output} out)");
    if checked > 0 {
        println!(
            "Glossary: {satisfied} of {checked} uses follow the glossary ({:.1}%)",
            f64::from(satisfied) * 100.0 / f64::from(checked)
        );
    }
    if listed > 0 {
        println!(
            "Glossary and book terms: {followed} of {listed} uses follow the list ({:.1}%)",
            f64::from(followed) * 100.0 / f64::from(listed)
        );
    }
}

/// `DIR/chapter-N.PASS.txt`: the chapter's text after a pass, a block per paragraph, for
/// scoring each pass against a reference (`scripts/quality-bench.sh`).
fn write_pass_text(dir: &Path, chapter: usize, pass: Pass, blocks: &[Block]) {
    let text: Vec<String> = blocks.iter().map(Block::plain_text).collect();
    let path = dir.join(format!("chapter-{}.{}.txt", chapter + 1, pass.task()));
    if let Err(e) = std::fs::write(&path, text.join("\n\n") + "\n") {
        eprintln!("warning: writing {}: {e}", path.display());
    }
}

/// What a run did to the book's blocks, for people (printed) and scripts (`--report`).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    chapters: usize,
    blocks: usize,
    /// Blocks long enough for language identification to judge, and how it judged their text.
    judged: usize,
    in_target: usize,
    in_source: usize,
    in_other: usize,
    /// Blocks in the source language that no flag reports (must be 0).
    silently_in_source: usize,
    /// Flagged blocks, and per kind (a block may be flagged for two reasons).
    flagged_blocks: usize,
    flagged: BTreeMap<Problem, usize>,
    repaired: Repaired,
    removed: Removed,
    /// Blocks whose review or polish answer was refused (they kept the previous pass's text).
    kept_previous: usize,
    /// Blocks the review and the polish changed.
    changed: Changed,
    requests: u32,
    /// Tokens and requests of each pass, and of the term list.
    usage: BTreeMap<&'static str, PassUsage>,
    seconds: f64,
}

impl Report {
    fn of(
        source: &Manuscript,
        done: &BookTranslation,
        source_lang: &str,
        target: &str,
        took: std::time::Duration,
    ) -> Report {
        let primary = |l: &str| l.split(['-', '_']).next().unwrap_or(l).to_ascii_lowercase();
        let (source_lang, target) = (primary(source_lang), primary(target));
        let mut report = Report {
            chapters: done.qualities.len(),
            blocks: 0,
            judged: 0,
            in_target: 0,
            in_source: 0,
            in_other: 0,
            silently_in_source: 0,
            flagged_blocks: 0,
            flagged: BTreeMap::new(),
            repaired: Repaired::default(),
            removed: Removed::default(),
            kept_previous: 0,
            changed: Changed::default(),
            requests: done.terms.usage.requests,
            usage: BTreeMap::from([("terms", done.terms.usage)]),
            seconds: took.as_secs_f64(),
        };
        let chapters = source.chapters.iter().zip(&done.manuscript.chapters);
        for ((original, translated), quality) in chapters.zip(&done.qualities) {
            let flagged = quality.flagged_blocks();
            report.flagged_blocks += flagged.len();
            for (kind, n) in quality.flag_counts() {
                *report.flagged.entry(kind).or_default() += n;
            }
            report.repaired += quality.repaired;
            report.removed += quality.removed;
            report.kept_previous += quality.kept_previous.len();
            report.changed += quality.changed;
            for pass in Pass::ALL {
                *report.usage.entry(pass.task()).or_default() += quality.usage(pass);
            }
            report.requests +=
                quality.translate.requests + quality.review.requests + quality.polish.requests;
            for (i, (block, source_block)) in
                translated.blocks.iter().zip(&original.blocks).enumerate()
            {
                if source_block.text.trim().is_empty() {
                    continue;
                }
                report.blocks += 1;
                let Some(lang) = language_of(&block.plain_text()) else {
                    continue;
                };
                report.judged += 1;
                if lang == target {
                    report.in_target += 1;
                } else if lang == source_lang {
                    report.in_source += 1;
                    report.silently_in_source += usize::from(!flagged.contains(&i));
                } else {
                    report.in_other += 1;
                }
            }
        }
        report
    }

    fn print(&self, target: &str) {
        let percent = |n: usize, of: usize| {
            if of == 0 {
                100.0
            } else {
                n as f64 * 100.0 / of as f64
            }
        };
        println!(
            "Language identification: {} of {} blocks long enough to judge are in {target} ({:.1}%), {} in the source language, {} in another",
            self.in_target,
            self.judged,
            percent(self.in_target, self.judged),
            self.in_source,
            self.in_other
        );
        if self.flagged.is_empty() {
            println!("Flagged blocks: none");
        } else {
            let kinds: Vec<String> = self
                .flagged
                .iter()
                .map(|(kind, n)| format!("{n} {}", kind.describe()))
                .collect();
            println!(
                "Flagged blocks: {} of {} ({}); each keeps its source text",
                self.flagged_blocks,
                self.blocks,
                kinds.join(", ")
            );
        }
        let r = self.repaired;
        println!(
            "Repaired when asked again: {} blocks (in halves {}, one at a time {}, with the simplest prompt {})",
            r.total(),
            r.halves,
            r.singles,
            r.simple
        );
        let m = self.removed;
        println!(
            "Removed from answers: {} (reasoning {}, fences {}, before the blocks {}, between {}, after {}, repeated {}, not asked for {})",
            m.total(),
            m.reasoning,
            m.fences,
            m.before,
            m.between,
            m.after,
            m.duplicates,
            m.extra
        );
        println!(
            "Changed by the review: {} blocks; by the polish: {}",
            self.changed.review, self.changed.polish
        );
        if self.kept_previous > 0 {
            println!(
                "Review or polish changes not kept for {} blocks (they failed a check; the previous pass's text was kept)",
                self.kept_previous
            );
        }
        for (pass, usage) in &self.usage {
            println!(
                "Tokens, {pass}: {} in, {} out, {} requests",
                usage.input_tokens, usage.output_tokens, usage.requests
            );
        }
        println!("Requests: {}", self.requests);
    }
}

/// `3`, `2-5`, `1,4,7` (or a mix), each between 1 and `count`.
fn chapter_numbers(spec: &str, count: usize) -> anyhow::Result<BTreeSet<usize>> {
    let mut wanted = BTreeSet::new();
    for part in spec.split(',').map(str::trim) {
        let (from, to) = part.split_once('-').unwrap_or((part, part));
        let number = |s: &str| -> anyhow::Result<usize> {
            let n: usize = s
                .trim()
                .parse()
                .map_err(|_| anyhow!("--chapters: '{part}' is not a chapter number or range"))?;
            if !(1..=count).contains(&n) {
                bail!("--chapters: the book has chapters 1 to {count}");
            }
            Ok(n)
        };
        let (from, to) = (number(from)?, number(to)?);
        if from > to {
            bail!("--chapters: '{part}' runs backwards");
        }
        wanted.extend(from..=to);
    }
    Ok(wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glossary_csv_takes_quotes_headers_and_context() {
        let dir = std::env::temp_dir().join(format!("booktr-glossary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.csv");
        std::fs::write(&path, "source,target,context\nwhale,ballena,the animal\n\"Captain Ahab\",\"Capitán \"\"Acab\"\"\",\n").unwrap();
        let entries = read_glossary(&path).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].context.as_deref(), Some("the animal"));
        assert_eq!(entries[1].target, "Capitán \"Acab\"");
        std::fs::write(&path, "whale,ballena\nWhale,cachalote\n").unwrap();
        assert!(read_glossary(&path)
            .unwrap_err()
            .to_string()
            .contains("already in the glossary"));
        std::fs::write(&path, "whale,\n").unwrap();
        assert!(read_glossary(&path).is_err());
    }
}
