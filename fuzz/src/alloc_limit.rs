//! The allocation guard of the fuzz targets and of the stable corpus replay
//! (`crates/terrasynth/tests/fuzz_corpus.rs` includes this file with `#[path]`).

use std::alloc::{GlobalAlloc, Layout, System};

/// Largest single allocation a fuzz input may cause, in bytes (2 GiB, the same as
/// `scripts/fuzz.sh`'s default `-rss_limit_mb`).
///
/// The targets are built without a sanitizer (`cargo fuzz build -s none`, see fuzz/RUNS.md),
/// and libFuzzer's own `-malloc_limit_mb` needs a sanitizer's malloc hooks to work; its
/// `-rss_limit_mb` alone misses a huge zeroed `Vec`, whose pages are mapped lazily. So this
/// allocator checks every request: one past the limit aborts, and libFuzzer saves the input
/// as a crash ("deadly signal"). The stable corpus replay installs it too, so a regression
/// input that allocates too much fails `cargo test` as well. The library is meant to refuse
/// such sizes with an error first.
pub const MALLOC_LIMIT_BYTES: usize = 2 << 30;

/// The system allocator with the [`MALLOC_LIMIT_BYTES`] check.
pub struct LimitedAlloc;

impl LimitedAlloc {
    #[inline]
    fn check(size: usize) {
        if size > MALLOC_LIMIT_BYTES {
            use std::io::Write;
            // No formatting: it could allocate.
            let _ = std::io::stderr().write_all(b"terrasynth-fuzz: an allocation past the 2 GiB limit\n");
            std::process::abort();
        }
    }
}

// SAFETY: every call is forwarded unchanged to `System`; the check only aborts.
unsafe impl GlobalAlloc for LimitedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::check(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
