//! `booktr`: the local runtime (worker-queue mode) and command-line tools.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match booktr_functions::cli::main().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("booktr: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
