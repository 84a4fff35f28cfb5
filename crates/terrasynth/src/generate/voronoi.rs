//! Voronoi (cellular) terrain `h = Σ c_i d_i` and the Voronoi region map (seed 001 §1.2, §3.3.3).

use rayon::prelude::*;
use terrasynth_noise::rng::{SplitMix64, derive_seed};

use super::common::{
    field_window, refuse_world_length, with_feature_size_m, world_generator_methods, world_length,
};
use super::{Generator, GeneratorStep};
use crate::step::params::{Choice, NO_SEED, choice_enum, step_params};
use crate::step::{Category, StepInfo};
use crate::step::{DefaultValue, ParamKind, Params};
use crate::{Grid, Heightmap, Progress, Result};

/// Most coefficients (nearest points) a Voronoi terrain can weigh.
pub const MAX_COEFFICIENTS: usize = 8;

choice_enum! {
    /// Distance used between a cell and the feature points.
    pub enum Metric {
        /// `dx² + dy²`: the seed's choice (seed 001 §1.2), faster, gives parabolic slopes.
        Squared = "squared",
        /// `√(dx² + dy²)`: straight (conical) slopes.
        Euclidean = "euclidean",
    }
}

/// `count` feature points uniform over a `width × height` map, in cell coordinates
/// (`[0, width) × [0, height)`), from `seed`. The same `(width, height, count, seed)` always
/// gives the same points, so `voronoi`, `voronoi-regions` and `voronoi-ds` can share a layout.
pub fn feature_points(width: usize, height: usize, count: usize, seed: u64) -> Vec<[f64; 2]> {
    let mut rng = SplitMix64::new(derive_seed(seed, 0x766f_726f));
    (0..count).map(|_| [rng.next_f64() * width as f64, rng.next_f64() * height as f64]).collect()
}

/// Width of the band of extra feature points around the map, in mean point spacings
/// `s = √(width·height / count)` (see [`feature_points_with_margin`]).
pub const MARGIN_SPACINGS: f64 = 3.0;

/// [`feature_points`] (the same `count` points first, in the same order) followed by points
/// scattered at the same density in a band `MARGIN_SPACINGS · s` wide around the map.
///
/// Without the band, a cell near the border has no neighbours beyond it, so its 2nd..k-th
/// nearest distances are much larger than an interior cell's: with `c = [−1, 1]` the border
/// cells become the highest of the map. With the band, the nearest-point statistics are the
/// same up to the border (the k-th nearest point of any cell lies within ~1.6 s for k ≤ 8).
/// The number of band points is `round(count · (A_ext − A) / A)` (A = map area, A_ext = area
/// with the band), drawn uniformly in the extended rectangle, rejecting those inside the map.
pub fn feature_points_with_margin(width: usize, height: usize, count: usize, seed: u64) -> Vec<[f64; 2]> {
    let mut points = feature_points(width, height, count, seed);
    if count == 0 {
        return points;
    }
    let (w, h) = (width as f64, height as f64);
    let margin = MARGIN_SPACINGS * (w * h / count as f64).sqrt();
    let (ew, eh) = (w + 2.0 * margin, h + 2.0 * margin);
    let extra = (count as f64 * (ew * eh - w * h) / (w * h)).round() as usize;
    let mut rng = SplitMix64::new(derive_seed(seed, 0x6d61_7267));
    points.reserve(extra);
    while points.len() < count + extra {
        let x = rng.next_f64() * ew - margin;
        let y = rng.next_f64() * eh - margin;
        if !((0.0..w).contains(&x) && (0.0..h).contains(&y)) {
            points.push([x, y]);
        }
    }
    points
}

/// A uniform bucket grid over the feature points, for nearest-point queries.
pub(crate) struct PointIndex<'a> {
    points: &'a [[f64; 2]],
    /// Lower corner of the indexed rectangle (the map and every point).
    origin: [f64; 2],
    bucket: f64,
    cols: usize,
    rows: usize,
    /// Start of each bucket's slice in `order` (CSR layout), `cols * rows + 1` entries.
    starts: Vec<usize>,
    order: Vec<u32>,
}

