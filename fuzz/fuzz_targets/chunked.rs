//! The streaming header reader fed in arbitrary chunks gives what the one-shot parse gives.
#![no_main]

#[path = "../../tests/support/mod.rs"]
mod support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| support::checks::chunked(data));
