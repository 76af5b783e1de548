//! The units of background work any domain may queue, and the files a book can be rendered as.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A unit of background work. Serialized as the queue message body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Job {
    /// Read the uploaded file into chapters.
    #[serde(rename_all = "camelCase")]
    Extract { book_id: String },
    /// Find and translate the book's names and terms for run `run`, before its chapters (see
    /// `booktr_translate::terms`). Dropped, like the chapter jobs, once the run has moved on.
    #[serde(rename_all = "camelCase")]
    Terms {
        book_id: String,
        run: u32,
        /// The chapters whose text the list is made from, when the run translates only these
        /// ([`crate::translation::Translations::start_chapters`]); None: every chapter.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chapters: Option<Vec<u32>>,
    },
    /// Translate a window of chapters of run `run` at the same time, each in three passes
    /// (dropped when the book has moved on to another run: paused, resumed, stopped or
    /// restarted since). A book's windows run one after another in its message group.
    /// `passes` counts the passes of the window's chapters done when the message was queued: a
    /// redelivered message that finds more was cut short while making progress (a crash, a
    /// deploy), and goes on as a fresh message instead of using up the queue's receives.
    #[serde(rename_all = "camelCase")]
    Chapters {
        book_id: String,
        numbers: Vec<u32>,
        run: u32,
        #[serde(default)]
        passes: u32,
    },
    /// Render the translated book as `format` (`epub`, `pdf` or `markdown`) in `layout` (absent in
    /// messages queued before layouts existed: translated). `requested` (ms since the epoch)
    /// tells two requests for the same file apart for the queue's deduplication.
    #[serde(rename_all = "camelCase")]
    Generate {
        book_id: String,
        format: OutputFormat,
        #[serde(default, skip_serializing_if = "Layout::is_translated")]
        layout: Layout,
        requested: i64,
    },
    /// Translate the passages of proposal `proposal_id` again, as the owner asked (see
    /// `crate::translation::passages::proposals`). In a group of its own: it waits for no
    /// window of a run of the book.
    #[serde(rename_all = "camelCase")]
    Retranslate {
        book_id: String,
        proposal_id: String,
    },
    /// Remove everything a closed account held (see `crate::privacy`).
    #[serde(rename_all = "camelCase")]
    PurgeAccount { user_id: String },
    /// Send the user their digest of `week` (`2026-W47`; see `crate::jobs::digest`).
    #[serde(rename_all = "camelCase")]
    WeeklyDigest { user_id: String, week: String },
}

/// The files a translated book can be rendered as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    Epub,
    Pdf,
    /// Only for a book that was Markdown, and only the translation alone.
    Markdown,
}

/// How a translation is laid out in its file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// The translation alone.
    #[default]
    Translated,
    /// Each translated block with its original: after it (EPUB) or beside it (PDF).
    Bilingual,
}

impl Layout {
    pub fn parse(raw: &str) -> Option<Layout> {
        match raw {
            "translated" => Some(Layout::Translated),
            "bilingual" => Some(Layout::Bilingual),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Translated => "translated",
            Layout::Bilingual => "bilingual",
        }
    }

    pub fn is_translated(&self) -> bool {
        *self == Layout::Translated
    }
}

/// One file a translated book can be rendered as: a format in a layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edition {
    pub format: OutputFormat,
    pub layout: Layout,
}

impl Edition {
    pub fn new(format: OutputFormat, layout: Layout) -> Self {
        Edition { format, layout }
    }

    /// The end of the file's name: `epub`, `md`, or `bilingual.epub` (the translated
    /// edition's name carries no layout, as the files stored under it are named).
    pub fn suffix(self) -> String {
        match self.layout {
            Layout::Translated => self.format.extension().to_string(),
            Layout::Bilingual => format!("bilingual.{}", self.format.extension()),
        }
    }

    /// For people: `EPUB`, `bilingual PDF`, `Markdown`.
    pub fn label(self) -> String {
        let format = self.format.label();
        match self.layout {
            Layout::Translated => format.to_string(),
            Layout::Bilingual => format!("bilingual {format}"),
        }
    }

    /// The query string that names it in a download link: `format=epub`, or
    /// `format=epub&layout=bilingual`.
    pub fn query(self) -> String {
        match self.layout {
            Layout::Translated => format!("format={}", self.format.as_str()),
            Layout::Bilingual => format!("format={}&layout=bilingual", self.format.as_str()),
        }
    }
}

