//! The bulk engine of the square-lattice noises (white, value, perlin-angle, perlin-table,
//! perlin): one octave of one row at a time, with the per-column and per-row work hoisted out
//! of the per-sample loop.
//!
//! Every such noise is, inside lattice cell `(c, r)` with fractional position `(fx, fy)` and
//! fade weights `u = fade(fx)`, `v = fade(fy)`:
//!
//! ```text
//! n = lerp_v( lerp_u(k(c, r; fx, fy),   k(c+1, r; fx−1, fy)),
//!             lerp_u(k(c, r+1; fx, fy−1), k(c+1, r+1; fx−1, fy−1)) )
//! k(c, r; dx, dy) = gx(c, r)·dx + gy(c, r)·dy + h(c, r)
//! ```
//!
//! with a gradient `(gx, gy)` (zero for white and value) and a value `h` (zero for the
//! gradient noises) per lattice point; white noise has `fade ≡ 0`. Bilinear interpolation is
//! linear in the corner terms, so the y interpolation can be done first, once per lattice
//! column and row of samples:
//!
//! ```text
//! A(c) = lerp_v(gx(c, r), gx(c, r+1))
//! B(c) = lerp_v(gy(c, r)·fy + h(c, r), gy(c, r+1)·(fy − 1) + h(c, r+1))
//! n    = lerp_u(A(c)·fx + B(c), A(c+1)·(fx − 1) + B(c+1))
//! ```
//!
//! which leaves 3 multiply-adds (multiplication and addition rounded separately, never fused)
//! and 1 subtraction per sample and octave (plus the fBm
//! accumulation), in f32 lanes. What is hoisted:
//! - per fill, octave and tile of columns ([`ColumnPlan`]): the lattice x of every column in
//!   f64, its cell index `c` (i64, exact up to |x| = 2^52, clamped beyond as in the point
//!   path), `fx` and `u = fade(fx)` (fade in f64, then rounded to f32); the distinct lattice
//!   columns the tile needs (`c` and `c + 1` of every sample) and each sample's slot of `c` in
//!   that list (`c + 1` is the next slot);
//! - per lattice row `r` (shared by consecutive sample rows): the corner values of every needed
//!   column ([`CornerRow`]);
//! - per sample row: `A` and `B` over the needed columns.
//!
//! A vector of `N` samples (8 for AVX2, 16 for AVX-512) that spans at most `N` lattice columns
//! (`c` of its first sample to `c + 1` of its last) fetches its `A(c)`, `A(c+1)`, `B(c)`,
//! `B(c+1)` from one unaligned window of `N` values with in-register permutes (`vpermps`);
//! wider spacings use gathers. The arithmetic per sample is the same either way and at every
//! width, so results depend neither on how columns fall into vectors and tiles nor on the
//! SIMD level (region tiles agree bit for bit).

use super::lanes::Lanes;

/// The lattice index of a floored coordinate, clamped to ±2^52 like the point kernels (beyond
/// 2^52 an f64 has no fractional bits, so the clamp only keeps the conversion defined).
#[inline]
fn cell_index(floored: f64) -> i64 {
    const MAX_CELL: f64 = 4_503_599_627_370_496.0; // 2^52
    floored.clamp(-MAX_CELL, MAX_CELL) as i64
}

/// Values at one lattice point: gradient `(gx, gy)` and value `h`.
pub(crate) type Corner = [f32; 3];

/// The interpolation weight of a fractional position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fade {
    /// `0`: no interpolation (white noise).
    Step,
    /// `3t² − 2t³` (classic noises).
    Smooth,
    /// `6t⁵ − 15t⁴ + 10t³` (improved Perlin).
    Quintic,
}

impl Fade {
    /// The weight of `t ∈ [0, 1)`, in f64 with the same operation order as the point kernels.
    #[inline]
    pub(crate) fn weight(self, t: f64) -> f64 {
        match self {
            Fade::Step => 0.0,
            Fade::Smooth => 3.0 * t * t - 2.0 * t * t * t,
            Fade::Quintic => t * t * t * (t * (t * 6.0 - 15.0) + 10.0),
        }
    }
}

