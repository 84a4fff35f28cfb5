//! Bulk fill of a region: SIMD kernels with runtime CPU dispatch, rayon over bands of rows.
//!
//! [`Noise::fill`] computes the same function as the point path
//! ([`NoiseFn::get2`](crate::NoiseFn::get2)) on every sample of a [`Region`], within 1e-6
//! (outputs are f32; the lattice cell of every sample is still found in f64/i64, so regions far
//! from the origin, |q| up to 1e7 lattice units and beyond, keep full precision).
//!
//! Paths, chosen per noise:
//! - square-lattice kinds (white, value, perlin-angle, perlin-table, perlin) without warp: the
//!   row engine of [`lattice`] (per-column and per-lattice-row work hoisted, 3 FMAs per sample
//!   and octave in AVX2 lanes);
//! - opensimplex2 without warp: the SIMD simplex kernel of [`simplex`];
//! - everything else (worley, any warp): a row-parallel loop over the point path.
//!
//! The fractal (fbm, billow, ridged, hybrid) is applied per octave over whole rows, in f32,
//! with the same recurrences as [`crate::fractal`].
//!
//! Dispatch: `SimdLevel::detect` picks AVX2+FMA when the CPU has both (checked at run time;
//! the crate is built for baseline x86-64), else portable scalar code: the same row method for
//! the square-lattice kinds, the point kernel on the same lattice coordinates for opensimplex2
//! ([`Noise::fill_scalar`] forces it).
//! AVX-512 has no dedicated kernel (the development machine, an AMD EPYC Zen 3, lacks it; an
//! AVX-512 CPU runs the AVX2 kernel).
//!
//! Determinism: rows are split into fixed bands of [`BAND_ROWS`] rows; every sample is
//! computed by the same arithmetic whatever the band, the thread or the tile it falls in, so
//! the output is bit-identical for any thread count and a region filled in tiles equals the
//! region filled whole (for tile origins that are exact in f64).

mod lattice;
mod simplex;

use rayon::prelude::*;

use crate::fractal::{Acc, Combiner};
use crate::spec::{FractalKind, NoiseKind};
use crate::{Noise, NoiseError, NoiseFn, Region};

use lattice::{ColumnPlan, Fade, LANES, LatticeOctave, RowState, corner_rows};

/// Rows per rayon task.
pub(crate) const BAND_ROWS: usize = 16;

/// Which instruction set the bulk kernels use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum SimdLevel {
    /// Portable scalar code (same method as the SIMD kernels, no intrinsics).
    Scalar,
    /// 8 f32 lanes with AVX2 and FMA (x86-64).
    Avx2Fma,
}

impl SimdLevel {
    /// The best level this CPU supports (detected at run time).
    pub(crate) fn detect() -> SimdLevel {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            return SimdLevel::Avx2Fma;
        }
        SimdLevel::Scalar
    }

    /// `self` if the CPU supports it, else [`SimdLevel::Scalar`] (so a caller can never run an
    /// unsupported instruction).
    fn supported(self) -> SimdLevel {
        match (self, SimdLevel::detect()) {
            (SimdLevel::Avx2Fma, SimdLevel::Avx2Fma) => SimdLevel::Avx2Fma,
            _ => SimdLevel::Scalar,
        }
    }
}

