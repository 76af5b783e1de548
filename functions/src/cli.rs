//! The `booktr` command line.

use std::path::PathBuf;

#[cfg(feature = "serve")]
use anyhow::Context;
#[cfg(feature = "serve")]
use booktr_core::accounts::NewUser;
use booktr_core::config::Config;
#[cfg(feature = "serve")]
use booktr_core::types::{Email, Plan, Role};
use clap::{Parser, Subcommand};

#[cfg(feature = "serve")]
use crate::app::Application;
use crate::telemetry;

#[derive(Parser)]
#[command(
    name = "booktr",
    version,
    about = "Book translation service: API server and tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of its largest variant costs nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Serve the HTTP API with in-process workers, on the embedded database and local files.
    #[cfg(feature = "serve")]
    Serve {
        /// Address to listen on [env: BOOKTR_ADDR, default 127.0.0.1:8080]
        #[arg(long)]
        addr: Option<String>,
        /// Data directory [env: BOOKTR_DATA_DIR, default ./data]
        #[arg(long)]
        data: Option<PathBuf>,
    },
    /// Translate a book on this machine, no server needed (the offline engine unless a provider
    /// key such as OPENAI_API_KEY is set), and write it as EPUB or PDF.
    Translate {
        /// The book: EPUB, PDF, DOCX, HTML, TXT, Markdown or FictionBook 2
        file: PathBuf,
        /// Target language code, e.g. es, fr, pt-BR
        #[arg(long)]
        to: String,
        /// Source language code (default: from the file, else detected)
        #[arg(long)]
        from: Option<String>,
        /// gpt-4o-mini, gpt-4o, claude-3-haiku, claude-sonnet-4-20250514, gemini-2.0-flash, gemini-1.5-pro
        #[arg(long, default_value = "gpt-4o-mini")]
        model: String,
        /// Glossary CSV: source,target[,context]
        #[arg(long)]
        glossary: Option<PathBuf>,
        /// epub, pdf, or markdown (for a Markdown book)
        #[arg(long, default_value = "epub")]
        format: String,
        /// translated, or bilingual: each original block followed by its translation (EPUB)
        /// or beside it (PDF)
        #[arg(long, default_value = "translated")]
        layout: String,
        /// Output file (default: <name>.<lang>.<format> here)
        #[arg(long)]
        out: Option<PathBuf>,
        /// Chapters translated at the same time (1 to 64)
        #[arg(long, default_value_t = 16)]
        parallel: usize,
        /// Stop before the model cost (list price, US dollars) would pass this
        #[arg(long)]
        max_cost: Option<f64>,
        /// A second model for the blocks the first leaves flagged or of confidence under 50
        /// (one of the six, not --model); its cost counts under --max-cost
        #[arg(long)]
        fallback_model: Option<String>,
        /// Only these chapters, counted from 1: `3`, `2-5` or `1,4,7`
        #[arg(long)]
        chapters: Option<String>,
        /// Also write what the run did as JSON: blocks in the target language, flagged blocks
        /// by kind, blocks repaired per rung, text removed from answers, requests
        #[arg(long)]
        report: Option<PathBuf>,
        /// Append every request and the model's raw answer to this file (JSON lines), to
        /// replay a model's behaviour in tests
        #[arg(long)]
        record_answers: Option<PathBuf>,
        /// Write each chapter's text after each pass into this directory
        /// (`chapter-N.translate.txt`, `.review.txt`, `.polish.txt`)
        #[arg(long)]
        pass_texts: Option<PathBuf>,
    },
    /// Manage users.
    #[cfg(feature = "serve")]
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
}

#[cfg(feature = "serve")]
#[derive(Subcommand)]
enum UserCommand {
    /// Create a user with an API key; prints {"user": ..., "apiKey": "..."} as one JSON line.
    Create {
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: Option<String>,
        /// USER, ADMIN, SUPER_ADMIN or DEV
        #[arg(long, default_value = "USER")]
        role: String,
        /// FREE, PRO or BUSINESS
        #[arg(long, default_value = "FREE")]
        plan: String,
        /// Data directory [env: BOOKTR_DATA_DIR, default ./data]
        #[arg(long, conflicts_with = "aws")]
        data: Option<PathBuf>,
        /// Create the user in the managed-queue deployment instead (DynamoDB; needs AWS
        /// credentials and BOOKTR_TABLE, BOOKTR_BUCKET and the BOOKTR_*_QUEUE_URL variables):
        /// how the first administrator of an AWS stack is made.
        #[arg(long)]
        aws: bool,
    },
}

