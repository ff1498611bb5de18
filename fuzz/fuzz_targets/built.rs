//! Documents built from arbitrary bytes round-trip exactly, convert between versions and
//! byte orders, and truncate with located errors at every prefix.
#![no_main]

#[path = "../../tests/common/checks.rs"]
#[allow(dead_code)]
mod checks;
#[path = "../../tests/common/generate.rs"]
#[allow(dead_code)]
mod generate;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::built(data));
