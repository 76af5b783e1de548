//! `booktr translate FILE --to LANG`: the whole job on one machine with no server to run: the
//! book goes through the server's own jobs (extract, terms, chapters, generate) on the embedded
//! adapters in a data directory of its own (`local`), so the cost cap, checkpoints, checks and
//! quality record are the server's (offline engine unless a provider key is configured); then
//! the file is written and what the run cost and how it went are printed.

mod local;
mod progress;
mod report;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context};
use booktr_core::books::Book;
use booktr_core::job::{Edition, Layout, OutputFormat};
use booktr_core::ports::Models;
use booktr_core::translation::{Completeness, StartRequest};
use booktr_core::types::{BookStatus, LanguageCode};
use booktr_core::Services;
use booktr_outbound::EnvModels;
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::recorded::AnswerLog;

use local::{Finished, LocalServer, RecordingModels};
use progress::Progress;
use report::{print_fallback, print_summary, Report, Translated};

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
    /// A second model for what `model` leaves flagged or of low confidence.
    pub fallback_model: Option<String>,
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
    let (to, from, edition) = options(&args)?;
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let name = args
        .file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("book");
    let glossary = match &args.glossary {
        Some(path) => read_glossary(path)?,
        None => Vec::new(),
    };
    let (models, offline) = models(&args)?;
    if let Some(dir) = &args.pass_texts {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }

    let progress = Arc::new(Progress::new(args.pass_texts.clone())?);
    let server = LocalServer::start(args.parallel, models, progress.clone()).await?;
    let mut book = server.upload(name, bytes, &to).await?;
    booktr_core::books::store::edition_fits(book.format, edition)
        .map_err(|why| anyhow!("--format: {why}"))?;
    if let Some(from) = &from {
        book = server
            .services
            .books
            .set_source_language(&server.user.id, &book.id, from)
            .await?;
    }
    let count = book.chapter_count.unwrap_or(0) as usize;
    // The chapters to translate (all, or those `--chapters` names), by number in the book.
    let numbers: Vec<u32> = match &args.chapters {
        Some(spec) => chapter_numbers(spec, count)?
            .into_iter()
            .map(|n| n as u32)
            .collect(),
        None => (1..=count as u32).collect(),
    };
    let sources = source_chapters(&server.services, &book, &numbers).await?;
    progress.begin(&sources);
    let glossary_id = if glossary.is_empty() {
        None
    } else {
        Some(store_glossary(&server, &glossary).await?)
    };
    let request = StartRequest {
        book_id: book.id.clone(),
        model: Some(args.model.clone()),
        glossary_id,
        target_lang: Some(to.to_string()),
        // The offline engine is free: a cap would only stop it for nothing.
        max_cost: args.max_cost.filter(|_| !offline),
        pause_at_terms: false,
        fallback_model: args.fallback_model.clone(),
        // The command's one user is there only for this book, with an empty memory.
        memory: None,
    };
    let started = std::time::Instant::now();
    let only = args.chapters.is_some().then_some(numbers.as_slice());
    let finished = server.translate(request, only).await;
    progress.finish();
    let finished = finished?;
    let took = started.elapsed();
    let book = &finished.book;
    if book.status == BookStatus::Error {
        bail!(
            "{}",
            book.error.as_deref().unwrap_or("the translation failed")
        );
    }
    let done = results(&finished.services, book, sources).await?;
    write_results(
        &args,
        &to,
        edition,
        Outcome {
            finished: &finished,
            done: &done,
            took,
            offline,
            glossary: &glossary,
        },
    )
    .await
}

/// The options that need checking before anything is read: the languages, `--parallel`,
/// `--max-cost`, the format and the layout.
fn options(args: &TranslateArgs) -> anyhow::Result<(LanguageCode, Option<LanguageCode>, Edition)> {
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
    let format = match args.format.as_str() {
        "epub" => OutputFormat::Epub,
        "pdf" => OutputFormat::Pdf,
        "markdown" | "md" => OutputFormat::Markdown,
        other => bail!("--format: '{other}' is not epub, pdf or markdown"),
    };
    let layout = match args.layout.as_str() {
        "translated" => Layout::Translated,
        "bilingual" => Layout::Bilingual,
        other => bail!("--layout: '{other}' is not translated or bilingual"),
    };
    Ok((to, from, Edition::new(format, layout)))
}

/// The models from the environment (recorded with `--record-answers`), and whether the run's
/// model is the offline engine, said on standard error.
fn models(args: &TranslateArgs) -> anyhow::Result<(Arc<dyn Models>, bool)> {
    let models: Arc<dyn Models> = Arc::new(EnvModels::from_env());
    let offline = models
        .model(&args.model, None)
        .map_err(|e| anyhow!("{e}"))?
        .name()
        == booktr_translate::offline::NAME;
    if offline {
        eprintln!(
            "No {} key is configured: using the offline engine, which writes a visibly fake \
             pseudo-translation (accented vowels) so the whole pipeline can be tried without a key.",
            args.model
        );
    }
    let models: Arc<dyn Models> = match &args.record_answers {
        Some(path) => {
            let log =
                AnswerLog::open(path).with_context(|| format!("opening {}", path.display()))?;
            Arc::new(RecordingModels::new(models, log))
        }
        None => models,
    };
    Ok((models, offline))
}

