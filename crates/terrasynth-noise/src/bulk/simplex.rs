//! Bulk fill of `opensimplex2` (2D).

use super::{SimdLevel, fill_points};
use crate::{Noise, Region};

/// Fills `out` with opensimplex2 (no warp) over `region`.
pub(crate) fn fill_simplex(noise: &Noise, region: &Region, out: &mut [f32], _level: SimdLevel) -> (f32, f32) {
    fill_points(noise, region, out)
}
