//! Bulk fill of `opensimplex2` in 2D (no warp): 8 samples per AVX2 vector.
//!
//! Per sample and octave, the same steps as the point kernel (`crate::simplex`):
//!
//! 1. skew in f64, exactly as the point path: `s = (x + y)·F2`, `xs = x + s`, `ys = y + s`,
//!    cell `(⌊xs⌋, ⌊ys⌋)`, fractions `fx = xs − ⌊xs⌋`, `fy = ys − ⌊ys⌋` (4 f64 lanes; the cell is
//!    taken relative to the first sample of the vector so that it fits i32 lanes exactly, then
//!    wrapped to 32 bits as the hash does);
//! 2. in f32 lanes: unskew `t = (fx + fy)·G2`, `x0 = fx − t`, `y0 = fy − t`; the three corners
//!    that can be within the kernel radius, `(0, 0)`, `(1, 1)` and `(1, 0)` if `fx > fy` else
//!    `(0, 1)` (the fourth lies across the cell diagonal, at distance² ≥ ½, and contributes
//!    0);
//! 3. per corner: `hash2` in i32 lanes (`mullo`, wrapping adds), gradient index `((h >> 8)·24) >> 24`, the
//!    gradient `k = 6q + m` as gradient `m` (one `vpermps` per component) turned by `q·90°`
//!    (a swap and a sign flip of `d`; `q` = the top 2 bits of the hash),
//!    contribution `max(½ − |d|², 0)⁴·(g·d)`;
//! 4. the sum times `NORM_2D`.
//!
//! Per-column lattice x and per-row lattice y are computed once per fill and per row (in f64,
//! as in the point path). The scalar fallback calls the point kernel itself on the same
//! lattice coordinates.

use super::{Extremes, LANES, RowCombiner, SimdLevel, column_x, for_bands, row_y};
use crate::simplex::{F2, G2, NORM_2D, RADIUS2_2D, gradients_2d};
use crate::{Noise, Region};

/// Lattice coordinates beyond this magnitude (or vectors spanning more lattice cells than
/// i32 lanes hold) take the scalar point kernel: far past any useful range, where f64 has no
/// fractional bits left anyway.
const SIMD_LIMIT: f64 = (1u64 << 50) as f64;
/// Largest lattice span of one vector of samples for the SIMD path.
const SPAN_LIMIT: f64 = (1u64 << 28) as f64;

/// Lattice x of every (padded) column for one octave, and whether the SIMD path applies.
struct Columns {
    x: Vec<f64>,
    simd_ok: bool,
}

/// Fills `out` with opensimplex2 (no warp) over `region`.
pub(crate) fn fill_simplex(noise: &Noise, region: &Region, out: &mut [f32], level: SimdLevel) -> (f32, f32) {
    let padded = region.width.div_ceil(LANES) * LANES;
    let octaves = noise.octaves();
    let columns: Vec<Columns> = octaves
        .iter()
        .map(|o| {
            let x: Vec<f64> = (0..padded)
                .map(|i| {
                    let px = column_x(region, i.min(region.width - 1));
                    noise.lattice2(px, 0.0)[0] * o.scale + o.offset[0]
                })
                .collect();
            let simd_ok = x.iter().all(|v| v.abs() < SIMD_LIMIT)
                && x.chunks(LANES).all(|c| (c[LANES - 1] - c[0]).abs() < SPAN_LIMIT);
            Columns { x, simd_ok }
        })
        .collect();
    let weights: Vec<f32> = octaves.iter().map(|o| o.weight as f32).collect();
    let combiner = RowCombiner::new(noise);
    let seed = noise.hash_seed();
    let grads = gradients_2d();
    let tables = GradTables::new(&grads);
    for_bands(region, out, |first_row, band| {
        let mut n = vec![0.0f32; padded];
        let mut r = vec![0.0f32; padded];
        let mut s = vec![0.0f32; padded];
        let mut ext = Extremes::new();
        for (k, row) in band.chunks_mut(region.width).enumerate() {
            let py = row_y(region, first_row + k);
            for (i, (o, cols)) in octaves.iter().zip(&columns).enumerate() {
                let y = noise.lattice2(0.0, py)[1] * o.scale + o.offset[1];
                match level {
                    #[cfg(target_arch = "x86_64")]
                    SimdLevel::Avx2Fma if cols.simd_ok && y.abs() < SIMD_LIMIT => {
                        // SAFETY: `level` was checked against the CPU; `n` and `cols.x` have
                        // the same padded length.
                        unsafe { row_avx2(&cols.x, y, seed, &tables, &mut n) }
                    }
                    _ => {
                        for (v, &x) in n.iter_mut().zip(&cols.x) {
                            *v = noise.base2(x, y, None) as f32;
                        }
                    }
                }
                match level {
                    #[cfg(target_arch = "x86_64")]
                    SimdLevel::Avx2Fma => {
                        // SAFETY: as above.
                        unsafe { add_avx2(&combiner, i, weights[i], &n, &mut r, &mut s) }
                    }
                    _ => combiner.add(i, weights[i], &n, &mut r, &mut s),
                }
            }
            match level {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `level` was checked against the CPU.
                SimdLevel::Avx2Fma => unsafe { finish_avx2(&combiner, &r, row, &mut ext) },
                _ => combiner.finish(&r[..region.width], row, &mut ext),
            }
        }
        ext.get()
    })
}

