//! Voronoi + diamond-square combination (seed 001 §2.2).

use super::common::{Subdivision, crop_square, diamond_square_fill, pow2_exponent, refuse_world_length};
use super::voronoi::{SampleGrid, Voronoi};
use super::{Generator, GeneratorStep};
use crate::step::params::step_params;
use crate::step::{Category, StepInfo};
use crate::step::{DefaultValue, ParamKind, Params};
use crate::{Error, Heightmap, Progress, Result};

step_params! {
/// Voronoi terrain sampled every `step` cells, the squares between filled by midpoint
/// displacement (seed 001 §2.2; figure 10 uses c1 = −1, c2 = 1, roughness 0.5).
///
/// Steps:
/// 1. choose the working square `2^n + 1` (smallest `n` covering the map) — the seed's
///    `2^detail + 1` side;
/// 2. evaluate the [`Voronoi`] height at every cell `(i·step, j·step)`; the seed requires
///    `2^detail mod step = 0`, i.e. `step` is a power of two no larger than `2^n` (other
///    values are refused; a step larger than the working square is lowered to `2^n`, so on a
///    small map the Voronoi is only sampled at the corners);
/// 3. fill the rest with iterative diamond-square ([`DiamondSquare`](super::DiamondSquare)'s
///    core) starting at half-step `step/2`, with the displacement the full diamond-square
///    would have there, `roughness · R · (step / 2^n)^smoothness` (`R` the range of the
///    Voronoi samples: `roughness · R` at the whole square, `× 2^(−smoothness)` per level),
///    then `× 2^(−smoothness)` per finer level — so the Voronoi structure survives and gets
///    fractal roughness at scales below `step`;
/// 4. keep the top-left `width × height` window (any map size works).
///
/// Straight lines in the lowlands: with `c = [−1, 1]` the Voronoi height `d₂ − d₁` is 0 along
/// every cell border, which is a straight segment (a perpendicular bisector). After a
/// `normalize` these segments are the lowest ground, so under a sea level they show as a
/// network of faint straight furrows in the sea floor. This is inherent to the seed's method
/// (Olsen's connected "riverbeds"), not an interpolation artefact: the diamond-square fill
/// only adds roughness below `step` cells. To soften them, raise `roughness`, follow with
/// `perturb`, or use `c = [−1]` (cones, no border valleys).
///
/// `step` is in cells, so the fractal part covers scales below `step` cells: on large maps raise
/// it (e.g. 32 at 1025²) to keep the same look as at 257² with 8.
///
/// The Voronoi points are laid over the map itself, so with the same `point-seed` the cells
/// match a `voronoi` or `voronoi-regions` step.
#[derive(Clone, Debug, PartialEq)]
pub struct VoronoiDiamondSquare {
    /// The Voronoi part (`count`, `coefficients`, `metric`, `point-seed`; its world-only
    /// `feature-size-m` is refused when given: `voronoi-ds` is a single-map step).
    voronoi: Voronoi = nested,
    /// Voronoi sample spacing in cells, a power of two (default 8).
    step: usize = ParamSpec {
        name: "step",
        label: "Sample spacing",
        kind: ParamKind::Int { min: 1, max: 1 << 20 },
        default: DefaultValue::Number(8.0),
        unit: "cells",
        doc: "Voronoi sample spacing; must be a power of two so that 2^detail mod step = 0 \
              (seed 001 §2.2). Larger steps leave more to midpoint displacement (rougher, \
              less Voronoi structure).",
    },
    roughness: f64 = ParamSpec {
        name: "roughness",
        label: "Roughness",
        kind: ParamKind::Float { min: 0.0, max: 10.0 },
        default: DefaultValue::Number(0.5),
        unit: "fraction of the Voronoi range",
        doc: "Initial displacement of the midpoint fill, relative to the range of the \
              Voronoi samples (seed 001 figure 10 uses 0.5).",
    },
    smoothness: f64 = ParamSpec {
        name: "smoothness",
        label: "Smoothness H",
        kind: ParamKind::Float { min: 0.0, max: 4.0 },
        default: DefaultValue::Number(1.0),
        unit: "",
        doc: "H: the displacement is multiplied by 2^(-H) per level (seed 001 §1.1.1).",
    },
}
}

