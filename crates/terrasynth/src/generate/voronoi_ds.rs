//! Voronoi + diamond-square combination (seed 001 §2.2).

use super::common::{Subdivision, crop_square, diamond_square_fill, pow2_exponent};
use super::voronoi::{Metric, SampleGrid, Voronoi};
use super::{Generator, GeneratorStep};
use crate::step::params::{check_number, spec_named};
use crate::step::{Category, StepInfo};
use crate::step::{DefaultValue, ParamKind, ParamSpec, Params};
use crate::{Error, Heightmap, Progress, Result};

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
    /// The Voronoi part.
    pub voronoi: Voronoi,
    /// Voronoi sample spacing in cells, a power of two (default 8).
    pub step: usize,
    /// Initial displacement as a fraction of the Voronoi range (default 0.5).
    pub roughness: f64,
    /// `H` in the per-level factor `2^(−H)` (default 1).
    pub smoothness: f64,
}

impl VoronoiDiamondSquare {
    /// Parameter specs (recipe keys): the Voronoi keys plus `step`, `roughness`, `smoothness`.
    pub const PARAMS: &'static [ParamSpec] = &[
        spec_named(Voronoi::PARAMS, "count"),
        spec_named(Voronoi::PARAMS, "coefficients"),
        spec_named(Voronoi::PARAMS, "metric"),
        spec_named(Voronoi::PARAMS, "point-seed"),
        ParamSpec {
            name: "step",
            kind: ParamKind::Int { min: 1, max: 1 << 20 },
            default: DefaultValue::Number(8.0),
            unit: "cells",
            doc: "Voronoi sample spacing; must be a power of two so that 2^detail mod step = 0 \
                  (seed 001 §2.2). Larger steps leave more to midpoint displacement (rougher, \
                  less Voronoi structure).",
        },
        ParamSpec {
            name: "roughness",
            kind: ParamKind::Float { min: 0.0, max: 10.0 },
            default: DefaultValue::Number(0.5),
            unit: "fraction of the Voronoi range",
            doc: "Initial displacement of the midpoint fill, relative to the range of the \
                  Voronoi samples (seed 001 figure 10 uses 0.5).",
        },
        ParamSpec {
            name: "smoothness",
            kind: ParamKind::Float { min: 0.0, max: 4.0 },
            default: DefaultValue::Number(1.0),
            unit: "",
            doc: "H: the displacement is multiplied by 2^(-H) per level (seed 001 §1.1.1).",
        },
    ];

    /// A checked generator.
    pub fn new(voronoi: Voronoi, step: usize, roughness: f64, smoothness: f64) -> Result<Self> {
        check_number(Self::PARAMS, "step", step as f64)?;
        if !step.is_power_of_two() {
            return Err(Error::param(
                "step",
                step,
                "a power of two (1, 2, 4, 8, …) so that 2^detail mod step = 0",
            ));
        }
        check_number(Self::PARAMS, "roughness", roughness)?;
        check_number(Self::PARAMS, "smoothness", smoothness)?;
        Ok(Self { voronoi, step, roughness, smoothness })
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        Self::new(Voronoi::from_params(p)?, p.usize("step")?, p.f64("roughness")?, p.f64("smoothness")?)
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
            disp0: self.roughness * range * (step as f64 / (side - 1) as f64).powf(self.smoothness),
            decay: (-self.smoothness).exp2(),
            noisy_levels: u32::MAX,
        };
        diamond_square_fill(&mut buf, side, step, sub, terrasynth_noise::rng::derive_seed(seed, 2));
        crop_square(&buf, side, width, height)
    }
}

/// The registry defaults: c = [−1, 1], Euclidean metric, 40 points, step 8, roughness 0.5.
impl std::default::Default for VoronoiDiamondSquare {
    fn default() -> Self {
        Self {
            voronoi: Voronoi {
                count: 40,
                coefficients: vec![-1.0, 1.0],
                metric: Metric::Euclidean,
                point_seed: None,
            },
            step: 8,
            roughness: 0.5,
            smoothness: 1.0,
        }
    }
}
