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
//!
//! Resource limits (issue 15 part 2): [`check_alloc`] refuses, before allocating, a buffer
//! whose size comes from input (an image header, a recipe's map size, an eroder's scratch
//! buffers) when it is larger than the memory the machine has available ([`available_bytes`]:
//! `MemAvailable` of `/proc/meminfo` on Linux, capped by the cgroup's `memory.max`; the
//! environment variable `TERRASYNTH_MEMORY_LIMIT` (bytes, or with a `K`/`M`/`G` suffix)
//! replaces it). Buffers below [`CHECK_FROM_BYTES`] are not checked, so small maps pay
//! nothing.

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

/// `n` zeros, written now (by all threads: [`resize_par`]). `vec![0; n]` of a large `n` gets
/// fresh pages from the kernel that stay unmapped until touched, and a page whose first access
/// is a read (as in `counts[r] += 1`) is mapped to the kernel's shared zero page; the write
/// that follows replaces it, which needs a TLB flush on every CPU running the process: an
/// inter-processor interrupt per 4 KiB page, slow in a virtual machine. Buffers that are read
/// before they are written take their zeros from here instead:
/// `hydro::flow::topological_order`'s donor counts and `hydro::lakes::lakes_from_fill`'s
/// labels (the outputs' hydrology of a 4097² map without a `rivers` step took 1.11–1.28 s
/// before, 0.73–0.80 s after). A buffer whose first pass can write without reading needs no
/// such help (`generate::spectral`'s field does so, in parallel).
pub fn zeros_written<T: Copy + Default + Send + Sync>(n: usize) -> Vec<T> {
    let mut v = Vec::new();
    resize_par(&mut v, n, T::default());
    v
}

/// Bytes per parallel piece of [`resize_par`], [`fill_par`] and [`copy_par`] (16 pages), and
/// the size below which they run on the calling thread alone.
const PAR_PIECE_BYTES: usize = 64 << 10;

/// Cells of `T` per parallel piece ([`PAR_PIECE_BYTES`], at least one).
fn piece_cells<T>() -> usize {
    (PAR_PIECE_BYTES / size_of::<T>().max(1)).max(1)
}

/// The first write to each fresh page of a large buffer faults into the kernel, which maps and
/// zeroes it: about 1.7 µs per 4 KiB page on the 2-vCPU machine of the benchmarks, so 56 ms for
/// a grid of 4097² `f64` — done by one thread when a `Vec::resize`, `extend_from_slice` or
/// `clone` writes it. These write the new cells in parallel pieces instead, so the faults
/// (and the writes) share the threads. `v` resized to `n` as `Vec::resize` does: the cells
/// kept keep their values, the new ones are `value`.
pub fn resize_par<T: Copy + Send + Sync>(v: &mut Vec<T>, n: usize, value: T) {
    if n <= v.len() {
        v.truncate(n);
        return;
    }
    let extra = n - v.len();
    if extra * size_of::<T>() < 2 * PAR_PIECE_BYTES {
        v.resize(n, value);
        return;
    }
    v.reserve_exact(extra);
    let piece = piece_cells::<T>();
    use rayon::prelude::*;
    v.spare_capacity_mut()[..extra].par_chunks_mut(piece).for_each(|cells| {
        for cell in cells {
            cell.write(value);
        }
    });
    // SAFETY: the `extra` cells past the old length were all written just above, and the
    // capacity holds them (`reserve_exact`).
    unsafe { v.set_len(n) };
}

/// `v` made `n` cells long, every one `value` (`v.clear(); v.resize(n, value)`), written in
/// parallel pieces (see [`resize_par`]): for the buffers a step refills each time.
pub fn fill_par<T: Copy + Send + Sync>(v: &mut Vec<T>, n: usize, value: T) {
    v.truncate(n);
    let piece = piece_cells::<T>();
    if v.len() > 2 * piece {
        use rayon::prelude::*;
        v.par_chunks_mut(piece).for_each(|cells| cells.fill(value));
    } else {
        v.fill(value);
    }
    resize_par(v, n, value);
}

/// `dst` made a copy of `src` (`dst.clear(); dst.extend_from_slice(src)`), written in
/// parallel pieces (see [`resize_par`]).
pub fn copy_par<T: Copy + Send + Sync>(dst: &mut Vec<T>, src: &[T]) {
    let piece = piece_cells::<T>();
    if src.len() <= 2 * piece {
        dst.clear();
        dst.extend_from_slice(src);
        return;
    }
    use rayon::prelude::*;
    dst.truncate(src.len());
    let kept = dst.len();
    dst.par_chunks_mut(piece).zip(src[..kept].par_chunks(piece)).for_each(|(d, s)| d.copy_from_slice(s));
    let extra = src.len() - kept;
    dst.reserve_exact(extra);
    dst.spare_capacity_mut()[..extra].par_chunks_mut(piece).zip(src[kept..].par_chunks(piece)).for_each(
        |(d, s)| {
            for (cell, &value) in d.iter_mut().zip(s) {
                cell.write(value);
            }
        },
    );
    // SAFETY: the `extra` cells past `kept` were all written just above (the pieces of `d`
    // and `s` have the same lengths), and the capacity holds them (`reserve_exact`).
    unsafe { dst.set_len(src.len()) };
}