/// One octave of a lattice noise, as the bulk engine sees it.
pub(crate) struct LatticeOctave<'a> {
    /// Sample-space x → lattice x (f64), exactly as the point path computes it.
    pub to_lattice_x: Box<dyn Fn(f64) -> f64 + Send + Sync + 'a>,
    /// Sample-space y → lattice y (f64).
    pub to_lattice_y: Box<dyn Fn(f64) -> f64 + Send + Sync + 'a>,
    /// Corner values of lattice points `(c, r)` for every `c` of a list of columns
    /// (unwrapped indices; the function wraps), see [`corner_rows`].
    pub corner_row: CornerRowFn<'a>,
    /// Interpolation weight.
    pub fade: Fade,
}

/// Fills `gx`, `gy`, `h` with the corner values of `(c, r)` for every `c` in `cols`.
pub(crate) type CornerRowFn<'a> =
    Box<dyn Fn(&[i64], i64, &mut Vec<f32>, &mut Vec<f32>, &mut Vec<f32>) + Send + Sync + 'a>;

/// A [`CornerRowFn`] from the corner function of one lattice point (monomorphised loop, one
/// dynamic call per lattice row).
pub(crate) fn corner_rows<'a, F>(corner: F) -> CornerRowFn<'a>
where
    F: Fn(i64, i64) -> Corner + Send + Sync + 'a,
{
    Box::new(move |cols, r, gx, gy, h| {
        gx.clear();
        gy.clear();
        h.clear();
        for &c in cols {
            let [x, y, v] = corner(c, r);
            gx.push(x);
            gy.push(y);
            h.push(v);
        }
    })
}

/// Per-column data of one octave over one tile of columns, computed once per fill.
pub(crate) struct ColumnPlan {
    /// Distinct lattice columns needed by the tile (sorted).
    pub cols: Vec<i64>,
    /// Per sample (padded to a multiple of the lane count): slot of its column `c` in `cols`.
    /// Column `c + 1` is always at the next slot (`cols` is sorted, without duplicates, and
    /// holds `c + 1` for every `c`), so it is not stored.
    pub slot: Vec<i32>,
    /// Per sample (padded): fractional x in [0, 1).
    pub fx: Vec<f32>,
    /// Per sample (padded): `fade(fx)`.
    pub u: Vec<f32>,
    /// Per vector of `lanes` samples: the smallest slot, or −1 when the vector spans too
    /// many columns for a window of `lanes` values (then gathers are used).
    pub chunk_base: Vec<i32>,
    /// Vector width the plan was made for.
    pub lanes: usize,
}

/// Widest vector of the row kernels (f32 lanes of AVX-512).
pub(crate) const MAX_LANES: usize = 16;

/// Padding of the per-row arrays so that an unaligned load of up to [`MAX_LANES`] values
/// starting at any slot stays in bounds.
const ROW_PAD: usize = MAX_LANES;

