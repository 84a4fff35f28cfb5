//! Fall-off maps (seed 003), island weighting (seed 004 §8) and archipelagos.

use rayon::prelude::*;
use terrasynth_noise::detmath::smoothstep;
use terrasynth_noise::rng::{SplitMix64, derive_seed};
use terrasynth_noise::{CellRegion, NoiseKind};

use super::basic::range;
use super::world::{centre, dist2, floor_of, metres, required, warp_fields, world_of};
use crate::step::params::{Choice, choice_enum, step_params};
use crate::step::{Category, Reach, Step, StepContext, StepInfo, Terrain, WorldFrame};
use crate::step::{DefaultValue, ParamKind, Params};
use crate::{Error, Heightmap, Result};

/// Multiplies heights by a weight field relative to the map's minimum:
/// `h' = lo + (h − lo) · w(x, y)`, so weight 0 sends a cell to the lowest height (the sea floor)
/// whatever the map's units, and weight 1 keeps it. Rows in parallel.
pub(crate) fn apply_weight(map: &mut Heightmap, weight: impl Fn(usize, usize) -> f64 + Sync) {
    let (lo, _) = range(map);
    apply_weight_from(map, lo, weight);
}

/// [`apply_weight`] relative to a given floor `lo` (in a world, the bottom of the declared
/// height range, never the window's minimum).
pub(crate) fn apply_weight_from(map: &mut Heightmap, lo: f32, weight: impl Fn(usize, usize) -> f64 + Sync) {
    let width = map.width();
    map.as_mut_slice().par_chunks_mut(width).enumerate().for_each(|(y, row)| {
        for (x, v) in row.iter_mut().enumerate() {
            *v = weigh(*v, lo, weight(x, y));
        }
    });
}

/// One cell of [`apply_weight_from`]: `lo + (h − lo)·weight`.
#[inline]
fn weigh(h: f32, lo: f32, weight: f64) -> f32 {
    (lo as f64 + (h - lo) as f64 * weight) as f32
}

/// Evaluates a piecewise-linear curve through `points` (values at evenly spaced inputs
/// 0, 1/(n−1), …, 1) at `t` in [0, 1].
pub fn eval_curve(points: &[f64], t: f64) -> f64 {
    match points.len() {
        0 => t,
        1 => points[0],
        n => {
            let u = t.clamp(0.0, 1.0) * (n - 1) as f64;
            // `u` is not negative (or NaN: 0 either way), so truncation is its floor, without
            // `floor`'s library call on x86-64 targets without SSE4.1.
            let i = (u as usize).min(n - 2);
            points[i] + (points[i + 1] - points[i]) * (u - i as f64)
        }
    }
}

/// A curve of [`eval_curve`] of 2 to [`CurveTable::POINTS`] points as two tables, its points
/// and their differences, padded so that any index below the table's length is in range: the
/// curve on SIMD lanes (one gather per table instead of a lookup per cell).
struct CurveTable {
    /// The points, then zeros.
    points: [f64; Self::POINTS],
    /// `points[i + 1] − points[i]` (the same subtraction as [`eval_curve`]'s), then zeros.
    steps: [f64; Self::POINTS],
    /// Number of points.
    n: usize,
}

impl CurveTable {
    /// The longest curve (the `curve` key's length).
    const POINTS: usize = 64;

    /// The tables of `points`, or `None` for fewer than 2 or more than [`Self::POINTS`].
    fn new(points: &[f64]) -> Option<Self> {
        let n = points.len();
        if !(2..=Self::POINTS).contains(&n) {
            return None;
        }
        let (mut table, mut steps) = ([0.0; Self::POINTS], [0.0; Self::POINTS]);
        table[..n].copy_from_slice(points);
        for i in 0..n - 1 {
            steps[i] = points[i + 1] - points[i];
        }
        Some(Self { points: table, steps, n })
    }

    /// `weigh(v, lo, eval_curve(points, 1 − clamp(d, 0, 1)))` for each cell `v` of `row` and
    /// its `d`, the coefficient multiplied by the cell's `taper` when there is one (the edge
    /// margin's; a factor of 1 keeps the coefficient's bits): the same bits as cell by cell, on
    /// AVX2 lanes where the CPU has them.
    fn weigh_row(&self, lo: f32, row: &mut [f32], d: &[f64], taper: Option<&[f64]>) {
        #[inline(always)]
        fn rows(table: &CurveTable, lo: f32, row: &mut [f32], d: &[f64], taper: Option<&[f64]>) {
            match taper {
                None => table.weigh_row_lanes::<false>(lo, row, d, &[]),
                Some(taper) => table.weigh_row_lanes::<true>(lo, row, d, taper),
            }
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            #[target_feature(enable = "avx2")]
            fn avx2(table: &CurveTable, lo: f32, row: &mut [f32], d: &[f64], taper: Option<&[f64]>) {
                rows(table, lo, row, d, taper)
            }
            // SAFETY: the CPU has AVX2 (tested just above).
            return unsafe { avx2(self, lo, row, d, taper) };
        }
        rows(self, lo, row, d, taper)
    }