impl VoronoiDiamondSquare {
    /// A checked generator.
    pub fn new(voronoi: Voronoi, step: usize, roughness: f64, smoothness: f64) -> Result<Self> {
        Self { voronoi, step, roughness, smoothness }.checked()
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        Self::read_params(p)?.checked()
    }

    /// `self` if `step` is a power of two (the ranges are checked by `check_ranges`).
    fn checked(self) -> Result<Self> {
        self.check_ranges()?;
        if !self.step.is_power_of_two() {
            return Err(Error::param(
                "step",
                self.step,
                "a power of two (1, 2, 4, 8, …) so that 2^detail mod step = 0",
            ));
        }
        Ok(self)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "voronoi-ds",
            category: Category::Generate,
            doc: "Voronoi heights every `step` cells, filled in by diamond-square: Voronoi hills \
                  and ridges with fractal roughness.",
            source: "seed 001 §2.2 (figure 10)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(GeneratorStep(Self::from_params(p)?))),
        }
    }
}

impl Generator for VoronoiDiamondSquare {
    fn generate(&self, width: usize, height: usize, seed: u64, _progress: &Progress) -> Result<Heightmap> {
        refuse_world_length(self.voronoi.feature_size_m, "`count`")?;
        crate::grid::check_size::<f64>(width, height)?;
        let n = pow2_exponent(width, height);
        let side = (1usize << n) + 1;
        let step = self.step.min(side - 1);
        let points = self.voronoi.points(width, height, seed);
        let lattice = (side - 1) / step + 1;
        let grid = SampleGrid { x0: 0.5, y0: 0.5, stride: step as f64, cols: lattice, rows: lattice };
        let samples = self.voronoi.sample(&points, width, height, grid);
        let (lo, hi) =
            samples.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        let range = if hi > lo { hi - lo } else { 1.0 };
        let mut buf = vec![0.0; side * side];
        for j in 0..lattice {
            for i in 0..lattice {
                buf[j * step * side + i * step] = samples[j * lattice + i];
            }
        }
        let sub = Subdivision {
            // The amplitude the levels above `step` would have reached: roughness·R at the
            // whole square, times 2^(−H) per level down to `step`.
            disp0: self.roughness
                * range
                * terrasynth_noise::detmath::pow(step as f64 / (side - 1) as f64, self.smoothness),
            decay: terrasynth_noise::detmath::exp2(-self.smoothness),
            noisy_levels: u32::MAX,
        };
        diamond_square_fill(&mut buf, side, step, sub, terrasynth_noise::rng::derive_seed(seed, 2));
        crop_square(&buf, side, width, height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::voronoi::Metric;
    use crate::step::ParamValue;
    use crate::step::params::assert_ranges_enforced;

    /// The parameters are the Voronoi's (same specs, same order) then `step`, `roughness`,
    /// `smoothness`; recipes are refused exactly outside every number range, and `step` must
    /// also be a power of two; the defaults are the registry's (40 points, c = [−1, 1], step 8).
    #[test]
    fn declared_once_with_the_voronoi_keys() {
        let names: Vec<_> = VoronoiDiamondSquare::PARAMS.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "count",
                "coefficients",
                "metric",
                "point-seed",
                "feature-size-m",
                "step",
                "roughness",
                "smoothness"
            ]
        );
        assert_eq!(&VoronoiDiamondSquare::PARAMS[..5], Voronoi::PARAMS);
        let with = |name: &str, v: f64| {
            Params::defaults(VoronoiDiamondSquare::PARAMS).with(name, ParamValue::Number(v))
        };
        // `step`'s upper bound 2^20 is a power of two, so both its ends are accepted.
        let build = |name: &str, v: f64| VoronoiDiamondSquare::from_params(&with(name, v)).map(drop);
        assert_eq!(assert_ranges_enforced(VoronoiDiamondSquare::PARAMS, &build), 6);
        assert!(matches!(build("step", 6.0), Err(Error::InvalidParameter { name, .. }) if name == "step"));
        let d = VoronoiDiamondSquare::default();
        assert_eq!((d.voronoi.count, d.voronoi.coefficients.as_slice()), (40, &[-1.0, 1.0][..]));
        assert_eq!((d.voronoi.metric, d.voronoi.point_seed), (Metric::Euclidean, None));
        assert_eq!((d.step, d.roughness, d.smoothness), (8, 0.5, 1.0));
        assert_eq!(VoronoiDiamondSquare::new(d.voronoi.clone(), 8, 0.5, 1.0).unwrap(), d);
    }
}