impl Noise {
    /// Fills `out` (row-major, `region.width` columns, `region.height` rows) with the noise at
    /// every sample of `region`, and returns the `(min, max)` of the values written.
    ///
    /// Equals [`NoiseFn::get2`](crate::NoiseFn::get2) at `(x0 + i·dx, y0 + j·dy)` within 1e-6;
    /// uses every rayon thread and the best SIMD level of the CPU ([`Noise::bulk_simd_level`]).
    ///
    /// Errors: [`NoiseError::BufferSize`] when `out.len() != width·height`;
    /// [`NoiseError::InvalidParameter`] for an empty region or a non-finite origin or spacing.
    ///
    /// ```
    /// use terrasynth_noise::{NoiseSpec, NoiseFn, Region};
    /// let noise = NoiseSpec::from_inline_toml("kind = \"perlin\", fractal = \"fbm\"")?.build()?;
    /// let region = Region { x0: 0.5, y0: -3.0, dx: 0.25, dy: 0.25, width: 5, height: 3 };
    /// let mut out = vec![0.0; 15];
    /// let (min, max) = noise.fill(&region, &mut out)?;
    /// assert!((out[6] as f64 - noise.get2(0.5 + 0.25, -3.0 + 0.25)).abs() < 1e-6);
    /// assert!(min <= out[6] && out[6] <= max);
    /// # Ok::<(), terrasynth_noise::NoiseError>(())
    /// ```
    pub fn fill(&self, region: &Region, out: &mut [f32]) -> Result<(f32, f32), NoiseError> {
        self.fill_with(region, out, SimdLevel::detect())
    }

    /// [`Noise::fill`] through the portable scalar fallback (the same method without SIMD
    /// intrinsics), whatever the CPU: for tests and benchmarks of that path.
    pub fn fill_scalar(&self, region: &Region, out: &mut [f32]) -> Result<(f32, f32), NoiseError> {
        self.fill_with(region, out, SimdLevel::Scalar)
    }

    /// The instruction set [`Noise::fill`] uses on this CPU: `"avx2+fma"` or `"scalar"`.
    pub fn bulk_simd_level() -> &'static str {
        match SimdLevel::detect() {
            SimdLevel::Avx2Fma => "avx2+fma",
            SimdLevel::Scalar => "scalar",
        }
    }

    /// [`Noise::fill`] with a chosen SIMD level (downgraded to [`SimdLevel::Scalar`] when the
    /// CPU lacks it).
    fn fill_with(
        &self,
        region: &Region,
        out: &mut [f32],
        level: SimdLevel,
    ) -> Result<(f32, f32), NoiseError> {
        check_region(region, out.len())?;
        let level = level.supported();
        let spec = self.spec();
        let lattice_kind = matches!(
            spec.kind,
            NoiseKind::White
                | NoiseKind::Value
                | NoiseKind::PerlinAngle
                | NoiseKind::PerlinTable
                | NoiseKind::Perlin
        );
        if spec.warp == 0.0 && lattice_kind {
            Ok(fill_lattice(self, region, out, level))
        } else if spec.warp == 0.0 && spec.kind == NoiseKind::OpenSimplex2 {
            Ok(simplex::fill_simplex(self, region, out, level))
        } else {
            Ok(fill_points(self, region, out))
        }
    }
}

/// Rejects regions that cannot be filled into a buffer of `len` samples.
fn check_region(region: &Region, len: usize) -> Result<(), NoiseError> {
    for (name, v) in [
        ("region.x0", region.x0),
        ("region.y0", region.y0),
        ("region.dx", region.dx),
        ("region.dy", region.dy),
    ] {
        if !v.is_finite() {
            return Err(NoiseError::invalid(name, v, "a finite number"));
        }
    }
    for (name, v) in [("region.width", region.width), ("region.height", region.height)] {
        if v == 0 {
            return Err(NoiseError::invalid(name, v, "at least 1 sample"));
        }
    }
    let expected = region
        .width
        .checked_mul(region.height)
        .ok_or_else(|| NoiseError::invalid("region.width", region.width, "width·height within usize"))?;
    if len != expected {
        return Err(NoiseError::BufferSize { expected, got: len });
    }
    Ok(())
}

/// Runs `fill_band(first_row, band) -> (min, max)` over bands of [`BAND_ROWS`] rows in
/// parallel and reduces the per-band `(min, max)`.
fn for_bands<F>(region: &Region, out: &mut [f32], fill_band: F) -> (f32, f32)
where
    F: Fn(usize, &mut [f32]) -> (f32, f32) + Sync,
{
    out.par_chunks_mut(region.width * BAND_ROWS)
        .enumerate()
        .map(|(b, band)| fill_band(b * BAND_ROWS, band))
        .reduce(|| (f32::INFINITY, f32::NEG_INFINITY), |a, b| (a.0.min(b.0), a.1.max(b.1)))
}

