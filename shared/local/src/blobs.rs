//! The `Blobs` port on local files. A key maps to a path below the root (keys are validated by
//! `BlobKey`, so none can escape it). Writes go to a temporary file that is synced and renamed
//! into place, so a reader or a crash never sees half a blob.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use booktr_ports::ids::new_id;
use booktr_ports::{BlobKey, Blobs, StoreError};
use bytes::Bytes;

use crate::db::unavailable;

/// Temporary files live here, inside the root so the final rename never crosses filesystems.
const TMP_DIR: &str = ".tmp";

#[derive(Clone)]
pub struct LocalBlobs {
    root: PathBuf,
}

impl LocalBlobs {
    pub fn open(root: &Path) -> Result<LocalBlobs, StoreError> {
        std::fs::create_dir_all(root.join(TMP_DIR)).map_err(|e| io(root, e))?;
        Ok(LocalBlobs {
            root: root.to_path_buf(),
        })
    }

    fn path(&self, key: &BlobKey) -> PathBuf {
        self.root.join(key.as_str())
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(PathBuf) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || f(root))
            .await
            .map_err(|e| unavailable(format!("blob task failed: {e}")))?
    }
}

fn io(path: &Path, e: std::io::Error) -> StoreError {
    unavailable(format!("{}: {e}", path.display()))
}

fn write_atomically(root: &Path, target: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let tmp = root.join(TMP_DIR).join(new_id());
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        // A delete next door prunes the folder once it is empty (`prune_empty_dirs`), possibly
        // while we make it (which then fails as existing, yet it is gone) or between our making
        // it and the rename (which then finds no folder): make it again and retry.
        let mut tries = 0;
        loop {
            let made = match target.parent() {
                Some(parent) => std::fs::create_dir_all(parent),
                None => Ok(()),
            };
            let result = made.and_then(|()| std::fs::rename(&tmp, target));
            match result {
                Err(e)
                    if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::AlreadyExists)
                        && tries < 10 =>
                {
                    tries += 1
                }
                other => return other,
            }
        }
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(target, e));
    }
    Ok(())
}

/// Removes now-empty directories from `dir` up to (not including) the root, so deleted books
/// leave no folders behind.
fn prune_empty_dirs(root: &Path, mut dir: Option<&Path>) {
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

fn collect(
    root: &Path,
    dir: &Path,
    prefix: &str,
    out: &mut Vec<BlobKey>,
) -> Result<(), StoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| io(dir, e))?;
        let path = entry.path();
        if path == root.join(TMP_DIR) {
            continue;
        }
        let file_type = entry.file_type().map_err(|e| io(&path, e))?;
        if file_type.is_dir() {
            collect(root, &path, prefix, out)?;
        } else if let Some(key) = path.strip_prefix(root).ok().and_then(|p| p.to_str()) {
            let key = key.replace(std::path::MAIN_SEPARATOR, "/");
            if key.starts_with(prefix) {
                if let Ok(key) = BlobKey::parse(&key) {
                    out.push(key);
                }
            }
        }
    }
    Ok(())
}

#[async_trait]
impl Blobs for LocalBlobs {
    async fn put(&self, key: &BlobKey, bytes: Bytes) -> Result<(), StoreError> {
        let target = self.path(key);
        self.blocking(move |root| write_atomically(&root, &target, &bytes))
            .await
    }

    async fn get(&self, key: &BlobKey) -> Result<Option<Bytes>, StoreError> {
        match tokio::fs::read(self.path(key)).await {
            Ok(bytes) => Ok(Some(bytes.into())),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&self.path(key), e)),
        }
    }

    async fn delete(&self, key: &BlobKey) -> Result<(), StoreError> {
        let target = self.path(key);
        self.blocking(move |root| {
            match std::fs::remove_file(&target) {
                Ok(()) => prune_empty_dirs(&root, target.parent()),
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(io(&target, e)),
            }
            Ok(())
        })
        .await
    }

    async fn list(&self, prefix: &str) -> Result<Vec<BlobKey>, StoreError> {
        let prefix = prefix.to_string();
        self.blocking(move |root| {
            // Walk only the deepest directory the prefix names whole.
            let start = match prefix.rsplit_once('/') {
                Some((dir, _))
                    if !dir
                        .split('/')
                        .any(|s| s.is_empty() || s == "." || s == "..") =>
                {
                    root.join(dir)
                }
                _ => root.clone(),
            };
            let mut keys = Vec::new();
            collect(&root, &start, &prefix, &mut keys)?;
            keys.sort_by(|a, b| a.as_str().cmp(b.as_str()));
            Ok(keys)
        })
        .await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        tokio::fs::metadata(&self.root)
            .await
            .map(|_| ())
            .map_err(|e| io(&self.root, e))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A delete prunes its emptied folder; a write into the same folder at that moment still
    /// lands.
    #[tokio::test]
    async fn writes_next_to_deletes_in_one_folder_never_fail() {
        let dir = tempfile::TempDir::new().unwrap();
        let blobs = Arc::new(LocalBlobs::open(dir.path()).unwrap());
        let key = |name: &str| BlobKey::parse(&format!("books/b/run/passes/{name}")).unwrap();
        let deleting = {
            let blobs = blobs.clone();
            tokio::spawn(async move {
                for _ in 0..300 {
                    blobs
                        .put(&key("1"), Bytes::from_static(b"one"))
                        .await
                        .unwrap();
                    blobs.delete(&key("1")).await.unwrap();
                }
            })
        };
        for i in 0..300 {
            let name = format!("w{i}");
            blobs
                .put(&key(&name), Bytes::from_static(b"two"))
                .await
                .unwrap();
            blobs.delete(&key(&name)).await.unwrap();
        }
        deleting.await.unwrap();
    }
}
