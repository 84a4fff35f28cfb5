//! Bulk fill of `opensimplex2` in 2D (no warp): 8 samples per AVX2 vector.
//!
//! Per sample and octave, the same function as the point kernel (`crate::simplex`), computed so
//! that almost all per-sample work is f32/i32 lane arithmetic:
//!
//! 1. skew, split into per-column and per-row parts: `xs = x + (x + y)·F2 = A(x) + Y_a(y)` with
//!    `A = x·(1 + F2)`, `Y_a = y·F2`, and `ys = B(x) + Y_b(y)` with `B = x·F2`,
//!    `Y_b = y·(1 + F2)`. `A` and `B` are computed once per column and octave, `Y_a` and `Y_b`
//!    once per row and octave, each in f64 and split into an integer part (wrapped to 32 bits as
//!    the hash does, and pre-multiplied by the hash's `PRIME_X`/`PRIME_Y`) and an f32 fraction
//!    in [0, 1]. Per sample: `fx = frac(A) + frac(Y_a)`, minus 1 with a carry into the cell
//!    when it reaches 1 (the same for `fy`), so the cell stays exact at any distance from the
//!    origin and the fraction keeps f32 precision (≈ 1e-7 lattice units);
//! 2. unskew `t = (fx + fy)·G2`, `x0 = fx − t`, `y0 = fy − t`; the three corners that can be
//!    within the kernel radius, `(0, 0)`, `(1, 1)` and `(1, 0)` if `fx > fy` else `(0, 1)` (the
//!    fourth lies across the cell diagonal, at distance² ≥ ½, and contributes 0);
//! 3. per corner: `hash2_simplex` (`crate::hash`) in i32 lanes (its input
//!    `seed + i·PRIME_X + j·PRIME_Y` comes from step 1, so one multiply per corner), the
//!    gradient (see
//!    [`crate::simplex::gradient_index`]) by `vpermps` lookups, contribution
//!    `max(½ − |d|², 0)⁴·(g·d)`;
//! 4. the sum times `NORM_2D`, written to the octave row, or, for fbm (and no fractal), times
//!    `NORM_2D·weight` and accumulated straight into the running fractal sum.
//!
//! The scalar fallback calls the point kernel itself on the same lattice coordinates.

use super::{Extremes, LANES, RowCombiner, SimdLevel, column_x, for_bands, row_y};
use crate::hash::{PRIME_X, PRIME_Y, SIMPLEX_MUL, cell};
use crate::simplex::{F2, GRADIENT_COUNT_2D, NORM_2D, gradients_2d};
use crate::spec::FractalKind;
use crate::{Noise, Region};

/// Lattice coordinates beyond this magnitude take the scalar point kernel: far past any useful
/// range, where f64 has no fractional bits left anyway.
const SIMD_LIMIT: f64 = (1u64 << 50) as f64;

/// The integer part of `v` wrapped to 32 bits (as the hash wraps lattice indices) and its
/// fraction rounded to f32 (in [0, 1]).
#[inline]
fn split(v: f64) -> (u32, f32) {
    let f = v.floor();
    (cell(f) as u32, (v - f) as f32)
}

/// The per-column half of the skew for one octave (step 1 of the module docs).
struct Columns {
    /// Lattice x of every padded column (for the scalar fallback).
    x: Vec<f64>,
    /// `frac(x·(1 + F2))`.
    fa: Vec<f32>,
    /// `frac(x·F2)`.
    fb: Vec<f32>,
    /// `⌊x·(1 + F2)⌋·PRIME_X + ⌊x·F2⌋·PRIME_Y` (wrapping): the column's part of the hash input.
    h: Vec<u32>,
    /// Whether every column is within [`SIMD_LIMIT`].
    simd_ok: bool,
}

impl Columns {
    fn new(x: Vec<f64>) -> Self {
        let n = x.len();
        let mut c = Columns {
            fa: Vec::with_capacity(n),
            fb: Vec::with_capacity(n),
            h: Vec::with_capacity(n),
            simd_ok: x.iter().all(|v| v.abs() < SIMD_LIMIT),
            x,
        };
        for &v in &c.x {
            let (ia, fa) = split(v + v * F2);
            let (ib, fb) = split(v * F2);
            c.fa.push(fa);
            c.fb.push(fb);
            c.h.push(ia.wrapping_mul(PRIME_X).wrapping_add(ib.wrapping_mul(PRIME_Y)));
        }
        c
    }
}

/// The per-row half of the skew for one octave at lattice `y` (step 1 of the module docs).
#[derive(Clone, Copy, Debug)]
struct RowSkew {
    /// `frac(y·F2)`.
    fa: f32,
    /// `frac(y·(1 + F2))`.
    fb: f32,
    /// `seed + ⌊y·F2⌋·PRIME_X + ⌊y·(1 + F2)⌋·PRIME_Y` (wrapping): the row's part of the hash
    /// input.
    h: u32,
}