/// A parallel copy of `src` into a new vector ([`copy_par`]).
pub fn to_vec_par<T: Copy + Send + Sync>(src: &[T]) -> Vec<T> {
    let mut v = Vec::new();
    copy_par(&mut v, src);
    v
}

/// Largest buffer (32 MiB, glibc's ceiling for it) that [`keep_freed_memory`] has the
/// allocator take from, and give back to, the process's own heap.
pub const KEPT_BUFFER_BYTES: usize = 32 << 20;

/// Keeps freed buffers' memory in the process for the next ones, for a process that runs one
/// job and exits (the command-line tool calls it first thing; a library user decides for
/// their own process). glibc serves a buffer above its mmap threshold (128 KiB at start,
/// raised to the size of the last such buffer freed) with fresh pages from the kernel and
/// unmaps them on `free`: every step's new grid pays a page fault per 4 KiB (about 1.7 µs here,
/// see [`resize_par`]) even though the step before freed one of the same size. With the
/// threshold at [`KEPT_BUFFER_BYTES`] and no trimming of the heap's top, buffers up to 32
/// MiB (a 2049² grid of `f32`, 1448² of `f64`) are carved from the heap and reused: a
/// `generate` of `eroded-island` at 1025² faults 18 000 times instead of 41 000 (`/usr/bin/time
/// %R`), for 10 MB more peak resident memory. Larger buffers are still mapped and unmapped.
/// Returns whether the allocator took the settings: on Linux with glibc; elsewhere (musl,
/// macOS, Windows, wasm) it does nothing and returns false. Changes no result, only where
/// memory comes from.
pub fn keep_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` only sets two of glibc's allocation parameters (under its arena
        // lock); the values are in the ranges its manual allows.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, KEPT_BUFFER_BYTES as libc::c_int) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Buffers smaller than this (64 MiB) are never refused by [`check_alloc`] (nor is the
/// system asked): their cost is noise next to the process itself.
pub const CHECK_FROM_BYTES: u64 = 64 << 20;

/// Bytes of memory a new allocation may take on this machine now: `TERRASYNTH_MEMORY_LIMIT`
/// if set (bytes, or `K`/`M`/`G` binary suffixes), else on Linux the smaller of
/// `MemAvailable` (`/proc/meminfo`) and the free part of the cgroup v2 limit
/// (`/sys/fs/cgroup/memory.max` − `memory.current`); `None` when unknown (other systems: no
/// check).
pub fn available_bytes() -> Option<u64> {
    if let Ok(text) = std::env::var("TERRASYNTH_MEMORY_LIMIT") {
        return parse_bytes(&text);
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kib| kib * 1024)
    });
    let read = |name: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/sys/fs/cgroup/{name}")).ok()?.trim().parse().ok()
    };
    let cgroup = match (read("memory.max"), read("memory.current")) {
        (Some(max), Some(cur)) => Some(max.saturating_sub(cur)),
        _ => None,
    };
    match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Parses `123`, `64K`, `512M`, `4G` (binary multiples) as bytes.
fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 10),
        (i, 'm' | 'M') => (&t[..i], 20),
        (i, 'g' | 'G') => (&t[..i], 30),
        _ => (t, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// `bytes` in GiB or MiB with one decimal, for error messages.
pub fn human_bytes(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// Refuses, before allocating, `bytes` of buffers for `what` on a `width × height` map when
/// they exceed [`available_bytes`]: an [`crate::Error::InvalidSize`] naming what, the bytes
/// needed and the bytes available. Sizes below [`CHECK_FROM_BYTES`] always pass.
///
/// ```
/// use terrasynth::memory::check_alloc;
/// assert!(check_alloc(513, 513, 513 * 513 * 4, "height grid").is_ok());
/// // 2^20 × 2^20 cells of f64 scratch: 8 TiB, more than any machine has.
/// let err = check_alloc(1 << 20, 1 << 20, 8 << 40, "erosion scratch").unwrap_err().to_string();
/// assert!(err.contains("erosion scratch would take 8192.0 GiB"), "{err}");
/// ```
pub fn check_alloc(width: usize, height: usize, bytes: u64, what: &str) -> crate::Result<()> {
    if bytes < CHECK_FROM_BYTES {
        return Ok(());
    }
    match available_bytes() {
        Some(avail) if bytes > avail => Err(crate::Error::InvalidSize {
            width,
            height,
            reason: format!(
                "{what} would take {} but only {} of memory is available on this machine \
                 (a smaller size fits; TERRASYNTH_MEMORY_LIMIT overrides the figure)",
                human_bytes(bytes),
                human_bytes(avail)
            ),
        }),
        _ => Ok(()),
    }
}

