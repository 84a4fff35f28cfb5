//! The Priority-Flood core of [`DepressionFiller`](super::DepressionFiller) (generic over the
//! height type: `f32` for hydrology, `f64` in its tests).
//!
//! Priority-Flood (Barnes, Lehman & Mulla 2014, Algorithms 2–3) with two queues besides the
//! priority queue:
//! - the **pit queue** (FIFO, Barnes et al.'s "improved" variant): an open neighbour `n` of a
//!   cell `c` taken from the priority or pit queue with `z(n) ≤ z(c)` lies in a depression or
//!   on a flat; it is raised to `lim(c)` (`lim = z(c)`, or `nextafter(z(c), +inf)` with ε) and
//!   flooded breadth-first, so the ε gradient on a lake is one ulp per cell of flood distance.
//!   Barnes et al.'s Algorithm 3 also sends a cell already at exactly `nextafter(z(c))` to the
//!   pit queue; that cell drains strictly through `c` anyway, and flooding from it out of
//!   height order can raise an equal neighbour whose own lower neighbour is still waiting in
//!   the priority queue. Here it keeps its height and takes the slope path, which makes the ε
//!   fill idempotent: on a surface where every cell has a strictly lower neighbour, nothing is
//!   raised (property-tested);
//! - the **slope stack** (Zhou, Sun & Fu 2016, "An efficient variant of the Priority-Flood
//!   algorithm for filling depressions in raster digital elevation models", Computers &
//!   Geosciences 90:87–96): a cell `n` reached from `c` with `z(n) ≥ z(c)` keeps its own
//!   height (it drains through `c`), so its final height is known at once. If all its
//!   still-open neighbours are strictly higher than it, nothing it can close is in a
//!   depression or on a flat, and `n` is expanded immediately, out of height order, instead of
//!   waiting in the priority queue; otherwise it goes to the priority queue with its height. On real terrain about
//!   half the cells never touch the priority queue, and the stack walks up slopes cell by
//!   neighbouring cell, which keeps memory access local.
//!
//! Why this gives the same exact fill: the minimal filled surface is `W(c) = min over paths
//! from c to an outlet of the highest cell on the path`. A cell expanded from the slope stack
//! has `W(n) = z(n)` (its neighbour `c` drains at `W(c) ≤ z(n)`), and it only closes open
//! neighbours `m` with `z(m) > z(n)`, for which `W(m) = z(m)`, at their own height (with or
//! without ε): every value written is the minimax value. Cells lower than `z(c)` are closed only by cells taken from the priority or
//! pit queue, at the current flood level, as in Barnes et al. The exact fill is therefore the
//! same as with a plain Priority-Flood (tested against a brute-force oracle and the previous
//! implementation). With ε every cell still ends strictly above the cell that closed it, so
//! every cell drains along a strictly descending path. All ε steps (raised cells and flats)
//! are still made in flood order, from the priority and pit queues; only the order among
//! equal keys differs from a plain Priority-Flood, so ε surfaces can differ from its by a few
//! ulps on flats (the longest ε chain is not longer: tested).
//!
//! The priority queue is a radix heap (Ahuja, Mehlhorn, Orlin & Tarjan 1990) on the
//! order-preserving bits of the heights (monotone: the flood never pushes below the last key
//! popped). The flood runs on a copy with a one-cell border of closed cells of height +∞, so
//! neighbours are fixed index offsets without bounds tests, and D8 on the padded copy never
//! picks a border cell. Grids are limited to `(w + 2)·(h + 2) ≤ u32::MAX` cells. Everything
//! is sequential and depends only on the input: fully deterministic.

use std::collections::VecDeque;

use crate::grid::D8;
use crate::grid::{Boundary, Neighbourhood, Stencil, Topology};

/// A key type of the radix heap: an unsigned integer.
pub(crate) trait RadixKey: Copy + Ord + Default + std::fmt::Debug {
    /// Number of bits.
    const BITS: u32;
    /// Index of the highest bit where `a` and `b` differ, plus one (0 if equal).
    fn differing(a: Self, b: Self) -> usize;
}

