//! Fall-off maps (seed 003), island weighting (seed 004 §8) and archipelagos.

use rayon::prelude::*;
use terrasynth_noise::rng::SplitMix64;

use super::basic::range;
use crate::step::params::{Choice, choice_enum, step_params};
use crate::step::{Category, Step, StepContext, StepInfo, Terrain};
use crate::step::{DefaultValue, ParamKind, Params};
use crate::{Error, Heightmap, Result};

/// Multiplies heights by a weight field relative to the map's minimum:
/// `h' = lo + (h − lo) · w(x, y)`, so weight 0 sends a cell to the lowest height (the sea floor)
/// whatever the map's units, and weight 1 keeps it. Rows in parallel.
pub(crate) fn apply_weight(map: &mut Heightmap, weight: impl Fn(usize, usize) -> f64 + Sync) {
    let (lo, _) = range(map);
    let width = map.width();
    map.as_mut_slice().par_chunks_mut(width).enumerate().for_each(|(y, row)| {
        for (x, v) in row.iter_mut().enumerate() {
            *v = (lo as f64 + (*v - lo) as f64 * weight(x, y)) as f32;
        }
    });
}

/// Evaluates a piecewise-linear curve through `points` (values at evenly spaced inputs
/// 0, 1/(n−1), …, 1) at `t` in [0, 1].
pub fn eval_curve(points: &[f64], t: f64) -> f64 {
    match points.len() {
        0 => t,
        1 => points[0],
        n => {
            let u = t.clamp(0.0, 1.0) * (n - 1) as f64;
            let i = (u.floor() as usize).min(n - 2);
            points[i] + (points[i + 1] - points[i]) * (u - i as f64)
        }
    }
}

choice_enum! {
    /// Shape of a fall-off map.
    pub enum FalloffShape {
        /// `d = |p − c| / min(w/2, h/2)` (seed 003 `FallOffMode.circle`).
        Circle = "circle",
        /// `d = max(|x − cx| / (w/2), |y − cy| / (h/2))` (seed 003 `FallOffMode.rectangle`).
        Rectangle = "rectangle",
    }
}

step_params! {
    /// Fall-off map (seed 003 §"carte de chute"): coefficients in [0, 1] that reach 0 at the
    /// border, passed through a user curve, multiplied into the heights.
    ///
    /// For cell `(x, y)` and centre `c = (w/2, h/2)`: `d` as in [`FalloffShape`], clamped to
    /// [0, 1]; `f = 1 − d` (1 at the centre, 0 at the border: the seed's
    /// `InverseLerp(1, 0, d)`); the coefficient is `curve(f)`; heights become
    /// `lo + (h − lo) · curve(f)` (relative to the map's minimum, so the border sinks to the
    /// lowest height rather than to 0 whatever the units).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Falloff {
        shape: FalloffShape = ParamSpec {
                name: "shape",
                kind: ParamKind::Choice(FalloffShape::NAMES),
                default: DefaultValue::Text("circle"),
                unit: "",
                doc: "`circle`: distance to the centre over half the shorter side; `rectangle`: the \
                      larger of the x and y distances over the half sides (seed 003).",
            },
        curve: Vec<f64> = ParamSpec {
                name: "curve",
                kind: ParamKind::List { min: 0.0, max: 1.0, min_len: 2, max_len: 64 },
                default: DefaultValue::List(&[0.0, 0.6, 0.9, 1.0, 1.0]),
                unit: "",
                doc: "Fall-off curve (seed 003 `falloffCurve`): coefficients at evenly spaced inputs \
                      from border (first) to centre (last), linearly interpolated. [0, 1] is linear.",
            },
    }
}

impl Falloff {
    /// A checked step.
    pub fn new(shape: FalloffShape, curve: Vec<f64>) -> Result<Self> {
        let s = Self { shape, curve };
        s.check_ranges()?;
        Ok(s)
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        Self::read_params(p)
    }