impl ColumnPlan {
    /// Plans the columns of `width` samples at sample-space x `x_of(i)`, for vectors of
    /// `lanes` (a divisor of [`MAX_LANES`]).
    pub(crate) fn new(
        octave: &LatticeOctave<'_>,
        width: usize,
        lanes: usize,
        x_of: impl Fn(usize) -> f64,
    ) -> Self {
        debug_assert!(lanes > 0 && MAX_LANES.is_multiple_of(lanes));
        let padded = width.div_ceil(lanes) * lanes;
        let mut cell = Vec::with_capacity(padded);
        let mut fx = Vec::with_capacity(padded);
        let mut u = Vec::with_capacity(padded);
        for i in 0..padded {
            // Padding samples repeat the last column: valid, and discarded by the caller.
            let x = (octave.to_lattice_x)(x_of(i.min(width.saturating_sub(1))));
            let xf = x.floor();
            let t = x - xf;
            cell.push(cell_index(xf));
            fx.push(t as f32);
            u.push(octave.fade.weight(t) as f32);
        }
        let (cols, slot) = if cell.is_sorted() {
            plan_sorted_columns(&cell)
        } else {
            // Decreasing (negative spacing) or otherwise unordered columns: sort.
            let mut cols: Vec<i64> = cell.iter().flat_map(|&c| [c, c.wrapping_add(1)]).collect();
            cols.sort_unstable();
            cols.dedup();
            let slot = |c: i64| cols.binary_search(&c).expect("column planned") as i32;
            let slot: Vec<i32> = cell.iter().map(|&c| slot(c)).collect();
            (cols, slot)
        };
        debug_assert!(
            cell.iter().zip(&slot).all(|(&c, &s)| cols[s as usize] == c && cols[s as usize + 1] == c + 1)
        );
        let chunk_base = slot
            .chunks(lanes)
            .map(|s| {
                let lo = *s.iter().min().expect("non-empty chunk");
                // The highest slot read is that of `c + 1` of the rightmost sample.
                let hi = *s.iter().max().expect("non-empty chunk") + 1;
                if hi - lo < lanes as i32 { lo } else { -1 }
            })
            .collect();
        Self { cols, slot, fx, u, chunk_base, lanes }
    }

    /// Number of padded samples.
    pub(crate) fn padded_len(&self) -> usize {
        self.fx.len()
    }
}

/// The distinct lattice columns (`c` and `c + 1` of every sample, sorted) and each sample's
/// slot of `c`, for non-decreasing cells `cell` (every fill with a positive spacing): one
/// linear pass instead of a sort and a binary search per sample, so that the plan of a wide,
/// short fill (a 16-row strip) costs little beside its samples (issue 11 part 7).
fn plan_sorted_columns(cell: &[i64]) -> (Vec<i64>, Vec<i32>) {
    let mut cols: Vec<i64> = Vec::with_capacity(cell.len() + 1);
    let mut slot = Vec::with_capacity(cell.len());
    for &c in cell {
        let next = c.wrapping_add(1);
        match cols.last() {
            // Same cell as the previous sample: `c` and `c + 1` are the last two columns.
            Some(&last) if last == next => {}
            // The previous sample's `c + 1` is this `c`.
            Some(&last) if last == c => cols.push(next),
            _ => cols.extend([c, next]),
        }
        slot.push((cols.len() - 2) as i32);
    }
    (cols, slot)
}

/// Corner values of every planned column at one lattice row, structure of arrays.
#[derive(Default)]
pub(crate) struct CornerRow {
    /// The lattice row these values belong to (`None`: not computed yet).
    pub row: Option<i64>,
    gx: Vec<f32>,
    gy: Vec<f32>,
    h: Vec<f32>,
}

impl CornerRow {
    fn compute(&mut self, octave: &LatticeOctave<'_>, cols: &[i64], r: i64) {
        (octave.corner_row)(cols, r, &mut self.gx, &mut self.gy, &mut self.h);
        self.row = Some(r);
    }
}

/// Where a sample row falls in one octave's lattice: row `r`, fraction `fy` and its fade `v`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RowCoord {
    r: i64,
    fy: f32,
    v: f32,
}

impl RowCoord {
    /// The lattice row of sample-space `y` in `octave`.
    pub(crate) fn new(octave: &LatticeOctave<'_>, y: f64) -> Self {
        let ly = (octave.to_lattice_y)(y);
        let yf = ly.floor();
        let t = ly - yf;
        RowCoord { r: cell_index(yf), fy: t as f32, v: octave.fade.weight(t) as f32 }
    }
}

/// Per-thread state of one octave: the two cached lattice rows and the `A`/`B` arrays.
#[derive(Default)]
pub(crate) struct RowState {
    lower: CornerRow,
    upper: CornerRow,
    /// `A(c)` per slot, padded by [`ROW_PAD`].
    pub a: Vec<f32>,
    /// `B(c)` per slot, padded by [`ROW_PAD`].
    pub b: Vec<f32>,
}

