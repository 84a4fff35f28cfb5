//! `voronoi-regions`: region map and region sinking (seed 001 §3.3.3).

use terrasynth_noise::rng::{SplitMix64, derive_seed};

use super::falloff::{apply_weight, apply_weight_from};
use super::world::{floor_of, required};
use crate::generate::{MAX_POINTS_PER_CELL, Voronoi, WorldPoints, feature_points, region_map};
use crate::step::params::{Choice, choice_enum, step_params};
use crate::step::{Category, Frame, Reach, Step, StepContext, StepInfo, Terrain, WorldFrame};
use crate::step::{DefaultValue, ParamKind, Params};
use crate::{Heightmap, Result};

choice_enum! {
    /// How `voronoi-regions` gives each region its factor (seed 001 §3.3.3).
    pub enum RegionMode {
        /// Each region is kept (factor 1) with probability `keep`, else sunk to `floor`.
        Binary = "binary",
        /// Each region gets a factor uniform in `[floor, 1]`.
        Heights = "heights",
    }
}

step_params! {
    /// Region sinking (seed 001 §3.3.3): build the Voronoi region map (each cell labelled by its
    /// nearest feature point, [`region_map`]), give every region one factor, and multiply it into
    /// the heights point-wise, `h' = lo + (h − lo) · r(label)` (relative to the map's minimum).
    ///
    /// `binary`: each region is kept (`r = 1`) with probability `keep`, else sunk to `r = floor`
    /// ("binary values remove some islets and keep others", opening wide low passages).
    /// `heights`: each region gets `r` uniform in `[floor, 1]` (islets sink by different amounts).
    /// With the same `point-seed` as a `voronoi` or `voronoi-ds` step, the regions are exactly
    /// that step's cells.
    ///
    /// **In a world** the regions are those of the `voronoi` step's world points (a Poisson(1)
    /// number per feature-grid cell of `feature-size-m` metres, hashed per world grid cell; the
    /// same points for the same `point-seed`), each cell labelled by its nearest point (ring
    /// search over grid cells; exact ties go to the first point in scan order), and region
    /// factors are hashed from (step seed, grid cell, point index) instead of drawn per label;
    /// `lo` is the bottom of the world's height range. A point step (reach 0); refused without
    /// `feature-size-m`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct VoronoiRegions {
        /// Number of feature points (the `voronoi` step's `count`).
        count: usize = shared(Voronoi::PARAMS, "count"),
        mode: RegionMode = ParamSpec {
            name: "mode",
            label: "Mode",
            kind: ParamKind::Choice(RegionMode::NAMES),
            default: DefaultValue::Text("binary"),
            unit: "",
            doc: "`binary`: regions kept or sunk; `heights`: one random factor per region (seed 001 §3.3.3).",
        },
        keep: f64 = ParamSpec {
            name: "keep",
            label: "Keep chance",
            kind: ParamKind::Float { min: 0.0, max: 1.0 },
            default: DefaultValue::Number(0.6),
            unit: "probability",
            doc: "Binary mode: chance that a region keeps its height.",
        },
        floor: f64 = ParamSpec {
            name: "floor",
            label: "Sunk height",
            kind: ParamKind::Float { min: 0.0, max: 1.0 },
            default: DefaultValue::Number(0.0),
            unit: "",
            doc: "Height factor of sunk regions (binary) or the lowest random factor (heights).",
        },
        /// Seed of the point layout; `None` uses the step seed (the `voronoi` step's `point-seed`).
        point_seed: Option<u64> = shared(Voronoi::PARAMS, "point-seed"),
        /// World recipes: the feature-grid spacing in metres (the `voronoi` step's
        /// `feature-size-m`).
        feature_size_m: Option<f64> = shared(Voronoi::PARAMS, "feature-size-m"),
    }
}

impl VoronoiRegions {
    /// A checked step; `binary` picks [`RegionMode::Binary`], else [`RegionMode::Heights`].
    pub fn new(count: usize, binary: bool, keep: f64, floor: f64, point_seed: Option<u64>) -> Result<Self> {
        let mode = if binary { RegionMode::Binary } else { RegionMode::Heights };
        let s = Self { count, mode, keep, floor, point_seed, feature_size_m: None };
        s.check_ranges()?;
        Ok(s)
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        Self::read_params(p)
    }

