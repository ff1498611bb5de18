//! Documents built from arbitrary bytes round-trip exactly, convert between versions and
//! byte orders, and truncate with located errors at every prefix.
#![no_main]

#[path = "../../tests/support/mod.rs"]
mod support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| support::checks::built(data));