impl<'a> PointIndex<'a> {
    /// Indexes `points` (non-empty), which may lie inside or around a `width × height` map:
    /// the buckets cover the bounding rectangle of the map and the points.
    pub(crate) fn new(points: &'a [[f64; 2]], width: usize, height: usize) -> Self {
        let (mut x0, mut y0, mut x1, mut y1) = (0.0f64, 0.0f64, width as f64, height as f64);
        for p in points {
            (x0, y0, x1, y1) = (x0.min(p[0]), y0.min(p[1]), x1.max(p[0]), y1.max(p[1]));
        }
        let (span_x, span_y) = (x1 - x0, y1 - y0);
        let bucket = (span_x * span_y / points.len() as f64).sqrt().max(1.0);
        let cols = ((span_x / bucket).ceil() as usize).max(1);
        let rows = ((span_y / bucket).ceil() as usize).max(1);
        let key = |p: &[f64; 2]| {
            let c = (((p[0] - x0) / bucket) as usize).min(cols - 1);
            let r = (((p[1] - y0) / bucket) as usize).min(rows - 1);
            r * cols + c
        };
        let mut starts = vec![0usize; cols * rows + 1];
        for p in points {
            starts[key(p) + 1] += 1;
        }
        for i in 0..cols * rows {
            starts[i + 1] += starts[i];
        }
        let mut fill = starts.clone();
        let mut order = vec![0u32; points.len()];
        for (i, p) in points.iter().enumerate() {
            let k = key(p);
            order[fill[k]] = i as u32;
            fill[k] += 1;
        }
        Self { points, origin: [x0, y0], bucket, cols, rows, starts, order }
    }

    /// The bucket `(column, row)` holding `(x, y)`, clamped to the index (a position outside it
    /// searches from the nearest bucket).
    fn bucket_of(&self, x: f64, y: f64) -> (i64, i64) {
        let cx = (((x - self.origin[0]) / self.bucket) as i64).clamp(0, self.cols as i64 - 1);
        let cy = (((y - self.origin[1]) / self.bucket) as i64).clamp(0, self.rows as i64 - 1);
        (cx, cy)
    }

    /// Inserts the points `ids` into `out`, the `k` nearest to `(x, y)` so far (squared
    /// distance, index; see [`insert_sorted`]).
    #[inline]
    fn insert_nearer(&self, ids: &[u32], x: f64, y: f64, k: usize, out: &mut Vec<(f64, u32)>) {
        for &i in ids {
            let p = self.points[i as usize];
            let d = (p[0] - x) * (p[0] - x) + (p[1] - y) * (p[1] - y);
            insert_sorted(out, k, (d, i));
        }
    }

    /// The `k` nearest points to `(x, y)` as (squared distance, index), nearest first; ties
    /// broken by index so the result never depends on the search order. Fills `out` (cleared).
    pub(crate) fn nearest(&self, x: f64, y: f64, k: usize, out: &mut Vec<(f64, u32)>) {
        out.clear();
        let k = k.min(self.points.len());
        let (cx, cy) = self.bucket_of(x, y);
        let max_ring = self.cols.max(self.rows) as i64;
        for ring in 0..=max_ring {
            for by in cy - ring..=cy + ring {
                if by < 0 || by >= self.rows as i64 {
                    continue;
                }
                let edge_row = by == cy - ring || by == cy + ring;
                let mut bx = cx - ring;
                while bx <= cx + ring {
                    if bx >= 0 && bx < self.cols as i64 {
                        let b = by as usize * self.cols + bx as usize;
                        self.insert_nearer(&self.order[self.starts[b]..self.starts[b + 1]], x, y, k, out);
                    }
                    bx += if edge_row || ring == 0 { 1 } else { 2 * ring };
                }
            }
            // Every point outside the searched rings is at least `ring * bucket` away.
            if out.len() == k {
                let reach = ring as f64 * self.bucket;
                if out[k - 1].0 <= reach * reach {
                    return;
                }
            }
        }
    }
}

/// The points of the 3 × 3 buckets around one bucket, for the queries of a run of samples in
/// that bucket ([`PointIndex::nearest_cached`]).
#[derive(Default)]
pub(crate) struct Block {
    /// The bucket `(column, row)` the block is centred on, if any yet.
    centre: Option<(i64, i64)>,
    /// Its points (indices).
    points: Vec<u32>,
    /// The block's sides `[x0, x1, y0, y1]`; infinite where it reaches the index's edge (no
    /// point lies beyond).
    sides: [f64; 4],
}

