//! Fault formation: random lines that raise one side and lower the other.

use rayon::prelude::*;
use terrasynth_noise::detmath::smoothstep;
use terrasynth_noise::rng::SplitMix64;

use super::{Generator, GeneratorStep};
use crate::step::params::step_params;
use crate::step::{Category, DefaultValue, ParamKind, StepInfo};
use crate::{Heightmap, Progress, Result};

step_params! {
    /// Fault formation. Seed 001 §1 only names "Fault"; this follows the classic fault-formation
    /// algorithm as described by Jason Shankel ("Fractal terrain generation — fault formation",
    /// *Game Programming Gems*, 2000) and common tutorials, with a soft transition of our own.
    ///
    /// For iteration `i = 0 … N−1`:
    /// 1. pick a random point `p` in the map and a uniform random direction: the fault line;
    /// 2. the displacement shrinks linearly, `d_i = d_0 + (d_end − d_0) · i / max(N−1, 1)`;
    /// 3. each cell at signed distance `s` (cells) from the line gets `+ d_i/2 · t(s)`, where
    ///    `t = sign(s)` for a sharp fault or, with a transition width `w > 0`,
    ///    `t = 2·smoothstep((clamp(s/w, −1, 1) + 1)/2) − 1` (a smooth ramp from −1 to 1 across
    ///    the fault: fewer jagged cliffs).
    ///
    /// Raising one side by `d/2` and lowering the other by `d/2` keeps the mean near 0. Cells are
    /// independent (rows in parallel, every cell sums the faults in the same order), so the
    /// output is bit-identical for any thread count. Cost: `N ×` cells.
    ///
    /// **Single map only** (refused in world recipes, whose windows of an endless plane must not
    /// depend on which window is asked for): a fault is a line through a point of *the map*
    /// that raises one half-plane, so every fault reaches every cell and the relief at a cell
    /// depends on all the faults ever drawn. An endless plane would need infinitely many
    /// faults, each with unbounded reach, and the sum of their displacements has no limit; a
    /// variant with finite fault segments hashed per region would be a different algorithm from
    /// Shankel's. Use `noise`, `spectral`, `diamond-square` or `voronoi` in worlds.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Fault {
        iterations: u32 = ParamSpec {
            name: "iterations",
            label: "Iterations",
            kind: ParamKind::Int { min: 1, max: 100_000 },
            default: DefaultValue::Number(200.0),
            unit: "faults",
            doc: "Number of random fault lines. More faults give finer, more natural relief.",
        },
        displacement: f64 = ParamSpec {
            name: "displacement",
            label: "First displacement",
            kind: ParamKind::Float { min: 0.0, max: 1000.0 },
            default: DefaultValue::Number(1.0),
            unit: "height units",
            doc: "Height difference across the first fault.",
        },
        final_displacement: f64 = ParamSpec {
            name: "final-displacement",
            label: "Last displacement",
            kind: ParamKind::Float { min: 0.0, max: 1000.0 },
            default: DefaultValue::Number(0.05),
            unit: "height units",
            doc: "Height difference across the last fault; the difference shrinks linearly \
                  from `displacement` (Shankel 2000), so early faults shape, late ones detail.",
        },
        transition: f64 = ParamSpec {
            name: "transition",
            label: "Ramp width",
            kind: ParamKind::Float { min: 0.0, max: 1.0 },
            default: DefaultValue::Number(0.02),
            unit: "fraction of the longer side",
            doc: "Width of the smooth ramp across each fault; 0 = vertical cliffs.",
        },
    }
}

impl Fault {
    /// A checked generator.
    pub fn new(iterations: u32, displacement: f64, final_displacement: f64, transition: f64) -> Result<Self> {
        let s = Self { iterations, displacement, final_displacement, transition };
        s.check_ranges()?;
        Ok(s)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "fault",
            category: Category::Generate,
            doc: "Fault formation: many random lines, each raising one side and lowering the \
                  other by a displacement that shrinks fault after fault.",
            source: "seed 001 §1 (named only); Shankel 2000, Game Programming Gems \
                     (fault formation); soft transition is terrasynth's",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(GeneratorStep(Self::read_params(p)?))),
        }
    }
}

impl Generator for Fault {
    fn generate(&self, width: usize, height: usize, seed: u64, progress: &Progress) -> Result<Heightmap> {
        crate::grid::check_size::<f32>(width, height)?;
        let mut rng = SplitMix64::new(seed);
        let n = self.iterations as usize;
        // (px, py, normal x, normal y, half displacement)
        let faults: Vec<[f64; 5]> = (0..n)
            .map(|i| {
                let px = rng.next_f64() * width as f64;
                let py = rng.next_f64() * height as f64;
                // A uniform direction without trigonometry (sin/cos may differ by an ulp between
                // platforms' libm; sqrt is exact): rejection-sample the unit disc.
                let (dx, dy) = loop {
                    let (dx, dy) = (rng.next_f64() * 2.0 - 1.0, rng.next_f64() * 2.0 - 1.0);
                    let r2 = dx * dx + dy * dy;
                    if r2 > 1e-12 && r2 <= 1.0 {
                        let r = r2.sqrt();
                        break (dx / r, dy / r);
                    }
                };
                let t = i as f64 / (n.max(2) - 1) as f64;
                let d = self.displacement + (self.final_displacement - self.displacement) * t;
                [px, py, -dy, dx, 0.5 * d]
            })
            .collect();
        let w = self.transition * width.max(height) as f64;
        let mut data = vec![0.0f32; width * height];
        let rows = super::common::RowProgress::new(progress, height);
        data.par_chunks_mut(width).enumerate().try_for_each(|(y, row)| -> Result<()> {
            rows.row_done()?;
            let yc = y as f64 + 0.5;
            for (x, cell) in row.iter_mut().enumerate() {
                let xc = x as f64 + 0.5;
                let mut h = 0.0f64;
                for f in &faults {
                    let s = (xc - f[0]) * f[2] + (yc - f[1]) * f[3];
                    // Outside the ramp the smooth formula gives exactly ±1: skip it.
                    let t = if s >= w {
                        1.0
                    } else if s <= -w {
                        -1.0
                    } else {
                        2.0 * smoothstep((s / w + 1.0) * 0.5) - 1.0
                    };
                    h += f[4] * t;
                }
                *cell = h as f32;
            }
            Ok(())
        })?;
        Heightmap::from_vec(width, height, 1.0, data)
    }
}