    /// The fall-off coefficient of cell `(x, y)` in a `width × height` map.
    pub fn coefficient(&self, x: usize, y: usize, width: usize, height: usize) -> f64 {
        let (hw, hh) = (width as f64 * 0.5, height as f64 * 0.5);
        let (dx, dy) = ((x as f64 - hw).abs(), (y as f64 - hh).abs());
        let d = match self.shape {
            FalloffShape::Circle => (dx * dx + dy * dy).sqrt() / hw.min(hh),
            FalloffShape::Rectangle => (dx / hw).max(dy / hh),
        };
        eval_curve(&self.curve, 1.0 - d.clamp(0.0, 1.0))
    }

    /// Applies to a heightmap.
    pub fn apply(&self, map: &mut Heightmap) {
        let (w, h) = (map.width(), map.height());
        apply_weight(map, |x, y| self.coefficient(x, y, w, h));
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "falloff",
            category: Category::Shape,
            doc: "Fall-off map: sinks the border through a circle or rectangle gradient passed \
                  through a user curve (islands).",
            source: "seed 003 (GenerateFallOffMap, circle/rectangle, falloffCurve)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(Self::from_params(p)?)),
        }
    }
}

impl Step for Falloff {
    fn run(&self, terrain: &mut Terrain, _ctx: &StepContext) -> Result<()> {
        self.apply(&mut terrain.height);
        Ok(())
    }
}

step_params! {
    /// Island weighting (seed 004 §8): `p(x, y) = (d − m) / (M − m)` with `d = −|p − c|`, i.e.
    /// `1 − |p − c| / max|p − c|` (1 at the centre, 0 at the farthest cell), times `h0`.
    ///
    /// The seed multiplies a [0, 1] noise by `p · h0` and renormalises; renormalising after a
    /// constant factor would cancel `h0`, so here heights become `lo + (h − lo) · p · h0` (the old
    /// range is the [0, 1] scale): with `h0 > 1` the centre rises above the old maximum, as in the
    /// seed's figure 8b.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Island {
        h0: f64 = ParamSpec {
        name: "h0",
        kind: ParamKind::Float { min: 0.0, max: 10.0 },
        default: DefaultValue::Number(1.5),
        unit: "",
        doc: "Centre height factor (seed 004 §8): the weight is h0 at the centre and 0 at the \
              far edge; 2 gives a high central mountain.",
    },
        centre_x: f64 = ParamSpec {
                name: "centre-x",
                kind: FRACTION,
                default: DefaultValue::Number(0.5),
                unit: "fraction of the width",
                doc: "Island centre, x.",
            },
        centre_y: f64 = ParamSpec {
                name: "centre-y",
                kind: FRACTION,
                default: DefaultValue::Number(0.5),
                unit: "fraction of the height",
                doc: "Island centre, y.",
            },
    }
}

const FRACTION: ParamKind = ParamKind::Float { min: 0.0, max: 1.0 };

impl Island {
    /// A checked step.
    pub fn new(h0: f64, centre_x: f64, centre_y: f64) -> Result<Self> {
        let s = Self { h0, centre_x, centre_y };
        s.check_ranges()?;
        Ok(s)
    }

    /// Applies to a heightmap.
    pub fn apply(&self, map: &mut Heightmap) {
        let (w, h) = (map.width(), map.height());
        let (cx, cy) = (self.centre_x * (w - 1) as f64, self.centre_y * (h - 1) as f64);
        let far_x = cx.max((w - 1) as f64 - cx);
        let far_y = cy.max((h - 1) as f64 - cy);
        let max_d = (far_x * far_x + far_y * far_y).sqrt();
        let h0 = self.h0;
        apply_weight(map, |x, y| {
            if max_d <= 0.0 {
                return h0;
            }
            let d = ((x as f64 - cx).powi(2) + (y as f64 - cy).powi(2)).sqrt();
            (1.0 - d / max_d) * h0
        });
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "island",
            category: Category::Shape,
            doc: "Island weighting: multiplies heights by h0 · (1 − distance to the centre / \
                  farthest distance).",
            source: "seed 004 §8",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(Self::read_params(p)?)),
        }
    }
}

impl Step for Island {
    fn run(&self, terrain: &mut Terrain, _ctx: &StepContext) -> Result<()> {
        self.apply(&mut terrain.height);
        Ok(())
    }
}