    /// [`CurveTable::weigh_row`], inlined into each instruction set's copy, with (`TAPERED`,
    /// `taper` at least as long as `row`) or without the taper. [`eval_curve`]'s arithmetic:
    /// the segment index is the truncation of `u` ≤ 63 (as `i32`, which SIMD lanes convert to,
    /// then masked so that the compiler sees it in range: it already is).
    #[inline(always)]
    fn weigh_row_lanes<const TAPERED: bool>(&self, lo: f32, row: &mut [f32], d: &[f64], taper: &[f64]) {
        let (top, last) = ((self.n - 1) as f64, (self.n - 2) as i32);
        let taper = &taper[..if TAPERED { row.len() } else { 0 }];
        for (k, (v, &d)) in row.iter_mut().zip(d).enumerate() {
            let u = (1.0 - d.clamp(0.0, 1.0)).clamp(0.0, 1.0) * top;
            let i = ((u as i32).min(last) as usize) & (Self::POINTS - 1);
            let c = self.points[i] + self.steps[i] * (u - i as f64);
            *v = weigh(*v, lo, if TAPERED { c * taper[k] } else { c });
        }
    }
}

/// `centre-m`: a world centre in metres, or none.
const CENTRE_M: crate::step::ParamSpec = crate::step::ParamSpec {
    name: "centre-m",
    label: "World centre",
    kind: ParamKind::List { min: -1.0e12, max: 1.0e12, min_len: 0, max_len: 2 },
    default: DefaultValue::List(&[]),
    unit: "m",
    doc: "World recipes only: centre [x, y] in world metres; none (the default) leaves the \
          terrain unchanged, an endless continent. Refused in a map recipe.",
};

/// `radius-m`: a world radius in metres.
const RADIUS_M: crate::step::ParamSpec = crate::step::ParamSpec {
    name: "radius-m",
    label: "World radius",
    kind: ParamKind::Float { min: 1.0, max: 1.0e12 },
    default: DefaultValue::Absent,
    unit: "m",
    doc: "World recipes only (required with `centre-m`): distance from the centre at which the \
          weight reaches its border value. Refused in a map recipe.",
};

/// The world keys of `falloff` and `island`.
const WORLD_DISC: &[crate::step::ParamSpec] = &[CENTRE_M, RADIUS_M];

