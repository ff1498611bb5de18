//! Any bytes: parsing never panics nor allocates more than a bound proportional to the
//! input, and every accepted file is written back byte for byte.
#![no_main]

#[path = "../../tests/support/mod.rs"]
mod support;

#[global_allocator]
static ALLOC: support::alloc::Counting = support::alloc::Counting;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    support::alloc::check_parse_bound(data);
    support::checks::raw(data);
});