impl PointIndex<'_> {
    /// [`PointIndex::nearest`], the same points in the same order, from the points of the 3 × 3
    /// buckets around the query's (gathered once per run of queries in one bucket, in
    /// `block`): they hold the `k` nearest whenever the `k`-th is nearer than the block's
    /// nearest side (every point outside is farther; a relative margin of 1e-9 keeps rounding
    /// out of it). Otherwise, or with too few points in the block, the ring search. A bucket
    /// holds one point on average, so the block usually settles a query with no second look
    /// (a 5 × 5 block was slower: 25 points to sort through every time).
    pub(crate) fn nearest_cached(
        &self,
        x: f64,
        y: f64,
        k: usize,
        out: &mut Vec<(f64, u32)>,
        block: &mut Block,
    ) {
        const R: i64 = 1;
        let (cx, cy) = self.bucket_of(x, y);
        if block.centre != Some((cx, cy)) {
            block.centre = Some((cx, cy));
            block.points.clear();
            let (bx0, bx1) = ((cx - R).max(0), (cx + R).min(self.cols as i64 - 1));
            let (by0, by1) = ((cy - R).max(0), (cy + R).min(self.rows as i64 - 1));
            for by in by0..=by1 {
                let row = by as usize * self.cols;
                let (b0, b1) = (row + bx0 as usize, row + bx1 as usize);
                block.points.extend_from_slice(&self.order[self.starts[b0]..self.starts[b1 + 1]]);
            }
            let side = |b: i64, lo: bool, n: usize, origin: f64| {
                if (lo && b == 0) || (!lo && b == n as i64 - 1) {
                    if lo { f64::NEG_INFINITY } else { f64::INFINITY }
                } else {
                    origin + (b + i64::from(!lo)) as f64 * self.bucket
                }
            };
            block.sides = [
                side(bx0, true, self.cols, self.origin[0]),
                side(bx1, false, self.cols, self.origin[0]),
                side(by0, true, self.rows, self.origin[1]),
                side(by1, false, self.rows, self.origin[1]),
            ];
        }
        out.clear();
        let k = k.min(self.points.len());
        if k == 0 {
            return;
        }
        self.insert_nearer(&block.points, x, y, k, out);
        let [x0, x1, y0, y1] = block.sides;
        let reach = (x - x0).min(x1 - x).min(y - y0).min(y1 - y);
        if out.len() == k && out[k - 1].0 < reach * reach * (1.0 - 1e-9) {
            return;
        }
        self.nearest(x, y, k, out);
    }
}

fn insert_sorted(out: &mut Vec<(f64, u32)>, k: usize, item: (f64, u32)) {
    let less = |a: &(f64, u32), b: &(f64, u32)| a.0 < b.0 || (a.0 == b.0 && a.1 < b.1);
    if out.len() == k && !less(&item, &out[k - 1]) {
        return;
    }
    let pos = out.iter().position(|o| less(&item, o)).unwrap_or(out.len());
    out.insert(pos, item);
    out.truncate(k);
}

/// The Voronoi region map (seed 001 §3.3.3): each cell's label is the index of its nearest
/// feature point (ties go to the lower index). Cell `(x, y)` is measured from its position
/// `(x + 0.5, y + 0.5)`. `points` must be non-empty.
///
/// ```
/// use terrasynth::generate::region_map;
/// let labels = region_map(8, 4, &[[1.0, 1.0], [7.0, 3.0]]).unwrap();
/// assert_eq!(labels[(0, 0)], 0);
/// assert_eq!(labels[(7, 3)], 1);
/// ```
pub fn region_map(width: usize, height: usize, points: &[[f64; 2]]) -> Result<Grid<u32>> {
    crate::grid::check_size::<u32>(width, height)?;
    if points.is_empty() {
        return Err(crate::Error::param("points", "[]", "at least one feature point"));
    }
    let index = PointIndex::new(points, width, height);
    let mut data = vec![0u32; width * height];
    data.par_chunks_mut(width).enumerate().for_each(|(y, row)| {
        let (mut near, mut block) = (Vec::with_capacity(1), Block::default());
        for (x, cell) in row.iter_mut().enumerate() {
            index.nearest_cached(x as f64 + 0.5, y as f64 + 0.5, 1, &mut near, &mut block);
            *cell = near[0].1;
        }
    });
    Grid::from_vec(width, height, 1.0, data)
}

