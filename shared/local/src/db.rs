//! One SQLite connection shared by async callers: each call runs on the blocking pool with the
//! connection locked, so SQLite's synchronous API never stalls the async runtime.

use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex};

use booktr_core::ports::StoreError;
use rusqlite::Connection;

#[derive(Clone)]
pub(crate) struct Db {
    conn: Arc<Mutex<Connection>>,
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
        })
    }

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
