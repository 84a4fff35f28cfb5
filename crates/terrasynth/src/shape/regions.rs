//! `voronoi-regions`: region map and region sinking (seed 001 §3.3.3).

use terrasynth_noise::rng::{SplitMix64, derive_seed};

use super::falloff::apply_weight;
use crate::generate::{feature_points, region_map};
use crate::step::params::{check_number, check_text, spec_named};
use crate::step::{Category, Step, StepContext, StepInfo, Terrain};
use crate::step::{DefaultValue, ParamKind, ParamSpec, Params};
use crate::{Heightmap, Result};

/// Region sinking (seed 001 §3.3.3): build the Voronoi region map (each cell labelled by its
/// nearest feature point, [`region_map`]), give every region one factor, and multiply it into
/// the heights point-wise, `h' = lo + (h − lo) · r(label)` (relative to the map's minimum).
///
/// `binary`: each region is kept (`r = 1`) with probability `keep`, else sunk to `r = floor`
/// ("binary values remove some islets and keep others", opening wide low passages).
/// `heights`: each region gets `r` uniform in `[floor, 1]` (islets sink by different amounts).
/// With the same `point-seed` as a `voronoi` or `voronoi-ds` step, the regions are exactly
/// that step's cells.
#[derive(Clone, Debug, PartialEq)]
pub struct VoronoiRegions {
    /// Number of feature points (default 40).
    pub count: usize,
    /// Binary keep/sink (true, default) or per-region heights.
    pub binary: bool,
    /// Probability that a region is kept, binary mode (default 0.6).
    pub keep: f64,
    /// Factor of sunk regions (binary) or lowest factor (heights) (default 0).
    pub floor: f64,
    /// Seed of the point layout; `None` uses the step seed.
    pub point_seed: Option<u64>,
}

impl VoronoiRegions {
    /// Parameter specs (recipe keys).
    pub const PARAMS: &'static [ParamSpec] = &[
        spec_named(crate::generate::Voronoi::PARAMS, "count"),
        ParamSpec {
            name: "mode",
            kind: ParamKind::Choice(&["binary", "heights"]),
            default: DefaultValue::Text("binary"),
            unit: "",
            doc: "`binary`: regions kept or sunk; `heights`: one random factor per region (seed 001 §3.3.3).",
        },
        ParamSpec {
            name: "keep",
            kind: ParamKind::Float { min: 0.0, max: 1.0 },
            default: DefaultValue::Number(0.6),
            unit: "probability",
            doc: "Binary mode: chance that a region keeps its height.",
        },
        ParamSpec {
            name: "floor",
            kind: ParamKind::Float { min: 0.0, max: 1.0 },
            default: DefaultValue::Number(0.0),
            unit: "",
            doc: "Height factor of sunk regions (binary) or the lowest random factor (heights).",
        },
        spec_named(crate::generate::Voronoi::PARAMS, "point-seed"),
    ];

    /// A checked step.
    pub fn new(count: usize, binary: bool, keep: f64, floor: f64, point_seed: Option<u64>) -> Result<Self> {
        check_number(Self::PARAMS, "count", count as f64)?;
        check_number(Self::PARAMS, "keep", keep)?;
        check_number(Self::PARAMS, "floor", floor)?;
        Ok(Self { count, binary, keep, floor, point_seed })
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        let mode = p.text("mode")?;
        check_text(Self::PARAMS, "mode", mode)?;
        let seed = p.i64("point-seed")?;
        Self::new(
            p.usize("count")?,
            mode == "binary",
            p.f64("keep")?,
            p.f64("floor")?,
            (seed >= 0).then_some(seed as u64),
        )
    }

    /// The region factor of every label, from the step seed.
    pub fn factors(&self, seed: u64) -> Vec<f64> {
        let mut rng = SplitMix64::new(derive_seed(seed, 0x7265_6769));
        (0..self.count)
            .map(|_| {
                let u = rng.next_f64();
                if self.binary {
                    if u < self.keep { 1.0 } else { self.floor }
                } else {
                    self.floor + (1.0 - self.floor) * u
                }
            })
            .collect()
    }

    /// Applies to a heightmap with the step seed.
    pub fn apply(&self, map: &mut Heightmap, seed: u64) -> Result<()> {
        let (w, h) = (map.width(), map.height());
        let points = feature_points(w, h, self.count, self.point_seed.unwrap_or(seed));
        let labels = region_map(w, h, &points)?;
        let factors = self.factors(seed);
        apply_weight(map, |x, y| factors[labels[(x, y)] as usize]);
        Ok(())
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "voronoi-regions",
            category: Category::Shape,
            doc: "Voronoi region map with one factor per region (binary keep/sink or random \
                  heights) multiplied into the terrain: sunk islets open wide low passages.",
            source: "seed 001 §3.3.3 (Modification du terrain de base)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(Self::from_params(p)?)),
        }
    }
}

impl Step for VoronoiRegions {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        self.apply(&mut terrain.height, ctx.seed)
    }
}
