//! Bulk fill of a region: SIMD kernels with runtime CPU dispatch, rayon over bands of rows.
//!
//! [`Noise::fill`] computes the same function as the point path
//! ([`NoiseFn::get2`](crate::NoiseFn::get2)) on every sample of a [`Region`], within 1e-6
//! (outputs are f32; the lattice cell of every sample is still found in f64/i64, so regions far
//! from the origin, |q| up to 1e7 lattice units and beyond, keep full precision).
//!
//! Paths, chosen per noise:
//! - square-lattice kinds (white, value, perlin-angle, perlin-table, perlin) without warp: the
//!   row engine of [`lattice`] (per-column and per-lattice-row work hoisted, 3 multiply-adds
//!   per sample and octave), band by band and, inside a band, tile by tile of [`TILE`] columns so that the
//!   per-column plans of all octaves stay in the core's caches (see [`TILE`]);
//! - opensimplex2 without warp: the SIMD simplex kernel of [`simplex`];
//! - everything else (worley, any warp): a row-parallel loop over the point path.
//!
//! The fractal (fbm, billow, ridged, hybrid) is applied per octave over rows, in f32, with the
//! same recurrences as [`crate::fractal`]; fbm is accumulated by the row kernels themselves.
//!
//! # SIMD levels and dispatch
//! The row kernels are written once, generic over the small vector instruction set of
//! [`lanes`], and instantiated for:
//! - AVX2, 8 f32 lanes (`avx2`);
//! - AVX-512F, 16 f32 lanes (`avx512`);
//! - a 16-lane emulation with two AVX2 vectors, used only by the tests: it runs the 16-lane
//!   logic of the AVX-512 instantiation (padding to 16, row tails, 16-value windows, 16-entry
//!   tables, masks) on AVX2 hardware;
//! - and portable code (`scalar`, [`Noise::fill_scalar`]; the only level on aarch64, wasm32
//!   and other targets): the same kernels in 8 lanes of plain arrays ([`lanes::Portable`]).
//!
//! # The same bytes on every path and platform
//! Every lane operation is exactly rounded the same way in every implementation, and no
//! multiply-add is ever fused (FMA is not in the baseline of x86-64 or wasm32, where it would be
//! a slow software call; fusing on some targets only would change bits), so the scalar, AVX2,
//! AVX-512 and emulated 16-lane kernels give the same bits on x86-64, aarch64 and wasm32. The
//! f64 parts (lattice coordinates, fades, gradient tables, octave weights) use basic IEEE
//! operations and [`crate::detmath`], never the platform's libm. Tested: every level equals
//! the scalar level bit for bit for every kind, fractal, row width and sample spacing
//! (`bulk::tests`), and `scripts/check-platforms.sh` compares SHA-256 sums of fills on x86-64,
//! aarch64 (qemu) and wasm32 (Node).
//!
//! **The AVX-512 instantiation compiles, and its 16-lane logic is tested through the
//! emulation, but it has not been executed on AVX-512 hardware** (the development machine, an
//! AMD EPYC Zen 3, lacks AVX-512, and no emulator at hand runs it). Hence a self-check: the
//! first time a process would use it, the AVX-512 kernels fill a few small fixed regions
//! (every kernel path) and must match the AVX2 kernels bit for bit; if they do not, the process
//! uses AVX2 instead.
//!
//! The level is chosen once per process, at the first fill: AVX-512F (+ AVX2) detected
//! at run time and self-checked → `avx512`; else AVX2 → `avx2`; else `scalar` (the
//! crate is built for baseline x86-64). [`Noise::bulk_simd_level`] reports it. The
//! environment variable **`TERRASYNTH_SIMD`** overrides the choice: `scalar`, `avx2` or
//! `avx512` force that level, `auto` (or unset, or empty) detects; an unknown value, a level
//! the CPU lacks, or `avx512` failing its self-check make [`Noise::fill`] return
//! [`NoiseError::InvalidParameter`] naming `TERRASYNTH_SIMD` (and
//! [`Noise::bulk_simd_level`] return `"invalid TERRASYNTH_SIMD"`).
//!
//! Determinism: rows are split into bands of at most [`BAND_ROWS`] rows (fewer for short
//! regions, so that every thread gets work); every sample is
//! computed by the same arithmetic whatever the band, the column tile, the thread or the
//! region tile it falls in, so the output is bit-identical for any thread count and a region
//! filled in tiles equals the region filled whole (for tile origins that are exact in f64).