/// A world centre and radius, or `None` for an endless continent (no centre).
fn world_disc(centre_m: &[f64], radius_m: Option<f64>) -> Result<Option<(f64, f64, f64)>> {
    match (centre(centre_m), radius_m) {
        (None, _) => Ok(None),
        (Some((x, y)), Some(r)) => Ok(Some((x, y, r))),
        (Some(_), None) => Err(required("radius-m", "a radius in metres with `centre-m`")),
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
    ///
    /// **In a world** the centre is `centre-m` and the half side `radius-m`, in world metres:
    /// `d = |p − c| / R` (circle) or `max(|x − cx|, |y − cy|) / R` (rectangle) at each cell's
    /// world position `p`, clamped to [0, 1] (so everything farther than R keeps the border
    /// value), and `lo` is the bottom of the world's height range. Without `centre-m` the step
    /// leaves the terrain unchanged (an endless continent). A point step: reach 0, each cell
    /// from its world coordinates, so any window equals the same cells of a larger window.
    ///
    /// **Coast warp** (`coast-warp` > 0; ours, not the seed's). A circle or rectangle passed
    /// through a curve gives a coast that is a circle or a rectangle, however rough the noise
    /// it multiplies (issue 13: "coastlines that are not circles"). With a warp, `d` is measured
    /// at the cell's position moved by `warp · R · (nx, ny)`, where `R` is the radius (half
    /// the shorter side; `radius-m` in a world) and `nx`, `ny` are two fBm fields of Perlin
    /// noise (5 octaves, persistence 0.5, lacunarity 2, clamped to [−1, 1]; seeds derived from
    /// the step seed) whose largest features are `coast-size · R` across. This is domain
    /// warping (Quilez, "Domain warping", 2002; the seed's perturbation, seed 001 §3.2, moves
    /// the heights instead): the level sets of `d`, hence the coast, become fractal curves
    /// with bays and headlands at five scales, while the terrain inside keeps its own detail.
    /// The interior stays land as long as the warp is smaller than the margin between the
    /// curve's land part and the coast. In a world the warp's noise is sampled at world cell
    /// positions, so windows still agree. `coast-warp = 0` (the default) is exactly the seed's
    /// fall-off.
    ///
    /// **Edge margin** (`edge-margin` > 0; maps only, ours). A warp can move the coast out to
    /// the map's border, where an island is cut off by the frame (`eroded-island` had land on
    /// its border at 9 of seeds 1–36 at 513²). With a margin `m`, each cell's coefficient is
    /// multiplied by `t = s²(3 − 2s)`, `s = min(1, e / (m·R))`, `e` the cell's distance in
    /// cells to the nearest border (the smaller of its column's and its row's): the border
    /// cells sink to the map's floor and the band `m·R` cells wide fades to it. Cells farther
    /// in keep their bits. A world has no border, so its recipes refuse a margin.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Falloff {
        shape: FalloffShape = ParamSpec {
                name: "shape",
                label: "Shape",
                kind: ParamKind::Choice(FalloffShape::NAMES),
                default: DefaultValue::Text("circle"),
                unit: "",
                doc: "`circle`: distance to the centre over half the shorter side; `rectangle`: the \
                      larger of the x and y distances over the half sides (seed 003).",
            },
        curve: Vec<f64> = ParamSpec {
                name: "curve",
                label: "Fall-off curve",
                kind: ParamKind::List { min: 0.0, max: 1.0, min_len: 2, max_len: 64 },
                default: DefaultValue::List(&[0.0, 0.6, 0.9, 1.0, 1.0]),
                unit: "",
                doc: "Fall-off curve (seed 003 `falloffCurve`): coefficients at evenly spaced inputs \
                      from border (first) to centre (last), linearly interpolated. [0, 1] is linear.",
            },
        /// How far the warp displaces the points where `d` is measured (0: no warp).
        coast_warp: f64 = ParamSpec {
                name: "coast-warp",
                label: "Coast warp",
                kind: ParamKind::Float { min: 0.0, max: 1.0 },
                default: DefaultValue::Number(0.0),
                unit: "fraction of the radius",
                doc: "How far a smooth noise field moves the points where the fall-off is measured, \
                      relative to the radius (half the shorter side; `radius-m` in a world): 0, the \
                      default, is the seed's exact circle or rectangle; 0.3-0.5 cuts bays and \
                      headlands into the coast at every scale (give the curve a narrower land part \
                      so the warped coast stays inside the map).",
            },
        /// Size of the warp's largest features.
        coast_size: f64 = ParamSpec {
                name: "coast-size",
                label: "Coast feature size",
                kind: ParamKind::Float { min: 0.01, max: 10.0 },
                default: DefaultValue::Number(0.4),
                unit: "fraction of the radius",
                doc: "Size of the largest bays and headlands of a warped coast, relative to the \
                      radius (the warp has 5 octaves, down to 1/16 of it).",
            },
        /// Width of the band along the map's border where the heights sink to the floor.
        edge_margin: f64 = ParamSpec {
                name: "edge-margin",
                label: "Edge margin",
                kind: ParamKind::Float { min: 0.0, max: 1.0 },
                default: DefaultValue::Number(0.0),
                unit: "fraction of the radius",
                doc: "Maps only: the fall-off's coefficient is multiplied by a smoothstep from 0 on \
                      the map's border to 1 this far inside it (relative to the radius), so the \
                      border cells sink to the map's floor and no land touches the map's edge, \
                      whatever the coast warp. 0, the default: no band. A world has no border: a \
                      world recipe may only leave it at 0.",
            },
        /// World centre `[x, y]` in metres, or empty (world recipes only).
        centre_m: Vec<f64> = shared(WORLD_DISC, "centre-m"),
        /// World radius in metres (world recipes only).
        radius_m: Option<f64> = shared(WORLD_DISC, "radius-m"),
    }
}

/// Octaves of the coast warp's fBm.
const COAST_OCTAVES: u32 = 5;

/// The two fields (x and y) of the coast warp over the `width × height` cells from cell
/// `origin`, `scale` noise units per cell, each an fBm of Perlin noise (seeds
/// `derive_seed(seed, 0)` and `(seed, 1)`) clamped to [−1, 1].
fn coast_fields(
    origin: (i64, i64),
    (width, height): (usize, usize),
    scale: f64,
    seed: u64,
) -> Result<[Vec<f32>; 2]> {
    let cells = &CellRegion {
        col0: origin.0,
        row0: origin.1,
        width,
        height,
        scale_x: scale,
        scale_y: scale,
        offset_x: 0.0,
        offset_y: 0.0,
    };
    warp_fields(cells, NoiseKind::Perlin, COAST_OCTAVES, seed)
}

