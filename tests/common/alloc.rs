//! A counting global allocator, to check that parsing allocates no more than a bound
//! proportional to the input, whatever counts and lengths the input declares.
//!
//! A binary opts in with `#[global_allocator] static A: Counting = Counting;` (the raw fuzz
//! target and the replay test do); elsewhere [`check_parse_bound`] measures nothing.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use gguf_grammar::{Endian, Gguf};

/// Bytes allocated per input byte at most, plus [`SLACK`]: a kv takes at least 9 input bytes
/// and about 80 in memory, a tensor info at least 20 and about 110, one dims vector may
/// reserve twice the input left.
pub const PER_BYTE: usize = 32;
/// Fixed allowance on top of the proportional bound.
pub const SLACK: usize = 64 * 1024;

/// The system allocator, counting each thread's live bytes and their peak (per thread, so
/// that tests running in parallel do not disturb each other's measurements).
pub struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}
static INSTALLED: AtomicBool = AtomicBool::new(false);

fn count(delta: isize) {
    // `try_with`: allocations while the thread's locals are being destroyed go uncounted.
    let _ = LIVE.try_with(|live| {
        live.set(live.get() + delta);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
    INSTALLED.store(true, Ordering::Relaxed);
}

// Safety: every call is forwarded to `System` unchanged; only counters are updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize);
        count(-(layout.size() as isize));
        System.realloc(ptr, layout, new_size)
    }
}

/// The most bytes live at once on this thread while `f` runs, above what was live before.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, usize::try_from(peak - before).unwrap_or(0))
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