mod lanes;
mod lattice;
mod simplex;
#[cfg(all(test, target_arch = "x86_64"))]
mod tests;

use std::cell::Cell;
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::fractal::{Acc, Combiner};
use crate::spec::{FractalKind, NoiseKind};
use crate::{CellRegion, Noise, NoiseError, NoiseFn, Region};

#[cfg(target_arch = "x86_64")]
use lanes::{Avx2, Avx2x2, Avx512};
use lanes::{Lanes, Portable};
use lattice::{ColumnPlan, Fade, LatticeOctave, RowCoord, RowState, Write, corner_rows};

/// Rows per rayon task (at most; see [`rows_per_band`]).
pub(crate) const BAND_ROWS: usize = 16;

/// Columns per tile of the lattice path: a band is computed tile by tile, so that the column
/// plans of every octave of a tile (12 bytes per column and octave) and the tile's scratch
/// rows stay in the core's L1/L2 caches across the band's rows instead of streaming a whole
/// row's plans (≈ 400 KB for 8 octaves of 4096 columns) per output row. A multiple of every
/// lane count. Output bits do not depend on it.
const TILE: usize = 512;

/// Name of the environment variable that forces a SIMD level.
pub(crate) const SIMD_ENV: &str = "TERRASYNTH_SIMD";

/// Which instruction set the bulk kernels use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum SimdLevel {
    /// Portable code: the same kernels in [`Portable`] lanes, no intrinsics (every platform).
    Scalar,
    /// 8 f32 lanes with AVX2 (x86-64).
    Avx2,
    /// 16 f32 lanes emulated with two AVX2 vectors: the 16-lane logic of [`SimdLevel::Avx512`]
    /// on AVX2 hardware, for tests (never chosen by detection).
    #[cfg_attr(not(test), allow(dead_code))]
    Avx2x2,
    /// 16 f32 lanes with AVX-512F.
    Avx512,
}

impl SimdLevel {
    /// Name reported by [`Noise::bulk_simd_level`].
    fn name(self) -> &'static str {
        match self {
            SimdLevel::Scalar => "scalar",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx2x2 => "avx2x2",
            SimdLevel::Avx512 => "avx512",
        }
    }

    /// f32 lanes per vector (the scalar path plans for 8).
    pub(crate) fn lanes(self) -> usize {
        match self {
            SimdLevel::Scalar | SimdLevel::Avx2 => 8,
            SimdLevel::Avx2x2 | SimdLevel::Avx512 => 16,
        }
    }

    /// Whether this CPU can run the level.
    fn available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        return match self {
            SimdLevel::Scalar => true,
            SimdLevel::Avx2 => Avx2::new().is_some(),
            SimdLevel::Avx2x2 => Avx2x2::new().is_some(),
            SimdLevel::Avx512 => Avx512::new().is_some(),
        };
        #[cfg(not(target_arch = "x86_64"))]
        return self == SimdLevel::Scalar;
    }
}

/// The level [`Noise::fill`] uses, chosen once per process: [`SIMD_ENV`] if set, else the
/// best level of the CPU (AVX-512 only if it passes [`kernels_agree`] against AVX2).
fn active_level() -> Result<SimdLevel, NoiseError> {
    static ACTIVE: OnceLock<Result<SimdLevel, NoiseError>> = OnceLock::new();
    ACTIVE
        .get_or_init(|| {
            let value = std::env::var_os(SIMD_ENV).map(|v| v.to_string_lossy().into_owned());
            choose_level(value.as_deref(), SimdLevel::available, || {
                kernels_agree(SimdLevel::Avx512, SimdLevel::Avx2)
            })
        })
        .clone()
}