impl OutputFormat {
    pub fn parse(raw: &str) -> Option<OutputFormat> {
        match raw {
            "epub" => Some(OutputFormat::Epub),
            "pdf" => Some(OutputFormat::Pdf),
            "markdown" | "md" => Some(OutputFormat::Markdown),
            _ => None,
        }
    }

    /// The name in requests and links: `epub`, `pdf`, `markdown`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Epub => "epub",
            OutputFormat::Pdf => "pdf",
            OutputFormat::Markdown => "markdown",
        }
    }

    /// The file's extension.
    pub fn extension(self) -> &'static str {
        match self {
            OutputFormat::Epub => "epub",
            OutputFormat::Pdf => "pdf",
            OutputFormat::Markdown => "md",
        }
    }

    /// For people: `EPUB`, `PDF`, `Markdown`.
    pub fn label(self) -> &'static str {
        match self {
            OutputFormat::Epub => "EPUB",
            OutputFormat::Pdf => "PDF",
            OutputFormat::Markdown => "Markdown",
        }
    }

    pub fn media_type(self) -> &'static str {
        match self {
            OutputFormat::Epub => "application/epub+zip",
            OutputFormat::Pdf => "application/pdf",
            OutputFormat::Markdown => "text/markdown; charset=utf-8",
        }
    }

    /// The format whose file's name ends in `extension`, if any.
    pub fn of_extension(extension: &str) -> Option<OutputFormat> {
        [
            OutputFormat::Epub,
            OutputFormat::Pdf,
            OutputFormat::Markdown,
        ]
        .into_iter()
        .find(|f| f.extension() == extension)
    }
}

impl Job {
    /// The job's name in logs and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Job::Extract { .. } => "extract",
            Job::Terms { .. } => "terms",
            Job::Chapters { .. } => "chapters",
            Job::Generate { .. } => "generate",
            Job::Retranslate { .. } => "retranslate",
            Job::PurgeAccount { .. } => "purge-account",
            Job::WeeklyDigest { .. } => "weekly-digest",
        }
    }

    /// The book the job works on; None for account jobs.
    pub fn book_id(&self) -> Option<&str> {
        match self {
            Job::Extract { book_id }
            | Job::Terms { book_id, .. }
            | Job::Chapters { book_id, .. }
            | Job::Generate { book_id, .. }
            | Job::Retranslate { book_id, .. } => Some(book_id),
            Job::PurgeAccount { .. } | Job::WeeklyDigest { .. } => None,
        }
    }

    /// The queue's message group: the book's (its jobs run in order), or the account's.
    pub fn group(&self) -> String {
        match self {
            Job::PurgeAccount { user_id } | Job::WeeklyDigest { user_id, .. } => {
                format!("account-{user_id}")
            }
            Job::Retranslate { proposal_id, .. } => format!("proposal-{proposal_id}"),
            _ => self.book_id().unwrap_or_default().to_string(),
        }
    }

    /// Identifies the job for the queue's deduplication: queuing the same job twice within the
    /// window (a retried request) queues it once. Hashed, because a queue keeps its
    /// deduplication records for a while after the job is done (SQS five minutes, the embedded
    /// queue until its next send after that): a purged account's ids must not outlive it there.
    pub fn dedup_id(&self) -> String {
        hex::encode(Sha256::digest(self.readable_dedup_id().as_bytes()))
    }

    fn readable_dedup_id(&self) -> String {
        match self {
            Job::Extract { book_id } => format!("extract-{book_id}"),
            Job::Terms { book_id, run, .. } => format!("terms-{book_id}-{run}"),
            Job::Chapters {
                book_id,
                numbers,
                run,
                passes,
            } => format!(
                "chapters-{book_id}-{run}-{}-{}-{}-{passes}",
                numbers.first().copied().unwrap_or(0),
                numbers.last().copied().unwrap_or(0),
                numbers.len()
            ),
            Job::Generate {
                book_id,
                format,
                layout,
                requested,
            } => format!(
                "generate-{book_id}-{}-{requested}",
                Edition::new(*format, *layout).suffix()
            ),
            Job::Retranslate {
                book_id,
                proposal_id,
            } => format!("retranslate-{book_id}-{proposal_id}"),
            Job::PurgeAccount { user_id } => format!("purge-{user_id}"),
            Job::WeeklyDigest { user_id, week } => format!("digest-{user_id}-{week}"),
        }
    }
}
