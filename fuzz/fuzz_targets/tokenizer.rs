//! Any vocabulary and text: the tokenizer loads, encodes, decodes and prints pieces or fails
//! with an error within its bounds, never a panic (the check and the input layout are in
//! crates/gguf-tokenizer/tests/common/fuzz.rs, whose replay test runs the corpus on stable).
#![no_main]

#[path = "../../crates/gguf-tokenizer/tests/common/fuzz.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
