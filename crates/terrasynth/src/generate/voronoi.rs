//! Voronoi (cellular) terrain `h = Σ c_i d_i` and the Voronoi region map (seed 001 §1.2, §3.3.3).

use rayon::prelude::*;
use terrasynth_noise::rng::{SplitMix64, derive_seed};

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

    /// The `k` nearest points to `(x, y)` as (squared distance, index), nearest first; ties
    /// broken by index so the result never depends on the search order. Fills `out` (cleared).
    pub(crate) fn nearest(&self, x: f64, y: f64, k: usize, out: &mut Vec<(f64, u32)>) {
        out.clear();
        let k = k.min(self.points.len());
        let cx = (((x - self.origin[0]) / self.bucket) as i64).clamp(0, self.cols as i64 - 1);
        let cy = (((y - self.origin[1]) / self.bucket) as i64).clamp(0, self.rows as i64 - 1);
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
                        for &i in &self.order[self.starts[b]..self.starts[b + 1]] {
                            let p = self.points[i as usize];
                            let d = (p[0] - x) * (p[0] - x) + (p[1] - y) * (p[1] - y);
                            insert_sorted(out, k, (d, i));
                        }
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
        let mut near = Vec::with_capacity(1);
        for (x, cell) in row.iter_mut().enumerate() {
            index.nearest(x as f64 + 0.5, y as f64 + 0.5, 1, &mut near);
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
    #[derive(Clone, Debug, PartialEq)]
    pub struct Voronoi {
        count: usize = ParamSpec {
            name: "count",
            kind: ParamKind::Int { min: 1, max: 100_000 },
            default: DefaultValue::Number(40.0),
            unit: "points",
            doc: "Number of random feature points (seed 001 §1.2). More points give more, \
                  smaller hills.",
        },
        coefficients: Vec<f64> = ParamSpec {
            name: "coefficients",
            kind: ParamKind::List { min: -100.0, max: 100.0, min_len: 1, max_len: MAX_COEFFICIENTS },
            default: DefaultValue::List(&[-1.0, 1.0]),
            unit: "",
            doc: "c1..cn in h = Σ c_i d_i (d_i = distance to the i-th nearest point, seed 001 \
                  §1.2). [-1, 1] gives ridges with connected valleys.",
        },
        metric: Metric = ParamSpec {
            name: "metric",
            kind: ParamKind::Choice(Metric::NAMES),
            default: DefaultValue::Text("euclidean"),
            unit: "",
            doc: "`euclidean` (straight slopes, even heights) or `squared` (dx²+dy², the seed's \
                  choice: rounded slopes, large cells much higher than small ones).",
        },
        point_seed: Option<u64> = ParamSpec {
            name: "point-seed",
            kind: ParamKind::Int { min: NO_SEED, max: 1 << 52 },
            default: DefaultValue::Number(NO_SEED as f64),
            unit: "",
            doc: "Seed of the point layout; -1 (`None` in the library) = the step's seed. Use the \
                  same value in `voronoi-regions` (or `voronoi-ds`) to share the cells.",
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
        let s = Self { count, coefficients, metric, point_seed };
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
            let y = grid.y0 + j as f64 * grid.stride;
            for (i, cell) in row.iter_mut().enumerate() {
                index.nearest(grid.x0 + i as f64 * grid.stride, y, k, &mut near);
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
        crate::grid::check_size::<f64>(width, height)?;
        let points = self.points(width, height, seed);
        let grid = SampleGrid { x0: 0.5, y0: 0.5, stride: 1.0, cols: width, rows: height };
        let data = self.sample(&points, width, height, grid).into_iter().map(|v| v as f32).collect();
        Heightmap::from_vec(width, height, 1.0, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::ParamValue;
    use crate::step::params::assert_ranges_enforced;

    /// The ranges `Voronoi` enforces (constructor and recipe reading) are its specs' ranges:
    /// both bounds accepted, one past either refused naming the key; `point-seed = -1` (what old
    /// recipes write) is `None`, any other negative value is refused.
    #[test]
    fn voronoi_enforces_exactly_its_spec_ranges() {
        let with = |name: &str, v: ParamValue| Params::defaults(Voronoi::PARAMS).with(name, v);
        let build = |name: &str, v: f64| Voronoi::read_params(&with(name, ParamValue::Number(v))).map(drop);
        assert_eq!(assert_ranges_enforced(Voronoi::PARAMS, &build), 2, "count and point-seed");
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
