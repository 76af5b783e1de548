//! Secret keys kept as files in the data directory (`link.key`, `secrets.key`): made once, on
//! the first start, readable by their owner only, and never replaced.

use std::io::Write;
use std::path::Path;

use booktr_ports::StoreError;

/// The secret kept in `path`, or, the first time, a new one from `make`, stored before it is
/// returned. `usable` says whether the bytes in an existing file are a key of the expected shape.
///
/// - The file is written whole to a temporary file (mode 0600 on Unix, flushed to disk), then
///   linked into place. Linking fails when the file already exists, so when two processes start
///   on a new data directory at once (`booktr serve` and `booktr user create`), both end up
///   with the one key that won, never one each.
/// - An existing file that `usable` refuses is an error naming it, never quietly replaced:
///   whatever the old key signed or sealed would be lost without anyone being told.
pub fn load_or_create(
    path: &Path,
    usable: impl Fn(&[u8]) -> bool,
    make: impl FnOnce() -> Vec<u8>,
) -> Result<Vec<u8>, StoreError> {
    let failed = |e: std::io::Error| StoreError::Unavailable(format!("{}: {e}", path.display()));
    let existing = |secret: Vec<u8>| {
        if usable(&secret) {
            Ok(secret)
        } else {
            Err(StoreError::Invalid(format!(
                "{} holds {} bytes, not a key this service made; restore it from a backup \
                 (removing it makes a new key, and what the old one protected is lost)",
                path.display(),
                secret.len()
            )))
        }
    };
    match std::fs::read(path) {
        Ok(secret) => return existing(secret),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(failed(e)),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let secret = make();
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!("{file_name}.{}.tmp", booktr_ports::ids::new_id()));
    let written = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temporary)?;
        file.write_all(&secret)?;
        // On disk before it is linked in: a crash must not leave an empty key file behind
        // after secrets were sealed with the key.
        file.sync_all()?;
        std::fs::hard_link(&temporary, path)
    })();
    // The temporary name is ours alone; it goes whatever happened.
    let _ = std::fs::remove_file(&temporary);
    match written {
        Ok(()) => Ok(secret),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            existing(std::fs::read(path).map_err(failed)?)
        }
        Err(e) => Err(failed(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_and_read_back_after() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("nested/test.key");
        let first = load_or_create(&path, |k| k.len() == 4, || b"abcd".to_vec()).unwrap();
        let second = load_or_create(&path, |k| k.len() == 4, || b"wxyz".to_vec()).unwrap();
        assert_eq!(first, b"abcd");
        assert_eq!(second, b"abcd");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["test.key"], "no temporary file is left");
    }

    #[cfg(unix)]
    #[test]
    fn a_new_key_file_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("test.key");
        load_or_create(&path, |_| true, || vec![1; 32]).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_damaged_key_file_is_reported_not_replaced() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("test.key");
        std::fs::write(&path, b"short").unwrap();
        let error = load_or_create(&path, |k| k.len() == 32, || vec![1; 32]).unwrap_err();
        assert!(
            error.to_string().contains("test.key holds 5 bytes"),
            "{error}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"short");
    }

    #[test]
    fn processes_racing_on_a_new_directory_share_one_key() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("race.key");
        let keys: Vec<Vec<u8>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8u8)
                .map(|i| {
                    let path = &path;
                    scope.spawn(move || load_or_create(path, |_| true, || vec![i; 32]).unwrap())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            keys.iter().all(|k| *k == keys[0]),
            "every process uses the key that won"
        );
    }
}