/// A height type the flood and D8 work on (`f32` for hydrology, `f64` for stream power).
pub(crate) trait FloodHeight:
    Copy
    + PartialOrd
    + Send
    + Sync
    + std::fmt::Debug
    + std::ops::Sub<Output = Self>
    + std::ops::Div<Output = Self>
{
    /// Unsigned key whose order is the float order (finite values).
    type Key: RadixKey;
    /// 0, 1, √2 and +∞ in this type.
    const ZERO: Self;
    const ONE: Self;
    const SQRT2: Self;
    const INFINITY: Self;
    /// The order-preserving key.
    fn key(self) -> Self::Key;
    /// The next representable value above (`nextafter(self, +inf)`).
    fn up(self) -> Self;
}

/// Implements [`RadixKey`] for the key type and [`FloodHeight`] for the float type.
macro_rules! flood_height {
    ($float:ident, $key:ident) => {
        impl RadixKey for $key {
            const BITS: u32 = $key::BITS;
            #[inline]
            fn differing(a: Self, b: Self) -> usize {
                ($key::BITS - (a ^ b).leading_zeros()) as usize
            }
        }

        impl FloodHeight for $float {
            type Key = $key;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const SQRT2: Self = std::$float::consts::SQRT_2;
            const INFINITY: Self = $float::INFINITY;
            #[inline]
            fn key(self) -> $key {
                let (b, sign) = (self.to_bits(), 1 << ($key::BITS - 1));
                if b & sign != 0 { !b } else { b | sign }
            }
            #[inline]
            fn up(self) -> Self {
                self.next_up()
            }
        }
    };
}

flood_height!(f32, u32);
flood_height!(f64, u64);

/// Maps an `f32` to a `u32` whose unsigned order equals the float order (for finite values).
#[inline]
pub(crate) fn ordered_bits(v: f32) -> u32 {
    v.key()
}

/// A monotone priority queue (radix heap): valid because Priority-Flood never pushes a key
/// below the last one popped. Bucket `b` holds keys whose highest bit differing from the last
/// popped key is bit `b − 1` (bucket 0: equal keys, popped last-in first-out). When bucket 0
/// is empty, the lowest non-empty bucket is redistributed around its minimum; each entry moves
/// down at most `BITS` times. The pop order depends only on the pushes.
#[derive(Clone, Debug)]
struct RadixHeap<K: RadixKey> {
    last: K,
    buckets: Vec<Vec<(K, u32)>>,
}

impl<K: RadixKey> RadixHeap<K> {
    fn new() -> Self {
        Self { last: K::default(), buckets: (0..=K::BITS).map(|_| Vec::new()).collect() }
    }

    fn clear(&mut self) {
        self.last = K::default();
        self.buckets.iter_mut().for_each(Vec::clear);
    }

    #[inline]
    fn push(&mut self, key: K, cell: u32) {
        debug_assert!(key >= self.last, "radix heap keys must not go below the last pop");
        self.buckets[K::differing(key, self.last)].push((key, cell));
    }

    #[inline]
    fn pop(&mut self) -> Option<u32> {
        if self.buckets[0].is_empty() {
            let b = (1..self.buckets.len()).find(|&b| !self.buckets[b].is_empty())?;
            // Every entry of bucket b lands in a lower bucket, so it is redistributed in place
            // and keeps its own memory. (Swapping a spare vector in, as before, moved the
            // largest capacity from bucket to bucket, and over repeated floods on one
            // workspace every bucket ended up that large: ~1 GB of empty capacity after 30
            // stream-power steps at 2049².) Now each bucket's capacity is the most it has held.
            let (lower, upper) = self.buckets.split_at_mut(b);
            let moving = &mut upper[0];
            self.last = moving.iter().map(|e| e.0).min().expect("non-empty bucket");
            for &e in moving.iter() {
                lower[K::differing(e.0, self.last)].push(e);
            }
            moving.clear();
        }
        self.buckets[0].pop().map(|e| e.1)
    }
}

/// The flood's closed cells, one byte per cell (a byte store needs no read of its neighbours'
/// bits first, and a cell's test does not wait on the store to a cell beside it).
#[derive(Clone, Debug, Default)]
struct ClosedSet(Vec<u8>);

impl ClosedSet {
    #[inline]
    fn get(&self, i: usize) -> bool {
        self.0[i] != 0
    }
    #[inline]
    fn set(&mut self, i: usize) {
        self.0[i] = 1;
    }
    #[inline]
    fn clear(&mut self, i: usize) {
        self.0[i] = 0;
    }
}