/// A running `(min, max)` kept in [`LANES`] independent lanes, so that updating it
/// vectorises.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Extremes {
    lo: [f32; LANES],
    hi: [f32; LANES],
}

impl Extremes {
    pub(crate) fn new() -> Self {
        Self { lo: [f32::INFINITY; LANES], hi: [f32::NEG_INFINITY; LANES] }
    }

    /// Takes `values` into account.
    #[inline(always)]
    pub(crate) fn update(&mut self, values: &[f32]) {
        let mut chunks = values.chunks_exact(LANES);
        for c in &mut chunks {
            for ((lo, hi), &v) in self.lo.iter_mut().zip(self.hi.iter_mut()).zip(c) {
                *lo = if v < *lo { v } else { *lo };
                *hi = if v > *hi { v } else { *hi };
            }
        }
        for (k, &v) in chunks.remainder().iter().enumerate() {
            self.lo[k] = self.lo[k].min(v);
            self.hi[k] = self.hi[k].max(v);
        }
    }

    /// The `(min, max)` seen so far.
    pub(crate) fn get(&self) -> (f32, f32) {
        (
            self.lo.iter().copied().fold(f32::INFINITY, f32::min),
            self.hi.iter().copied().fold(f32::NEG_INFINITY, f32::max),
        )
    }
}

/// Sample-space x of column `i`.
#[inline]
fn column_x(region: &Region, i: usize) -> f64 {
    region.x0 + i as f64 * region.dx
}

/// Sample-space y of row `j`.
#[inline]
fn row_y(region: &Region, j: usize) -> f64 {
    region.y0 + j as f64 * region.dy
}

/// The generic path: the point evaluation at every sample, rayon over bands.
fn fill_points(noise: &Noise, region: &Region, out: &mut [f32]) -> (f32, f32) {
    for_bands(region, out, |first_row, band| {
        for (r, row) in band.chunks_mut(region.width).enumerate() {
            let y = row_y(region, first_row + r);
            for (i, v) in row.iter_mut().enumerate() {
                *v = noise.get2(column_x(region, i), y) as f32;
            }
        }
        let mut ext = Extremes::new();
        ext.update(band);
        ext.get()
    })
}

/// The fractal recurrence in f32 over whole rows (the same formulas as
/// [`crate::fractal::Combiner`], which works in f64 per sample).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowCombiner {
    fractal: FractalKind,
    offset: f32,
    gain: f32,
    /// `1 / norm` of the point path's combiner.
    inv_norm: f32,
}

impl RowCombiner {
    pub(crate) fn new(noise: &Noise) -> Self {
        let fractal = noise.spec().fractal;
        let musgrave = noise.musgrave();
        let (lo, hi) = noise.base_range();
        let combiner = Combiner::new(fractal, musgrave, noise.octaves(), lo.abs().max(hi.abs()));
        // The point path's normaliser, read back through its own code: a first octave of
        // weight 1 whose contribution is exactly 1, then `finish`.
        let unit = match fractal {
            FractalKind::Ridged => musgrave.offset + 1.0,
            FractalKind::Hybrid => 1.0 - musgrave.offset,
            _ => 1.0,
        };
        let mut acc = Acc::default();
        combiner.add(&mut acc, 0, 1.0, unit);
        Self {
            fractal,
            offset: musgrave.offset as f32,
            gain: musgrave.gain as f32,
            inv_norm: combiner.finish(&acc) as f32,
        }
    }

