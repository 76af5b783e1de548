//! `booktr`: the local runtime (worker-queue mode) and command-line tools.

/// Threads for blocking work (SQLite calls and file reads and writes). The database is one
/// connection behind a lock, so more threads only wait on it: tokio's default of 512 let a
/// burst of requests grow the process by a thread and a malloc arena per waiting call.
const BLOCKING_THREADS: usize = 16;

fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("booktr: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(booktr_functions::cli::main()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("booktr: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
