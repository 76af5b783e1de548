//! Any bytes into the pdf extractor: it may refuse them, never panic, hang or exhaust memory.
//!
//! The PDF reader underneath panics on some damaged files; `pdf::extract` catches those per page
//! (and reports the page as unreadable). libFuzzer's panic hook would count even a caught panic
//! as a crash, so the hook is made quiet here; a panic that escapes `extract` still aborts the
//! run and is reported.
#![no_main]

use std::sync::Once;

static QUIET_PANICS: Once = Once::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    QUIET_PANICS.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let _ = booktr_formats::pdf::extract(data);
});