/// The level for a [`SIMD_ENV`] value (`None`: unset), given which levels the CPU has and a
/// self-check of the AVX-512 kernels (run only when AVX-512 would be used).
///
/// Unset, empty or `auto`: the best available level, AVX-512 only if `avx512_ok()`, else
/// AVX2, else scalar. `scalar`, `avx2`, `avx512` force a level; forcing one the CPU lacks,
/// or `avx512` when its self-check fails, is an error, as is any other value.
fn choose_level(
    value: Option<&str>,
    available: impl Fn(SimdLevel) -> bool,
    avx512_ok: impl FnOnce() -> bool,
) -> Result<SimdLevel, NoiseError> {
    const ALLOWED: &str = "one of `scalar`, `avx2`, `avx512`, `auto` (or unset)";
    let unsupported = |what: &str| NoiseError::invalid(SIMD_ENV, value.unwrap_or(""), what.to_string());
    match value.map(str::trim) {
        None | Some("" | "auto") => Ok(if available(SimdLevel::Avx512) && avx512_ok() {
            SimdLevel::Avx512
        } else if available(SimdLevel::Avx2) {
            SimdLevel::Avx2
        } else {
            SimdLevel::Scalar
        }),
        Some("scalar") => Ok(SimdLevel::Scalar),
        Some("avx2") if available(SimdLevel::Avx2) => Ok(SimdLevel::Avx2),
        Some("avx2") => Err(unsupported("a level this CPU supports (it lacks AVX2)")),
        Some("avx512") if !available(SimdLevel::Avx512) => {
            Err(unsupported("a level this CPU supports (it lacks AVX-512F)"))
        }
        Some("avx512") if !avx512_ok() => Err(unsupported(
            "a level whose kernels work here (the AVX-512 kernels disagree with the AVX2 kernels \
             on this CPU: please report it; use `avx2`)",
        )),
        Some("avx512") => Ok(SimdLevel::Avx512),
        Some(_) => Err(unsupported(ALLOWED)),
    }
}

/// The self-check of a SIMD level: `a` and `b` fill a few small fixed regions (every kernel
/// path: lattice with the fused fbm and the combiner, window and gather fetches, row tails,
/// opensimplex2) with exactly the same bits and min/max. Used once per process before the
/// AVX-512 kernels are trusted (against AVX2, which this crate's tests check on real
/// hardware).
fn kernels_agree(a: SimdLevel, b: SimdLevel) -> bool {
    if !a.available() || !b.available() {
        return false;
    }
    const SPECS: [&str; 5] = [
        "kind = \"perlin\", seed = 7, fractal = \"fbm\", octaves = 6, frequency = 0.3",
        "kind = \"value\", seed = 7, fractal = \"ridged\", octaves = 3, frequency = 0.9",
        "kind = \"perlin-angle\", seed = 7, frequency = 1.7",
        "kind = \"opensimplex2\", seed = 7, fractal = \"fbm\", octaves = 4, frequency = 0.2",
        "kind = \"opensimplex2\", seed = 7, fractal = \"billow\", octaves = 2, frequency = 0.7",
    ];
    let region = Region { x0: -5.3, y0: 2.9, dx: 0.71, dy: 0.53, width: 45, height: 5 };
    let was = SEQUENTIAL.with(|s| s.replace(true));
    let agree = SPECS.iter().all(|text| {
        let Ok(noise) = crate::NoiseSpec::from_inline_toml(text).and_then(|s| s.build()) else {
            return false;
        };
        let mut out_a = vec![0.0; region.width * region.height];
        let mut out_b = out_a.clone();
        let (Ok(ra), Ok(rb)) =
            (noise.fill_with(&region, &mut out_a, a), noise.fill_with(&region, &mut out_b, b))
        else {
            return false;
        };
        ra == rb && out_a.iter().zip(&out_b).all(|(x, y)| x.to_bits() == y.to_bits())
    });
    SEQUENTIAL.with(|s| s.set(was));
    agree
}

