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
//! which leaves 3 fused multiply-adds and 1 subtraction per sample and octave (plus the fBm
//! accumulation), in f32 lanes. What is hoisted:
//! - per fill and octave, per column of the region ([`ColumnPlan`]): the lattice x in f64, its
//!   cell index `c` (i64, exact up to |x| = 2^52, clamped beyond as in the point path), `fx`
//!   and `u = fade(fx)` (fade in f64, then rounded to f32); the distinct lattice columns the row needs (`c` and `c + 1` of every
//!   sample) and each sample's two slots in that list;
//! - per lattice row `r` (shared by consecutive sample rows): the corner values of every needed
//!   column ([`CornerRow`]);
//! - per sample row: `A` and `B` over the needed columns.
//!
//! A vector of 8 samples that spans fewer than 8 lattice columns (sample spacing < 6/7 cell)
//! fetches its `A(c)`, `A(c+1)`, `B(c)`, `B(c+1)` with one unaligned load and two in-register
//! permutes each (`vpermps`); wider spacings use gathers. The arithmetic per sample is the same
//! either way, so results do not depend on how columns fall into vectors (tiles agree bit for
//! bit).

use std::ops::Range;

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

/// Per-column data of one octave, computed once per fill.
pub(crate) struct ColumnPlan {
    /// Distinct lattice columns needed by the row (sorted).
    pub cols: Vec<i64>,
    /// Per sample (padded to a multiple of [`LANES`]): slot of column `c` in `cols`.
    pub slot0: Vec<i32>,
    /// Per sample (padded): slot of column `c + 1`.
    pub slot1: Vec<i32>,
    /// Per sample (padded): fractional x in [0, 1).
    pub fx: Vec<f32>,
    /// Per sample (padded): `fade(fx)`.
    pub u: Vec<f32>,
    /// Per vector of [`LANES`] samples: the smallest `slot0`, or −1 when the vector spans too
    /// many columns for the permute path (then gathers are used).
    pub chunk_base: Vec<i32>,
}

/// Vector width of the row kernels (f32 lanes of AVX2).
pub(crate) const LANES: usize = 8;

/// Padding of the per-row arrays so that an unaligned load of [`LANES`] values starting at any
/// slot stays in bounds.
const ROW_PAD: usize = LANES;

impl ColumnPlan {
    /// Plans the columns of `width` samples at sample-space x `x_of(i)`.
    pub(crate) fn new(octave: &LatticeOctave<'_>, width: usize, x_of: impl Fn(usize) -> f64) -> Self {
        let padded = width.div_ceil(LANES) * LANES;
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
        let mut cols: Vec<i64> = cell.iter().flat_map(|&c| [c, c.wrapping_add(1)]).collect();
        cols.sort_unstable();
        cols.dedup();
        let slot = |c: i64| cols.binary_search(&c).expect("column planned") as i32;
        let slot0: Vec<i32> = cell.iter().map(|&c| slot(c)).collect();
        let slot1: Vec<i32> = cell.iter().map(|&c| slot(c.wrapping_add(1))).collect();
        let chunk_base = slot0
            .chunks(LANES)
            .zip(slot1.chunks(LANES))
            .map(|(s0, s1)| {
                let lo = *s0.iter().min().expect("non-empty chunk");
                let hi = *s1.iter().max().expect("non-empty chunk");
                if hi - lo < LANES as i32 { lo } else { -1 }
            })
            .collect();
        Self { cols, slot0, slot1, fx, u, chunk_base }
    }