impl Falloff {
    /// A checked step (no coast warp).
    pub fn new(shape: FalloffShape, curve: Vec<f64>) -> Result<Self> {
        let s = Self {
            shape,
            curve,
            coast_warp: 0.0,
            coast_size: 0.4,
            edge_margin: 0.0,
            centre_m: Vec::new(),
            radius_m: None,
        };
        s.check_ranges()?;
        Ok(s)
    }

    /// With the coast warp `warp` and feature size `size` (both fractions of the radius).
    pub fn with_coast(mut self, warp: f64, size: f64) -> Result<Self> {
        (self.coast_warp, self.coast_size) = (warp, size);
        self.check_ranges()?;
        Ok(self)
    }

    /// Refuses an edge margin in a world, which has no border.
    fn no_edge_margin(&self) -> Result<()> {
        if self.edge_margin == 0.0 {
            return Ok(());
        }
        Err(Error::param("edge-margin", self.edge_margin, "0 in a world recipe (a world has no map border)"))
    }

    /// With an edge margin of `margin` (a fraction of the radius; see the type's "Edge margin").
    pub fn with_edge_margin(mut self, margin: f64) -> Result<Self> {
        self.edge_margin = margin;
        self.check_ranges()?;
        Ok(self)
    }

    /// The edge taper of every column (`x`) or row (`y`) of a side of `n` cells: a smoothstep
    /// of the distance to the nearer end, 0 there and 1 from `edge-margin · r` cells in. A cell's
    /// taper is the smaller of its column's and its row's. `None` without a margin.
    fn edge_taper(&self, n: usize, r: f64) -> Option<Vec<f64>> {
        (self.edge_margin > 0.0).then(|| (0..n).map(|i| self.taper_at(i, n, r)).collect())
    }

    /// The edge taper of column or row `i` of a side of `n` cells (see [`Self::edge_taper`]).
    fn taper_at(&self, i: usize, n: usize, r: f64) -> f64 {
        let e = i.min(n - 1 - i) as f64;
        smoothstep(e / (self.edge_margin * r))
    }

    /// `d` of the shape at offset `(dx, dy)` from the centre, with half sides `(hw, hh)`.
    fn distance(&self, dx: f64, dy: f64, hw: f64, hh: f64) -> f64 {
        match self.shape {
            FalloffShape::Circle => (dx * dx + dy * dy).sqrt() / hw.min(hh),
            FalloffShape::Rectangle => (dx.abs() / hw).max(dy.abs() / hh),
        }
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        Self::read_params(p)
    }

    /// The fall-off coefficient of cell `(x, y)` in a `width × height` map (without the coast
    /// warp, with the edge margin's taper).
    pub fn coefficient(&self, x: usize, y: usize, width: usize, height: usize) -> f64 {
        let (hw, hh) = (width as f64 * 0.5, height as f64 * 0.5);
        let d = self.distance(x as f64 - hw, y as f64 - hh, hw, hh);
        let c = eval_curve(&self.curve, 1.0 - d.clamp(0.0, 1.0));
        if self.edge_margin > 0.0 {
            let r = hw.min(hh);
            return c * self.taper_at(x, width, r).min(self.taper_at(y, height, r));
        }
        c
    }

    /// Applies to a heightmap, without a coast warp (`coast-warp` is ignored: see
    /// [`Falloff::apply_seeded`]).
    pub fn apply(&self, map: &mut Heightmap) {
        let (w, h) = (map.width(), map.height());
        apply_weight(map, |x, y| self.coefficient(x, y, w, h));
    }