impl RowSkew {
    fn new(y: f64, seed: u32) -> Self {
        let (ia, fa) = split(y * F2);
        let (ib, fb) = split(y + y * F2);
        let h = seed.wrapping_add(ia.wrapping_mul(PRIME_X)).wrapping_add(ib.wrapping_mul(PRIME_Y));
        RowSkew { fa, fb, h }
    }
}

/// How the SIMD row kernel writes its result `v` (the unnormalised sum) into `out`.
#[derive(Clone, Copy, Debug)]
enum Write {
    /// `out = v·k`.
    Set(f32),
    /// `out += v·k`.
    Add(f32),
}

/// Fills `out` with opensimplex2 (no warp) over `region`.
pub(crate) fn fill_simplex(noise: &Noise, region: &Region, out: &mut [f32], level: SimdLevel) -> (f32, f32) {
    let padded = region.width.div_ceil(LANES) * LANES;
    let octaves = noise.octaves();
    let columns: Vec<Columns> = octaves
        .iter()
        .map(|o| {
            Columns::new(
                (0..padded)
                    .map(|i| {
                        let px = column_x(region, i.min(region.width - 1));
                        noise.lattice2(px, 0.0)[0] * o.scale + o.offset[0]
                    })
                    .collect(),
            )
        })
        .collect();
    let weights: Vec<f32> = octaves.iter().map(|o| o.weight as f32).collect();
    let combiner = RowCombiner::new(noise);
    // fbm (and no fractal) is a weighted sum: the kernel accumulates it directly.
    let fused = matches!(combiner.fractal, FractalKind::Fbm | FractalKind::None);
    let seed = noise.hash_seed();
    let tables = GradTables::new(&gradients_2d());
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
                        let skew = RowSkew::new(y, seed);
                        let norm = NORM_2D as f32;
                        if fused {
                            let write = if i == 0 {
                                Write::Set(norm * weights[i])
                            } else {
                                Write::Add(norm * weights[i])
                            };
                            // SAFETY: `level` was checked against the CPU; `r` and the column
                            // vectors have the same padded length.
                            unsafe { row_avx2(cols, skew, &tables, write, &mut r) };
                            continue;
                        }
                        // SAFETY: as above, with `n`.
                        unsafe { row_avx2(cols, skew, &tables, Write::Set(norm), &mut n) }
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

/// The 8 upper-half-plane gradients (entries `0..8` of [`gradients_2d`]), for `vpermps`
/// lookups indexed by the low 3 bits of the hash; the top bit of the hash negates them (see
/// [`crate::simplex::gradient_index`]).
struct GradTables {
    cos: [f32; 8],
    sin: [f32; 8],
}

impl GradTables {
    fn new(grads: &[[f64; 2]; GRADIENT_COUNT_2D]) -> Self {
        let mut t = GradTables { cos: [0.0; 8], sin: [0.0; 8] };
        for ((c, s), g) in t.cos.iter_mut().zip(t.sin.iter_mut()).zip(&grads[..8]) {
            *c = g[0] as f32;
            *s = g[1] as f32;
        }
        t
    }
}

/// One octave of one row: `out[i]` = `write` of the unnormalised opensimplex2 sum at column
/// `i` of `cols` and the row of `row`.
///
/// # Safety
/// The CPU must support AVX2 and FMA; `out` and the vectors of `cols` have the same length, a
/// multiple of [`LANES`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn row_avx2(cols: &Columns, row: RowSkew, t: &GradTables, write: Write, out: &mut [f32]) {
    use crate::simplex::{G2, RADIUS2_2D};
    use std::arch::x86_64::*;
    let len = out.len();
    assert!(cols.fa.len() == len && cols.fb.len() == len && cols.h.len() == len);
    assert_eq!(len % LANES, 0);
    // SAFETY: every pointer access stays within the column vectors and `out` (whole vectors of
    // LANES at offsets below `len`, checked above) or the fixed-size gradient tables.
    unsafe {
        let cos = _mm256_loadu_ps(t.cos.as_ptr());
        let sin = _mm256_loadu_ps(t.sin.as_ptr());
        let sign_bit = _mm256_set1_epi32(i32::MIN);
        let g2 = _mm256_set1_ps(G2 as f32);
        let radius2 = _mm256_set1_ps(RADIUS2_2D as f32);
        let one = _mm256_set1_ps(1.0);
        let corner11 = _mm256_set1_ps((1.0 - 2.0 * G2) as f32);
        let zero = _mm256_setzero_ps();
        let px = _mm256_set1_epi32(PRIME_X as i32);
        let py = _mm256_set1_epi32(PRIME_Y as i32);
        let pxy = _mm256_set1_epi32(PRIME_X.wrapping_add(PRIME_Y) as i32);
        let px_f = _mm256_castsi256_ps(px);
        let py_f = _mm256_castsi256_ps(py);
        let g2_minus_1 = _mm256_set1_ps((G2 - 1.0) as f32);
        let mul = _mm256_set1_epi32(SIMPLEX_MUL as i32);
        let row_fa = _mm256_set1_ps(row.fa);
        let row_fb = _mm256_set1_ps(row.fb);
        let row_h = _mm256_set1_epi32(row.h as i32);

        // Lattice hash of `v = i·PRIME_X + j·PRIME_Y` → gradient → falloff⁴·(g·d), one corner.
        let corner = |v: __m256i, dx: __m256, dy: __m256| -> __m256 {
            let h = _mm256_mullo_epi32(_mm256_xor_si256(v, _mm256_srli_epi32::<16>(v)), mul);
            let h = _mm256_xor_si256(h, _mm256_srli_epi32::<15>(h));
            // `vpermps` reads the low 3 bits of each lane: the gradient index (h & 7); bit 31
            // negates the dot product.
            let c = _mm256_permutevar8x32_ps(cos, h);
            let s = _mm256_permutevar8x32_ps(sin, h);
            let dot = _mm256_fmadd_ps(c, dx, _mm256_mul_ps(s, dy));
            let dot = _mm256_xor_ps(dot, _mm256_castsi256_ps(_mm256_and_si256(h, sign_bit)));
            let a = _mm256_fnmadd_ps(dy, dy, _mm256_fnmadd_ps(dx, dx, radius2));
            let a = _mm256_max_ps(a, zero);
            let a2 = _mm256_mul_ps(a, a);
            _mm256_mul_ps(_mm256_mul_ps(a2, a2), dot)
        };

        for k in (0..len).step_by(LANES) {
            // Step 1: fraction and hashed cell of the skewed point, with the carry of the two
            // fractions (all ones in a lane where the sum reached 1).
            let sx = _mm256_add_ps(_mm256_loadu_ps(cols.fa.as_ptr().add(k)), row_fa);
            let sy = _mm256_add_ps(_mm256_loadu_ps(cols.fb.as_ptr().add(k)), row_fb);
            let carry_x = _mm256_cmp_ps::<_CMP_GE_OQ>(sx, one);
            let carry_y = _mm256_cmp_ps::<_CMP_GE_OQ>(sy, one);
            let fx = _mm256_sub_ps(sx, _mm256_and_ps(carry_x, one));
            let fy = _mm256_sub_ps(sy, _mm256_and_ps(carry_y, one));
            // Hash input of corner (0, 0): seed + i·PRIME_X + j·PRIME_Y.
            let v0 = _mm256_add_epi32(
                _mm256_add_epi32(_mm256_loadu_si256(cols.h.as_ptr().add(k).cast()), row_h),
                _mm256_add_epi32(
                    _mm256_and_si256(_mm256_castps_si256(carry_x), px),
                    _mm256_and_si256(_mm256_castps_si256(carry_y), py),
                ),
            );

            // Step 2: unskew and the three corners.
            let t0 = _mm256_mul_ps(_mm256_add_ps(fx, fy), g2);
            let x0 = _mm256_sub_ps(fx, t0);
            let y0 = _mm256_sub_ps(fy, t0);
            // Hash inputs of the corners (1, 1) and the middle corner: (1, 0) where fx > fy, else (0, 1).
            let v1 = _mm256_add_epi32(v0, pxy);
            let right = _mm256_cmp_ps::<_CMP_GT_OQ>(fx, fy);
            let vm = _mm256_add_epi32(v0, _mm256_castps_si256(_mm256_blendv_ps(py_f, px_f, right)));
            let xm = _mm256_add_ps(x0, _mm256_blendv_ps(g2, g2_minus_1, right));
            let ym = _mm256_add_ps(y0, _mm256_blendv_ps(g2_minus_1, g2, right));
            let x1 = _mm256_sub_ps(x0, corner11);
            let y1 = _mm256_sub_ps(y0, corner11);

            // Steps 3 and 4.
            let sum =
                _mm256_add_ps(_mm256_add_ps(corner(v0, x0, y0), corner(vm, xm, ym)), corner(v1, x1, y1));
            let o = out.as_mut_ptr().add(k);
            match write {
                Write::Set(f) => _mm256_storeu_ps(o, _mm256_mul_ps(sum, _mm256_set1_ps(f))),
                Write::Add(f) => {
                    _mm256_storeu_ps(o, _mm256_fmadd_ps(sum, _mm256_set1_ps(f), _mm256_loadu_ps(o)))
                }
            }
        }
    }
}
