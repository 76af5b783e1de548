//! Images for this crate's unit tests.
//! It only writes to memory, so its `expect`s cannot fail short of running out of it.
#![allow(clippy::expect_used)]

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;

/// A PNG of `w` x `h` grey pixels, written row by row (a large one never sits in memory
/// decoded; 8,000 x 8,000 is about 60 KB).
pub fn png(w: u32, h: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    }
    let mut header = Vec::new();
    header.extend_from_slice(&w.to_be_bytes());
    header.extend_from_slice(&h.to_be_bytes());
    // 8-bit greyscale, deflate, no filter, no interlace.
    header.extend_from_slice(&[8, 0, 0, 0, 0]);
    let mut pixels = ZlibEncoder::new(Vec::new(), Compression::best());
    // Each row: filter type 0, then the row's pixels.
    let mut row = vec![128u8; w as usize + 1];
    row[0] = 0;
    for _ in 0..h {
        pixels.write_all(&row).expect("deflating to memory");
    }
    let pixels = pixels.finish().expect("deflating to memory");
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &pixels);
    chunk(&mut out, b"IEND", &[]);
    out
}
