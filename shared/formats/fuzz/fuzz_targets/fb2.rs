//! Any bytes into the FictionBook extractor: it may refuse them, never panic, hang or exhaust
//! memory.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = booktr_formats::fb2::extract(data);
});
