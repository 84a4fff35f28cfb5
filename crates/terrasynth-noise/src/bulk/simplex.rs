//! Bulk fill of `opensimplex2` in 2D (no warp): one kernel, generic over the vector type
//! ([`super::lanes`]: 8 lanes of AVX2, 16 of AVX-512 or their AVX2 emulation).
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
//! The `scalar` level runs the same kernel in [`super::lanes::Portable`] lanes (same bits).

use super::lanes::Lanes;
use super::{BandJob, Extremes, RowCombiner, Samples, SimdLevel, column_x, fill_bands, row_y};
use crate::Noise;
use crate::hash::{PRIME_X, PRIME_Y, SIMPLEX_MUL, cell};
use crate::simplex::{F2, GRADIENT_COUNT_2D, NORM_2D, gradients_2d};
use crate::spec::FractalKind;

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

/// Everything the simplex path shares between bands.
struct SimplexJob<'a> {
    noise: &'a Noise,
    region: &'a Samples,
    columns: Vec<Columns>,
    weights: Vec<f32>,
    combiner: RowCombiner,
    /// fbm (and no fractal) is a weighted sum: the kernel accumulates it directly.
    fused: bool,
    seed: u32,
    tables: GradTables,
    padded: usize,
}

/// Fills `out` with opensimplex2 (no warp) over `region`.
pub(crate) fn fill_simplex(noise: &Noise, region: &Samples, out: &mut [f32], level: SimdLevel) -> (f32, f32) {
    let lanes = level.lanes();
    let padded = region.width.div_ceil(lanes) * lanes;
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
    let combiner = RowCombiner::new(noise);
    let job = SimplexJob {
        noise,
        region,
        columns,
        weights: octaves.iter().map(|o| o.weight as f32).collect(),
        fused: matches!(combiner.fractal, FractalKind::Fbm | FractalKind::None),
        combiner,
        seed: noise.hash_seed(),
        tables: GradTables::new(&gradients_2d()),
        padded,
    };
    fill_bands(&job, region, out, level)
}

impl SimplexJob<'_> {
    /// One band of rows. `simd_row(columns, skew, write, out)` runs the SIMD row kernel and
    /// returns `true`, or returns `false` to take the point kernel.
    #[inline(always)]
    fn band<K, F>(&self, first_row: usize, band: &mut [f32], simd_row: K, finish: F) -> (f32, f32)
    where
        K: Fn(&Columns, RowSkew, Write, &mut [f32]) -> bool,
        F: Fn(&[f32], &mut [f32], &mut Extremes),
    {
        let width = self.region.width;
        let mut n = vec![0.0f32; self.padded];
        let mut r = vec![0.0f32; self.padded];
        let mut s = vec![0.0f32; self.padded];
        let mut ext = Extremes::new();
        let norm = NORM_2D as f32;
        for (k, row) in band.chunks_mut(width).enumerate() {
            let py = row_y(self.region, first_row + k);
            for (i, (o, cols)) in self.noise.octaves().iter().zip(&self.columns).enumerate() {
                let y = self.noise.lattice2(0.0, py)[1] * o.scale + o.offset[1];
                let simd = cols.simd_ok && y.abs() < SIMD_LIMIT;
                let skew = RowSkew::new(y, self.seed);
                let w = self.weights[i];
                if simd && self.fused {
                    let write = if i == 0 { Write::Set(norm * w) } else { Write::Add(norm * w) };
                    if simd_row(cols, skew, write, &mut r) {
                        continue;
                    }
                }
                if !(simd && simd_row(cols, skew, Write::Set(norm), &mut n)) {
                    for (v, &x) in n.iter_mut().zip(&cols.x) {
                        *v = self.noise.base2(x, y, None) as f32;
                    }
                }
                self.combiner.add(i, w, &n, &mut r, &mut s);
            }
            finish(&r[..width], row, &mut ext);
        }
        ext.get()
    }
}

impl BandJob for SimplexJob<'_> {
    /// [`SimplexJob::band`] with the kernel in `V` lanes (inlined into the `#[target_feature]`
    /// functions of [`fill_bands`], so the combiner loops are compiled for the same
    /// instruction set).
    #[inline(always)]
    fn band_simd<V: Lanes>(&self, v: V, first_row: usize, band: &mut [f32]) -> (f32, f32) {
        // `inline(always)` down to the intrinsics (see `LatticeJob::band_simd`).
        self.band(
            first_row,
            band,
            #[inline(always)]
            |cols, skew, write, out| {
                // SAFETY: the column vectors and `out` all have `padded` entries, a multiple of
                // `V::N` (`fill_simplex` padded to the level's lanes).
                unsafe { row_simd(v, cols, skew, &self.tables, write, out) };
                true
            },
            #[inline(always)]
            |r, out, ext| self.combiner.finish_simd(v, r, out, ext),
        )
    }
}

/// The 8 upper-half-plane gradients (entries `0..8` of [`gradients_2d`]), for table lookups
/// indexed by the low 3 bits of the hash; the top bit of the hash negates them (see
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