impl Noise {
    /// Fills `out` (row-major, `region.width` columns, `region.height` rows) with the noise at
    /// every sample of `region`, and returns the `(min, max)` of the values written.
    ///
    /// Equals [`NoiseFn::get2`](crate::NoiseFn::get2) at `(x0 + i·dx, y0 + j·dy)` within 1e-6;
    /// uses every rayon thread and the best SIMD level of the CPU ([`Noise::bulk_simd_level`]),
    /// or the level forced by the environment variable `TERRASYNTH_SIMD` (see the
    /// [crate docs](crate#bulk-fill-and-simd)).
    ///
    /// Errors: [`NoiseError::BufferSize`] when `out.len() != width·height`;
    /// [`NoiseError::InvalidParameter`] for an empty region or a non-finite origin or spacing,
    /// or when `TERRASYNTH_SIMD` is set to an unknown level or one this CPU cannot run.
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
        self.fill_with(region, out, active_level()?)
    }

    /// [`Noise::fill`] through the portable scalar fallback (the same method without SIMD
    /// intrinsics), whatever the CPU: for tests and benchmarks of that path.
    pub fn fill_scalar(&self, region: &Region, out: &mut [f32]) -> Result<(f32, f32), NoiseError> {
        self.fill_with(region, out, SimdLevel::Scalar)
    }

    /// The instruction set [`Noise::fill`] uses in this process: `"avx512"`, `"avx2"` or
    /// `"scalar"`; `"invalid TERRASYNTH_SIMD"` when that variable holds a level that cannot be
    /// used (then [`Noise::fill`] returns the error).
    pub fn bulk_simd_level() -> &'static str {
        active_level().map_or("invalid TERRASYNTH_SIMD", SimdLevel::name)
    }

    /// Fills `out` (row-major, `cells.width` columns, `cells.height` rows) with the noise at
    /// every cell of `cells`, and returns the `(min, max)` of the values written.
    ///
    /// Cell `(col0 + i, row0 + j)` is sampled at `x = (col0 + i)·scale_x + offset_x`,
    /// `y = (row0 + j)·scale_y + offset_y`: the integer cell is converted to f64 exactly
    /// (|cell| ≤ 2^53), then one rounded multiplication and one rounded addition. So the value
    /// of a cell depends on the cell alone, never on the window it is filled in: **any window
    /// equals the same cells cut from any larger window, bit for bit** (the world windows of
    /// `terrasynth`). Same kernels, speed and SIMD levels as [`Noise::fill`].
    ///
    /// Errors: [`NoiseError::BufferSize`] when `out.len() != width·height`;
    /// [`NoiseError::InvalidParameter`] for an empty window, a non-finite scale or offset, a
    /// cell beyond ±2^53, or an invalid `TERRASYNTH_SIMD`.
    ///
    /// ```
    /// use terrasynth_noise::{CellRegion, NoiseSpec};
    /// let noise = NoiseSpec::from_inline_toml("kind = \"perlin\", fractal = \"fbm\"")?.build()?;
    /// let big = CellRegion { col0: -10, row0: 5, width: 9, height: 4, scale_x: 0.1, scale_y: 0.1,
    ///     offset_x: 0.0, offset_y: 0.0 };
    /// let mut whole = vec![0.0; 36];
    /// noise.fill_cells(&big, &mut whole)?;
    /// // The 3×2 window at cell (-7, 6) is the crop of the larger window.
    /// let small = CellRegion { col0: -7, row0: 6, width: 3, height: 2, ..big };
    /// let mut part = vec![0.0; 6];
    /// noise.fill_cells(&small, &mut part)?;
    /// assert_eq!(part[..3], whole[9 + 3..9 + 6]);
    /// assert_eq!(part[3..], whole[18 + 3..18 + 6]);
    /// # Ok::<(), terrasynth_noise::NoiseError>(())
    /// ```
    pub fn fill_cells(&self, cells: &CellRegion, out: &mut [f32]) -> Result<(f32, f32), NoiseError> {
        self.fill_cells_with(cells, out, active_level()?)
    }

    /// [`Noise::fill_cells`] with a chosen SIMD level.
    pub(crate) fn fill_cells_with(
        &self,
        cells: &CellRegion,
        out: &mut [f32],
        level: SimdLevel,
    ) -> Result<(f32, f32), NoiseError> {
        check_cells(cells, out.len())?;
        Ok(self.fill_samples(&Samples::from(cells), out, level))
    }

    /// [`Noise::fill`] with a chosen SIMD level (downgraded to [`SimdLevel::Scalar`] when the
    /// CPU lacks it).
    pub(crate) fn fill_with(
        &self,
        region: &Region,
        out: &mut [f32],
        level: SimdLevel,
    ) -> Result<(f32, f32), NoiseError> {
        check_region(region, out.len())?;
        Ok(self.fill_samples(&Samples::from(region), out, level))
    }

    /// Fills checked samples at `level` (downgraded to [`SimdLevel::Scalar`] when the CPU
    /// lacks it).
    fn fill_samples(&self, region: &Samples, out: &mut [f32], level: SimdLevel) -> (f32, f32) {
        let level = if level.available() { level } else { SimdLevel::Scalar };
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
            fill_lattice(self, region, out, level)
        } else if spec.warp == 0.0 && spec.kind == NoiseKind::OpenSimplex2 {
            simplex::fill_simplex(self, region, out, level)
        } else {
            fill_points(self, region, out)
        }
    }
}