    /// Number of padded samples.
    pub(crate) fn padded_len(&self) -> usize {
        self.fx.len()
    }
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
    /// Prepares `A` and `B` for the sample row at sample-space `y` (inlined, so its loop is
    /// compiled for the caller's instruction set).
    #[inline(always)]
    pub(crate) fn prepare(&mut self, octave: &LatticeOctave<'_>, plan: &ColumnPlan, y: f64) {
        let ly = (octave.to_lattice_y)(y);
        let yf = ly.floor();
        let r = cell_index(yf);
        let t = ly - yf;
        let fy = t as f32;
        let v = octave.fade.weight(t) as f32;
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

/// One octave of one row, portable scalar code: `out[i] = n(sample i)` for `i` in `range`
/// (a range of whole vectors of the padded row).
pub(crate) fn row_scalar(plan: &ColumnPlan, st: &RowState, range: Range<usize>, out: &mut [f32]) {
    for (o, i) in out.iter_mut().zip(range) {
        let s0 = plan.slot0[i] as usize;
        let s1 = plan.slot1[i] as usize;
        let fx = plan.fx[i];
        let t0 = st.a[s0] * fx + st.b[s0];
        let t1 = st.a[s1] * (fx - 1.0) + st.b[s1];
        *o = t0 + plan.u[i] * (t1 - t0);
    }
}

/// One octave of one row with AVX2 and FMA (see the module docs for the method).
///
/// # Safety
/// The CPU must support AVX2 and FMA; `range` must cover whole vectors of the padded row and
/// `out.len() == range.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn row_avx2(plan: &ColumnPlan, st: &RowState, range: Range<usize>, out: &mut [f32]) {
    use std::arch::x86_64::*;
    debug_assert_eq!(out.len(), range.len());
    debug_assert_eq!(range.start % LANES, 0);
    debug_assert!(range.end <= plan.padded_len());
    let one = _mm256_set1_ps(1.0);
    let a_ptr = st.a.as_ptr();
    let b_ptr = st.b.as_ptr();
    for (k, o) in (range.start / LANES..range.end / LANES).zip(out.chunks_exact_mut(LANES)) {
        let i = k * LANES;
        // SAFETY (all loads below): `i + LANES <= padded_len`, the plan arrays have
        // `padded_len` entries, slots are `< cols.len()` and `a`/`b` hold
        // `cols.len() + ROW_PAD` entries, so `base + LANES` is in bounds.
        unsafe {
            let s0 = _mm256_loadu_si256(plan.slot0.as_ptr().add(i).cast());
            let s1 = _mm256_loadu_si256(plan.slot1.as_ptr().add(i).cast());
            let base = *plan.chunk_base.get_unchecked(k);
            let (a0, a1, b0, b1);
            if base >= 0 {
                let vb = _mm256_set1_epi32(base);
                let i0 = _mm256_sub_epi32(s0, vb);
                let i1 = _mm256_sub_epi32(s1, vb);
                let av = _mm256_loadu_ps(a_ptr.add(base as usize));
                let bv = _mm256_loadu_ps(b_ptr.add(base as usize));
                a0 = _mm256_permutevar8x32_ps(av, i0);
                a1 = _mm256_permutevar8x32_ps(av, i1);
                b0 = _mm256_permutevar8x32_ps(bv, i0);
                b1 = _mm256_permutevar8x32_ps(bv, i1);
            } else {
                a0 = _mm256_i32gather_ps::<4>(a_ptr, s0);
                a1 = _mm256_i32gather_ps::<4>(a_ptr, s1);
                b0 = _mm256_i32gather_ps::<4>(b_ptr, s0);
                b1 = _mm256_i32gather_ps::<4>(b_ptr, s1);
            }
            let fx = _mm256_loadu_ps(plan.fx.as_ptr().add(i));
            let u = _mm256_loadu_ps(plan.u.as_ptr().add(i));
            let t0 = _mm256_fmadd_ps(a0, fx, b0);
            let t1 = _mm256_fmadd_ps(a1, _mm256_sub_ps(fx, one), b1);
            let n = _mm256_fmadd_ps(u, _mm256_sub_ps(t1, t0), t0);
            _mm256_storeu_ps(o.as_mut_ptr(), n);
        }
    }
}