step_params! {
    /// Voronoi terrain (seed 001 §1.2): `count` random feature points; each cell's height is
    /// `h = Σ_i c_i · d_i`, where `d_i` is the distance to the i-th nearest point.
    ///
    /// Points are also scattered at the same density in a band around the map
    /// ([`feature_points_with_margin`]), so border cells have the same statistics as interior
    /// ones (without it the border cells were the highest of the map).
    ///
    /// Distances are measured in units of the mean point spacing `s = √(width·height / count)`, so
    /// the relief keeps its look when the map size or the point count changes (with the squared
    /// metric, `d = (dx² + dy²) / s²`). With `c = [−1, 1]` (the seed's and Olsen's choice)
    /// `h = d₂ − d₁ ≥ 0`: 0 on every cell border (a connected network of valleys, Olsen's
    /// "riverbeds") and highest at the points, with straight crests running from each point towards
    /// its cell's corners; `c = [1]` gives bowls (pits at the points), `c = [−1]` cones (peaks at
    /// the points). Cell centres are at `(x + 0.5, y + 0.5)`; the nearest-point search uses a
    /// bucket grid, each row in parallel.
    ///
    /// Metric: the seed uses the squared distance for speed; here the search dominates the cost, and
    /// squared distances make heights grow with the square of a cell's size, so one large cell
    /// dwarfs the rest of the map. The default is therefore `euclidean`; `squared` reproduces the
    /// seed.
    ///
    /// **In a world** (an endless plane, any window on demand) the points cannot be drawn for a
    /// map: the plane is cut into a feature grid of `feature-size-m` metres, and each grid cell
    /// `(cx, cy)` holds `N` points (`N` Poisson with mean 1, so the layout is, like the map's, a
    /// uniform random scatter of density `1 / feature-size-m²`) at positions drawn from a stream seeded
    /// by a hash of (point seed, `cx`, `cy`). A cell's height is the same `Σ c_i d_i` over its
    /// `k` nearest points, with distances in units of `feature-size-m` (the mean point spacing, as in a
    /// map). The nearest points are found ring by ring of grid cells around the cell's own grid
    /// cell, stopping once the `k`-th distance is below the distance to the next unsearched ring.
    /// Each cell depends only on its world coordinates (reach 0), so any window equals the same
    /// cells of any larger window, bit for bit (`√` is correctly rounded IEEE, no libm).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Voronoi {
        count: usize = ParamSpec {
            name: "count",
            label: "Count",
            kind: ParamKind::Int { min: 1, max: 100_000 },
            default: DefaultValue::Number(40.0),
            unit: "points",
            doc: "Number of random feature points (seed 001 §1.2). More points give more, \
                  smaller hills.",
        },
        coefficients: Vec<f64> = ParamSpec {
            name: "coefficients",
            label: "Coefficients",
            kind: ParamKind::List { min: -100.0, max: 100.0, min_len: 1, max_len: MAX_COEFFICIENTS },
            default: DefaultValue::List(&[-1.0, 1.0]),
            unit: "",
            doc: "c1..cn in h = Σ c_i d_i (d_i = distance to the i-th nearest point, seed 001 \
                  §1.2). [-1, 1] gives ridges with connected valleys.",
        },
        metric: Metric = ParamSpec {
            name: "metric",
            label: "Distance metric",
            kind: ParamKind::Choice(Metric::NAMES),
            default: DefaultValue::Text("euclidean"),
            unit: "",
            doc: "`euclidean` (straight slopes, even heights) or `squared` (dx²+dy², the seed's \
                  choice: rounded slopes, large cells much higher than small ones).",
        },
        point_seed: Option<u64> = ParamSpec {
            name: "point-seed",
            label: "Point seed",
            kind: ParamKind::Int { min: NO_SEED, max: 1 << 52 },
            default: DefaultValue::Number(NO_SEED as f64),
            unit: "",
            doc: "Seed of the point layout; -1 (`None` in the library) = the step's seed. Use the \
                  same value in `voronoi-regions` (or `voronoi-ds`) to share the cells.",
        },
        feature_size_m: Option<f64> = ParamSpec {
            name: "feature-size-m",
            label: "World feature size",
            kind: ParamKind::Float { min: 1e-3, max: 1e9 },
            default: DefaultValue::Absent,
            unit: "m",
            doc: "World recipes only (and required there by `voronoi` and `voronoi-regions`; \
                  `voronoi-ds` stays a single-map step and refuses it): mean distance between \
                  feature points in metres (one point per feature-size-m² on average).",
        },
    }
}

impl Voronoi {
    /// A checked generator.
    pub fn new(
        count: usize,
        coefficients: Vec<f64>,
        metric: Metric,
        point_seed: Option<u64>,
    ) -> Result<Self> {
        let s = Self { count, coefficients, metric, point_seed, feature_size_m: None };
        s.check_ranges()?;
        Ok(s)
    }

    with_feature_size_m!();

    /// The window `width × height` at world cell `(x0, y0)` of the endless Voronoi world with
    /// cells of `cell_size_m` metres (see the type's docs).
    pub(crate) fn world_window(
        &self,
        origin: (i64, i64),
        cell_size_m: f64,
        size: (usize, usize),
        seed: u64,
        progress: &Progress,
    ) -> Result<Heightmap> {
        field_window(size, progress, || self.world_field(origin, cell_size_m, size, seed))
    }