    /// Adds octave `i` of weight `w` with samples `n` into the running sums `r` and states `s`.
    #[inline(always)]
    pub(crate) fn add(&self, i: usize, w: f32, n: &[f32], r: &mut [f32], s: &mut [f32]) {
        let off = self.offset;
        match (self.fractal, i) {
            (FractalKind::None | FractalKind::Fbm, 0) => {
                r.iter_mut().zip(n).for_each(|(r, &n)| *r = w * n);
            }
            (FractalKind::None | FractalKind::Fbm, _) => {
                r.iter_mut().zip(n).for_each(|(r, &n)| *r += w * n);
            }
            (FractalKind::Billow, 0) => {
                r.iter_mut().zip(n).for_each(|(r, &n)| *r = w * (2.0 * n.abs() - 1.0));
            }
            (FractalKind::Billow, _) => {
                r.iter_mut().zip(n).for_each(|(r, &n)| *r += w * (2.0 * n.abs() - 1.0));
            }
            (FractalKind::Ridged, 0) => {
                for ((r, s), &n) in r.iter_mut().zip(s.iter_mut()).zip(n) {
                    let base = (off - n.abs()) * (off - n.abs());
                    *s = base;
                    *r = base * w;
                }
            }
            (FractalKind::Ridged, _) => {
                let gain = self.gain;
                for ((r, s), &n) in r.iter_mut().zip(s.iter_mut()).zip(n) {
                    let base = (off - n.abs()) * (off - n.abs());
                    let weight = (*s * gain).clamp(0.0, 1.0);
                    *s = base * weight;
                    *r += *s * w;
                }
            }
            (FractalKind::Hybrid, 0) => {
                for ((r, s), &n) in r.iter_mut().zip(s.iter_mut()).zip(n) {
                    let signal = (n + off) * w;
                    *r = signal;
                    *s = signal;
                }
            }
            (FractalKind::Hybrid, _) => {
                for ((r, s), &n) in r.iter_mut().zip(s.iter_mut()).zip(n) {
                    let signal = (n + off) * w;
                    let weight = s.min(1.0);
                    *r += weight * signal;
                    *s = weight * signal;
                }
            }
        }
    }

    /// Writes the normalised output of the running sums and takes it into `ext`.
    #[inline(always)]
    pub(crate) fn finish(&self, r: &[f32], out: &mut [f32], ext: &mut Extremes) {
        let k = self.inv_norm;
        out.iter_mut().zip(r).for_each(|(o, &r)| *o = r * k);
        ext.update(out);
    }
}

/// The gradients of the tutorial's table (seed 002, as in `perlin-table`): 4 diagonals of
/// length 1, then the 4 axes.
fn tutorial_gradients() -> [[f32; 2]; 8] {
    let d = (1.0 / 2f64.sqrt()) as f32;
    [[d, d], [-d, d], [d, -d], [-d, -d], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]]
}

/// The bulk description of octave `o` of a square-lattice noise.
fn lattice_octave<'a>(noise: &'a Noise, octave: usize) -> LatticeOctave<'a> {
    use crate::hash::{hash2, to_signed_unit, wrap};
    let o = noise.octaves()[octave];
    let period = o.period;
    let seed = noise.hash_seed();
    let perm = noise.permutation();
    let corner_row = match noise.spec().kind {
        NoiseKind::White | NoiseKind::Value => corner_rows(move |c, r| {
            [0.0, 0.0, to_signed_unit(hash2(seed, wrap(c, period), wrap(r, period))) as f32]
        }),
        NoiseKind::PerlinAngle => {
            let grads = noise.angle_gradients().map(|g| [g[0] as f32, g[1] as f32]);
            corner_rows(move |c, r| {
                let g = grads[(hash2(seed, wrap(c, period), wrap(r, period)) >> 24) as usize];
                [g[0], g[1], 0.0]
            })
        }
        NoiseKind::PerlinTable => {
            let table = tutorial_gradients();
            corner_rows(move |c, r| {
                let ii = (wrap(c, period) & 255) as usize;
                let jj = (wrap(r, period) & 255) as usize;
                let g = table[usize::from(perm[ii + usize::from(perm[jj])]) % 8];
                [g[0], g[1], 0.0]
            })
        }
        _ => {
            // Improved Perlin 2D: gradient IMPROVED2_GRADIENTS[perm[perm[X] + Y] & 15].
            let grads = crate::perlin::IMPROVED2_GRADIENTS.map(|g| [g[0] as f32, g[1] as f32]);
            corner_rows(move |c, r| {
                let x = (wrap(c, period) & 255) as usize;
                let y = (wrap(r, period) & 255) as usize;
                let g = grads[crate::perlin::improved2_index(perm, x, y)];
                [g[0], g[1], 0.0]
            })
        }
    };
    let fade = match noise.spec().kind {
        NoiseKind::White => Fade::Step,
        NoiseKind::Perlin => Fade::Quintic,
        _ => Fade::Smooth,
    };
    LatticeOctave {
        to_lattice_x: Box::new(move |x| noise.lattice2(x, 0.0)[0] * o.scale + o.offset[0]),
        to_lattice_y: Box::new(move |y| noise.lattice2(0.0, y)[1] * o.scale + o.offset[1]),
        corner_row,
        fade,
    }
}

