//! SQLite shared by async callers: one writer connection, and a pool of read-only connections
//! beside it (WAL lets them read while the writer writes).
//!
//! Writes (and anything that may run long) go to the blocking pool with the writer locked, so
//! SQLite's synchronous API never stalls the async runtime. Short reads run on the calling
//! thread instead: a point read or a bounded range read from the page cache takes microseconds,
//! less than the two thread switches a trip through the blocking pool costs, and a WAL reader
//! never waits for the writer. Every request reads a few items, so this is most of what an
//! authenticated read costs (see the load figures in docs/benchmarks.md).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use booktr_ports::StoreError;
use rusqlite::Connection;

#[derive(Clone)]
pub(crate) struct Db {
    conn: Arc<Mutex<Connection>>,
    readers: Arc<Readers>,
}

/// Idle read-only connections. The pool grows to the number of threads that read at once (the
/// runtime's workers, mostly) and never shrinks while the database is open.
struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Readers {
    fn take(&self) -> Result<Connection, StoreError> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop();
        match idle {
            Some(conn) => Ok(conn),
            None => open_reader(&self.path),
        }
    }

    fn give_back(&self, conn: Connection) {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(conn);
    }
}

fn open_reader(path: &Path) -> Result<Connection, StoreError> {
    let conn =
        Connection::open(path).map_err(|e| unavailable(format!("{}: {e}", path.display())))?;
    // query_only: a reader that tried to write would fail rather than race the writer.
    conn.execute_batch("PRAGMA query_only = ON; PRAGMA busy_timeout = 5000;")
        .map_err(sql)?;
    Ok(conn)
}

impl Db {
    /// Opens (creating) the database at `path` in WAL mode with full durability, and runs `schema`.
    pub(crate) fn open(path: &Path, schema: &str) -> Result<Db, StoreError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| unavailable(format!("{}: {e}", parent.display())))?;
        }
        let conn =
            Connection::open(path).map_err(|e| unavailable(format!("{}: {e}", path.display())))?;
        // WAL lets readers run beside the writer; synchronous=FULL makes every committed
        // transaction survive a power cut, which matters more here than write speed.
        // secure_delete zeroes deleted content, so a closed account's data does not linger in
        // the file's free pages.
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON;",
        )
        .map_err(sql)?;
        conn.execute_batch(schema).map_err(sql)?;
        Ok(Db {
            conn: Arc::new(Mutex::new(conn)),
            readers: Arc::new(Readers {
                path: path.to_path_buf(),
                idle: Mutex::new(Vec::new()),
            }),
        })
    }

    /// Runs a short read on the calling thread, on a read-only connection that sees every
    /// transaction committed before the call. `f` must be a point read or a range read with a
    /// small bound: it blocks the caller (an async worker) while it runs.
    pub(crate) fn read_now<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let conn = self.readers.take()?;
        let result = f(&conn);
        self.readers.give_back(conn);
        result
    }

    /// Runs a read of any size on the blocking pool, on a read-only connection, so it neither
    /// stalls the runtime nor waits for the writer.
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || db.read_now(f))
            .await
            .map_err(|e| unavailable(format!("database task failed: {e}")))?
    }

    /// Runs `f` on the blocking pool with the writer connection locked: for writes, and for
    /// anything that must see the writer's own state.
    pub(crate) async fn call<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let mut guard = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            f(&mut guard)
        })
        .await
        .map_err(|e| unavailable(format!("database task failed: {e}")))?
    }
}

pub(crate) fn sql(e: rusqlite::Error) -> StoreError {
    unavailable(format!("sqlite: {e}"))
}

pub(crate) fn unavailable(message: String) -> StoreError {
    StoreError::Unavailable(message)
}

/// An exclusive lock on a data directory, held for the life of the process that serves it, so a
/// second `booktr serve` on the same directory refuses to start instead of sharing its queue.
pub struct DataDirLock {
    _file: File,
}

impl DataDirLock {
    pub fn acquire(data_dir: &Path) -> Result<DataDirLock, String> {
        std::fs::create_dir_all(data_dir)
            .map_err(|e| format!("cannot create {}: {e}", data_dir.display()))?;
        let path = data_dir.join(".lock");
        let file =
            File::create(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        file.try_lock().map_err(|_| {
            format!("{} is in use by another booktr process; stop it or choose another --data directory", data_dir.display())
        })?;
        Ok(DataDirLock { _file: file })
    }
}