/// One octave of one row in vectors of `V`: `out[i]` = `write` of the unnormalised
/// opensimplex2 sum at column `i` of `cols` and the row of `row`.
///
/// # Safety
/// `out` and the vectors of `cols` have the same length, a multiple of `V::N`.
#[inline(always)]
unsafe fn row_simd<V: Lanes>(
    v: V,
    cols: &Columns,
    row: RowSkew,
    t: &GradTables,
    write: Write,
    out: &mut [f32],
) {
    use crate::simplex::RADIUS2_2D;
    let len = out.len();
    assert!(cols.fa.len() == len && cols.fb.len() == len && cols.h.len() == len);
    assert_eq!(len % V::N, 0);
    let (cos, sin) = (v.table8(&t.cos), v.table8(&t.sin));
    let radius2 = v.splat(RADIUS2_2D as f32);
    let zero = v.splat(0.0);
    let mul = v.splat_i(SIMPLEX_MUL as i32);
    let row_fa = v.splat(row.fa);
    let row_fb = v.splat(row.fb);
    let row_h = v.splat_i(row.h as i32);

    let cc = CornerConsts::<V> { cos, sin, radius2, zero, mul };

    // SAFETY (the `sum_vector` calls and the stores): `k + N <= len`, and every column vector and
    // `out` hold `len` values. One loop per write mode (no branch per vector).
    match write {
        Write::Set(f) => {
            let f = v.splat(f);
            for k in (0..len).step_by(V::N) {
                // SAFETY: `k + N <= len` (see above).
                unsafe {
                    v.store(
                        out.as_mut_ptr().add(k),
                        v.mul(sum_vector(v, &cc, cols, row_fa, row_fb, row_h, k), f),
                    )
                }
            }
        }
        Write::Add(f) => {
            let f = v.splat(f);
            for k in (0..len).step_by(V::N) {
                // SAFETY: `k + N <= len` (see above).
                let o = unsafe { out.as_mut_ptr().add(k) };
                // SAFETY: `o` points to N values of `out` (see above).
                unsafe {
                    v.store(o, v.add(v.mul(sum_vector(v, &cc, cols, row_fa, row_fb, row_h, k), f), v.load(o)))
                }
            }
        }
    }
}

/// The unnormalised opensimplex2 sum of the vector of columns at `k` (steps 1 to 3 of the
/// module docs).
///
/// # Safety
/// `k + N` is at most the length of the column vectors.
#[inline(always)]
unsafe fn sum_vector<V: Lanes>(
    v: V,
    cc: &CornerConsts<V>,
    cols: &Columns,
    row_fa: V::F,
    row_fb: V::F,
    row_h: V::I,
    k: usize,
) -> V::F {
    use crate::simplex::G2;
    let g2 = v.splat(G2 as f32);
    let one = v.splat(1.0);
    // SAFETY: `k + N <= len` of the column vectors (the caller's contract).
    let (fa, fb, h) = unsafe {
        (
            v.load(cols.fa.as_ptr().add(k)),
            v.load(cols.fb.as_ptr().add(k)),
            v.load_i(cols.h.as_ptr().add(k).cast()),
        )
    };
    // Step 1: fraction and hashed cell of the skewed point, with the carry of the two
    // fractions (lanes where the sum reached 1).
    let sx = v.add(fa, row_fa);
    let sy = v.add(fb, row_fb);
    let carry_x = v.ge(sx, one);
    let carry_y = v.ge(sy, one);
    let fx = v.sub(sx, v.keep(carry_x, one));
    let fy = v.sub(sy, v.keep(carry_y, one));
    // Hash input of corner (0, 0): seed + i·PRIME_X + j·PRIME_Y.
    let px = v.splat_i(PRIME_X as i32);
    let py = v.splat_i(PRIME_Y as i32);
    let v0 = v.add_i(v.add_i(h, row_h), v.add_i(v.keep_i(carry_x, px), v.keep_i(carry_y, py)));

    // Step 2: unskew and the three corners.
    let t0 = v.mul(v.add(fx, fy), g2);
    let x0 = v.sub(fx, t0);
    let y0 = v.sub(fy, t0);
    // Hash inputs of the corners (1, 1) and the middle corner: (1, 0) where fx > fy, else
    // (0, 1).
    let v1 = v.add_i(v0, v.splat_i(PRIME_X.wrapping_add(PRIME_Y) as i32));
    let right = v.gt(fx, fy);
    let g2_minus_1 = v.splat((G2 - 1.0) as f32);
    let vm = v.add_i(v0, v.select_i(right, py, px));
    let xm = v.add(x0, v.select(right, g2, g2_minus_1));
    let ym = v.add(y0, v.select(right, g2_minus_1, g2));
    let corner11 = v.splat((1.0 - 2.0 * G2) as f32);
    let x1 = v.sub(x0, corner11);
    let y1 = v.sub(y0, corner11);

    // Step 3.
    v.add(v.add(corner(v, cc, v0, x0, y0), corner(v, cc, vm, xm, ym)), corner(v, cc, v1, x1, y1))
}

/// The constants of [`corner`], in vectors of `V`.
struct CornerConsts<V: Lanes> {
    cos: V::Table8,
    sin: V::Table8,
    radius2: V::F,
    zero: V::F,
    mul: V::I,
}

/// One corner of the simplex: lattice hash of `h = seed + i·PRIME_X + j·PRIME_Y` → gradient →
/// `max(r² − |d|², 0)⁴·(g·d)` at offset `d = (dx, dy)`.
#[inline(always)]
fn corner<V: Lanes>(v: V, c: &CornerConsts<V>, h: V::I, dx: V::F, dy: V::F) -> V::F {
    let h = v.mul_i(v.xor_i(h, v.shr_i(h, 16)), c.mul);
    let h = v.xor_i(h, v.shr_i(h, 15));
    // The gradient index is the low 3 bits of the hash; bit 31 negates the dot product.
    let gx = v.lookup8(c.cos, h);
    let gy = v.lookup8(c.sin, h);
    // Multiplications and additions rounded separately, never fused (see `lanes`).
    let dot = v.flip_sign(v.add(v.mul(gx, dx), v.mul(gy, dy)), h);
    let a = v.max(v.sub(v.sub(c.radius2, v.mul(dx, dx)), v.mul(dy, dy)), c.zero);
    let a2 = v.mul(a, a);
    v.mul(v.mul(a2, a2), dot)
}