step_params! {
    /// Archipelago: island weighting with several centres (seed 004 §8's suggested improvement).
    ///
    /// Each centre `i` has a radius `r_i`; with `t_i = clamp(1 − d_i / r_i, 0, 1)` the weight is
    /// `h0 · max_i S(t_i)`, `S(t) = t²(3 − 2t)` (smoothstep), so each island is a rounded dome of
    /// weights that meets the sea floor (weight 0 at `d_i = r_i`) with zero slope: the weight is C1
    /// there, and the sea shows no ring where the island's influence ends (a linear cone did). Centres
    /// are the `centres` list (pairs `x, y` as fractions of width and height, each `r_i =
    /// radius · L`, `L` = longer side) or, when the list is empty, `count` centres drawn from the
    /// step seed uniformly in [0.15, 0.85]² with `r_i = radius · L · u`, `u` uniform in [0.6, 1].
    #[derive(Clone, Debug, PartialEq)]
    pub struct Archipelago {
        /// Centre height factor (the `island` step's `h0`).
        h0: f64 = shared(Island::PARAMS, "h0"),
        count: u32 = ParamSpec {
                name: "count",
                kind: ParamKind::Int { min: 1, max: 256 },
                default: DefaultValue::Number(5.0),
                unit: "islands",
                doc: "Number of random centres (used when `centres` is empty).",
            },
        radius: f64 = ParamSpec {
                name: "radius",
                kind: ParamKind::Float { min: 0.01, max: 2.0 },
                default: DefaultValue::Number(0.3),
                unit: "fraction of the longer side",
                doc: "Distance at which an island's weight reaches 0.",
            },
        centres: Vec<f64> = ParamSpec {
                name: "centres",
                kind: ParamKind::List { min: 0.0, max: 1.0, min_len: 0, max_len: 512 },
                default: DefaultValue::List(&[]),
                unit: "fractions of width/height",
                doc: "Island centres as x, y pairs; empty = `count` random centres from the step seed.",
            },
    }
}

impl Archipelago {
    /// A checked step (`centres` must have an even length).
    pub fn new(h0: f64, count: u32, radius: f64, centres: Vec<f64>) -> Result<Self> {
        let s = Self { h0, count, radius, centres };
        s.check_ranges()?;
        if !s.centres.len().is_multiple_of(2) {
            return Err(Error::param(
                "centres",
                format!("{:?}", s.centres),
                "an even number of values (x, y pairs)",
            ));
        }
        Ok(s)
    }

    /// Centres and radii in cells for a map and seed.
    pub fn islands(&self, width: usize, height: usize, seed: u64) -> Vec<[f64; 3]> {
        let long = width.max(height) as f64;
        let (w, h) = ((width - 1) as f64, (height - 1) as f64);
        if self.centres.is_empty() {
            let mut rng = SplitMix64::new(seed);
            (0..self.count)
                .map(|_| {
                    let x = rng.range_f64(0.15, 0.85) * w;
                    let y = rng.range_f64(0.15, 0.85) * h;
                    [x, y, self.radius * long * rng.range_f64(0.6, 1.0)]
                })
                .collect()
        } else {
            self.centres.chunks_exact(2).map(|c| [c[0] * w, c[1] * h, self.radius * long]).collect()
        }
    }

    /// Applies to a heightmap.
    pub fn apply(&self, map: &mut Heightmap, seed: u64) {
        let islands = self.islands(map.width(), map.height(), seed);
        let h0 = self.h0;
        apply_weight(map, |x, y| {
            let p = islands.iter().fold(0.0f64, |best, &[cx, cy, r]| {
                let d = ((x as f64 - cx).powi(2) + (y as f64 - cy).powi(2)).sqrt();
                let t = (1.0 - d / r).clamp(0.0, 1.0);
                best.max(t * t * (3.0 - 2.0 * t))
            });
            p * h0
        });
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "archipelago",
            category: Category::Shape,
            doc: "Island weighting around several centres (given or random): a group of islands.",
            source: "seed 004 §8 (suggested improvement: several maxima)",
            params: Self::PARAMS,
            build: |p| {
                let Self { h0, count, radius, centres } = Self::read_params(p)?;
                Ok(Box::new(Self::new(h0, count, radius, centres)?))
            },
        }
    }
}

impl Step for Archipelago {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        self.apply(&mut terrain.height, ctx.seed);
        Ok(())
    }
}