    /// The same window as a field of f64 values.
    pub(crate) fn world_field(
        &self,
        (x0, y0): (i64, i64),
        cell_size_m: f64,
        (width, height): (usize, usize),
        seed: u64,
    ) -> Result<Vec<f64>> {
        let spacing = world_length(self.feature_size_m, "voronoi")?;
        let points = WorldPoints::of(self.point_seed.unwrap_or(seed));
        // Sample positions in feature-grid units (one grid cell = `feature-size-m` metres).
        let to_grid = |c: i64| c as f64 * cell_size_m / spacing;
        let gx: Vec<f64> = (0..width).map(|i| to_grid(x0 + i as i64)).collect();
        let k = self.coefficients.len();
        let mut out = vec![0.0; width * height];
        out.par_chunks_mut(width).enumerate().for_each(|(j, row)| {
            let gy = to_grid(y0 + j as i64);
            let cy = gy.floor() as i64;
            let mut near = Nearest::new(k);
            let mut cache = CellCache::default();
            let (mut inner, mut outer) = (Vec::new(), Vec::new());
            let mut run_cx = None;
            for (cell, &gx) in row.iter_mut().zip(&gx) {
                // The points of the 3 × 3 and 5 × 5 blocks of grid cells around the sample's,
                // gathered once per run of samples in the same grid cell.
                let cx = gx.floor() as i64;
                if run_cx != Some(cx) {
                    run_cx = Some(cx);
                    inner.clear();
                    outer.clear();
                    for by in cy - 2..=cy + 2 {
                        for bx in cx - 2..=cx + 2 {
                            let ring1 = (bx - cx).abs() <= 1 && (by - cy).abs() <= 1;
                            let list = if ring1 { &mut inner } else { &mut outer };
                            list.extend_from_slice(cache.get(&points, bx, by));
                        }
                    }
                }
                points.nearest_from_blocks(gx, gy, [&inner, &outer], &mut near, &mut cache);
                *cell = near
                    .distances()
                    .iter()
                    .zip(&self.coefficients)
                    .map(|(&d2, c)| {
                        c * match self.metric {
                            Metric::Squared => d2,
                            Metric::Euclidean => d2.sqrt(),
                        }
                    })
                    .sum();
            }
        });
        Ok(out)
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        Self::read_params(p)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "voronoi",
            category: Category::Generate,
            doc: "Voronoi terrain h = Σ c_i d_i over the nearest random feature points: hilly \
                  relief with linear slopes; c = [-1, 1] gives ridges.",
            source: "seed 001 §1.2; Olsen 2004 (research/algorithms.md §1)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(GeneratorStep(Self::from_params(p)?))),
        }
    }

    /// The points this generator uses for a map and step seed: the `count` map points of
    /// [`feature_points`] followed by the border band of [`feature_points_with_margin`].
    pub fn points(&self, width: usize, height: usize, seed: u64) -> Vec<[f64; 2]> {
        feature_points_with_margin(width, height, self.count, self.point_seed.unwrap_or(seed))
    }

    /// Evaluates `h` at continuous positions `(x, y)` (cell units) of a `width × height` map,
    /// for `rows` rows of `cols` samples at `(x0 + i·stride, y0 + j·stride)`.
    pub(crate) fn sample(
        &self,
        points: &[[f64; 2]],
        width: usize,
        height: usize,
        grid: SampleGrid,
    ) -> Vec<f64> {
        let index = PointIndex::new(points, width, height);
        // Mean spacing of the map's own points (the band points keep the same density).
        let spacing2 = (width * height) as f64 / self.count.clamp(1, points.len()) as f64;
        let k = self.coefficients.len();
        let mut out = vec![0.0; grid.cols * grid.rows];
        out.par_chunks_mut(grid.cols).enumerate().for_each(|(j, row)| {
            let mut near = Vec::with_capacity(k + 1);
            let mut block = Block::default();
            let y = grid.y0 + j as f64 * grid.stride;
            for (i, cell) in row.iter_mut().enumerate() {
                index.nearest_cached(grid.x0 + i as f64 * grid.stride, y, k, &mut near, &mut block);
                *cell = near
                    .iter()
                    .zip(&self.coefficients)
                    .map(|(&(d2, _), c)| {
                        let d = d2 / spacing2;
                        c * match self.metric {
                            Metric::Squared => d,
                            Metric::Euclidean => d.sqrt(),
                        }
                    })
                    .sum();
            }
        });
        out
    }
}

/// Cumulative Poisson(1) probabilities `P(N ≤ n) = e^−1 Σ_{m≤n} 1/m!`, n = 0..=8 (the tail
/// beyond 9 points, below 1e-7, counts as 9).
const POISSON1_CDF: [f64; 9] = [
    0.36787944117144233,
    0.7357588823428847,
    0.9196986029286058,
    0.9810118431238462,
    0.9963401531726562,
    0.9994058151824182,
    0.999916758850712,
    0.9999897508033254,
    0.9999988747974021,
];

/// Most feature points in one world grid cell.
pub(crate) const MAX_POINTS_PER_CELL: usize = POISSON1_CDF.len();

/// The feature points of an endless world: a Poisson(1) number per feature-grid cell, placed
/// uniformly in it, from a stream seeded by a hash of (seed, cell).
pub(crate) struct WorldPoints {
    pub(crate) seed: u64,
}

/// The points of the last few grid cells a row of samples visited (rows move slowly across
/// the grid, so most lookups hit).
#[derive(Default)]
struct CellCache {
    entries: Vec<CachedCell>,
}