/// Per-band scratch rows of the lattice path.
struct LatticeScratch {
    states: Vec<RowState>,
    n: Vec<f32>,
    r: Vec<f32>,
    s: Vec<f32>,
}

/// Everything the lattice path shares between bands.
struct LatticeJob<'a> {
    octaves: Vec<LatticeOctave<'a>>,
    plans: Vec<ColumnPlan>,
    weights: Vec<f32>,
    combiner: RowCombiner,
    width: usize,
}

impl LatticeJob<'_> {
    /// One output row at sample-space `y`: every octave through `kernel`, then the fractal.
    #[inline(always)]
    fn row<K>(&self, sc: &mut LatticeScratch, y: f64, out: &mut [f32], ext: &mut Extremes, kernel: K)
    where
        K: Fn(&ColumnPlan, &RowState, &mut [f32]),
    {
        for (i, ((oct, plan), st)) in
            self.octaves.iter().zip(&self.plans).zip(sc.states.iter_mut()).enumerate()
        {
            st.prepare(oct, plan, y);
            kernel(plan, st, &mut sc.n);
            self.combiner.add(i, self.weights[i], &sc.n, &mut sc.r, &mut sc.s);
        }
        self.combiner.finish(&sc.r[..self.width], out, ext);
    }

    fn row_scalar(&self, sc: &mut LatticeScratch, y: f64, out: &mut [f32], ext: &mut Extremes) {
        self.row(sc, y, out, ext, |plan, st, n| lattice::row_scalar(plan, st, 0..n.len(), n));
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn row_avx2(&self, sc: &mut LatticeScratch, y: f64, out: &mut [f32], ext: &mut Extremes) {
        self.row(sc, y, out, ext, |plan, st, n| {
            // SAFETY: the caller checked AVX2 and FMA; `n` covers the whole padded row.
            unsafe { lattice::row_avx2(plan, st, 0..n.len(), n) }
        });
    }
}

/// The square-lattice path (see [`lattice`]).
fn fill_lattice(noise: &Noise, region: &Region, out: &mut [f32], level: SimdLevel) -> (f32, f32) {
    let octaves: Vec<LatticeOctave<'_>> =
        (0..noise.octaves().len()).map(|k| lattice_octave(noise, k)).collect();
    let plans: Vec<ColumnPlan> =
        octaves.iter().map(|o| ColumnPlan::new(o, region.width, |i| column_x(region, i))).collect();
    let job = LatticeJob {
        weights: noise.octaves().iter().map(|o| o.weight as f32).collect(),
        combiner: RowCombiner::new(noise),
        width: region.width,
        octaves,
        plans,
    };
    let padded = region.width.div_ceil(LANES) * LANES;
    for_bands(region, out, |first_row, band| {
        let mut sc = LatticeScratch {
            states: job.octaves.iter().map(|_| RowState::default()).collect(),
            n: vec![0.0; padded],
            r: vec![0.0; padded],
            s: vec![0.0; padded],
        };
        let mut ext = Extremes::new();
        for (k, row) in band.chunks_mut(region.width).enumerate() {
            let y = row_y(region, first_row + k);
            match level {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `level` was checked against the CPU (`SimdLevel::supported`).
                SimdLevel::Avx2Fma => unsafe { job.row_avx2(&mut sc, y, row, &mut ext) },
                _ => job.row_scalar(&mut sc, y, row, &mut ext),
            }
        }
        ext.get()
    })
}
