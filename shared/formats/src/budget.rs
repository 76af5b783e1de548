//! What one file may cost its reader and renderer in memory.

/// The memory one file may cost its reader and renderer. Each limit grows with the file where
/// that makes sense, under an absolute ceiling (`BOOKTR_FILE_MEMORY_MIB` in the service, 64 MiB
/// by default) from which every other limit follows:
///
/// - a PDF stream decompresses to 64 times the file, at least 16 MiB, at most the ceiling;
/// - a zip entry (EPUB, DOCX) inflates to at most the ceiling, and all of them together to 20
///   times the file, at least 16 MiB, at most 16 times the ceiling;
/// - a PDF rendition decodes images of at most a quarter-million pixels per MiB of ceiling each
///   (16 megapixels at 64 MiB), and half a million per MiB in all (32 megapixels).
///
/// HTML and TXT are read as text, within the upload's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    ceiling_mib: usize,
}

impl Budget {
    pub const DEFAULT_MIB: usize = 64;
    /// Below this the limits would refuse ordinary books (a PDF's embedded fonts, say).
    pub const MIN_MIB: usize = 16;
    pub const MAX_MIB: usize = 4096;

    /// A budget with a ceiling of `mib` MiB; None outside `MIN_MIB..=MAX_MIB`.
    pub fn of_mib(mib: usize) -> Option<Budget> {
        (Self::MIN_MIB..=Self::MAX_MIB)
            .contains(&mib)
            .then_some(Budget { ceiling_mib: mib })
    }

    fn ceiling(&self) -> usize {
        self.ceiling_mib << 20
    }

    /// The most bytes one PDF stream of a file of `file_len` bytes may decompress to.
    pub fn pdf_stream_bytes(&self, file_len: usize) -> usize {
        file_len.saturating_mul(64).clamp(16 << 20, self.ceiling())
    }

    /// The most bytes one zip entry may inflate to, and all of a file's entries together.
    pub fn archive_bytes(&self, file_len: usize) -> (u64, u64) {
        let ceiling = self.ceiling() as u64;
        let total = (file_len as u64)
            .saturating_mul(20)
            .clamp(16 << 20, ceiling.saturating_mul(16));
        (ceiling, total)
    }

    /// The most pixels one image may have to be decoded for a PDF rendition.
    pub fn image_pixels(&self) -> u64 {
        self.ceiling_mib as u64 * 250_000
    }

    /// The most pixels of all a PDF rendition's images together.
    pub fn book_pixels(&self) -> u64 {
        self.ceiling_mib as u64 * 500_000
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            ceiling_mib: Self::DEFAULT_MIB,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Budget;

    #[test]
    fn the_default_budget_gives_the_documented_limits_and_every_limit_follows_the_ceiling() {
        let default = Budget::default();
        assert_eq!(default.pdf_stream_bytes(1_000), 16 << 20);
        assert_eq!(default.pdf_stream_bytes(500_000), 500_000 * 64);
        assert_eq!(default.pdf_stream_bytes(50 << 20), 64 << 20);
        assert_eq!(default.archive_bytes(100 << 20), (64 << 20, 1 << 30));
        assert_eq!(default.image_pixels(), 16_000_000);
        assert_eq!(default.book_pixels(), 32_000_000);

        let larger = Budget::of_mib(256).unwrap();
        assert_eq!(larger.pdf_stream_bytes(50 << 20), 256 << 20);
        assert_eq!(larger.image_pixels(), 64_000_000);
        assert_eq!(Budget::of_mib(8), None);
        assert_eq!(Budget::of_mib(5000), None);
    }
}