/// [`RowCombiner::add`] compiled for AVX2 (so its loops vectorise 8 wide).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn add_avx2(c: &RowCombiner, i: usize, w: f32, n: &[f32], r: &mut [f32], s: &mut [f32]) {
    c.add(i, w, n, r, s);
}

/// [`RowCombiner::finish`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn finish_avx2(c: &RowCombiner, r: &[f32], out: &mut [f32], ext: &mut Extremes) {
    c.finish(&r[..out.len()], out, ext);
}

/// The first 6 of the 24 gradients (one quadrant), for `vpermps` lookups: gradient
/// `k = 6q + m` is gradient `m` turned by `q·90°`, because the angles are `(k + ½)·15°`.
struct GradTables {
    cos: [f32; 8],
    sin: [f32; 8],
}

impl GradTables {
    fn new(grads: &[[f64; 2]; 24]) -> Self {
        let mut t = GradTables { cos: [0.0; 8], sin: [0.0; 8] };
        for ((c, s), g) in t.cos.iter_mut().zip(t.sin.iter_mut()).zip(&grads[..6]) {
            *c = g[0] as f32;
            *s = g[1] as f32;
        }
        t
    }
}

/// One octave of one row: `out[i]` = opensimplex2 at lattice `(xs[i], y)`.
///
/// # Safety
/// The CPU must support AVX2 and FMA; `xs.len() == out.len()`, a multiple of [`LANES`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn row_avx2(xs: &[f64], y: f64, seed: u32, t: &GradTables, out: &mut [f32]) {
    use crate::hash::{PRIME_X, PRIME_Y};
    use std::arch::x86_64::*;
    debug_assert_eq!(xs.len(), out.len());
    // SAFETY: every pointer access stays within `xs`/`out` (whole vectors of LANES) or the
    // fixed-size gradient tables.
    unsafe {
        let cos = _mm256_loadu_ps(t.cos.as_ptr());
        let sin = _mm256_loadu_ps(t.sin.as_ptr());
        let sign_bit = _mm256_set1_epi32(i32::MIN);
        let yv = _mm256_set1_pd(y);
        let f2 = _mm256_set1_pd(F2);
        let g2 = _mm256_set1_ps(G2 as f32);
        let radius2 = _mm256_set1_ps(RADIUS2_2D as f32);
        let one = _mm256_set1_ps(1.0);
        let corner11 = _mm256_set1_ps((1.0 - 2.0 * G2) as f32);
        let zero = _mm256_setzero_ps();
        let px = _mm256_set1_epi32(PRIME_X as i32);
        let py = _mm256_set1_epi32(PRIME_Y as i32);
        let seedv = _mm256_set1_epi32(seed as i32);
        let m1 = _mm256_set1_epi32(0x85EB_CA6Bu32 as i32);
        let m2 = _mm256_set1_epi32(0xC2B2_AE35u32 as i32);
        let norm = _mm256_set1_ps(NORM_2D as f32);

        // Hash → gradient index → (gx·dx + gy·dy), for one corner.
        let corner = |hx: __m256i, hy: __m256i, dx: __m256, dy: __m256| -> __m256 {
            let mut h = _mm256_xor_si256(seedv, _mm256_add_epi32(hx, hy));
            h = _mm256_xor_si256(h, _mm256_srli_epi32::<16>(h));
            h = _mm256_mullo_epi32(h, m1);
            h = _mm256_xor_si256(h, _mm256_srli_epi32::<13>(h));
            h = _mm256_mullo_epi32(h, m2);
            h = _mm256_xor_si256(h, _mm256_srli_epi32::<16>(h));
            // ((h >> 8)·24) >> 24 with 24·v = 16·v + 8·v (no multiply).
            let v = _mm256_srli_epi32::<8>(h);
            let v24 = _mm256_add_epi32(_mm256_slli_epi32::<4>(v), _mm256_slli_epi32::<3>(v));
            let idx = _mm256_srli_epi32::<24>(v24);
            // idx = 6q + m with q = idx / 6 = h >> 30 (the top 2 bits: ⌊⌊24v/2^24⌋/6⌋ =
            // ⌊4v/2^24⌋); g_idx = R(q·90°)·g_m, so g·d = g_m·R(−q·90°)·d: swap to (dy, −dx)
            // when q is odd, negate when q ≥ 2 (bit 31 of h).
            let q = _mm256_srli_epi32::<30>(h);
            let m =
                _mm256_sub_epi32(idx, _mm256_add_epi32(_mm256_slli_epi32::<2>(q), _mm256_slli_epi32::<1>(q)));
            let swap = _mm256_castsi256_ps(_mm256_slli_epi32::<31>(q));
            let u = _mm256_blendv_ps(dx, dy, swap);
            let w = _mm256_blendv_ps(dy, _mm256_xor_ps(dx, _mm256_castsi256_ps(sign_bit)), swap);
            let c = _mm256_permutevar8x32_ps(cos, m);
            let s = _mm256_permutevar8x32_ps(sin, m);
            let dot = _mm256_fmadd_ps(c, u, _mm256_mul_ps(s, w));
            let dot = _mm256_xor_ps(dot, _mm256_castsi256_ps(_mm256_and_si256(h, sign_bit)));
            let a = _mm256_fnmadd_ps(dy, dy, _mm256_fnmadd_ps(dx, dx, radius2));
            let a = _mm256_max_ps(a, zero);
            let a2 = _mm256_mul_ps(a, a);
            _mm256_mul_ps(_mm256_mul_ps(a2, a2), dot)
        };

        for (xc, oc) in xs.chunks_exact(LANES).zip(out.chunks_exact_mut(LANES)) {
            // Cell of the vector's first sample, as the base of the i32 lanes.
            let s0 = (xc[0] + y) * F2;
            let bx = (xc[0] + s0).floor();
            let by = (y + s0).floor();
            let (bxv, byv) = (_mm256_set1_pd(bx), _mm256_set1_pd(by));
            let mut fx4 = [_mm_setzero_ps(); 2];
            let mut fy4 = [_mm_setzero_ps(); 2];
            let mut ix4 = [_mm_setzero_si128(); 2];
            let mut iy4 = [_mm_setzero_si128(); 2];
            for half in 0..2 {
                let xv = _mm256_loadu_pd(xc.as_ptr().add(4 * half));
                let s = _mm256_mul_pd(_mm256_add_pd(xv, yv), f2);
                let xsv = _mm256_add_pd(xv, s);
                let ysv = _mm256_add_pd(yv, s);
                let xf = _mm256_floor_pd(xsv);
                let yf = _mm256_floor_pd(ysv);
                fx4[half] = _mm256_cvtpd_ps(_mm256_sub_pd(xsv, xf));
                fy4[half] = _mm256_cvtpd_ps(_mm256_sub_pd(ysv, yf));
                ix4[half] = _mm256_cvttpd_epi32(_mm256_sub_pd(xf, bxv));
                iy4[half] = _mm256_cvttpd_epi32(_mm256_sub_pd(yf, byv));
            }
            let fx = _mm256_set_m128(fx4[1], fx4[0]);
            let fy = _mm256_set_m128(fy4[1], fy4[0]);
            // Lattice indices wrapped to 32 bits, as `hash2` does with `i as u32`.
            let ix = _mm256_add_epi32(_mm256_set_m128i(ix4[1], ix4[0]), _mm256_set1_epi32(bx as i64 as i32));
            let iy = _mm256_add_epi32(_mm256_set_m128i(iy4[1], iy4[0]), _mm256_set1_epi32(by as i64 as i32));

            let t0 = _mm256_mul_ps(_mm256_add_ps(fx, fy), g2);
            let x0 = _mm256_sub_ps(fx, t0);
            let y0 = _mm256_sub_ps(fy, t0);
            let hx0 = _mm256_mullo_epi32(ix, px);
            let hy0 = _mm256_mullo_epi32(iy, py);
            let hx1 = _mm256_add_epi32(hx0, px);
            let hy1 = _mm256_add_epi32(hy0, py);
            // Middle corner: (1, 0) where fx > fy, else (0, 1).
            let right = _mm256_cmp_ps::<_CMP_GT_OQ>(fx, fy);
            let right_i = _mm256_castps_si256(right);
            let hxm = _mm256_add_epi32(hx0, _mm256_and_si256(right_i, px));
            let hym = _mm256_add_epi32(hy0, _mm256_andnot_si256(right_i, py));
            let ci = _mm256_and_ps(right, one);
            let cj = _mm256_andnot_ps(right, one);
            let xm = _mm256_sub_ps(_mm256_add_ps(x0, g2), ci);
            let ym = _mm256_sub_ps(_mm256_add_ps(y0, g2), cj);
            let x1 = _mm256_sub_ps(x0, corner11);
            let y1 = _mm256_sub_ps(y0, corner11);

            let sum = _mm256_add_ps(
                _mm256_add_ps(corner(hx0, hy0, x0, y0), corner(hxm, hym, xm, ym)),
                corner(hx1, hy1, x1, y1),
            );
            _mm256_storeu_ps(oc.as_mut_ptr(), _mm256_mul_ps(sum, norm));
        }
    }
}