    /// Applies to a heightmap with the step seed `seed`, which draws the coast warp (see the
    /// type's "Coast warp"); without a warp this is [`Falloff::apply`].
    pub fn apply_seeded(&self, map: &mut Heightmap, seed: u64) -> Result<()> {
        if self.coast_warp == 0.0 {
            self.apply(map);
            return Ok(());
        }
        let (w, h) = (map.width(), map.height());
        let (hw, hh) = (w as f64 * 0.5, h as f64 * 0.5);
        let r = hw.min(hh);
        let reach = self.coast_warp * r;
        let [nx, ny] = coast_fields((0, 0), (w, h), 1.0 / (self.coast_size * r), seed)?;
        // Row by row in two loops, the same arithmetic as `apply_weight` with the weight per
        // cell: first every cell's distance (no lookup: SIMD lanes, the shape's test taken out
        // of the loop by the compiler), then the curve and the weighting.
        let (lo, _) = range(map);
        let curve = &self.curve;
        let table = CurveTable::new(curve);
        let tapers = self.edge_taper(w, r).zip(self.edge_taper(h, r));
        map.as_mut_slice().par_chunks_mut(w).enumerate().for_each_init(
            || (vec![0.0f64; w], vec![0.0f64; w]),
            |(d, taper), (y, row)| {
                let (nx, ny) = (&nx[y * w..(y + 1) * w], &ny[y * w..(y + 1) * w]);
                for (x, (d, (&nx, &ny))) in d.iter_mut().zip(nx.iter().zip(ny)).enumerate() {
                    let dx = x as f64 - hw + reach * nx as f64;
                    let dy = y as f64 - hh + reach * ny as f64;
                    *d = self.distance(dx, dy, hw, hh);
                }
                // The edge margin's taper of this row's cells (a factor of 1 leaves the
                // coefficient's bits as they are).
                let taper = tapers.as_ref().map(|(tx, ty)| {
                    for (t, &tx) in taper.iter_mut().zip(tx) {
                        *t = tx.min(ty[y]);
                    }
                    &taper[..]
                });
                match &table {
                    Some(table) => table.weigh_row(lo, row, d, taper),
                    None => {
                        for (x, (v, &d)) in row.iter_mut().zip(d.iter()).enumerate() {
                            let c = eval_curve(curve, 1.0 - d.clamp(0.0, 1.0));
                            *v = weigh(*v, lo, taper.map_or(c, |t| c * t[x]));
                        }
                    }
                }
            },
        );
        Ok(())
    }

    /// Applies to the window `map` of `world` with the step seed `seed` (see the type's "In a
    /// world").
    pub fn apply_world(&self, map: &mut Heightmap, world: &WorldFrame, seed: u64) -> Result<()> {
        self.no_edge_margin()?;
        let Some((cx, cy, r)) = world_disc(&self.centre_m, self.radius_m)? else { return Ok(()) };
        let (w, h) = (map.width(), map.height());
        // The warp's noise at world cell positions (cell × cell size / feature size): the same
        // values whatever window holds a cell.
        let warp = if self.coast_warp > 0.0 {
            let scale = world.cell_size / (self.coast_size * r);
            Some(coast_fields((world.x0, world.y0), (w, h), scale, seed)?)
        } else {
            None
        };
        let reach = self.coast_warp * r;
        apply_weight_from(map, floor_of(world), |i, j| {
            let (mut x, mut y) = metres(world, i, j);
            if let Some([nx, ny]) = &warp {
                x += reach * nx[j * w + i] as f64;
                y += reach * ny[j * w + i] as f64;
            }
            eval_curve(&self.curve, 1.0 - self.distance(x - cx, y - cy, r, r).clamp(0.0, 1.0))
        });
        Ok(())
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
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        match world_of(&ctx.frame) {
            None => self.apply_seeded(&mut terrain.height, ctx.seed)?,
            Some(world) => self.apply_world(&mut terrain.height, world, ctx.seed)?,
        }
        Ok(())
    }

    /// A point step in a world (each cell from its world position).
    fn reach(&self, _world: &WorldFrame) -> Reach {
        Reach::Cells(0)
    }

    /// `radius-m` goes with `centre-m`; a world has no border for `edge-margin`.
    fn check_world(&self, _world: &WorldFrame) -> Result<()> {
        self.no_edge_margin()?;
        world_disc(&self.centre_m, self.radius_m).map(drop)
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
    ///
    /// **In a world** the centre is `centre-m` (world metres) and the weight reaches 0 at
    /// `radius-m`: `p = max(0, 1 − |p − c| / R) · h0`, with `lo` the bottom of the world's
    /// height range. Without `centre-m` the terrain is left unchanged (an endless continent).
    /// A point step (reach 0).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Island {
        h0: f64 = ParamSpec {
        name: "h0",
        label: "Centre height",
        kind: ParamKind::Float { min: 0.0, max: 10.0 },
        default: DefaultValue::Number(1.5),
        unit: "",
        doc: "Centre height factor (seed 004 §8): the weight is h0 at the centre and 0 at the \
              far edge; 2 gives a high central mountain.",
    },
        centre_x: f64 = ParamSpec {
                name: "centre-x",
                label: "Centre x",
                kind: FRACTION,
                default: DefaultValue::Number(0.5),
                unit: "fraction of the width",
                doc: "Island centre, x.",
            },
        centre_y: f64 = ParamSpec {
                name: "centre-y",
                label: "Centre y",
                kind: FRACTION,
                default: DefaultValue::Number(0.5),
                unit: "fraction of the height",
                doc: "Island centre, y.",
            },
        /// World centre `[x, y]` in metres, or empty (world recipes only).
        centre_m: Vec<f64> = shared(WORLD_DISC, "centre-m"),
        /// World radius in metres (world recipes only).
        radius_m: Option<f64> = shared(WORLD_DISC, "radius-m"),
    }
}