/// What a run ended with, for [`write_results`].
struct Outcome<'a> {
    finished: &'a Finished,
    done: &'a Translated,
    took: std::time::Duration,
    offline: bool,
    glossary: &'a [GlossaryEntry],
}

/// The book written where `--out` says, the summary and the report, and an error when the run
/// stopped at its cost cap.
async fn write_results(
    args: &TranslateArgs,
    to: &LanguageCode,
    edition: Edition,
    outcome: Outcome<'_>,
) -> anyhow::Result<()> {
    let Outcome {
        finished,
        done,
        took,
        offline,
        glossary,
    } = outcome;
    let book = &finished.book;
    let stopped_at_cap = book.status == BookStatus::Paused;

    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_output(&args.file, to.as_str(), edition));
    let (file, warnings) = file_of(finished, edition).await?;
    std::fs::write(&out, file).with_context(|| format!("writing {}", out.display()))?;
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }

    let report = Report::of(done, &book.original_lang, to.as_str(), took, offline);
    print_summary(&args.model, offline, glossary, done, &out);
    print_fallback(done);
    report.print(to.as_str());
    if let Some(path) = &args.report {
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if stopped_at_cap {
        let translated = done.qualities.len();
        bail!(
            "stopped before passing --max-cost ${:.2}: {translated} of {} chapters are \
             translated in {}; the other {} keep their source text",
            args.max_cost.unwrap_or_default(),
            done.sources.len(),
            out.display(),
            done.sources.len() - translated
        );
    }
    Ok(())
}

/// The chapters numbered in `numbers`, as extracted, each with its number.
async fn source_chapters(
    services: &Services,
    book: &Book,
    numbers: &[u32],
) -> anyhow::Result<Vec<(u32, booktr_formats::manuscript::Chapter)>> {
    let mut chapters = Vec::with_capacity(numbers.len());
    for &number in numbers {
        let chapter = services
            .translations
            .source_chapter(&book.id, number)
            .await?
            .ok_or_else(|| anyhow!("chapter {number} of the book is missing"))?;
        chapters.push((number, chapter));
    }
    Ok(chapters)
}

/// The glossary as the user's, for the run to enforce; its id.
async fn store_glossary(server: &LocalServer, entries: &[GlossaryEntry]) -> anyhow::Result<String> {
    let entries = entries
        .iter()
        .map(|e| booktr_core::glossaries::EntryInput {
            id: None,
            source: Some(e.source.clone()),
            target: Some(e.target.clone()),
            context: e.context.clone(),
        })
        .collect();
    let glossary = server
        .services
        .glossaries
        .create(&server.user.id, "booktr translate", None, entries)
        .await
        .map_err(|e| anyhow!("--glossary: {e}"))?;
    Ok(glossary.id)
}

/// What the run stored for the chapters it was asked to translate: each chapter's translation
/// and quality record (under the run's key), and the book's term list.
async fn results(
    services: &Services,
    book: &Book,
    sources: Vec<(u32, booktr_formats::manuscript::Chapter)>,
) -> anyhow::Result<Translated> {
    let translations = &services.translations;
    let mut done = Translated {
        sources: Vec::with_capacity(sources.len()),
        chapters: Vec::with_capacity(sources.len()),
        qualities: Vec::new(),
        terms: translations.book_terms(book).await?.unwrap_or_default(),
    };
    for (place, (number, source)) in sources.into_iter().enumerate() {
        let stored = translations
            .stored_chapter(&book.id, number)
            .await?
            .filter(|stored| book.translation_key.as_ref() == Some(&stored.key));
        let translated = match stored {
            Some(stored) => {
                done.qualities.push((place, stored.quality));
                booktr_formats::manuscript::Chapter {
                    title: stored.title,
                    blocks: stored.blocks,
                }
            }
            None => source.clone(),
        };
        done.sources.push(source);
        done.chapters.push(translated);
    }
    Ok(done)
}

/// The file of `edition` and what it leaves out: the one the generate job made when the whole
/// book was translated into it, else rendered as that job renders (of the chapters translated
/// so far, for `--chapters` and a run stopped at its cost cap).
async fn file_of(finished: &Finished, edition: Edition) -> anyhow::Result<(Vec<u8>, Vec<String>)> {
    let (book, translations) = (&finished.book, &finished.services.translations);
    if book.status == BookStatus::Completed {
        if let Some(file) = translations.output(book, edition).await? {
            let prefix = format!("{} file: ", edition.label());
            let warnings = book
                .warnings
                .iter()
                .filter_map(|w| w.strip_prefix(&prefix).map(str::to_string))
                .collect();
            return Ok((file.to_vec(), warnings));
        }
    }
    let completeness = match book.status {
        BookStatus::Completed => Completeness::Whole,
        _ => Completeness::FinishedSoFar,
    };
    let rendition = translations
        .render(book, edition, completeness)
        .await
        .map_err(|e| anyhow!("rendering: {e}"))?
        .ok_or_else(|| anyhow!("no chapter was translated: there is no file to write"))?;
    Ok((rendition.bytes, rendition.warnings))
}

/// `moby-dick.es.epub`, or `moby-dick.es.bilingual.pdf` beside it.
fn default_output(input: &Path, lang: &str, edition: Edition) -> PathBuf {
    let stem = input.file_stem().and_then(|s| s.to_str()).unwrap_or("book");
    let layout = match edition.layout {
        Layout::Translated => "",
        Layout::Bilingual => ".bilingual",
    };
    let format = edition.format.extension();
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
