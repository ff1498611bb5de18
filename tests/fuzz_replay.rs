//! Replays the fuzz corpus (fuzz/corpus/TARGET/) and every fixed crash reproducer
//! (fuzz/regressions/TARGET/) through the checks the fuzz targets run, as ordinary tests on
//! stable. The raw target's allocation bound is checked too: this binary counts allocations.

mod common;

use std::path::Path;

use common::{alloc, checks};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

/// Every file under fuzz/corpus/TARGET and fuzz/regressions/TARGET, sorted.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut found = Vec::new();
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_file() {
                let name = format!(
                    "{dir}/{target}/{}",
                    path.file_name().unwrap().to_string_lossy()
                );
                found.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    found.sort();
    found
}

fn replay(target: &str, mut check: impl FnMut(&[u8])) -> usize {
    let inputs = inputs(target);
    for (name, data) in &inputs {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(data)));
        assert!(result.is_ok(), "{name} fails the {target} check");
    }
    eprintln!("fuzz replay: {} {target} inputs", inputs.len());
    inputs.len()
}

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
