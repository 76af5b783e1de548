//! `booktr`: the local runtime (worker-queue mode) and command-line tools.

/// Threads for blocking work (SQLite writes and long reads, file reads and writes). Writes share
/// one connection behind a lock, so more threads only wait on it: tokio's default of 512 let a
/// burst of requests grow the process by a thread and a malloc arena per waiting call.
const BLOCKING_THREADS: usize = 16;

/// Every request allocates and frees dozens of small values across threads. With mimalloc
/// authenticated reads run about a third faster than on glibc's allocator, for about 25 MiB more
/// resident memory under a burst (docs/benchmarks.md's load figures).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
