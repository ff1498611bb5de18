//! The streaming header reader fed in arbitrary chunks gives what the one-shot parse gives.
#![no_main]

#[path = "../../tests/common/checks.rs"]
#[allow(dead_code)]
mod checks;
#[path = "../../tests/common/generate.rs"]
#[allow(dead_code)]
mod generate;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::chunked(data));
