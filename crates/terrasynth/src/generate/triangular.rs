//! Triangular midpoint displacement (seed 001 §1.1.1, "base triangulaire"), rasterised.

use terrasynth_noise::rng::{SplitMix64, derive_seed};

use super::common::{crop_square, pow2_exponent, symmetric};
use super::diamond_square::DiamondSquare;
use super::{Generator, GeneratorStep};
use crate::step::Params;
use crate::step::params::step_params;
use crate::step::{Category, StepInfo};
use crate::{Heightmap, Progress, Result};

step_params! {
/// Triangle-based midpoint displacement (seed 001 §1.1.1): each triangle is split into 4 by
/// its edge midpoints, and a midpoint gets the mean of the triangle's 3 vertices plus
/// `disp · u` (`u` uniform in [−1, 1)); `disp` starts at `roughness` and is multiplied by
/// `2^(−smoothness)` per level.
///
/// Rasterisation: the map's `(2^n + 1)²` working square is cut into two right triangles along
/// its "\" diagonal. Splitting such a triangle at its edge midpoints gives four triangles that
/// again are halves of squares cut the same way, so after `n` levels every grid node is a
/// triangle vertex and the triangle mesh *is* the grid: no resampling is needed. Levels run
/// iteratively (each node is written once; seed 001 "Implémentation"). A midpoint on an edge
/// shared by two triangles takes the mean over both triangles, `(2a + 2b + c + d) / 6` (a, b
/// the edge's ends, c, d the opposite vertices); a border edge uses its one triangle,
/// `(a + b + c) / 3`. Levels past `detail` (when `detail > 0`) get no offset and take the
/// mean of the edge's two ends, which is exact linear interpolation over each coarser
/// triangle. Other map sizes are the top-left window of the square. (The seed stores the
/// single triangle as rows of length `i + 1`; the two-triangle square covers rectangles.)
/// Because every triangle has the same orientation, fine detail has a slight grain along the
/// "\\" diagonal (visible in a hillshade), the usual price of fixed-orientation triangle
/// subdivision.
///
/// Its parameters are `diamond-square`'s (same keys, ranges, defaults and docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Triangular {
    /// Initial displacement factor, in height units (default 1).
    roughness: f64 = shared(DiamondSquare::PARAMS, "roughness"),
    /// `H` in `2^(−H)` per level (default 1).
    smoothness: f64 = shared(DiamondSquare::PARAMS, "smoothness"),
    /// Number of displaced levels; 0 = all (default 0).
    detail: u32 = shared(DiamondSquare::PARAMS, "detail"),
}
}

impl Triangular {
    /// A checked generator (same ranges as [`DiamondSquare::new`]).
    pub fn new(roughness: f64, smoothness: f64, detail: u32) -> Result<Self> {
        let s = Self { roughness, smoothness, detail };
        s.check_ranges()?;
        Ok(s)
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        Self::read_params(p)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "triangular",
            category: Category::Generate,
            doc: "Triangular midpoint displacement: triangles split into 4 at their edge \
                  midpoints, each midpoint the mean of the triangle's vertices plus noise; \
                  rasterised on the grid's triangle mesh.",
            source: "seed 001 §1.1.1 (base triangulaire)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(GeneratorStep(Self::from_params(p)?))),
        }
    }
}

impl Generator for Triangular {
    fn generate(&self, width: usize, height: usize, seed: u64, _progress: &Progress) -> Result<Heightmap> {
        crate::grid::check_size::<f64>(width, height)?;
        let side = (1usize << pow2_exponent(width, height)) + 1;
        let last = side - 1;
        let mut buf = vec![0.0f64; side * side];
        let mut rng = SplitMix64::new(derive_seed(seed, 0));
        for (x, y) in [(0, 0), (last, 0), (0, last), (last, last)] {
            buf[y * side + x] = self.roughness * symmetric(&mut rng);
        }
        let mut rng = SplitMix64::new(derive_seed(seed, 1));
        let decay = terrasynth_noise::detmath::exp2(-self.smoothness);
        let mut disp = self.roughness;
        let mut s = last;
        let mut level = 0u32;
        while s > 1 {
            let h = s / 2;
            let noisy = self.detail == 0 || level < self.detail;
            for y in (0..side).step_by(h) {
                for x in (0..side).step_by(h) {
                    let (odd_x, odd_y) = ((x / h) % 2 == 1, (y / h) % 2 == 1);
                    if !odd_x && !odd_y {
                        continue;
                    }
                    let at = |x: usize, y: usize| buf[y * side + x];
                    // The edge's two ends and the opposite vertices of the triangles sharing it.
                    let (a, b, opposite): (f64, f64, [Option<f64>; 2]) = match (odd_x, odd_y) {
                        // Diagonal of square (x-h, y-h): both its triangles.
                        (true, true) => (
                            at(x - h, y - h),
                            at(x + h, y + h),
                            [Some(at(x + h, y - h)), Some(at(x - h, y + h))],
                        ),
                        // Horizontal edge: lower triangle of the square below, upper of the square above.
                        (true, false) => (
                            at(x - h, y),
                            at(x + h, y),
                            [(y + s <= last).then(|| at(x + h, y + s)), (y >= s).then(|| at(x - h, y - s))],
                        ),
                        // Vertical edge: upper triangle of the square right, lower of the square left.
                        _ => (
                            at(x, y - h),
                            at(x, y + h),
                            [(x + s <= last).then(|| at(x + s, y + h)), (x >= s).then(|| at(x - s, y - h))],
                        ),
                    };
                    let v = if noisy {
                        let (sum, count) =
                            opposite.iter().flatten().fold((0.0, 0.0), |(s, n), &c| (s + a + b + c, n + 3.0));
                        sum / count + disp * symmetric(&mut rng)
                    } else {
                        (a + b) * 0.5
                    };
                    buf[y * side + x] = v;
                }
            }
            disp *= decay;
            s = h;
            level += 1;
        }
        crop_square(&buf, side, width, height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::params::assert_ranges_enforced;

    /// `triangular` declares `diamond-square`'s parameters (same specs, same order; not the
    /// world-only `feature-size-m`, triangular has no world form), reading a recipe enforces exactly
    /// their ranges, and its defaults are diamond-square's.
    #[test]
    fn shares_diamond_square_parameters() {
        assert_eq!(Triangular::PARAMS, &DiamondSquare::PARAMS[..3]);
        assert_eq!(DiamondSquare::PARAMS[3].name, "feature-size-m");
        let d = Triangular::default();
        let build = |name: &str, v: f64| {
            let p = Params::defaults(Triangular::PARAMS).with(name, crate::step::ParamValue::Number(v));
            Triangular::from_params(&p).map(drop)
        };
        assert_eq!(assert_ranges_enforced(Triangular::PARAMS, &build), 3);
        let ds = DiamondSquare::default();
        assert_eq!((d.roughness, d.smoothness, d.detail), (ds.roughness, ds.smoothness, ds.detail));
    }
}