/// Rejects cell windows that cannot be filled into a buffer of `len` samples.
fn check_cells(cells: &CellRegion, len: usize) -> Result<(), NoiseError> {
    let finite = [
        ("cells.scale_x", cells.scale_x),
        ("cells.scale_y", cells.scale_y),
        ("cells.offset_x", cells.offset_x),
        ("cells.offset_y", cells.offset_y),
    ];
    check_shape(finite, [("cells.width", cells.width), ("cells.height", cells.height)], len)?;
    // Every cell index, first and last, must convert to f64 exactly.
    const MAX_CELL: i64 = 1 << 53;
    let inside = |c: i64| (-MAX_CELL..=MAX_CELL).contains(&c);
    for (name, first, n) in
        [("cells.col0", cells.col0, cells.width), ("cells.row0", cells.row0, cells.height)]
    {
        let last = i64::try_from(n - 1).ok().and_then(|d| first.checked_add(d));
        if !inside(first) || !last.is_some_and(inside) {
            return Err(NoiseError::invalid(name, first, "a window whose cells are within ±2^53"));
        }
    }
    Ok(())
}

/// Rejects regions that cannot be filled into a buffer of `len` samples.
fn check_region(region: &Region, len: usize) -> Result<(), NoiseError> {
    let finite = [
        ("region.x0", region.x0),
        ("region.y0", region.y0),
        ("region.dx", region.dx),
        ("region.dy", region.dy),
    ];
    check_shape(finite, [("region.width", region.width), ("region.height", region.height)], len)
}

