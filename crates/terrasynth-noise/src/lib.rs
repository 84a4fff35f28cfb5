//! Deterministic noise functions for terrain: white, value, classic gradient (two forms),
//! improved Perlin (2002), OpenSimplex2, Worley, and fractals (fBm, ridged, hybrid, billow)
//! and domain warping over any of them, with tileable variants.
//!
//! Two evaluation paths that agree (see `tests/`):
//! - point evaluation through [`NoiseFn`] (`&self`, so one instance serves many threads), in
//!   f64: the reference;
//! - a bulk fill of a rectangular [`Region`] into a `&mut [f32]` (SIMD with runtime CPU
//!   dispatch, rayon over rows) that returns the min/max: [`Noise::fill`]; and the same fill
//!   over a window of integer cells, [`Noise::fill_cells`] with a [`CellRegion`], where each
//!   sample's coordinate depends on its cell only, so any window is bit-equal to the same
//!   cells of a larger window (endless worlds filled window by window).
//!
//! A noise is described by a plain serde [`NoiseSpec`] (flat, every field defaulted, parsed
//! from an inline TOML table) and validated once into a [`Noise`] by [`NoiseSpec::build`].
//! Bad parameters (out of range, NaN, infinite) give [`NoiseError::InvalidParameter`] naming
//! the parameter, its value and the allowed range; [`NoiseSpec::help`] lists them all.
//!
//! ```
//! use terrasynth_noise::{NoiseFn, NoiseSpec};
//! let noise = NoiseSpec::from_inline_toml(r#"kind = "perlin", seed = "reference""#)?.build()?;
//! assert_eq!(noise.get3(0.5, 0.5, 0.5)?, -0.25); // as Perlin's reference code
//! let (lo, hi) = noise.range();
//! assert!((lo..=hi).contains(&noise.get2(0.3, 0.7)));
//! # Ok::<(), terrasynth_noise::NoiseError>(())
//! ```
//!
//! # Coordinates
//! A sample point `p = (x, y)` becomes the lattice point `q = p·frequency + offset` (and
//! `q / res` for `perlin-table`). Lattice cells are unit squares of `q`; `period`, `warp` and
//! the fractal's octaves work in these units. The cell of a point is `floor` in f64 converted
//! to i64 (never truncation, never f32), so a patch at `q = 1e7` has the same statistics and
//! smoothness as one at the origin.
//!
//! # Kinds
//! Each kind takes a `u64` seed (`seed = "reference"` selects the published permutation for
//! the permutation-based kinds and means 0 for the others).
//!
//! - **`white`**: one value per cell, `hash(⌊q⌋)·2^-31 − 1`, uniform in [−1, 1) (seed 004 §4,
//!   the "regular" noise shown as the bad example). Sampled at spacing ≥ 1 cell, values are
//!   independent.
//! - **`value`**: uniform values in [−1, 1) at lattice points, bilinear interpolation with
//!   smoothstep `3t² − 2t³` weights (seed 004 §5). Range [−1, 1). Tileable.
//! - **`perlin-angle`**: classic gradient noise (Perlin 1985; seeds 000, 004 §5): a unit
//!   gradient `(cos α, sin α)` per lattice point, `α` drawn from the hash (quantised to 256
//!   angles); dot products with the 4 corner offsets, smoothstep interpolation along x then y.
//!   Range [−√½, √½] (all four gradients pointing at the cell centre). Tileable.
//! - **`perlin-table`**: the tutorial's function (seed 002, `Get2DPerlinNoiseValue`): 8
//!   gradients (4 unit diagonals, 4 axes) chosen by `perm[ii + perm[jj]] % 8` through the
//!   256-entry permutation doubled to 512, smoothstep interpolation, and the tutorial's `res`
//!   zoom (`res` divides the coordinate after frequency and offset). With the printed
//!   permutation (`seed = "reference"`) it reproduces the tutorial bit for bit for
//!   non-negative coordinates (in f64); negative coordinates use `floor`, where the tutorial's
//!   `(int)` cast would mirror cell 0. A numeric seed shuffles the permutation. Range [−√½, √½]
//!   (the tutorial says [−1, 1]; the true bound is √½). Repeats every 256 cells; tileable with
//!   any `period`.
//! - **`perlin`**: improved Perlin noise (Perlin 2002, "Improving Noise"), quintic fade
//!   `6t⁵ − 15t⁴ + 10t³`, gradients chosen through the permutation (reference or shuffled by
//!   the seed). 3D ([`Noise::get3`]): Perlin's 12 cube-edge gradients; with the reference
//!   permutation it equals Ken Perlin's Java reference in f64. 2D ([`NoiseFn::get2`]): its own
//!   16 unit gradients at `(k + ½)·22.5°`, uniform on the circle and none on an axis, index
//!   `perm[perm[X] + Y] & 15`. The 2D form is deliberately not the z = 0 slice of the 3D one:
//!   that slice has axis-aligned gradients, is exactly 0 along many lattice edges, and ridged
//!   fractals show those zeros as straight horizontal and vertical creases. Range
//!   [−0.6954, 0.6954] in 2D (dense-search bound 0.695353), [−1.037, 1.037] in 3D
//!   ([`Noise::range3`]). Tileable.
//! - **`opensimplex2`**: simplex-lattice noise after OpenSimplex2 (fast) by K. Spencer:
//!   2D on the skewed triangular lattice (`F2 = (√3−1)/2`, radius² 0.5, 16 gradients), 3D on a
//!   rotated body-centred cubic lattice (radius² 0.6, 12 gradients), kernel `(r² − |d|²)⁴·(g·d)`.
//!   Own implementation and hash, so values differ from the original. Range [−1, 1].
//! - **`worley`**: cellular noise (Worley 1996): one feature point per cell at
//!   `cell + ½ + jitter·(u − ½)`; returns F1, F2 or F2 − F1 with Euclidean, squared or
//!   Manhattan distance (`distance`, `return`, `jitter` ∈ [0, 1], default 1). Exact search of
//!   ±2 cells (±3 for Manhattan). Range [0, √2] for Euclidean F1, [0, 1.803] for F2 and F2−F1;
//!   the squares for `squared`; [0, 2] and [0, 2.5] for Manhattan.
//!
//! ```
//! use terrasynth_noise::{NoiseFn, NoiseKind, NoiseSpec};
//! for kind in NoiseKind::ALL {
//!     let noise = NoiseSpec { kind, seed: terrasynth_noise::Seed::Number(7), ..Default::default() }
//!         .build()?;
//!     let (lo, hi) = noise.range();
//!     let v = noise.get2(12.3, -4.56);
//!     assert!(lo <= v && v <= hi, "{}", kind.name());
//! }
//! // Improved Perlin with the reference permutation gives Ken Perlin's own value:
//! let perlin = NoiseSpec::from_inline_toml(r#"kind = "perlin", seed = "reference", frequency = 1.0"#)?
//!     .build()?;
//! assert_eq!(perlin.get3(3.14, 42.0, 7.0)?, 0.13691995878400012);
//! // The tutorial at its own resolution parameter:
//! let tut = NoiseSpec::from_inline_toml(r#"kind = "perlin-table", res = 100.0"#)?.build()?;
//! assert!(tut.get2(150.0, 250.0).abs() <= std::f64::consts::FRAC_1_SQRT_2);
//! // Cell borders of a cellular noise:
//! let cells = NoiseSpec::from_inline_toml(r#"kind = "worley", return = "f2-f1""#)?.build()?;
//! assert!(cells.get2(0.5, 0.5) >= 0.0);
//! # Ok::<(), terrasynth_noise::NoiseError>(())
//! ```
//!
//! # Fractals and warping
//! `fractal = "fbm" | "ridged" | "hybrid" | "billow"` sums `octaves` (1..=32) octaves; octave
//! `i` samples the basic noise at `q·λ^i + o_i` with `λ = lacunarity` and `o_i` a per-octave
//! offset drawn from `derive_seed(seed, i)` ([`octave_offset`], as seed 003 does). fBm is
//! `Σ a_i·n_i / Σ a_i` with `a_i = persistence^i`; ridged and hybrid follow Musgrave's code
//! (parameters `h`, `mf-offset`, `gain`); billow is fBm of `2|n| − 1`. The exact recurrences,
//! normalisations and ranges are in [`fractal`]. `warp = k > 0` applies Quilez's domain
//! warping `f(q + k·(F(q·wf), F(q·wf + (5.25, 1.375))))` with the same fractal `F`.
//!
//! ```
//! use terrasynth_noise::{NoiseFn, NoiseSpec};
//! let spec = r#"kind = "value", seed = 3, fractal = "fbm", octaves = 6, period = 8"#;
//! let tile = NoiseSpec::from_inline_toml(spec)?.build()?;
//! assert_eq!(tile.get2(0.25, 0.5), tile.get2(8.25, 0.5)); // tileable: period 8 cells
//! let ridges = NoiseSpec::from_inline_toml(r#"fractal = "ridged", warp = 2.0"#)?.build()?;
//! assert_eq!(ridges.range(), (0.0, 1.0));
//! # Ok::<(), terrasynth_noise::NoiseError>(())
//! ```
//!
//! # Bulk fill and SIMD
//! [`Noise::fill`] fills a [`Region`] through SIMD kernels chosen at run time (AVX-512F, else
//! AVX2 + FMA, else portable scalar code) and rayon. The environment variable
//! `TERRASYNTH_SIMD=scalar|avx2|avx512|auto` forces a level (an unknown or unsupported value
//! makes `fill` return an error); [`Noise::bulk_simd_level`] reports the level in use. The
//! AVX-512 kernels have not been run on AVX-512 hardware by their authors: their 16-lane logic
//! is tested through an AVX2 emulation, and each process checks them bit for bit against the
//! AVX2 kernels before using them.
//!
//! # Determinism
//! All randomness comes from [`rng`] (SplitMix64) and a fixed 32-bit lattice hash; the same
//! spec gives the same values on every platform and thread count (the gradient tables are
//! computed with basic IEEE operations only, not the platform's `cos`/`sin`).

