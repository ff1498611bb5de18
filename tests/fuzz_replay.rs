//! Replays the fuzz corpus (fuzz/corpus/TARGET/) and every fixed crash reproducer
//! (fuzz/regressions/TARGET/) through the checks the fuzz targets run, as ordinary tests on
//! stable. The raw target's allocation bound is checked too: this binary counts allocations.

mod common;
#[path = "../fuzz/replay.rs"]
mod replay;

use common::{alloc, checks};
use replay::replay;

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

#[test]
fn raw_inputs_parse_within_the_allocation_bound_and_round_trip() {
    let (mut worst, mut largest) = (0.0f64, 0);
    let n = replay("raw", |data| {
        let peak = alloc::check_parse_bound(data);
        largest = largest.max(peak);
        worst = worst.max(peak as f64 / data.len().max(1) as f64);
        checks::raw(data);
    });
    eprintln!(
        "fuzz replay: parse peak allocation at most {largest} bytes, {worst:.2} bytes per input \
         byte (bound {} per byte + {})",
        alloc::PER_BYTE,
        alloc::SLACK
    );
    assert!(n >= 100, "the raw seed corpus is missing");
    assert!(largest > 0, "the counting allocator saw nothing");
}

#[test]
fn chunked_inputs_stream_as_they_parse() {
    assert!(replay("chunked", checks::chunked) >= 100);
}

#[test]
fn built_inputs_round_trip() {
    assert!(replay("built", checks::built) >= 10);
}
