//! Any template source and messages: the sandbox renders or refuses within its bounds, never
//! a panic or a stack overflow (the check and the input layout are in
//! crates/gguf-template/tests/common/fuzz.rs, whose replay test runs the corpus on stable).
#![no_main]

#[path = "../../crates/gguf-template/tests/common/fuzz.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