/// One grid cell's points in a [`CellCache`].
#[derive(Clone, Copy)]
struct CachedCell {
    cell: (i64, i64),
    count: usize,
    points: [[f64; 2]; MAX_POINTS_PER_CELL],
}

/// The `k` smallest squared distances seen, ascending.
struct Nearest {
    k: usize,
    len: usize,
    d2: [f64; MAX_COEFFICIENTS],
}

impl Nearest {
    fn new(k: usize) -> Self {
        Self { k: k.min(MAX_COEFFICIENTS), len: 0, d2: [0.0; MAX_COEFFICIENTS] }
    }

    fn insert(&mut self, d: f64) {
        if self.len == self.k && d >= self.d2[self.len - 1] {
            return;
        }
        let mut p = self.len.min(self.k - 1);
        if self.len < self.k {
            self.len += 1;
        }
        while p > 0 && self.d2[p - 1] > d {
            self.d2[p] = self.d2[p - 1];
            p -= 1;
        }
        self.d2[p] = d;
    }

    fn distances(&self) -> &[f64] {
        &self.d2[..self.len]
    }
}

impl WorldPoints {
    /// The world points of a point seed (the `voronoi` step's, shared by `voronoi-regions`).
    pub(crate) fn of(point_seed: u64) -> Self {
        Self { seed: derive_seed(point_seed, 0x776f_726c) }
    }

    /// The points of grid cell `(cx, cy)` (grid units); returns how many.
    pub(crate) fn cell(&self, cx: i64, cy: i64, out: &mut [[f64; 2]; MAX_POINTS_PER_CELL]) -> usize {
        let mut rng = SplitMix64::new(super::common::lattice_hash(self.seed, cx, cy));
        let u = rng.next_f64();
        let n = POISSON1_CDF.iter().position(|&p| u < p).unwrap_or(MAX_POINTS_PER_CELL);
        for p in out.iter_mut().take(n) {
            *p = [cx as f64 + rng.next_f64(), cy as f64 + rng.next_f64()];
        }
        n
    }

    /// [`nearest`](Self::nearest) from the points of the blocks of 3 × 3 and 5 × 5 grid cells
    /// around `(x, y)`'s (`blocks[0]`: the 3 × 3 block, `blocks[1]`: the rest of the 5 × 5):
    /// the `k`-th distance found in a block is final when it is at most the distance to the
    /// first cell outside it; otherwise the full ring search decides. The same distances as
    /// [`nearest`](Self::nearest) (ties do not matter: only the distances are kept).
    fn nearest_from_blocks(
        &self,
        x: f64,
        y: f64,
        blocks: [&[[f64; 2]]; 2],
        near: &mut Nearest,
        cache: &mut CellCache,
    ) {
        near.len = 0;
        let (fx, fy) = (x.floor(), y.floor());
        let margin = (x - fx).min(fx + 1.0 - x).min(y - fy).min(fy + 1.0 - y);
        for (ring, block) in blocks.into_iter().enumerate() {
            for p in block {
                near.insert((p[0] - x) * (p[0] - x) + (p[1] - y) * (p[1] - y));
            }
            let reach = (ring + 1) as f64 + margin;
            if near.len == near.k && near.d2[near.k - 1] <= reach * reach {
                return;
            }
        }
        self.nearest(x, y, near, cache);
    }

    /// Fills `near` with the `k` smallest squared distances from `(x, y)` (grid units) to the
    /// points: ring `r` of grid cells (Chebyshev distance `r` from the sample's own cell) is
    /// searched until the `k`-th distance is at most the distance to ring `r + 1`, which is at
    /// least `r + min(fx, 1 − fx, fy, 1 − fy)` (`fx`, `fy` the sample's position in its cell).
    fn nearest(&self, x: f64, y: f64, near: &mut Nearest, cache: &mut CellCache) {
        /// A bound on the search (never reached in practice: 9 empty rings have probability
        /// e^−361).
        const MAX_RING: i64 = 64;
        near.len = 0;
        let (fx, fy) = (x.floor(), y.floor());
        let (cx, cy) = (fx as i64, fy as i64);
        let margin = (x - fx).min(fx + 1.0 - x).min(y - fy).min(fy + 1.0 - y);
        for ring in 0..MAX_RING {
            for by in cy - ring..=cy + ring {
                let edge_row = by == cy - ring || by == cy + ring;
                let mut bx = cx - ring;
                while bx <= cx + ring {
                    for p in cache.get(self, bx, by) {
                        near.insert((p[0] - x) * (p[0] - x) + (p[1] - y) * (p[1] - y));
                    }
                    bx += if edge_row || ring == 0 { 1 } else { 2 * ring };
                }
            }
            if near.len == near.k {
                let reach = ring as f64 + margin;
                if near.d2[near.k - 1] <= reach * reach {
                    return;
                }
            }
        }
    }
}