const FRACTION: ParamKind = ParamKind::Float { min: 0.0, max: 1.0 };

impl Island {
    /// A checked step.
    pub fn new(h0: f64, centre_x: f64, centre_y: f64) -> Result<Self> {
        let s = Self { h0, centre_x, centre_y, centre_m: Vec::new(), radius_m: None };
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

    /// Applies to the window `map` of `world` (see the type's "In a world").
    pub fn apply_world(&self, map: &mut Heightmap, world: &WorldFrame) -> Result<()> {
        let Some((cx, cy, r)) = world_disc(&self.centre_m, self.radius_m)? else { return Ok(()) };
        let h0 = self.h0;
        apply_weight_from(map, floor_of(world), |i, j| {
            let (x, y) = metres(world, i, j);
            (1.0 - dist2(x, y, cx, cy).sqrt() / r).max(0.0) * h0
        });
        Ok(())
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
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        match world_of(&ctx.frame) {
            None => self.apply(&mut terrain.height),
            Some(world) => self.apply_world(&mut terrain.height, world)?,
        }
        Ok(())
    }

    /// A point step in a world.
    fn reach(&self, _world: &WorldFrame) -> Reach {
        Reach::Cells(0)
    }

    /// `radius-m` goes with `centre-m`.
    fn check_world(&self, _world: &WorldFrame) -> Result<()> {
        world_disc(&self.centre_m, self.radius_m).map(drop)
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
    ///
    /// **In a world** lengths are world metres and `lo` is the bottom of the world's height
    /// range. The centres are `centres-m` (x, y pairs, each of radius `radius-m`) or, when that
    /// list is empty and `spacing-m` is given, an endless archipelago: the world is cut into
    /// squares of `spacing-m`, and square `(gx, gy)` holds one island whose centre is uniform in
    /// the middle [0.15, 0.85]² of the square and whose radius is `radius-m · u`, `u` uniform in
    /// [0.6, 1], all drawn from `derive_seed(derive_seed(step seed, gx), gy)` (hashed per world
    /// square, so any window sees the same islands). With neither, the terrain is left
    /// unchanged (an endless continent). A point step (reach 0): each cell looks at the
    /// squares within `radius-m` of it.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Archipelago {
        /// Centre height factor (the `island` step's `h0`).
        h0: f64 = shared(Island::PARAMS, "h0"),
        count: u32 = ParamSpec {
                name: "count",
                label: "Count",
                kind: ParamKind::Int { min: 1, max: 256 },
                default: DefaultValue::Number(5.0),
                unit: "islands",
                doc: "Number of random centres (used when `centres` is empty).",
            },
        radius: f64 = ParamSpec {
                name: "radius",
                label: "Radius",
                kind: ParamKind::Float { min: 0.01, max: 2.0 },
                default: DefaultValue::Number(0.3),
                unit: "fraction of the longer side",
                doc: "Distance at which an island's weight reaches 0.",
            },
        centres: Vec<f64> = ParamSpec {
                name: "centres",
                label: "Centres",
                kind: ParamKind::List { min: 0.0, max: 1.0, min_len: 0, max_len: 512 },
                default: DefaultValue::List(&[]),
                unit: "fractions of width/height",
                doc: "Island centres as x, y pairs; empty = `count` random centres from the step seed.",
            },
        centres_m: Vec<f64> = ParamSpec {
                name: "centres-m",
                label: "World centres",
                kind: ParamKind::List { min: -1.0e12, max: 1.0e12, min_len: 0, max_len: 512 },
                default: DefaultValue::List(&[]),
                unit: "m",
                doc: "World recipes only: island centres as x, y pairs in world metres; empty = \
                      islands hashed per square of `spacing-m` (or none without it). Refused in a \
                      map recipe.",
            },
        radius_m: Option<f64> = ParamSpec {
                name: "radius-m",
                label: "World radius",
                kind: ParamKind::Float { min: 1.0, max: 1.0e12 },
                default: DefaultValue::Absent,
                unit: "m",
                doc: "World recipes only (required with `centres-m` or `spacing-m`): island radius \
                      in metres (hashed islands: the largest, each is 0.6 to 1 times it; at most 8 × \
                      `spacing-m`).",
            },
        spacing_m: Option<f64> = ParamSpec {
                name: "spacing-m",
                label: "World spacing",
                kind: ParamKind::Float { min: 1.0, max: 1.0e12 },
                default: DefaultValue::Absent,
                unit: "m",
                doc: "World recipes only: side of the world squares that each hold one hashed island \
                      (an endless archipelago), used when `centres-m` is empty; at least the cell size.",
            },
    }
}

/// Largest `radius-m / spacing-m` of an endless archipelago: each cell then looks at no more
/// than (2·8 + 2)² squares (a fuzzed recipe with 12 km islands every 30 m ran past libFuzzer's
/// 10 s timeout on a 17² window).
pub const MAX_RADIUS_PER_SPACING: f64 = 8.0;

impl Archipelago {
    /// A checked step (`centres` must have an even length).
    pub fn new(h0: f64, count: u32, radius: f64, centres: Vec<f64>) -> Result<Self> {
        let s = Self { h0, count, radius, centres, centres_m: Vec::new(), radius_m: None, spacing_m: None };
        s.checked()
    }

