//! Any bytes: parsing never panics nor allocates more than a bound proportional to the
//! input, and every accepted file is written back byte for byte.
#![no_main]

#[path = "../../tests/common/alloc.rs"]
#[allow(dead_code)]
mod alloc;
#[path = "../../tests/common/checks.rs"]
#[allow(dead_code)]
mod checks;
#[path = "../../tests/common/generate.rs"]
#[allow(dead_code)]
mod generate;

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    alloc::check_parse_bound(data);
    checks::raw(data);
});