impl CellCache {
    /// Cells remembered: enough for a 7 × 7 block of grid cells.
    const SIZE: usize = 64;

    fn get(&mut self, points: &WorldPoints, cx: i64, cy: i64) -> &[[f64; 2]] {
        let slot = (cx.rem_euclid(8) * 8 + cy.rem_euclid(8)) as usize;
        if self.entries.is_empty() {
            let empty =
                CachedCell { cell: (i64::MIN, i64::MIN), count: 0, points: [[0.0; 2]; MAX_POINTS_PER_CELL] };
            self.entries = vec![empty; Self::SIZE];
        }
        let e = &mut self.entries[slot];
        if e.cell != (cx, cy) {
            e.count = points.cell(cx, cy, &mut e.points);
            e.cell = (cx, cy);
        }
        &e.points[..e.count]
    }
}

/// A regular grid of sample positions in cell units.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SampleGrid {
    pub x0: f64,
    pub y0: f64,
    pub stride: f64,
    pub cols: usize,
    pub rows: usize,
}

impl Generator for Voronoi {
    fn generate(&self, width: usize, height: usize, seed: u64, _progress: &Progress) -> Result<Heightmap> {
        refuse_world_length(self.feature_size_m, "`count`")?;
        crate::grid::check_size::<f64>(width, height)?;
        let points = self.points(width, height, seed);
        let grid = SampleGrid { x0: 0.5, y0: 0.5, stride: 1.0, cols: width, rows: height };
        let data = self.sample(&points, width, height, grid).into_iter().map(|v| v as f32).collect();
        Heightmap::from_vec(width, height, 1.0, data)
    }

    world_generator_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::common::assert_world_window_is_crop;
    use crate::step::ParamValue;
    use crate::step::params::assert_ranges_enforced;

    /// The ranges `Voronoi` enforces (constructor and recipe reading) are its specs' ranges:
    /// both bounds accepted, one past either refused naming the key; `point-seed = -1` (what old
    /// recipes write) is `None`, any other negative value is refused.
    #[test]
    fn voronoi_enforces_exactly_its_spec_ranges() {
        let with = |name: &str, v: ParamValue| Params::defaults(Voronoi::PARAMS).with(name, v);
        let build = |name: &str, v: f64| Voronoi::read_params(&with(name, ParamValue::Number(v))).map(drop);
        assert_eq!(
            assert_ranges_enforced(Voronoi::PARAMS, &build),
            3,
            "count, point-seed and feature-size-m"
        );
        assert_eq!(
            Voronoi::read_params(&with("point-seed", ParamValue::Number(-1.0))).unwrap().point_seed,
            None
        );
        assert_eq!(
            Voronoi::read_params(&with("point-seed", ParamValue::Number(7.0))).unwrap().point_seed,
            Some(7)
        );
        assert_eq!(Voronoi::default().point_seed, None);
        // The list range: 1..=8 coefficients in [-100, 100].
        let list = |l: Vec<f64>| Voronoi::new(4, l, Metric::Euclidean, None).map(drop);
        assert!(list(vec![-100.0; MAX_COEFFICIENTS]).is_ok() && list(vec![100.0]).is_ok());
        for bad in [vec![], vec![1.0; MAX_COEFFICIENTS + 1], vec![100.001], vec![-100.001]] {
            assert!(
                matches!(list(bad), Err(crate::Error::InvalidParameter { name, .. }) if name == "coefficients")
            );
        }
        // A seed beyond the spec's 2^52 is refused by the constructor too.
        assert!(Voronoi::new(4, vec![1.0], Metric::Euclidean, Some((1 << 52) + 1)).is_err());
    }