/// The checks every fill shares: `finite` numbers are finite, `[width, height]` are ≥ 1 and
/// their product is `len`.
fn check_shape(
    finite: [(&'static str, f64); 4],
    [width, height]: [(&'static str, usize); 2],
    len: usize,
) -> Result<(), NoiseError> {
    if let Some(&(name, v)) = finite.iter().find(|(_, v)| !v.is_finite()) {
        return Err(NoiseError::invalid(name, v, "a finite number"));
    }
    if let Some(&(name, v)) = [width, height].iter().find(|(_, v)| *v == 0) {
        return Err(NoiseError::invalid(name, v, "at least 1 sample"));
    }
    let expected = width
        .1
        .checked_mul(height.1)
        .ok_or_else(|| NoiseError::invalid(width.0, width.1, "width·height within usize"))?;
    if len != expected {
        return Err(NoiseError::BufferSize { expected, got: len });
    }
    Ok(())
}

/// Runs `fill_band(first_row, band) -> (min, max)` over bands of [`BAND_ROWS`] rows in
/// parallel (on the calling thread during the SIMD self-check, see [`SEQUENTIAL`]) and
/// reduces the per-band `(min, max)`.
fn for_bands<F>(region: &Samples, out: &mut [f32], fill_band: F) -> (f32, f32)
where
    F: Fn(usize, &mut [f32]) -> (f32, f32) + Sync,
{
    let merge = |a: (f32, f32), b: (f32, f32)| (a.0.min(b.0), a.1.max(b.1));
    let none = (f32::INFINITY, f32::NEG_INFINITY);
    if SEQUENTIAL.with(Cell::get) {
        return out
            .chunks_mut(region.width * BAND_ROWS)
            .enumerate()
            .map(|(b, band)| fill_band(b * BAND_ROWS, band))
            .fold(none, merge);
    }
    let rows = rows_per_band(region.height, rayon::current_num_threads());
    out.par_chunks_mut(region.width * rows)
        .enumerate()
        .map(|(b, band)| fill_band(b * rows, band))
        .reduce(|| none, merge)
}

/// Rows per rayon task: [`BAND_ROWS`], or fewer for a short region so that every one of
/// `threads` threads gets work (a 16-row strip on 2 threads: 2 tasks of 8 rows; issue 11 part
/// 7). Output bits do not depend on it.
fn rows_per_band(height: usize, threads: usize) -> usize {
    // Each band recomputes its lattice corner rows: split no finer than one band per thread.
    height.div_ceil(threads.max(1)).clamp(1, BAND_ROWS)
}

thread_local! {
    /// Set while this thread runs the SIMD self-check: [`for_bands`] then stays on the calling
    /// thread. The check runs inside the one-time initialisation of the SIMD level; were it to
    /// wait on rayon jobs, this thread could steal a caller's task that fills too and re-enter
    /// that initialisation.
    static SEQUENTIAL: Cell<bool> = const { Cell::new(false) };
}

/// A bulk path that fills bands of rows in vectors of any [`Lanes`] (the `scalar` level:
/// [`Portable`]).
pub(crate) trait BandJob: Sync {
    /// Fills the band starting at row `first_row` with the kernels in `V` lanes. Implementations must be
    /// `#[inline(always)]` (and so must every closure and function between them and the
    /// intrinsics): they are compiled inside the `#[target_feature]` functions of
    /// [`fill_bands`], and an outlined piece would lose those features and turn every
    /// intrinsic into a call.
    fn band_simd<V: Lanes>(&self, v: V, first_row: usize, band: &mut [f32]) -> (f32, f32);
}

/// Runs `job` over the bands of `region` (rayon) at `level`, which must be available on this
/// CPU, and returns the `(min, max)` of `out`.
fn fill_bands<J: BandJob>(job: &J, region: &Samples, out: &mut [f32], level: SimdLevel) -> (f32, f32) {
    for_bands(region, out, |first_row, band| match level {
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => {
            let v = Avx2::new().expect("level checked against the CPU");
            // SAFETY: the token proves AVX2.
            unsafe { band_avx2(job, v, first_row, band) }
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2x2 => {
            let v = Avx2x2::new().expect("level checked against the CPU");
            // SAFETY: the token proves AVX2.
            unsafe { band_avx2x2(job, v, first_row, band) }
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx512 => {
            let v = Avx512::new().expect("level checked against the CPU");
            // SAFETY: the token proves AVX-512F and AVX2.
            unsafe { band_avx512(job, v, first_row, band) }
        }
        _ => job.band_simd(Portable, first_row, band),
    })
}

/// [`BandJob::band_simd`] compiled for AVX2 (without FMA: the kernels never fuse, see
/// [`lanes`]; leaving the feature off also keeps the compiler from fusing anything).
///
/// # Safety
/// The CPU must support AVX2 (`v` proves it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn band_avx2<J: BandJob>(job: &J, v: Avx2, first_row: usize, band: &mut [f32]) -> (f32, f32) {
    job.band_simd(v, first_row, band)
}

/// [`BandJob::band_simd`] in 16 emulated lanes, compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2 (`v` proves it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn band_avx2x2<J: BandJob>(job: &J, v: Avx2x2, first_row: usize, band: &mut [f32]) -> (f32, f32) {
    job.band_simd(v, first_row, band)
}

/// [`BandJob::band_simd`] compiled for AVX-512F (+ AVX2).
///
/// # Safety
/// The CPU must support AVX-512F and AVX2 (`v` proves it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
unsafe fn band_avx512<J: BandJob>(job: &J, v: Avx512, first_row: usize, band: &mut [f32]) -> (f32, f32) {
    job.band_simd(v, first_row, band)
}

/// Independent lanes of [`Extremes`] (the widest vector).
const LANES: usize = lattice::MAX_LANES;

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
fn column_x(region: &Samples, i: usize) -> f64 {
    region.x.at(i)
}

/// Sample-space y of row `j`.
#[inline]
fn row_y(region: &Samples, j: usize) -> f64 {
    region.y.at(j)
}

/// How sample-space coordinates are laid out along one axis of a fill.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Axis {
    /// Sample `i` at `origin + i·step` ([`Region`]).
    Spaced { origin: f64, step: f64 },
    /// Sample `i` at `(first + i)·scale + offset`, the integer cell converted to f64 exactly
    /// ([`CellRegion`]): the coordinate depends on the cell only, not on the window.
    Cells { first: i64, scale: f64, offset: f64 },
}

impl Axis {
    /// The sample-space coordinate of sample `i`.
    #[inline]
    pub(crate) fn at(self, i: usize) -> f64 {
        match self {
            Axis::Spaced { origin, step } => origin + i as f64 * step,
            // One rounding for the product, one for the sum (never fused), on every platform.
            Axis::Cells { first, scale, offset } => (first + i as i64) as f64 * scale + offset,
        }
    }
}

/// The samples of one fill: a checked [`Region`] or [`CellRegion`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Samples {
    pub(crate) x: Axis,
    pub(crate) y: Axis,
    pub(crate) width: usize,
    pub(crate) height: usize,
}

impl From<&Region> for Samples {
    fn from(r: &Region) -> Self {
        Samples {
            x: Axis::Spaced { origin: r.x0, step: r.dx },
            y: Axis::Spaced { origin: r.y0, step: r.dy },
            width: r.width,
            height: r.height,
        }
    }
}

impl From<&CellRegion> for Samples {
    fn from(r: &CellRegion) -> Self {
        Samples {
            x: Axis::Cells { first: r.col0, scale: r.scale_x, offset: r.offset_x },
            y: Axis::Cells { first: r.row0, scale: r.scale_y, offset: r.offset_y },
            width: r.width,
            height: r.height,
        }
    }
}

/// The generic path: the point evaluation at every sample, rayon over bands.
fn fill_points(noise: &Noise, region: &Samples, out: &mut [f32]) -> (f32, f32) {
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

    /// [`RowCombiner::finish`] in vectors of `V` (the same bits: one multiplication per
    /// sample; min/max are exact).
    #[inline(always)]
    pub(crate) fn finish_simd<V: Lanes>(&self, v: V, r: &[f32], out: &mut [f32], ext: &mut Extremes) {
        assert!(r.len() == out.len() && V::N <= LANES);
        let k = v.splat(self.inv_norm);
        // Fresh accumulators (kept in registers), merged into `ext` after the loop.
        let (mut lo, mut hi) = (v.splat(f32::INFINITY), v.splat(f32::NEG_INFINITY));
        let done = out.len() - out.len() % V::N;
        let mut outs = out.chunks_exact_mut(V::N);
        // SAFETY: every chunk holds `N` values; `lanes` holds `LANES ≥ N`.
        unsafe {
            for (o, r) in (&mut outs).zip(r.chunks_exact(V::N)) {
                let x = v.mul(v.load(r.as_ptr()), k);
                v.store(o.as_mut_ptr(), x);
                lo = v.min(lo, x);
                hi = v.max(hi, x);
            }
            if done > 0 {
                // Every lane of `lo` and `hi` is now a sample value.
                let mut lanes = [0.0f32; LANES];
                v.store(lanes.as_mut_ptr(), lo);
                ext.update(&lanes[..V::N]);
                v.store(lanes.as_mut_ptr(), hi);
                ext.update(&lanes[..V::N]);
            }
            self.finish(&r[done..], outs.into_remainder(), ext);
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

/// One tile of columns of the lattice path: its first column, its width and one plan per
/// octave.
pub(crate) struct Tile {
    start: usize,
    width: usize,
    plans: Vec<ColumnPlan>,
}

/// What the column plans of a lattice fill depend on (besides the noise).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PlanKey {
    x: Axis,
    width: usize,
    lanes: usize,
}

/// The column plans of a noise's last lattice fill, reused by the next fill with the same
/// columns: a map filled strip by strip (16 rows at a time, issue 11 part 7) plans its columns
/// once instead of once per strip. One entry; a fill with other columns replaces it. Plans are
/// a pure function of the key and the noise, so reuse never changes a bit.
#[derive(Default)]
pub(crate) struct PlanCache(std::sync::Mutex<Option<(PlanKey, std::sync::Arc<Vec<Tile>>)>>);

impl PlanCache {
    /// The cached plans for `key`, or `make()`'s (then cached).
    fn get_or_make(&self, key: PlanKey, make: impl FnOnce() -> Vec<Tile>) -> std::sync::Arc<Vec<Tile>> {
        if let Ok(slot) = self.0.lock()
            && let Some((k, tiles)) = slot.as_ref()
            && *k == key
        {
            return tiles.clone();
        }
        let tiles = std::sync::Arc::new(make());
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some((key, tiles.clone()));
        }
        tiles
    }
}

impl Clone for PlanCache {
    /// A clone starts empty (plans are cheap to remake, and the lock is not shareable).
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for PlanCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlanCache")
    }
}

/// Everything the lattice path shares between bands.
struct LatticeJob<'a> {
    octaves: Vec<LatticeOctave<'a>>,
    tiles: std::sync::Arc<Vec<Tile>>,
    weights: Vec<f32>,
    combiner: RowCombiner,
    /// fbm (and no fractal) is a weighted sum: the kernel accumulates it directly.
    fused: bool,
    region: &'a Samples,
}

impl LatticeJob<'_> {
    /// One band of rows starting at row `first_row`, tile by tile; `kernel(plan, state, out,
    /// write)` computes one octave of one row of a tile.
    #[inline(always)]
    fn band<K, F>(&self, first_row: usize, band: &mut [f32], kernel: K, finish: F) -> (f32, f32)
    where
        K: Fn(&ColumnPlan, &RowState, &mut [f32], Write),
        F: Fn(&[f32], &mut [f32], &mut Extremes),
    {
        let width = self.region.width;
        let rows = band.len() / width;
        let cap = self.tiles.iter().map(|t| t.plans[0].padded_len()).max().unwrap_or(0);
        let mut states: Vec<RowState> = self.octaves.iter().map(|_| RowState::default()).collect();
        let mut n = vec![0.0f32; cap];
        let mut r = vec![0.0f32; cap];
        let mut s = vec![0.0f32; cap];
        let mut ext = Extremes::new();
        // The lattice row of every (row, octave) of the band, shared by its tiles.
        let coords: Vec<RowCoord> = (0..rows)
            .flat_map(|k| {
                let y = row_y(self.region, first_row + k);
                self.octaves.iter().map(move |o| RowCoord::new(o, y))
            })
            .collect();
        let per_row = self.octaves.len();
        for tile in self.tiles.iter() {
            states.iter_mut().for_each(RowState::invalidate);
            let p = tile.plans[0].padded_len();
            let (n, r, s) = (&mut n[..p], &mut r[..p], &mut s[..p]);
            for (k, coords) in coords.chunks_exact(per_row).enumerate() {
                let octaves = self.octaves.iter().zip(&tile.plans).zip(states.iter_mut());
                for (i, ((oct, plan), st)) in octaves.enumerate() {
                    st.prepare(oct, plan, coords[i]);
                    let w = self.weights[i];
                    if self.fused {
                        let write = if i == 0 { Write::Weighted(w) } else { Write::Accumulate(w) };
                        kernel(plan, st, r, write);
                    } else {
                        kernel(plan, st, n, Write::Value);
                        self.combiner.add(i, w, n, r, s);
                    }
                }
                let out = &mut band[k * width + tile.start..][..tile.width];
                finish(&r[..tile.width], out, &mut ext);
            }
        }
        ext.get()
    }
}

