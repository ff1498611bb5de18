//! A counting global allocator, to check that parsing allocates no more than a bound
//! proportional to the input, whatever counts and lengths the input declares.
//!
//! A binary opts in with `#[global_allocator] static A: Counting = Counting;` (the raw fuzz
//! target and the replay test do); elsewhere [`check_parse_bound`] measures nothing.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use gguf_grammar::{Endian, Gguf};

/// Bytes allocated per input byte at most, plus [`SLACK`]: a kv takes at least 9 input bytes
/// and about 80 in memory, a tensor info at least 20 and about 110, one dims vector may
/// reserve twice the input left.
pub const PER_BYTE: usize = 32;
/// Fixed allowance on top of the proportional bound.
pub const SLACK: usize = 64 * 1024;

/// The system allocator, counting live bytes and their peak.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
    INSTALLED.store(true, Ordering::Relaxed);
}

// Safety: every call is forwarded to `System` unchanged; only counters are updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

/// The most bytes live at once while `f` runs, above what was live before it.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(before))
}

/// Parses `data` in every byte order and checks the peak allocation against the bound.
/// Returns the largest peak seen (0 when the counting allocator is not installed).
pub fn check_parse_bound(data: &[u8]) -> usize {
    let bound = PER_BYTE * data.len() + SLACK;
    let mut largest = 0;
    for endian in [None, Some(Endian::Little), Some(Endian::Big)] {
        let (_, peak) = peak_during(|| Gguf::parse_with(data, endian).map(|g| g.kvs.len()));
        assert!(
            peak <= bound || !INSTALLED.load(Ordering::Relaxed),
            "parsing {} bytes allocated {peak} bytes at peak (bound {bound})",
            data.len()
        );
        largest = largest.max(peak);
    }
    largest
}