    /// Range checks plus the pairs rule of both centre lists.
    fn checked(self) -> Result<Self> {
        self.check_ranges()?;
        crate::step::params::check_pairs(&[("centres", &self.centres), ("centres-m", &self.centres_m)])?;
        if let (true, Some(spacing), Some(radius)) =
            (self.centres_m.is_empty(), self.spacing_m, self.radius_m)
            && radius > MAX_RADIUS_PER_SPACING * spacing
        {
            // Every cell looks at the squares within the radius: (2·radius/spacing + 1)² of them.
            return Err(crate::Error::param(
                "radius-m",
                radius,
                format!(
                    "at most {MAX_RADIUS_PER_SPACING} × spacing-m = {} m (each cell looks at every \
                     square within the radius)",
                    MAX_RADIUS_PER_SPACING * spacing
                ),
            ));
        }
        Ok(self)
    }

    /// The same step placed in world coordinates: `centres_m` (x, y pairs in metres; empty for
    /// islands hashed per square of `spacing_m`), island radius `radius_m` metres.
    pub fn in_world(self, centres_m: Vec<f64>, radius_m: f64, spacing_m: Option<f64>) -> Result<Self> {
        Self { centres_m, radius_m: Some(radius_m), spacing_m, ..self }.checked()
    }

    /// The hashed island of world square `(gx, gy)` of side `spacing` metres (see the type's
    /// docs): centre x, y and radius in metres.
    fn hashed_island(seed: u64, gx: i64, gy: i64, spacing: f64, radius: f64) -> [f64; 3] {
        let mut rng = SplitMix64::new(derive_seed(derive_seed(seed, gx as u64), gy as u64));
        let x = (gx as f64 + rng.range_f64(0.15, 0.85)) * spacing;
        let y = (gy as f64 + rng.range_f64(0.15, 0.85)) * spacing;
        [x, y, radius * rng.range_f64(0.6, 1.0)]
    }

    /// The island radius in metres of a world archipelago, `None` when it places no island
    /// (neither `centres-m` nor `spacing-m`); an error when `radius-m` is missing.
    fn world_radius(&self) -> Result<Option<f64>> {
        if self.centres_m.is_empty() && self.spacing_m.is_none() {
            return Ok(None);
        }
        self.radius_m.map(Some).ok_or_else(|| required("radius-m", "an island radius in metres"))
    }

