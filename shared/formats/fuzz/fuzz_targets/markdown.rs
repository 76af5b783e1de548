//! Any bytes into the Markdown extractor: it may refuse them, never panic, hang or exhaust
//! memory.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = booktr_formats::markdown::extract(data);
});