    /// The world ring search finds exactly the nearest points: compared with a brute force over
    /// every feature point within 8 grid cells, at positions near and far from the origin.
    #[test]
    fn world_nearest_points_match_brute_force() {
        let points = WorldPoints { seed: 77 };
        let mut buf = [[0.0; 2]; MAX_POINTS_PER_CELL];
        let mut rng = SplitMix64::new(5);
        for _ in 0..400 {
            let base = if rng.next_f64() < 0.5 { 0.0 } else { 1.5e5 };
            let (x, y) = (base + rng.range_f64(-20.0, 20.0), -base + rng.range_f64(-20.0, 20.0));
            let mut all = Vec::new();
            for cy in y.floor() as i64 - 8..=y.floor() as i64 + 8 {
                for cx in x.floor() as i64 - 8..=x.floor() as i64 + 8 {
                    let n = points.cell(cx, cy, &mut buf);
                    all.extend(buf[..n].iter().map(|p| (p[0] - x) * (p[0] - x) + (p[1] - y) * (p[1] - y)));
                }
            }
            all.sort_by(f64::total_cmp);
            let (mut near, mut cache) = (Nearest::new(MAX_COEFFICIENTS), CellCache::default());
            points.nearest(x, y, &mut near, &mut cache);
            assert_eq!(near.distances(), &all[..MAX_COEFFICIENTS], "({x}, {y})");
            // The block form, for every k.
            let (cx, cy) = (x.floor() as i64, y.floor() as i64);
            let (mut inner, mut outer) = (Vec::new(), Vec::new());
            for by in cy - 2..=cy + 2 {
                for bx in cx - 2..=cx + 2 {
                    let n = points.cell(bx, by, &mut buf);
                    let list =
                        if (bx - cx).abs() <= 1 && (by - cy).abs() <= 1 { &mut inner } else { &mut outer };
                    list.extend_from_slice(&buf[..n]);
                }
            }
            for k in 1..=MAX_COEFFICIENTS {
                let mut near = Nearest::new(k);
                points.nearest_from_blocks(x, y, [&inner, &outer], &mut near, &mut cache);
                assert_eq!(near.distances(), &all[..k], "({x}, {y}), k = {k}");
            }
        }
        // The point counts are Poisson(1): mean 1 over many cells.
        let total: usize = (0..10_000).map(|i| points.cell(i % 100, i / 100, &mut buf)).sum();
        assert!((9_700..10_300).contains(&total), "{total} points in 10 000 cells");
    }

    #[test]
    fn poisson_table_is_the_poisson_cdf() {
        let (mut term, mut sum) = (1.0f64, 0.0f64);
        for (n, &p) in POISSON1_CDF.iter().enumerate() {
            if n > 0 {
                term /= n as f64;
            }
            sum += term;
            assert!((p - sum * (-1.0f64).exp()).abs() < 1e-15, "P(N <= {n})");
        }
    }

    #[test]
    fn world_windows_are_crops_of_larger_windows() {
        for (coefficients, metric) in
            [(vec![-1.0, 1.0], Metric::Euclidean), (vec![0.5, -2.0, 1.0], Metric::Squared)]
        {
            let v = Voronoi::new(40, coefficients, metric, None).unwrap().with_feature_size_m(400.0).unwrap();
            assert_world_window_is_crop(&|o, s| {
                v.world_field(o, 30.0, s, 6).unwrap().into_iter().map(|h| h as f32).collect()
            });
        }
        // c = [-1, 1]: d2 - d1 >= 0 everywhere, 0 on cell borders.
        let v = Voronoi::default().with_feature_size_m(300.0).unwrap();
        let field = v.world_field((-64, 9), 10.0, (128, 128), 1).unwrap();
        assert!(field.iter().all(|&h| h >= 0.0));
        assert!(field.iter().any(|&h| h < 0.02) && field.iter().any(|&h| h > 0.3));
    }

    /// The block search of a run of samples gives the ring search's points, in its order, for
    /// every `k` up to more points than a block holds, on maps with a margin band of points,
    /// a few points or many, and samples off the cell centres (rows of runs, as `sample` asks).
    #[test]
    fn block_search_equals_the_ring_search() {
        for (w, h, count, seed) in [(53, 31, 37, 9), (64, 64, 400, 2), (20, 90, 3, 5), (9, 9, 1, 1)] {
            let pts = feature_points_with_margin(w, h, count, seed);
            let index = PointIndex::new(&pts, w, h);
            let (mut near, mut want) = (Vec::new(), Vec::new());
            for k in [1, 2, 3, 12] {
                for j in 0..2 * h {
                    let mut block = Block::default();
                    for i in 0..2 * w {
                        let (x, y) = (i as f64 * 0.5 + 0.25, j as f64 * 0.5 + 0.1);
                        index.nearest_cached(x, y, k, &mut near, &mut block);
                        index.nearest(x, y, k, &mut want);
                        assert_eq!(near, want, "{w}x{h}, {count} points, k {k}, ({x}, {y})");
                    }
                }
            }
        }
    }

    #[test]
    fn bucket_search_matches_brute_force() {
        let pts = feature_points(53, 31, 37, 9);
        let index = PointIndex::new(&pts, 53, 31);
        let mut near = Vec::new();
        for y in 0..31 {
            for x in 0..53 {
                let (px, py) = (x as f64 + 0.5, y as f64 + 0.5);
                index.nearest(px, py, 3, &mut near);
                let mut all: Vec<(f64, u32)> = pts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| ((p[0] - px).powi(2) + (p[1] - py).powi(2), i as u32))
                    .collect();
                all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                assert_eq!(near, all[..3].to_vec(), "({x}, {y})");
            }
        }
    }
}