pub async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let mut config = Config::from_env()?;
    // The server's jobs log what they do as they do it, which is for a server's operator; a
    // translate prints its own progress and summary, and logs only warnings unless asked.
    if matches!(cli.command, Command::Translate { .. }) && std::env::var("BOOKTR_LOG").is_err() {
        config.log_filter = "warn".into();
    }
    telemetry::init(&config.log_filter, config.log_format);
    match cli.command {
        #[cfg(feature = "serve")]
        Command::Serve { addr, data } => {
            if let Some(addr) = addr {
                config.addr = addr
                    .parse()
                    .with_context(|| format!("--addr {addr} is not host:port"))?;
                if std::env::var("BOOKTR_PUBLIC_URL").is_err() {
                    config.public_url = format!("http://{}", config.addr);
                }
            }
            if let Some(data) = data {
                config.data_dir = data;
            }
            crate::serve::run(config).await
        }
        Command::Translate {
            file,
            to,
            from,
            model,
            glossary,
            format,
            layout,
            out,
            parallel,
            max_cost,
            fallback_model,
            chapters,
            report,
            record_answers,
            pass_texts,
        } => {
            let args = crate::translate_cmd::TranslateArgs {
                file,
                to,
                from,
                model,
                glossary,
                format,
                layout,
                out,
                parallel,
                max_cost,
                fallback_model,
                chapters,
                report,
                record_answers,
                pass_texts,
            };
            crate::translate_cmd::run(args).await
        }
        #[cfg(feature = "serve")]
        Command::User {
            command:
                UserCommand::Create {
                    email,
                    name,
                    role,
                    plan,
                    data,
                    aws,
                },
        } => create_user(config, email, name, role, plan, data, aws).await,
    }
}

/// `booktr user create`: the user, and an API key for it, printed as JSON.
#[cfg(feature = "serve")]
async fn create_user(
    config: Config,
    email: String,
    name: Option<String>,
    role: String,
    plan: String,
    data: Option<PathBuf>,
    aws: bool,
) -> anyhow::Result<()> {
    let config = Config {
        data_dir: data.unwrap_or(config.data_dir),
        ..config
    };
    let new = NewUser {
        email: Email::parse(&email).map_err(|e| anyhow::anyhow!("--email: {e}"))?,
        name,
        password: None,
        role: role
            .parse::<Role>()
            .map_err(|e| anyhow::anyhow!("--role: {e}"))?,
        plan: plan
            .parse::<Plan>()
            .map_err(|e| anyhow::anyhow!("--plan: {e}"))?,
    };
    let app = if aws {
        managed(config).await?
    } else {
        Application::builder(config).embedded()?
    };
    let accounts = &app.services.accounts;
    let user = accounts.create_user(new).await?;
    let key = accounts.create_key(&user, "cli", None, None).await?;
    println!(
        "{}",
        serde_json::json!({ "user": booktr_api::wire::accounts::User::from(user), "apiKey": key.secret })
    );
    Ok(())
}

/// The app of the AWS deployment, for `user create --aws`.
#[cfg(feature = "aws")]
async fn managed(config: Config) -> anyhow::Result<Application> {
    let resources = crate::wiring::AwsResources::from_env()?;
    let clients = booktr_aws::Clients::from_env().await;
    Ok(Application::builder(config).managed(clients, &resources)?)
}

#[cfg(all(feature = "serve", not(feature = "aws")))]
async fn managed(_: Config) -> anyhow::Result<Application> {
    anyhow::bail!(
        "this booktr was built without the AWS adapters; build it with \
         `cargo build --release -p booktr-functions --features aws --bin booktr`"
    )
}