impl RowState {
    /// Forgets the cached lattice rows (when the plan changes, e.g. to another tile).
    pub(crate) fn invalidate(&mut self) {
        self.lower.row = None;
        self.upper.row = None;
    }

    /// Prepares `A` and `B` for the sample row at sample-space `y` (inlined, so its loop is
    /// compiled for the caller's instruction set).
    #[inline(always)]
    pub(crate) fn prepare(&mut self, octave: &LatticeOctave<'_>, plan: &ColumnPlan, row: RowCoord) {
        let RowCoord { r, fy, v } = row;
        // Reuse cached lattice rows: moving down one lattice row turns `upper` into `lower`.
        if self.lower.row != Some(r) {
            if self.upper.row == Some(r) {
                std::mem::swap(&mut self.lower, &mut self.upper);
            } else {
                self.lower.compute(octave, &plan.cols, r);
            }
        }
        let r1 = r.wrapping_add(1);
        if self.upper.row != Some(r1) {
            self.upper.compute(octave, &plan.cols, r1);
        }
        let n = plan.cols.len();
        self.a.resize(n + ROW_PAD, 0.0);
        self.b.resize(n + ROW_PAD, 0.0);
        let (lo, up) = (&self.lower, &self.upper);
        let fy1 = fy - 1.0;
        // Zipped equal-length slices: no bounds checks, so the loop vectorises.
        let gx = lo.gx.iter().zip(&up.gx);
        let gy = lo.gy.iter().zip(&up.gy);
        let h = lo.h.iter().zip(&up.h);
        let ab = self.a[..n].iter_mut().zip(self.b[..n].iter_mut());
        for ((((a, b), (&gx0, &gx1)), (&gy0, &gy1)), (&h0, &h1)) in ab.zip(gx).zip(gy).zip(h) {
            let b0 = gy0 * fy + h0;
            let b1 = gy1 * fy1 + h1;
            *a = gx0 + v * (gx1 - gx0);
            *b = b0 + v * (b1 - b0);
        }
    }
}

/// How a row kernel writes `n`, the noise of one octave, into its output row.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Write {
    /// `out = n`.
    Value,
    /// `out = w·n` (first octave of fbm, as [`super::RowCombiner::add`]).
    Weighted(f32),
    /// `out = out + w·n`, a multiplication then an addition (later octaves of fbm, as
    /// [`super::RowCombiner::add`]).
    Accumulate(f32),
}

/// One octave of one row in vectors of `V` (see the module docs for the method): `n` of every
/// sample of the padded row, written to `out` as `write` says. The same arithmetic, with one
/// rounding per operation, for every `V`, so every implementation gives the same bits.
///
/// # Safety
/// `plan` must have been made for `V::N` lanes, `out.len() == plan.padded_len()`, and `st`
/// prepared for `plan`.
#[inline(always)]
pub(crate) unsafe fn row_simd<V: Lanes>(
    v: V,
    plan: &ColumnPlan,
    st: &RowState,
    out: &mut [f32],
    write: Write,
) {
    assert!(plan.lanes == V::N && out.len() == plan.padded_len());
    assert!(st.a.len() >= plan.cols.len() + ROW_PAD && st.b.len() >= plan.cols.len() + ROW_PAD);
    let src = RowSource {
        slot: plan.slot.as_ptr(),
        chunk_base: plan.chunk_base.as_ptr(),
        fx: plan.fx.as_ptr(),
        u: plan.u.as_ptr(),
        a: st.a.as_ptr(),
        b: st.b.as_ptr(),
    };
    let chunks = out.chunks_exact_mut(V::N).enumerate();
    // One loop per write mode (no branch per vector); plain loops, not closures, so that
    // nothing is outlined without the caller's target features.
    // SAFETY (the `noise_vector` calls): `k < padded_len / N`, see `noise_vector`.
    match write {
        Write::Value => {
            for (k, o) in chunks {
                // SAFETY: `k < padded_len / N` (see above) and `o` holds N values.
                unsafe { v.store(o.as_mut_ptr(), noise_vector(v, &src, k)) }
            }
        }
        Write::Weighted(w) => {
            let w = v.splat(w);
            for (k, o) in chunks {
                // SAFETY: as for `Write::Value`.
                unsafe { v.store(o.as_mut_ptr(), v.mul(w, noise_vector(v, &src, k))) }
            }
        }
        Write::Accumulate(w) => {
            let w = v.splat(w);
            for (k, o) in chunks {
                let o = o.as_mut_ptr();
                // SAFETY: as for `Write::Value`.
                unsafe { v.store(o, v.add(v.load(o), v.mul(w, noise_vector(v, &src, k)))) }
            }
        }
    }
}