    /// The region factor of every label, from the step seed.
    pub fn factors(&self, seed: u64) -> Vec<f64> {
        let mut rng = SplitMix64::new(derive_seed(seed, 0x7265_6769));
        (0..self.count)
            .map(|_| {
                let u = rng.next_f64();
                if self.mode == RegionMode::Binary {
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

    /// The region factor of world point `k` of feature-grid cell `(cx, cy)`, hashed from the
    /// step seed (see the type's "In a world").
    fn world_factor(&self, seed: u64, cx: i64, cy: i64, k: usize) -> f64 {
        let s = derive_seed(derive_seed(derive_seed(seed, cx as u64), cy as u64), k as u64);
        let u = SplitMix64::new(s).next_f64();
        if self.mode == RegionMode::Binary {
            if u < self.keep { 1.0 } else { self.floor }
        } else {
            self.floor + (1.0 - self.floor) * u
        }
    }

    /// Applies to the window `map` of `world` with the step seed (see the type's "In a world").
    pub fn apply_world(&self, map: &mut Heightmap, world: &WorldFrame, seed: u64) -> Result<()> {
        let spacing = self
            .feature_size_m
            .ok_or_else(|| required("feature-size-m", "the feature-grid spacing in metres"))?;
        let points = WorldPoints::of(self.point_seed.unwrap_or(seed));
        let factor_seed = derive_seed(seed, 0x7265_6769);
        // Grid units as the `voronoi` step computes them.
        let to_grid = |c: i64| c as f64 * world.cell_size / spacing;
        apply_weight_from(map, floor_of(world), |i, j| {
            let (x, y) = (to_grid(world.col(i)), to_grid(world.row(j)));
            let (fx, fy) = (x.floor(), y.floor());
            let (cx, cy) = (fx as i64, fy as i64);
            let margin = (x - fx).min(fx + 1.0 - x).min(y - fy).min(fy + 1.0 - y);
            let mut buf = [[0.0f64; 2]; MAX_POINTS_PER_CELL];
            let mut best = (f64::INFINITY, (cx, cy, 0usize));
            // Rings of grid cells until no point beyond can be nearer (at most 64: an empty
            // 64-ring has probability far below anything measurable).
            for ring in 0..64i64 {
                for by in cy - ring..=cy + ring {
                    for bx in cx - ring..=cx + ring {
                        if (bx - cx).abs().max((by - cy).abs()) != ring {
                            continue;
                        }
                        let n = points.cell(bx, by, &mut buf);
                        for (k, p) in buf[..n].iter().enumerate() {
                            let d = (p[0] - x) * (p[0] - x) + (p[1] - y) * (p[1] - y);
                            if d < best.0 {
                                best = (d, (bx, by, k));
                            }
                        }
                    }
                }
                let reach = ring as f64 + margin;
                if best.0 <= reach * reach {
                    break;
                }
            }
            let (bx, by, k) = best.1;
            self.world_factor(factor_seed, bx, by, k)
        });
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
        match &ctx.frame {
            Frame::Map => self.apply(&mut terrain.height, ctx.seed),
            Frame::World(world) => self.apply_world(&mut terrain.height, world, ctx.seed),
        }
    }

    /// A point step once `feature-size-m` is given (global without it).
    fn reach(&self, _world: &WorldFrame) -> Reach {
        if self.feature_size_m.is_some() { Reach::Cells(0) } else { Reach::Global }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::ParamValue;
    use crate::step::params::assert_ranges_enforced;

    /// A shaping step's constructor refuses exactly what its specs refuse, including the two
    /// parameters it shares with `voronoi` by name.
    #[test]
    fn voronoi_regions_enforces_exactly_its_spec_ranges() {
        let build = |name: &str, v: f64| {
            let p = Params::defaults(VoronoiRegions::PARAMS).with(name, ParamValue::Number(v));
            VoronoiRegions::read_params(&p).map(drop)
        };
        assert_eq!(assert_ranges_enforced(VoronoiRegions::PARAMS, &build), 5);
        assert_eq!(spec_of("count"), crate::step::params::spec_named(Voronoi::PARAMS, "count"));
        assert_eq!(spec_of("point-seed"), crate::step::params::spec_named(Voronoi::PARAMS, "point-seed"));
        let d = VoronoiRegions::default();
        assert_eq!(d, VoronoiRegions::new(40, true, 0.6, 0.0, None).unwrap());
        assert!(VoronoiRegions::new(40, false, 1.5, 0.0, None).is_err());
    }

    fn spec_of(name: &str) -> crate::step::ParamSpec {
        crate::step::params::spec_named(VoronoiRegions::PARAMS, name)
    }
}