/// Reusable flood workspace: the padded heights (row stride `w + 2`, border +∞ and closed),
/// the closed set and the queues.
#[derive(Clone)]
pub(crate) struct Flood<H: FloodHeight> {
    w: usize,
    h: usize,
    /// Padded heights; after [`Flood::run`], the filled surface.
    pub z: Vec<H>,
    closed: ClosedSet,
    heap: RadixHeap<H::Key>,
    pit: VecDeque<u32>,
    slope: Vec<u32>,
}

impl<H: FloodHeight> Default for Flood<H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H: FloodHeight> std::fmt::Debug for Flood<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Flood {{ {}x{} }}", self.w, self.h)
    }
}

impl<H: FloodHeight> Flood<H> {
    /// An empty workspace.
    pub fn new() -> Self {
        Self {
            w: 0,
            h: 0,
            z: Vec::new(),
            closed: ClosedSet::default(),
            heap: RadixHeap::new(),
            pit: VecDeque::new(),
            slope: Vec::new(),
        }
    }

    /// Loads `heights` (`w × h`, row-major): interior cells open, border closed at +∞.
    pub fn load(&mut self, heights: &[H], w: usize, h: usize) {
        assert_eq!(heights.len(), w * h, "Flood::load: heights length");
        let wp = w + 2;
        let n = wp * (h + 2);
        (self.w, self.h) = (w, h);
        self.z.clear();
        self.z.resize(n, H::INFINITY);
        self.closed.0.clear();
        self.closed.0.resize(n, 1);
        for (y, row) in heights.chunks_exact(w).enumerate() {
            let s = (y + 1) * wp + 1;
            self.z[s..s + w].copy_from_slice(row);
            for i in s..s + w {
                self.closed.clear(i);
            }
        }
    }

    /// The filled heights without the border, into `out` (`w × h`).
    pub fn unpad_into(&self, out: &mut [H]) {
        let wp = self.w + 2;
        for (y, row) in out.chunks_exact_mut(self.w).enumerate() {
            let s = (y + 1) * wp + 1;
            row.copy_from_slice(&self.z[s..s + self.w]);
        }
    }

    /// Runs the flood (module docs). Outlets: every interior cell `(x, y)` with
    /// `outlet(x, y, z)`, all closed at their own height before the flood starts; the seeds
    /// are the outlets with an open (non-outlet) neighbour, pushed in row-major order. An
    /// outlet whose neighbours are all closed (open sea, most of an island map's cells) would
    /// close nothing when popped, so it is not queued: the heap pops the lowest key, the most
    /// recent push first among equal keys, so leaving those entries out changes neither the
    /// order nor the heights of the rest. Callbacks, with padded indices: `visit(c,
    /// usize::MAX)` when cell `c` is expanded (each seed and each cell a seed's flood reaches,
    /// exactly once, after the cell that closed it; not the outlets that are not seeds),
    /// `visit(c, nb)` when `c` closes `nb`.
    pub fn run(
        &mut self,
        epsilon: bool,
        outlet: impl FnMut(usize, usize, H) -> bool,
        visit: impl FnMut(usize, usize),
    ) {
        self.run_seeded(epsilon, outlet, visit, false);
    }

