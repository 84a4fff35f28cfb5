//! Deterministic noise functions for terrain: white, value, classic gradient (two forms),
//! improved Perlin (2002), OpenSimplex2, Worley, and fractals over any of them.
//!
//! Two evaluation paths that agree (see `tests/`):
//! - point evaluation through [`NoiseFn`] (`&self`, so one instance serves many threads);
//! - a bulk fill of a rectangular [`Region`] into a `&mut [f32]` (SIMD with runtime CPU
//!   dispatch, rayon over rows) that returns the min/max: [`Noise::fill`].
//!
//! A noise is described by a plain serde [`NoiseSpec`] and validated once into a [`Noise`].

mod bulk;
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
pub use spec::{FractalKind, Musgrave, NoiseKind, NoiseSpec, Seed, WorleyDistance, WorleyReturn};

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

/// Point evaluation of a noise. Implementations are immutable after construction, so one
/// instance can be shared by many threads.
pub trait NoiseFn: Send + Sync {
    /// The value at `(x, y)`, computed in f64.
    fn get2(&self, x: f64, y: f64) -> f64;
}
