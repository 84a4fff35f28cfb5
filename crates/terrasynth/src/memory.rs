//! Peak heap memory per pipeline step, measured by a counting global allocator.
//!
//! Why an allocator and not `/proc/self/status` `VmHWM`: the kernel's high-water mark only
//! grows, so a step that peaks below an earlier step would report nothing, and RSS also counts
//! pages the allocator keeps after `free`. Counting every allocation gives, for each step, the
//! exact peak of live heap bytes while it ran, on every OS.
//!
//! The library never installs the allocator itself: a binary opts in with
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: terrasynth::memory::CountingAlloc = terrasynth::memory::CountingAlloc;
//! ```
//!
//! Without it, [`is_active`] is false and the pipeline reports no memory figures (`None`).
//! Cost: two relaxed atomic operations per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The system allocator plus counters of live and peak heap bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAlloc;

impl CountingAlloc {
    #[inline]
    fn added(size: usize) {
        let now = CURRENT.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(now, Ordering::Relaxed);
        if !ACTIVE.load(Ordering::Relaxed) {
            ACTIVE.store(true, Ordering::Relaxed);
        }
    }
}

// SAFETY: every call is forwarded unchanged to `System`; the counters never affect the
// returned pointers.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            Self::added(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            Self::added(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                Self::added(new_size - layout.size());
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

/// Whether [`CountingAlloc`] is the global allocator of this process (it has counted
/// at least one allocation).
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// Live heap bytes now.
pub fn current_bytes() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

/// Starts a new measurement window: the peak becomes the current live size.
pub fn reset_peak() {
    PEAK.store(CURRENT.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Largest live heap size since the last [`reset_peak`], in bytes; `None` when the counting
/// allocator is not installed.
pub fn peak_bytes() -> Option<usize> {
    is_active().then(|| PEAK.load(Ordering::Relaxed))
}