    /// [`Flood::run`]; `every_outlet`: queue every outlet, as a plain Priority-Flood does (the
    /// tests' reference for leaving the enclosed ones out).
    fn run_seeded(
        &mut self,
        epsilon: bool,
        mut outlet: impl FnMut(usize, usize, H) -> bool,
        mut visit: impl FnMut(usize, usize),
        every_outlet: bool,
    ) {
        let (w, h, wp) = (self.w, self.h, self.w + 2);
        let Self { z, closed, heap, pit, slope, .. } = self;
        heap.clear();
        pit.clear();
        slope.clear();
        for y in 0..h {
            for x in 0..w {
                let i = (y + 1) * wp + x + 1;
                if outlet(x, y, z[i]) {
                    closed.set(i);
                }
            }
        }
        let offsets: [isize; 8] = D8.map(|(dx, dy)| dy as isize * wp as isize + dx as isize);
        for y in 0..h {
            let row = (y + 1) * wp + 1;
            for (i, &zi) in z.iter().enumerate().skip(row).take(w) {
                if closed.get(i)
                    && (every_outlet || offsets.iter().any(|&o| !closed.get(i.wrapping_add_signed(o))))
                {
                    heap.push(zi.key(), i as u32);
                }
            }
        }
        loop {
            // `queued`: c comes from the pit or priority queue (current flood level), not from
            // the slope stack (out of order; then all its open neighbours are higher).
            let (c, queued) = if let Some(c) = pit.pop_front() {
                (c as usize, true)
            } else if let Some(c) = slope.pop() {
                let c = c as usize;
                let zc = z[c];
                let low_open = offsets.iter().any(|&o| {
                    let nb = c.wrapping_add_signed(o);
                    !closed.get(nb) && z[nb] <= zc
                });
                if low_open {
                    heap.push(zc.key(), c as u32);
                    continue;
                }
                (c, false)
            } else {
                match heap.pop() {
                    Some(c) => (c as usize, true),
                    None => break,
                }
            };
            visit(c, usize::MAX);
            let zc = z[c];
            let lim = if epsilon { zc.up() } else { zc };
            for &o in &offsets {
                let nb = c.wrapping_add_signed(o);
                if closed.get(nb) {
                    continue;
                }
                closed.set(nb);
                visit(c, nb);
                let zn = z[nb];
                if queued && zn <= zc {
                    // In a depression or on a flat: raised to the current level (one ulp
                    // above it with ε), flooded breadth-first (as Barnes et al.). A cell
                    // already at `nextafter(z(c))` drains strictly through `c` and keeps its
                    // height on the slope path instead: raising only cells not higher than
                    // `c` makes the ε fill idempotent (module docs).
                    z[nb] = lim;
                    pit.push_back(nb as u32);
                } else {
                    // Higher: drains through c and keeps its height.
                    slope.push(nb as u32);
                }
            }
        }
    }
}

