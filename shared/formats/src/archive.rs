//! Reading zip containers (EPUB, DOCX) without trusting them: entry count, per-entry and total
//! inflated sizes are capped while inflating (declared sizes are not believed), encrypted
//! entries are refused, and names are only ever looked up, never used as file-system paths.

use std::io::{Cursor, Read};

use zip::ZipArchive;

use crate::budget::Budget;
use crate::error::FormatError;

/// Limits for one archive. The total cap scales with the file so memory stays proportional to
/// what was uploaded.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_entries: usize,
    pub max_entry_bytes: u64,
    pub max_total_bytes: u64,
}

impl Limits {
    /// 10,000 entries; per entry and in total what `budget` allows a file of `len` bytes.
    pub fn for_file(len: usize, budget: Budget) -> Limits {
        let (entry, total) = budget.archive_bytes(len);
        Limits {
            max_entries: 10_000,
            max_entry_bytes: entry,
            max_total_bytes: total,
        }
    }
}

pub struct Archive<'a> {
    zip: ZipArchive<Cursor<&'a [u8]>>,
    limits: Limits,
    inflated: u64,
}

impl<'a> Archive<'a> {
    pub fn open(bytes: &'a [u8], limits: Limits) -> Result<Archive<'a>, FormatError> {
        let zip = ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| FormatError::Malformed(format!("not a readable zip archive ({e})")))?;
        if zip.len() > limits.max_entries {
            return Err(FormatError::TooLarge(format!(
                "the archive has {} entries, more than the limit of {}",
                zip.len(),
                limits.max_entries
            )));
        }
        Ok(Archive {
            zip,
            limits,
            inflated: 0,
        })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.zip.index_for_name(name).is_some()
    }

    /// The entry's bytes, or None when there is no such entry.
    pub fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>, FormatError> {
        let Some(index) = self.zip.index_for_name(name) else {
            return Ok(None);
        };
        let mut entry = match self.zip.by_index(index) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::UnsupportedArchive(m))
                if m == zip::result::ZipError::PASSWORD_REQUIRED =>
            {
                return Err(FormatError::Encrypted)
            }
            Err(e) => return Err(FormatError::Malformed(format!("{name}: {e}"))),
        };
        if entry.encrypted() {
            return Err(FormatError::Encrypted);
        }
        let remaining = self.limits.max_total_bytes.saturating_sub(self.inflated);
        let cap = self.limits.max_entry_bytes.min(remaining);
        // Sized once from the declared size when it is within the cap: grown by doubling, a
        // 62 MiB entry would take 64 MiB of capacity and 96 MiB while it was copied over.
        let declared = entry.size().min(cap);
        let mut bytes = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
        (&mut entry)
            .take(cap + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| FormatError::Malformed(format!("{name}: {e}")))?;
        if bytes.len() as u64 > cap {
            return Err(FormatError::TooLarge(format!(
                "'{name}' inflates past the limit (a zip bomb?); at most {} MiB per entry and {} MiB in all",
                self.limits.max_entry_bytes >> 20,
                self.limits.max_total_bytes >> 20
            )));
        }
        self.inflated += bytes.len() as u64;
        Ok(Some(bytes))
    }

    /// The entry as UTF-8 text (a BOM is dropped), or None when there is no such entry.
    pub fn read_text(&mut self, name: &str) -> Result<Option<String>, FormatError> {
        Ok(self.read(name)?.map(|bytes| decode_owned(bytes).0))
    }

    /// The entries' names in the archive's order.
    pub fn names(&self) -> Vec<String> {
        (0..self.zip.len())
            .filter_map(|i| self.zip.name_for_index(i).map(str::to_string))
            .collect()
    }

    /// Copies entry `index` into `out` as it is stored (still compressed): byte-identical, and
    /// nothing is inflated.
    pub fn copy_raw<W: std::io::Write + std::io::Seek>(
        &mut self,
        index: usize,
        out: &mut zip::ZipWriter<W>,
    ) -> Result<(), FormatError> {
        let entry = self
            .zip
            .by_index_raw(index)
            .map_err(|e| FormatError::Malformed(format!("entry {index}: {e}")))?;
        out.raw_copy_file(entry)
            .map_err(|e| FormatError::Malformed(format!("copying entry {index}: {e}")))
    }

    /// Whether entry `index` is stored uncompressed.
    pub fn is_stored(&mut self, index: usize) -> bool {
        self.zip
            .by_index_raw(index)
            .is_ok_and(|e| e.compression() == zip::CompressionMethod::Stored)
    }
}

/// Text from bytes: UTF-8 (a BOM is dropped), taken over without a copy (a chapter may be tens
/// of megabytes), else what the bytes look like; and whether they were UTF-8.
pub fn decode_owned(mut bytes: Vec<u8>) -> (String, bool) {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    match String::from_utf8(bytes) {
        Ok(text) => (text, true),
        Err(e) => (crate::txt::decode(e.as_bytes()), false),
    }
}