/// [`check_alloc`] for `buffers` buffers of `bytes_per_cell` bytes per cell on a
/// `width × height` map (saturating: absurd sizes are refused, never wrapped).
pub fn check_cells(width: usize, height: usize, bytes_per_cell: u64, what: &str) -> crate::Result<()> {
    let bytes = (width as u64).saturating_mul(height as u64).saturating_mul(bytes_per_cell);
    check_alloc(width, height, bytes, what)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Minor page faults of the calling thread so far (Linux).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn thread_faults() -> i64 {
        // SAFETY: `getrusage` fills the zeroed struct it is given.
        unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            assert_eq!(libc::getrusage(libc::RUSAGE_THREAD, &mut usage), 0);
            usage.ru_minflt
        }
    }

    /// A buffer freed and allocated again at the same size reuses its pages once
    /// [`keep_freed_memory`] ran: glibc's default would map it afresh (a fault per 4 KiB page,
    /// 2048 for 8 MiB, measured by the same loop without the call).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn freed_buffers_are_reused_without_page_faults() {
        assert!(keep_freed_memory());
        let bytes = 8 << 20;
        let touch = |v: &mut Vec<u8>| {
            for page in v.chunks_mut(4096) {
                page[0] = 1;
            }
            std::hint::black_box(&v);
        };
        let mut first = vec![0u8; bytes];
        touch(&mut first);
        drop(first);
        let before = thread_faults();
        let mut again = vec![0u8; bytes];
        touch(&mut again);
        let faults = thread_faults() - before;
        drop(again);
        assert!(faults < 64, "{faults} page faults for a buffer of {bytes} bytes freed just before");
    }

    /// The parallel resize, fill and copy equal `Vec`'s own, growing, shrinking and at
    /// lengths around the piece size, on 1 and 2 threads.
    #[test]
    fn parallel_resize_fill_and_copy_equal_the_vec_methods() {
        let piece = PAR_PIECE_BYTES / 8;
        let lengths = [0, 1, 7, piece - 1, piece, 2 * piece + 1, 5 * piece + 3, 11 * piece];
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                for &from in &lengths {
                    for &to in &lengths {
                        let start: Vec<f64> = (0..from).map(|i| i as f64 * 0.5).collect();
                        let src: Vec<f64> = (0..to).map(|i| -(i as f64) - 0.25).collect();
                        let (mut a, mut b) = (start.clone(), start.clone());
                        resize_par(&mut a, to, 3.5);
                        b.resize(to, 3.5);
                        assert_eq!(a, b, "resize {from} -> {to}");
                        let (mut a, mut b) = (start.clone(), start.clone());
                        fill_par(&mut a, to, -1.0);
                        b.clear();
                        b.resize(to, -1.0);
                        assert_eq!(a, b, "fill {from} -> {to}");
                        let mut a = start.clone();
                        copy_par(&mut a, &src);
                        assert_eq!(a, src, "copy {from} <- {to}");
                        assert_eq!(to_vec_par(&src), src);
                    }
                }
            });
        }
        // Bytes and booleans: other piece lengths.
        let mut v = vec![true; 3];
        resize_par(&mut v, 3 * PAR_PIECE_BYTES + 5, false);
        assert!(
            v[..3].iter().all(|&b| b) && v[3..].iter().all(|&b| !b) && v.len() == 3 * PAR_PIECE_BYTES + 5
        );
    }

    #[test]
    fn byte_sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_bytes("123"), Some(123));
        assert_eq!(parse_bytes("64K"), Some(64 << 10));
        assert_eq!(parse_bytes(" 512m "), Some(512 << 20));
        assert_eq!(parse_bytes("4G"), Some(4 << 30));
        assert_eq!(parse_bytes("x"), None);
        assert_eq!(parse_bytes(""), None);
        assert_eq!(parse_bytes("99999999999999999999G"), None);
    }

    #[test]
    fn small_buffers_are_never_refused_and_huge_ones_are() {
        assert!(check_alloc(10, 10, CHECK_FROM_BYTES - 1, "x").is_ok());
        // Every machine this runs on has less than 1 PiB available (or reports nothing).
        if available_bytes().is_some() {
            let err = check_cells(1 << 20, 1 << 20, 1 << 10, "test buffers").unwrap_err().to_string();
            assert!(
                err.contains("test buffers would take 1048576.0 GiB") && err.contains("available"),
                "{err}"
            );
        }
    }

    #[test]
    fn available_memory_is_read_on_linux() {
        if cfg!(target_os = "linux") && std::env::var_os("TERRASYNTH_MEMORY_LIMIT").is_none() {
            let a = available_bytes().expect("MemAvailable on Linux");
            assert!(a > 16 << 20, "{a}");
        }
    }
}