mod bulk;
pub mod detmath;
mod error;
pub mod fractal;
mod hash;
mod noise;
pub mod perlin;
pub mod rng;
mod simplex;
pub mod spec;
mod value;
mod worley;

pub use error::NoiseError;
pub use fractal::{Octave, octave_offset};
pub use noise::{Noise, WARP_DECORRELATION};
pub use spec::{
    FIELDS, Field, FieldDefault, FieldKind, FractalKind, Musgrave, NoiseKind, NoiseSpec, Seed,
    WorleyDistance, WorleyReturn,
};

/// A rectangular region of sample positions: sample `(i, j)` (column `i`, row `j`) is taken at
/// `(x0 + i·dx, y0 + j·dy)` in noise space (before the noise's own frequency and offset).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    /// Noise-space x of column 0.
    pub x0: f64,
    /// Noise-space y of row 0.
    pub y0: f64,
    /// Spacing between columns.
    pub dx: f64,
    /// Spacing between rows.
    pub dy: f64,
    /// Number of columns.
    pub width: usize,
    /// Number of rows.
    pub height: usize,
}

/// A window of integer cells: cell `(col0 + i, row0 + j)` (column `i`, row `j` of the window)
/// is sampled at `((col0 + i)·scale_x + offset_x, (row0 + j)·scale_y + offset_y)` in noise
/// space (before the noise's own frequency and offset). Unlike [`Region`], the coordinate of a
/// sample depends only on its cell, so a window is bit-equal to the same cells of any larger
/// window ([`Noise::fill_cells`]). Cells must lie within ±2^53 (exact in f64).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellRegion {
    /// Cell column of the window's column 0 (negative allowed).
    pub col0: i64,
    /// Cell row of the window's row 0 (negative allowed).
    pub row0: i64,
    /// Number of columns.
    pub width: usize,
    /// Number of rows.
    pub height: usize,
    /// Noise-space x per cell column.
    pub scale_x: f64,
    /// Noise-space y per cell row.
    pub scale_y: f64,
    /// Noise-space x of cell column 0.
    pub offset_x: f64,
    /// Noise-space y of cell row 0.
    pub offset_y: f64,
}

/// Point evaluation of a noise. Implementations are immutable after construction, so one
/// instance can be shared by many threads.
pub trait NoiseFn: Send + Sync {
    /// The value at `(x, y)`, computed in f64.
    fn get2(&self, x: f64, y: f64) -> f64;
}
