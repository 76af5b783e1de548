//! Files compiled into the binary gzipped (the PDF fonts, the API docs' scripts): a half to a
//! quarter of their bytes in every bootstrap that carries them, for one unzip per process.

use std::io::Read;
use std::sync::OnceLock;

/// A gzip file given by `include_bytes!`, unzipped at its first use and kept for the process.
pub struct Gzipped {
    gzipped: &'static [u8],
    plain: OnceLock<Option<Vec<u8>>>,
}

impl Gzipped {
    pub const fn new(gzipped: &'static [u8]) -> Gzipped {
        Gzipped {
            gzipped,
            plain: OnceLock::new(),
        }
    }

    /// The file as compiled in, for clients that take `Content-Encoding: gzip`.
    pub fn gzipped(&self) -> &'static [u8] {
        self.gzipped
    }

    /// The unzipped bytes; `None` if they do not unzip, which only a broken build can cause
    /// (each file's tests unzip it).
    pub fn plain(&'static self) -> Option<&'static [u8]> {
        self.plain
            .get_or_init(|| {
                let mut plain = Vec::new();
                flate2::read::GzDecoder::new(self.gzipped)
                    .read_to_end(&mut plain)
                    .ok()
                    .map(|_| plain)
            })
            .as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gzip_file_unzips_once_and_a_broken_one_says_so() {
        static HELLO: Gzipped = Gzipped::new(&[
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9,
            0xc9, 0x07, 0x00, 0x86, 0xa6, 0x10, 0x36, 0x05, 0x00, 0x00, 0x00,
        ]);
        static BROKEN: Gzipped = Gzipped::new(b"not gzip");
        assert_eq!(HELLO.plain(), Some(&b"hello"[..]));
        assert!(std::ptr::eq(HELLO.plain().unwrap(), HELLO.plain().unwrap()));
        assert_eq!(BROKEN.plain(), None);
    }
}