/// The exact fill of `z` (`w × h`, row-major) from its ε fill `eps` (Priority-Flood+ε of the
/// same heights and outlets), written into `out`, which holds a copy of `z` on entry: only the
/// cells `eps` raised are flooded again, from the cells around them.
///
/// Why this is the exact fill `W(c)` (the lowest, over the paths from `c` to an outlet, of the
/// path's highest cell; the module docs):
/// - every cell of `eps` drains to an outlet along cells whose `eps` never rises, and `z ≤ eps`,
///   so that path's highest `z` is at most `eps(c)`: `W ≤ eps` everywhere;
/// - so a cell `eps` left at its own height (`eps(c) = z(c)`, every outlet among them) has
///   `W(c) = z(c)`, and only the raised cells `R` (`eps > z`, none on the map's edge) can have
///   `W > z`;
/// - a path from a raised cell `c` to an outlet leaves its 8-connected group `G` of raised
///   cells at a first cell `b` outside `R`, after which the best it can do is `W(b) = z(b)`: so
///   `W(c)` is the lowest over those `b` of the highest of `z(b)` and the path inside `G`,
///   which is what a Priority-Flood of `G` seeded from its surrounding cells at their own
///   heights computes (Barnes, Lehman & Mulla 2014: levels only ever take the maximum of two
///   heights, so the values are exact whatever the order among equal keys).
///
/// After a stream-power landscape, a few per cent of the cells are raised, so this is much
/// cheaper than a second flood of the whole map. The same cells' values as
/// [`Flood::run`] without ε, bit for bit (tested on random and flat-rich maps).
pub(crate) fn refill_exact(z: &[f32], eps: &[f32], w: usize, h: usize, out: &mut [f32]) {
    assert!(z.len() == w * h && eps.len() == w * h && out.len() == w * h, "refill_exact: lengths");
    const PLAIN: u8 = 0;
    const RAISED: u8 = 1;
    const DONE: u8 = 2;
    let mut state: Vec<u8> =
        z.iter().zip(eps).map(|(&zi, &ei)| if ei > zi { RAISED } else { PLAIN }).collect();
    let stencil =
        Stencil::new(Topology { width: w, height: h, boundary: Boundary::Closed }, Neighbourhood::Moore);
    // Seeds: the cells outside R next to a raised cell, each once, at its own height (`out`
    // holds `z` there).
    let mut heap = RadixHeap::<u32>::new();
    for c in 0..w * h {
        if state[c] == RAISED {
            stencil.for_each(c % w, c / w, |n| {
                if state[n] == PLAIN {
                    state[n] = DONE;
                    heap.push(out[n].key(), n as u32);
                }
            });
        }
    }
    // Levels never go below the last pop (each is the maximum of a height and a popped
    // level), so the radix heap's monotone order holds.
    while let Some(c) = heap.pop() {
        let c = c as usize;
        let level = out[c];
        stencil.for_each(c % w, c / w, |n| {
            if state[n] == RAISED {
                state[n] = DONE;
                out[n] = z[n].max(level);
                heap.push(out[n].key(), n as u32);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl<K: RadixKey> RadixHeap<K> {
        /// Entries the buckets can hold without reallocating.
        fn capacity(&self) -> usize {
            self.buckets.iter().map(Vec::capacity).sum()
        }
    }

    /// Leaving out the outlets whose neighbours are all closed changes nothing: the same
    /// heights bit for bit, with and without ε, and the same expansions in the same order but
    /// for those outlets (which close nothing). Quantised heights (ties and flats everywhere,
    /// where the order of work decides the ε bits) with a sea over a third to two thirds of
    /// the map, and a map with no sea (only the edge).
    #[test]
    fn leaving_enclosed_outlets_out_changes_nothing() {
        let mut rng = crate::noise::rng::SplitMix64::new(0xF100D);
        let mut skipped = 0;
        for &(w, h, levels, sea) in
            &[(41usize, 37usize, 4u64, 7.0f32), (64, 29, 9, 15.0), (30, 30, 3, -1.0), (3, 50, 5, 9.0)]
        {
            // Rising from west to east, so the sea is one body over the western part.
            let heights: Vec<f32> = (0..w * h)
                .map(|i| (rng.below(levels) + (3 * levels * (i % w) as u64) / w as u64) as f32)
                .collect();
            for epsilon in [false, true] {
                let mut runs = Vec::new();
                for every in [true, false] {
                    let mut flood = Flood::<f32>::new();
                    flood.load(&heights, w, h);
                    let mut expanded = Vec::new();
                    let outlet =
                        |x: usize, y: usize, z: f32| x == 0 || y == 0 || x + 1 == w || y + 1 == h || z < sea;
                    flood.run_seeded(epsilon, outlet, |c, nb| expanded.push((c, nb)), every);
                    let mut out = vec![0.0f32; w * h];
                    flood.unpad_into(&mut out);
                    runs.push((out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), expanded, flood));
                }
                let (all, coast) = (&runs[0], &runs[1]);
                let what = format!("{w}x{h}, sea {sea}, ε {epsilon}");
                assert_eq!(all.0, coast.0, "{what}: heights");
                // The outlets that close nothing, in the full run: expanded, and closing nothing.
                let closes: std::collections::HashSet<usize> =
                    all.1.iter().filter(|e| e.1 != usize::MAX).map(|e| e.0).collect();
                let kept: Vec<_> =
                    all.1.iter().filter(|e| e.1 != usize::MAX || closes.contains(&e.0)).collect();
                let coast_kept: Vec<_> =
                    coast.1.iter().filter(|e| e.1 != usize::MAX || closes.contains(&e.0)).collect();
                assert_eq!(kept, coast_kept, "{what}: expansions");
                skipped += all.1.len() - coast.1.len();
            }
        }
        assert!(skipped > 500, "the cases have enclosed outlets ({skipped} expansions left out)");
    }

    /// Repeated floods on one workspace (as stream power does every step) must not grow the
    /// radix heap's memory: each bucket keeps at most what it held, so the same input gives
    /// the same capacity on every run. (The former spare-vector swap grew it run after run.)
    #[test]
    fn repeated_floods_keep_heap_capacity() {
        let (w, h) = (129, 129);
        let mut rng = crate::noise::rng::SplitMix64::new(0x9E37_79B9_7F4A_7C15);
        let heights: Vec<f64> = (0..w * h).map(|_| rng.next_f64()).collect();
        let mut flood = Flood::<f64>::new();
        let mut capacities = Vec::new();
        let mut filled = Vec::new();
        for _ in 0..12 {
            flood.load(&heights, w, h);
            flood.run(true, |x, y, z| x == 0 || y == 0 || x + 1 == w || y + 1 == h || z < 0.3, |_, _| {});
            capacities.push(flood.heap.capacity());
            let mut out = vec![0.0; w * h];
            flood.unpad_into(&mut out);
            filled.push(out);
        }
        assert!(capacities[0] > 0);
        assert!(capacities.iter().all(|&c| c == capacities[0]), "heap capacity per run: {capacities:?}");
        assert!(filled.iter().all(|f| f == &filled[0]), "the same input must give the same fill");
        assert!(filled[0].iter().zip(&heights).all(|(f, z)| f >= z));
    }
}