/// The arrays a row kernel reads, as raw pointers (kept in registers across the loop).
struct RowSource {
    slot: *const i32,
    chunk_base: *const i32,
    fx: *const f32,
    u: *const f32,
    a: *const f32,
    b: *const f32,
}

/// `n` of the `k`-th vector of samples of a row (see [`row_simd`]).
///
/// # Safety
/// `src` points into a plan made for `V::N` lanes and a state prepared for it, and
/// `(k + 1)·N` is at most the plan's padded length.
#[inline(always)]
unsafe fn noise_vector<V: Lanes>(v: V, src: &RowSource, k: usize) -> V::F {
    let i = k * V::N;
    // SAFETY: (all loads below) `i + N <= padded_len`, the plan arrays have `padded_len`
    // entries (`chunk_base` one per vector); slots are `< cols.len() − 1`, and `a`/`b` hold
    // `cols.len() + ROW_PAD` entries, so a window of `N ≤ ROW_PAD` values at `base` and a
    // gather at any slot + 1 are in bounds; window indices are in `0..N` (checked when the
    // plan was made).
    unsafe {
        let s0 = v.load_i(src.slot.add(i));
        let base = *src.chunk_base.add(k);
        let one_i = v.splat_i(1);
        let (a0, a1, b0, b1);
        if base >= 0 {
            let i0 = v.sub_i(s0, v.splat_i(base));
            let i1 = v.add_i(i0, one_i);
            let (ap, bp) = (src.a.add(base as usize), src.b.add(base as usize));
            a0 = v.window(ap, i0);
            a1 = v.window(ap, i1);
            b0 = v.window(bp, i0);
            b1 = v.window(bp, i1);
        } else {
            let s1 = v.add_i(s0, one_i);
            a0 = v.gather(src.a, s0);
            a1 = v.gather(src.a, s1);
            b0 = v.gather(src.b, s0);
            b1 = v.gather(src.b, s1);
        }
        let fx = v.load(src.fx.add(i));
        let u = v.load(src.u.add(i));
        // Multiplications and additions rounded separately, never fused (see `lanes`).
        let t0 = v.add(v.mul(a0, fx), b0);
        let t1 = v.add(v.mul(a1, v.sub(fx, v.splat(1.0))), b1);
        v.add(t0, v.mul(u, v.sub(t1, t0)))
    }
}

#[cfg(test)]
mod tests {
    use super::plan_sorted_columns;

    /// The linear plan equals the sort-based one (sorted distinct `c`, `c + 1`; slot of `c`)
    /// on non-decreasing cells with repeats, steps of one and gaps.
    #[test]
    fn linear_column_plan_equals_the_sorted_plan() {
        let mut rng = crate::rng::SplitMix64::new(11);
        for _ in 0..200 {
            let mut c = rng.range_i64(-1_000, 1_000);
            let cell: Vec<i64> = (0..rng.range_i64(1, 40))
                .map(|_| {
                    c += [0, 0, 1, 1, 2, 5][rng.below(6) as usize];
                    c
                })
                .collect();
            let mut cols: Vec<i64> = cell.iter().flat_map(|&c| [c, c + 1]).collect();
            cols.sort_unstable();
            cols.dedup();
            let slot: Vec<i32> = cell.iter().map(|c| cols.binary_search(c).unwrap() as i32).collect();
            assert_eq!(plan_sorted_columns(&cell), (cols, slot), "{cell:?}");
        }
    }
}