impl BandJob for LatticeJob<'_> {
    /// [`LatticeJob::band`] with the kernel in `V` lanes (inlined into the
    /// `#[target_feature]` functions of [`fill_bands`], so that `RowState::prepare` and the
    /// combiner loops are compiled for the same instruction set).
    #[inline(always)]
    fn band_simd<V: Lanes>(&self, v: V, first_row: usize, band: &mut [f32]) -> (f32, f32) {
        // `inline(always)` down to the intrinsics: an outlined closure would not have the
        // caller's target features, and its intrinsics would become calls.
        self.band(
            first_row,
            band,
            #[inline(always)]
            |plan, st, out, write| {
                // SAFETY: the plans were made for `V::N` lanes (`fill_lattice`), `out` has the
                // plan's padded length and `st` was just prepared for `plan`.
                unsafe { lattice::row_simd(v, plan, st, out, write) }
            },
            #[inline(always)]
            |r, out, ext| self.combiner.finish_simd(v, r, out, ext),
        )
    }
}

/// The square-lattice path (see [`lattice`]).
fn fill_lattice(noise: &Noise, region: &Samples, out: &mut [f32], level: SimdLevel) -> (f32, f32) {
    let octaves: Vec<LatticeOctave<'_>> =
        (0..noise.octaves().len()).map(|k| lattice_octave(noise, k)).collect();
    let key = PlanKey { x: region.x, width: region.width, lanes: level.lanes() };
    let tiles = noise.plan_cache().get_or_make(key, || {
        (0..region.width)
            .step_by(TILE)
            .map(|start| {
                let width = TILE.min(region.width - start);
                let plans = octaves
                    .iter()
                    .map(|o| ColumnPlan::new(o, width, level.lanes(), |i| column_x(region, start + i)))
                    .collect();
                Tile { start, width, plans }
            })
            .collect()
    });
    let combiner = RowCombiner::new(noise);
    let job = LatticeJob {
        weights: noise.octaves().iter().map(|o| o.weight as f32).collect(),
        fused: matches!(combiner.fractal, FractalKind::Fbm | FractalKind::None),
        combiner,
        octaves,
        tiles,
        region,
    };
    fill_bands(&job, region, out, level)
}