    /// Applies to the window `map` of `world` with the step seed (see the type's "In a world").
    pub fn apply_world(&self, map: &mut Heightmap, world: &WorldFrame, seed: u64) -> Result<()> {
        let dome = |x: f64, y: f64, [cx, cy, r]: [f64; 3]| smoothstep(1.0 - dist2(x, y, cx, cy).sqrt() / r);
        let h0 = self.h0;
        let lo = floor_of(world);
        let Some(radius) = self.world_radius()? else { return Ok(()) };
        if !self.centres_m.is_empty() {
            let islands: Vec<[f64; 3]> =
                self.centres_m.chunks_exact(2).map(|c| [c[0], c[1], radius]).collect();
            apply_weight_from(map, lo, |i, j| {
                let (x, y) = metres(world, i, j);
                islands.iter().fold(0.0f64, |best, &island| best.max(dome(x, y, island))) * h0
            });
            return Ok(());
        }
        let spacing = self.spacing_m.unwrap_or(1.0);
        if spacing < map.cell_size() {
            return Err(crate::Error::param(
                "spacing-m",
                spacing,
                format!("at least the cell size ({} m): one island per square", map.cell_size()),
            ));
        }
        // The squares whose island can reach the window, hashed once.
        let square = |m: f64| (m / spacing).floor() as i64;
        let (w, h) = (map.width(), map.height());
        let (x_lo, y_lo) = metres(world, 0, 0);
        let (x_hi, y_hi) = metres(world, w - 1, h - 1);
        let (gx0, gy0) = (square(x_lo - radius), square(y_lo - radius));
        let (gx1, gy1) = (square(x_hi + radius), square(y_hi + radius));
        let cols = (gx1 - gx0 + 1) as usize;
        crate::memory::check_cells(cols, (gy1 - gy0 + 1) as usize, 24, "archipelago squares")?;
        let islands: Vec<[f64; 3]> = (gy0..=gy1)
            .flat_map(|gy| (gx0..=gx1).map(move |gx| (gx, gy)))
            .map(|(gx, gy)| Self::hashed_island(seed, gx, gy, spacing, radius))
            .collect();
        apply_weight_from(map, lo, |i, j| {
            let (x, y) = metres(world, i, j);
            let mut best = 0.0f64;
            for gy in square(y - radius).max(gy0)..=square(y + radius).min(gy1) {
                for gx in square(x - radius).max(gx0)..=square(x + radius).min(gx1) {
                    let island = islands[(gy - gy0) as usize * cols + (gx - gx0) as usize];
                    best = best.max(dome(x, y, island));
                }
            }
            best * h0
        });
        Ok(())
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
                best.max(smoothstep(1.0 - d / r))
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
            build: |p| Ok(Box::new(Self::read_params(p)?.checked()?)),
        }
    }
}

impl Step for Archipelago {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        match world_of(&ctx.frame) {
            None => self.apply(&mut terrain.height, ctx.seed),
            Some(world) => self.apply_world(&mut terrain.height, world, ctx.seed)?,
        }
        Ok(())
    }

    /// A point step in a world.
    fn reach(&self, _world: &WorldFrame) -> Reach {
        Reach::Cells(0)
    }

    /// `radius-m` goes with `centres-m` or `spacing-m`.
    fn check_world(&self, _world: &WorldFrame) -> Result<()> {
        self.world_radius().map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The curve on lanes is the per-cell formula bit for bit, with and without the edge
    /// margin's taper: curves of 2 to 64 points, distances inside, on the edges of and outside
    /// [0, 1], NaN among them, rows of every length around the lane counts.
    #[test]
    fn curve_rows_equal_the_per_cell_curve() {
        let mut rng = SplitMix64::new(7);
        for n in [2, 3, 5, 6, 17, 63, 64] {
            let points: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
            let table = CurveTable::new(&points).unwrap();
            for len in [1, 3, 4, 7, 8, 9, 33] {
                let d: Vec<f64> = (0..len)
                    .map(|k| match k % 7 {
                        0 => 0.0,
                        1 => 1.0,
                        2 => -0.3,
                        3 => 1.7,
                        4 if n == 17 => f64::NAN,
                        _ => rng.next_f64(),
                    })
                    .collect();
                let heights: Vec<f32> = (0..len).map(|_| rng.next_f64() as f32 * 3.0 - 1.0).collect();
                let want: Vec<u32> = heights
                    .iter()
                    .zip(&d)
                    .map(|(&h, &d)| weigh(h, -1.5, eval_curve(&points, 1.0 - d.clamp(0.0, 1.0))).to_bits())
                    .collect();
                let mut row = heights.clone();
                table.weigh_row(-1.5, &mut row, &d, None);
                assert_eq!(
                    row.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want,
                    "{n} points, {len} cells"
                );
                // With an edge taper: the coefficient times the taper, per cell; a taper of 1
                // gives the untapered bits.
                let taper: Vec<f64> = (0..len).map(|k| [1.0, 0.0, rng.next_f64()][k % 3]).collect();
                let want_tapered: Vec<u32> = heights
                    .iter()
                    .zip(&d)
                    .zip(&taper)
                    .map(|((&h, &d), &t)| {
                        weigh(h, -1.5, eval_curve(&points, 1.0 - d.clamp(0.0, 1.0)) * t).to_bits()
                    })
                    .collect();
                let mut row = heights.clone();
                table.weigh_row(-1.5, &mut row, &d, Some(&taper));
                let got: Vec<u32> = row.iter().map(|v| v.to_bits()).collect();
                assert_eq!(got, want_tapered, "{n} points, {len} cells, tapered");
                for k in (0..len).step_by(3) {
                    assert_eq!(got[k], want[k], "a taper of 1 keeps the bits");
                }
            }
        }
        assert!(CurveTable::new(&[0.5]).is_none() && CurveTable::new(&[0.0; 65]).is_none());
    }
}
