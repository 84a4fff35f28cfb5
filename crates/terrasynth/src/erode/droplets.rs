//! Droplet (particle) hydraulic erosion after Beyer 2015, as popularised by Lague.

use rayon::prelude::*;
use terrasynth_noise::rng::{SplitMix64, derive_seed};

use super::steps::DROPLETS;
use super::{Eroder, check_finite, check_range, to_f64};
use crate::step::params::check_number;
use crate::{Error, Grid, Heightmap, Result};

/// Parameters of [`DropletEroder`]. Defaults are Lague's CPU defaults (research notes §6a),
/// which assume heights of order 1 (e.g. a [0, 1] map); all lengths are in cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DropletParams {
    /// Droplets simulated per [`Eroder::run_one_step`]. Default 50,000; range 1..=100,000,000.
    /// (The recipe's `droplets` step defaults to one droplet per cell of the map instead.)
    pub droplets: usize,
    /// Erosion brush radius r in cells: erosion is spread over the cells within distance r of
    /// the droplet's cell with weights ∝ 1 − dist/r. Default 3; range [1, 16].
    pub radius: f64,
    /// Inertia: how much of its previous direction a droplet keeps (0 = follows the gradient).
    /// Default 0.05; range [0, 1).
    pub inertia: f64,
    /// Sediment capacity factor. Default 4; range [0, 1000].
    pub capacity: f64,
    /// Minimum capacity (Lague's "min sediment capacity", a min-slope surrogate), height units.
    /// Default 0.01; range [0, 1000].
    pub min_capacity: f64,
    /// Fraction of the free capacity eroded per step. Default 0.3; range [0, 1].
    pub erode: f64,
    /// Fraction of the excess sediment deposited per step. Default 0.3; range [0, 1].
    pub deposit: f64,
    /// Fraction of the water evaporating per step. Default 0.01; range [0, 1].
    pub evaporate: f64,
    /// Gravity: speed² gained per unit of height lost. Default 4; range [0, 1000].
    pub gravity: f64,
    /// Steps before a droplet dies. Default 30; range 1..=10,000.
    pub max_lifetime: usize,
    /// Initial speed. Default 1; range [0, 1000].
    pub initial_speed: f64,
    /// Initial water. Default 1; range [0, 1000].
    pub initial_water: f64,
    /// Droplets per parallel batch. 1 (the default) runs the droplets one after the other in
    /// index order, in place, as in Lague's code. Larger batches run in parallel over
    /// horizontal strips of the map: see [`DropletEroder`], "Parallel batches". Every droplet
    /// still sees all changes made before it in the batch's order, so any batch size gives
    /// sequential-quality erosion; larger batches give the threads more work per
    /// synchronisation (16,384 is a good value at 1024²). Range 1..=1,000,000.
    pub batch_size: usize,
    /// Seed; droplet k of the whole run starts from `derive_seed(seed, k)`.
    pub seed: u64,
    /// Sea level, height units, or `None` (default) for no sea. Where the droplet stands below
    /// it (bilinear height at its position), it is in still water: its capacity is 0, so it
    /// never erodes and drops `deposit` of its load per step as it slows down (a delta fan);
    /// with no load left it stops. Droplets spawned below sea level do nothing. Without this,
    /// droplets spawned on the near-flat sea floor scratch it into a field of closed pits.
    pub sea_level: Option<f64>,
}

impl Default for DropletParams {
    fn default() -> Self {
        Self {
            droplets: 50_000,
            radius: 3.0,
            inertia: 0.05,
            capacity: 4.0,
            min_capacity: 0.01,
            erode: 0.3,
            deposit: 0.3,
            evaporate: 0.01,
            gravity: 4.0,
            max_lifetime: 30,
            initial_speed: 1.0,
            initial_water: 1.0,
            batch_size: 1,
            seed: 0,
            sea_level: None,
        }
    }
}

impl DropletParams {
    fn check(&self) -> Result<()> {
        // The recipe keys' ranges come from the `droplets` step's specs (one source).
        let spec = |name: &str, v: f64| check_number(DROPLETS, name, v);
        spec("droplets", self.droplets as f64)?;
        spec("max-lifetime", self.max_lifetime as f64)?;
        spec("batch-size", self.batch_size as f64)?;
        spec("radius", self.radius)?;
        spec("inertia", self.inertia)?;
        spec("capacity", self.capacity)?;
        spec("min-capacity", self.min_capacity)?;
        spec("erode", self.erode)?;
        spec("deposit", self.deposit)?;
        spec("evaporate", self.evaporate)?;
        spec("gravity", self.gravity)?;
        // Library-only fields (no recipe key).
        check_range("initial-speed", self.initial_speed, 0.0, 1000.0)?;
        check_range("initial-water", self.initial_water, 0.0, 1000.0)?;
        if let Some(s) = self.sea_level {
            check_range("sea-level", s, -f64::MAX, f64::MAX)?;
        }
        Ok(())
    }
}

/// Droplet erosion (Beyer 2015, "Implementation of a method for hydraulic erosion"; the
/// algorithm as in Lague's `Erosion.cs`, research notes §6a). Each droplet starts at a random
/// position with direction 0, speed `initial_speed`, water `initial_water`, and for up to
/// `max_lifetime` steps:
/// 1. height and gradient g at its position by bilinear interpolation of the 4 cell corners;
/// 2. `dir = dir·inertia − g·(1 − inertia)`, normalised; `pos += dir` (one cell per step);
///    it stops if `dir = 0` and leaves the map if `pos` falls outside;
/// 3. `Δh = h(new) − h(old)`; capacity `C = max(−Δh·speed·water·capacity, min_capacity)`;
/// 4. if going uphill or carrying more than C, deposit `min(Δh, sediment)` (uphill) or
///    `(sediment − C)·deposit` on the 4 corners of the old cell with bilinear weights;
/// 5. otherwise erode `a = min((C − sediment)·erode, −Δh)` from the cells within `radius` of
///    the old cell: cell i loses `wᵢ·(a / W)` with `wᵢ = 1 − distᵢ/radius` and `W = Σ wᵢ` over
///    the cells of the disc inside the map; the droplet's sediment grows by `a`;
/// 6. `speed = sqrt(max(0, speed² + Δh·gravity))`, `water *= 1 − evaporate`.
///
/// With a sea level ([`DropletParams::sea_level`]), a droplet whose position is below it has
/// capacity 0 (it only deposits, `sediment·deposit` per step, and stops once empty), so the
/// sea floor is never dug and rivers build small deltas.
///
/// Differences from Lague, for mass accounting: a droplet that dies on the map (lifetime over,
/// or stopped on flat ground) spreads its remaining sediment over the erosion brush around its
/// last cell, with the brush's weights (normalised to the disc's cells inside the map, as for
/// erosion); one that leaves the map takes its sediment with it, which is counted in
/// [`DropletEroder::lost`]. Lague drops the load of a dying droplet (mass is lost). Dropping it
/// on the 4 corners of the last position instead, as we first did, piled each droplet's whole
/// load (up to its capacity, several times the height step between cells on gentle slopes) into
/// a 2 × 2 bump: with one droplet per cell, the low ground came out pitted like orange peel
/// and the gullies were lost in it. Spread over the brush, the same load keeps the surface
/// smooth and the gullies show. So `Σh + lost` is conserved
/// up to `f64` rounding (the cells of a brush lose `Σ wᵢ·(a/W)`, which equals `a` up to a few
/// ulps). Heights are not clamped at 0 (our heights may be negative).
///
/// **Parallel batches** ([`DropletParams::batch_size`] > 1). A droplet moves at most one cell
/// per step along each axis, so every cell it reads or changes lies within
/// `M = max_lifetime + brush reach + 2` rows of the row it starts in. The map is cut into
/// horizontal strips at least `2M` rows tall (as many as fit, at most 4096). The droplets of a
/// batch are sorted by the strip they start in (index order kept inside a strip); the
/// even-numbered strips then run in parallel, each one's droplets one after the other in place,
/// then the odd-numbered strips likewise. Two strips of the same parity are separated by a strip
/// of ≥ `2M` rows, so the rows they can touch (their strip ± M) never overlap: running them in
/// parallel is exactly running them one after the other. The batch's result is therefore that
/// of the sequential in-place algorithm with the droplets taken in the order (strip 0, 2, 4, …,
/// then 1, 3, …; index order within a strip): it is bit-identical for any thread count, every
/// droplet sees every change made before it in that order (no frozen snapshot, so no seams at
/// strip borders), and it differs from the `batch_size = 1` result only by that reordering.
/// Maps shorter than 4M rows have one strip and give the sequential result. Maps narrower than
/// 2 cells in either direction are left unchanged.
///
/// ```
/// use terrasynth::Heightmap;
/// use terrasynth::erode::{DropletEroder, DropletParams, Eroder};
/// let map = Heightmap::from_fn(64, 64, 1.0, |x, y| ((x * x + y * y) as f32).sqrt() / 90.0).unwrap();
/// let p = DropletParams { droplets: 500, batch_size: 64, ..Default::default() };
/// let mut eroder = DropletEroder::new(&map, p).unwrap();
/// let before = eroder.volume();
/// eroder.run_one_step().unwrap();
/// assert!((eroder.volume() + eroder.lost() - before).abs() < 1e-9 * before);
/// ```
#[derive(Clone, Debug)]
pub struct DropletEroder {
    surface: Grid<f64>,
    params: DropletParams,
    brush: Brush,
    strips: Strips,
    next_droplet: u64,
    lost: f64,
}

/// The erosion disc, one contiguous run of cells per row (dy increasing).
#[derive(Clone, Debug)]
struct Brush {
    /// `(dy, dx of the run's first cell, run length)` per row.
    rows: Vec<(i32, i32, usize)>,
    /// Weights `1 − dist/radius` of the runs, row after row.
    weights: Vec<f64>,
    /// Largest |dx| and |dy| of the disc.
    reach: usize,
    /// Σ weights in row order (the normaliser when the whole disc is inside the map).
    total: f64,
}

impl Brush {
    fn new(radius: f64) -> Self {
        let reach = radius.ceil() as i32;
        let (mut rows, mut weights) = (Vec::new(), Vec::new());
        let mut max_reach = 0;
        for dy in -reach..=reach {
            let mut first = None;
            for dx in -reach..=reach {
                let dist = ((dx * dx + dy * dy) as f64).sqrt();
                if dist < radius {
                    first.get_or_insert(dx);
                    weights.push(1.0 - dist / radius);
                    max_reach = max_reach.max(dx.abs()).max(dy.abs());
                }
            }
            if let Some(dx0) = first {
                // A disc row is one run: dx0..=-dx0.
                rows.push((dy, dx0, (-2 * dx0 + 1) as usize));
            }
        }
        let total = weights.iter().sum();
        Self { rows, weights, reach: max_reach as usize, total }
    }

    /// `amount / W`, W = Σ weights of the disc cells around `(x0, y0)` inside a `w × h` map.
    #[inline]
    fn scale(&self, w: usize, h: usize, x0: usize, y0: usize, amount: f64) -> f64 {
        let r = self.reach;
        if x0 >= r && y0 >= r && x0 + r < w && y0 + r < h {
            return amount / self.total;
        }
        let mut total = 0.0;
        let mut k = 0;
        for &(dy, dx0, len) in &self.rows {
            let y = y0 as i64 + dy as i64;
            if y >= 0 && y < h as i64 {
                for (j, wt) in self.weights[k..k + len].iter().enumerate() {
                    let x = x0 as i64 + dx0 as i64 + j as i64;
                    if x >= 0 && x < w as i64 {
                        total += wt;
                    }
                }
            }
            k += len;
        }
        amount / total
    }

    /// Subtracts `weight·scale` from the disc cells around `(x0, y0)` that lie in `rows`, the
    /// map rows `y_lo..` of a map `w` cells wide.
    #[inline]
    fn erode(&self, rows: &mut [f64], y_lo: usize, w: usize, x0: usize, y0: usize, scale: f64) {
        let y_hi = y_lo + rows.len() / w;
        let r = self.reach;
        if x0 >= r && x0 + r < w && y0 >= y_lo + r && y0 + r < y_hi {
            // The whole disc is inside: no clipping (the same cells, weights and order).
            let centre = (y0 - y_lo) * w + x0;
            let mut k = 0;
            for &(dy, dx0, len) in &self.rows {
                let start = (centre as isize + dy as isize * w as isize + dx0 as isize) as usize;
                for (c, wt) in rows[start..start + len].iter_mut().zip(&self.weights[k..k + len]) {
                    *c -= wt * scale;
                }
                k += len;
            }
            return;
        }
        let mut k = 0;
        for &(dy, dx0, len) in &self.rows {
            let y = y0 as i64 + dy as i64;
            if y >= y_lo as i64 && y < y_hi as i64 {
                let x_start = x0 as i64 + dx0 as i64;
                let skip = (-x_start).max(0) as usize;
                let end = (x_start + len as i64).min(w as i64);
                if end > x_start + skip as i64 {
                    let row = (y as usize - y_lo) * w;
                    let cells = &mut rows[row + (x_start + skip as i64) as usize..row + end as usize];
                    let weights = &self.weights[k + skip..k + skip + cells.len()];
                    for (c, wt) in cells.iter_mut().zip(weights) {
                        *c -= wt * scale;
                    }
                }
            }
            k += len;
        }
    }
}

/// The horizontal strips of a parallel batch, and the droplets of the current batch in each.
#[derive(Clone, Debug, Default)]
struct Strips {
    /// Row where each strip starts, then the map height.
    bounds: Vec<usize>,
    /// Rows a droplet can reach above or below its starting row (M).
    margin: usize,
    /// Strip of each map row.
    strip_of_row: Vec<u32>,
    /// Per strip, the droplets starting in it: (droplet index, start position).
    droplets: Vec<Vec<(u64, (f64, f64))>>,
}

impl Strips {
    fn new(height: usize, max_lifetime: usize, reach: usize) -> Self {
        let margin = max_lifetime + reach + 2;
        let count = (height / (2 * margin)).clamp(1, 4096);
        let bounds: Vec<usize> = (0..=count).map(|i| i * height / count).collect();
        let mut strip_of_row = Vec::with_capacity(height);
        for s in 0..count {
            strip_of_row.extend(std::iter::repeat_n(s as u32, bounds[s + 1] - bounds[s]));
        }
        Self { bounds, margin, strip_of_row, droplets: vec![Vec::new(); count] }
    }

    /// Rows strip `s` may touch: the strip ± margin, clipped to the map.
    fn reach_of(&self, s: usize) -> (usize, usize) {
        let h = *self.bounds.last().unwrap();
        (self.bounds[s].saturating_sub(self.margin), (self.bounds[s + 1] + self.margin).min(h))
    }
}

/// The rows `y_lo..` of the surface that one strip (or the sequential run, with the whole
/// map) may change, in place.
struct Rows<'a> {
    cells: &'a mut [f64],
    y_lo: usize,
}

impl Rows<'_> {
    /// Height of map cell `i`.
    #[inline]
    fn at(&self, first: usize, i: usize) -> f64 {
        self.cells[i - first]
    }
}

/// The 4 bilinear shares of `amount` at offset `(u, v)`: NW, NE, SW, SE corners.
#[inline]
fn bilinear_parts(u: f64, v: f64, amount: f64) -> [f64; 4] {
    [amount * (1.0 - u) * (1.0 - v), amount * u * (1.0 - v), amount * (1.0 - u) * v, amount * u * v]
}

impl DropletEroder {
    /// Starts from `map`. Errors on bad parameters or non-finite heights.
    pub fn new(map: &Heightmap, params: DropletParams) -> Result<Self> {
        params.check()?;
        check_finite(map)?;
        if map.len() > u32::MAX as usize {
            return Err(Error::InvalidSize {
                width: map.width(),
                height: map.height(),
                reason: "droplet erosion supports at most 2^32 cells".into(),
            });
        }
        let brush = Brush::new(params.radius);
        let strips = Strips::new(map.height(), params.max_lifetime, brush.reach);
        Ok(Self { surface: to_f64(map), params, brush, strips, next_droplet: 0, lost: 0.0 })
    }

    /// Sediment carried off the map by droplets so far (height units × cells).
    pub fn lost(&self) -> f64 {
        self.lost
    }

    /// Runs droplets `b..e` as one parallel batch over the strips (see the type's docs).
    fn run_batch(&mut self, b: u64, e: u64) {
        let (w, h) = (self.surface.width(), self.surface.height());
        let sim = Sim { params: &self.params, brush: &self.brush, width: w, height: h };
        let strips = &mut self.strips;
        for list in &mut strips.droplets {
            list.clear();
        }
        for k in b..e {
            let start = sim.start(k);
            strips.droplets[strips.strip_of_row[start.1 as usize] as usize].push((k, start));
        }
        let count = strips.droplets.len();
        let mut lost = vec![0.0; count];
        for parity in 0..2 {
            // Disjoint row ranges of this parity's strips (they never overlap: see the docs).
            let mut rest = self.surface.as_mut_slice();
            let mut rest_y = 0;
            let mut work = Vec::new();
            for s in (parity..count).step_by(2) {
                let (lo, hi) = strips.reach_of(s);
                let (_, tail) = std::mem::take(&mut rest).split_at_mut((lo - rest_y) * w);
                let (cells, tail) = tail.split_at_mut((hi - lo) * w);
                rest = tail;
                rest_y = hi;
                work.push((s, Rows { cells, y_lo: lo }));
            }
            let droplets = &strips.droplets;
            let sums: Vec<(usize, f64)> = work
                .into_par_iter()
                .map(|(s, mut rows)| {
                    let list = &droplets[s];
                    let mut lost = 0.0;
                    for (j, &(k, start)) in list.iter().enumerate() {
                        if let Some(&(_, ahead)) = list.get(j + 1) {
                            prefetch_around(&rows, w, ahead.0, ahead.1, sim.brush.reach);
                        }
                        lost += sim.simulate(k, start, &mut rows);
                    }
                    (s, lost)
                })
                .collect();
            for (s, l) in sums {
                lost[s] = l;
            }
        }
        for s in (0..count).step_by(2).chain((1..count).step_by(2)) {
            self.lost += lost[s];
        }
    }
}

/// What a droplet needs besides the heights (split from the eroder so the surface can be
/// borrowed mutably while droplets run in place).
struct Sim<'a> {
    params: &'a DropletParams,
    brush: &'a Brush,
    width: usize,
    height: usize,
}

impl Sim<'_> {
    /// Start position of droplet `index`, from `derive_seed(seed, index)`.
    #[inline]
    fn start(&self, index: u64) -> (f64, f64) {
        let (xmax, ymax) = ((self.width - 1) as f64, (self.height - 1) as f64);
        let mut rng = SplitMix64::new(derive_seed(self.params.seed, index));
        let x = rng.range_f64(0.0, xmax);
        (x, rng.range_f64(0.0, ymax))
    }

    /// Simulates droplet `index` from `start` on `rows`, which must hold every row it can
    /// reach; returns the sediment it carried off the map.
    fn simulate(&self, index: u64, start: (f64, f64), rows: &mut Rows) -> f64 {
        let p = self.params;
        let (w, h) = (self.width, self.height);
        let (xmax, ymax) = ((w - 1) as f64, (h - 1) as f64);
        let first = rows.y_lo * w;
        let mut pos = start;
        let mut drop = Droplet::new(p);
        for _ in 0..p.max_lifetime {
            let (x0, y0) = (pos.0 as usize, pos.1 as usize);
            let here = (x0, y0, pos.0 - x0 as f64, pos.1 - y0 as f64);
            let Some((height, dir)) = drop.turn(p, rows, first, w, here) else { break };
            let next = (pos.0 + dir.0, pos.1 + dir.1);
            if !(next.0 >= 0.0 && next.0 < xmax && next.1 >= 0.0 && next.1 < ymax) {
                return drop.sediment;
            }
            // Where the droplet will likely be after this step, if it keeps its direction.
            if w >= STEP_PREFETCH_WIDTH {
                prefetch_around(rows, w, next.0 + dir.0, next.1 + dir.1, self.brush.reach);
            }
            let (nx0, ny0) = (next.0 as usize, next.1 as usize);
            let there = (nx0, ny0, next.0 - nx0 as f64, next.1 - ny0 as f64);
            let erode = |rows: &mut Rows, amount: f64| {
                let r = self.brush.reach;
                debug_assert!(
                    y0.saturating_sub(r) >= rows.y_lo
                        && (y0 + r).min(h - 1) < rows.y_lo + rows.cells.len() / w,
                    "droplet {index} left its strip's rows"
                );
                let scale = self.brush.scale(w, h, x0, y0, amount);
                self.brush.erode(rows.cells, rows.y_lo, w, x0, y0, scale);
            };
            if !drop.flow(p, rows, first, w, here, there, height, erode) {
                return 0.0;
            }
            pos = next;
        }
        let (x0, y0) = (pos.0 as usize, pos.1 as usize);
        if drop.sediment != 0.0 {
            // Its load is spread over the brush around its last cell (see the type's docs).
            let scale = self.brush.scale(w, h, x0, y0, drop.sediment);
            self.brush.erode(rows.cells, rows.y_lo, w, x0, y0, -scale);
        }
        0.0
    }
}

/// A droplet's state between steps (Beyer 2015; see [`DropletEroder`]).
struct Droplet {
    dir: (f64, f64),
    speed: f64,
    water: f64,
    sediment: f64,
}

/// A position as its cell and the offset inside it: `(x0, y0, u, v)`.
type At = (usize, usize, f64, f64);

impl Droplet {
    fn new(p: &DropletParams) -> Self {
        Self { dir: (0.0, 0.0), speed: p.initial_speed, water: p.initial_water, sediment: 0.0 }
    }

    /// Steps 1–2 at `here`: the height there and the new unit direction, or `None` when the
    /// droplet stops (flat ground).
    #[inline]
    fn turn(
        &mut self,
        p: &DropletParams,
        rows: &Rows,
        first: usize,
        w: usize,
        here: At,
    ) -> Option<(f64, (f64, f64))> {
        let (x0, y0, u, v) = here;
        let (height, gx, gy) = sample(rows, first, w, x0, y0, u, v);
        let dir = self.dir;
        let dir = (dir.0 * p.inertia - gx * (1.0 - p.inertia), dir.1 * p.inertia - gy * (1.0 - p.inertia));
        let len = (dir.0 * dir.0 + dir.1 * dir.1).sqrt();
        if len == 0.0 || !len.is_finite() {
            return None;
        }
        self.dir = (dir.0 / len, dir.1 / len);
        Some((height, self.dir))
    }

    /// Steps 3–6, moving from `here` (height `height`) to `there`: deposit on the corners of
    /// `here` or erode with `erode(rows, amount)` around it, then the new speed and water.
    /// Returns false when the droplet dies (in the sea with no load).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn flow(
        &mut self,
        p: &DropletParams,
        rows: &mut Rows,
        first: usize,
        w: usize,
        here: At,
        there: At,
        height: f64,
        erode: impl FnOnce(&mut Rows, f64),
    ) -> bool {
        let (new_height, _, _) = sample(rows, first, w, there.0, there.1, there.2, there.3);
        let dh = new_height - height;
        let underwater = p.sea_level.is_some_and(|s| height < s);
        if underwater && self.sediment == 0.0 {
            return false;
        }
        let capacity =
            if underwater { 0.0 } else { (-dh * self.speed * self.water * p.capacity).max(p.min_capacity) };
        if self.sediment > capacity || dh > 0.0 {
            let amount =
                if dh > 0.0 { dh.min(self.sediment) } else { (self.sediment - capacity) * p.deposit };
            self.sediment -= deposit(rows, first, w, here.1 * w + here.0, here.2, here.3, amount);
        } else {
            let amount = ((capacity - self.sediment) * p.erode).min(-dh);
            if amount > 0.0 {
                erode(rows, amount);
                self.sediment += amount;
            }
        }
        self.speed = (self.speed * self.speed + dh * p.gravity).max(0.0).sqrt();
        self.water *= 1.0 - p.evaporate;
        true
    }
}

/// Droplet erosion on a window of an endless world, world-anchored so that **any window equals
/// the same cells cut from a larger window, bit for bit**, away from its border (the reach
/// below). The droplets are those of [`DropletEroder`] (Beyer 2015, same physics, same
/// parameters except the count), but where they start and the order they run in are defined by
/// world coordinates, never by the window:
///
/// - **Seeding.** In iteration `t`, world cell `(X, Y)` starts `⌊ρ⌋` droplets, plus one with
///   probability `frac(ρ)`, ρ = `droplets-per-cell`; their offsets in the cell are uniform in
///   [0, 1)², all drawn from `derive_seed(derive_seed(derive_seed(seed, t), X), Y)`.
/// - **Positions** are kept relative to the start cell (`q`, starting in [0, 1)²), so the
///   floating-point path of a droplet is the same whatever window holds it (a window
///   coordinate `i + q` would round differently in each window).
/// - **Order.** With `M = max_lifetime + brush reach + 2` (every cell a droplet reads or
///   changes lies within M cells of its start cell), the world is cut into blocks of
///   `B = 2M` × `B` cells, coloured `(bx mod 2) + 2·(by mod 2)`. An iteration runs the four
///   colours in turn; within a colour every block runs its droplets one after the other in
///   place, in world order (start cells row by row, then draw order), exactly like the
///   sequential algorithm. Two blocks of one colour are a whole block apart, so the cells they
///   can touch (block ± M) never overlap and they run in parallel (bit-identical for any thread
///   count).
/// - **Reach.** A cell's value after one colour depends on the droplets of the blocks within M
///   of it, whose paths read their block ± M: at most `B + 2M = 4M` cells away. Four colours
///   per iteration: a reach of `16·M` cells per iteration ([`WorldDropletEroder::reach`]),
///   e.g. 544 cells for the default lifetime 30 and radius 3. That is the price of running the
///   droplets sequentially (every droplet sees every change made before it, as on a map); the
///   window a world pipeline computes is grown by it, so a 513² window of one iteration costs
///   about (513 + 2·544)² cells of droplets.
/// - The window's border (within the reach) is garbage that the pipeline cuts off: droplets
///   stop where they would leave the window, and the brush skips cells outside it.
///
/// Map-only fields of [`DropletParams`] (`droplets`, `batch_size`) are ignored; there is no
/// sediment carried off a world ([`DropletEroder::lost`] has no counterpart).
#[derive(Clone, Debug)]
pub struct WorldDropletEroder {
    surface: Grid<f64>,
    params: DropletParams,
    brush: Brush,
    /// World cell of the surface's cell (0, 0).
    origin: (i64, i64),
    /// Droplets started per world cell per iteration.
    density: f64,
    /// Iterations done (the next one's seeding stream).
    iteration: u64,
}

impl WorldDropletEroder {
    /// Starts from `map`, the window whose cell (0, 0) is world cell `(x0, y0)`, with `density`
    /// droplets per world cell per iteration (the `droplets-per-cell` key's range). Errors on
    /// bad parameters or non-finite heights.
    pub fn new(map: &Heightmap, params: DropletParams, x0: i64, y0: i64, density: f64) -> Result<Self> {
        params.check()?;
        check_number(DROPLETS, "droplets-per-cell", density)?;
        check_finite(map)?;
        let brush = Brush::new(params.radius);
        Ok(Self { surface: to_f64(map), params, brush, origin: (x0, y0), density, iteration: 0 })
    }

    /// M: every cell a droplet reads or changes lies within M cells of its start cell.
    fn margin(params: &DropletParams) -> usize {
        params.max_lifetime + Brush::new(params.radius).reach + 2
    }

    /// Reach in cells of one iteration: `16·M` (see the type's docs).
    pub fn reach(params: &DropletParams) -> usize {
        16 * Self::margin(params)
    }

    /// Runs the droplets of block `(bx, by)` that start inside the window, on a copy of the
    /// window cells they can touch; returns that region `(x, y, width, height)` of the window
    /// and its new heights.
    fn run_block(&self, bx: i64, by: i64) -> ((usize, usize, usize, usize), Vec<f64>) {
        let m = Self::margin(&self.params) as i64;
        let b = 2 * m;
        let (w, h) = (self.surface.width() as i64, self.surface.height() as i64);
        let (x0, y0) = self.origin;
        // The block and the cells its droplets can touch, in window coordinates.
        let (bx0, by0) = (bx * b - x0, by * b - y0);
        let (rx0, ry0) = ((bx0 - m).max(0), (by0 - m).max(0));
        let (rx1, ry1) = ((bx0 + b + m).min(w), (by0 + b + m).min(h));
        let (rw, rh) = ((rx1 - rx0) as usize, (ry1 - ry0) as usize);
        let mut cells = Vec::with_capacity(rw * rh);
        for y in ry0..ry1 {
            let row = y as usize * w as usize;
            cells.extend_from_slice(&self.surface.as_slice()[row + rx0 as usize..row + rx1 as usize]);
        }
        let mut rows = Rows { cells: &mut cells, y_lo: 0 };
        let iteration_seed = derive_seed(self.params.seed, self.iteration);
        let (whole, part) = (self.density.floor() as usize, self.density.fract());
        for y in by0.max(0)..(by0 + b).min(h) {
            let row_seed = derive_seed(iteration_seed, (y0 + y) as u64);
            for x in bx0.max(0)..(bx0 + b).min(w) {
                let mut rng = SplitMix64::new(derive_seed(row_seed, (x0 + x) as u64));
                let count = whole + usize::from(rng.next_f64() < part);
                for _ in 0..count {
                    let q = (rng.next_f64(), rng.next_f64());
                    let start = ((x - rx0) as usize, (y - ry0) as usize);
                    self.simulate(&mut rows, rw, rh, start, q);
                }
            }
        }
        ((rx0 as usize, ry0 as usize, rw, rh), cells)
    }

    /// One droplet from offset `q` in cell `start` of a `rw × rh` region (see the type's docs:
    /// positions relative to the start cell).
    fn simulate(&self, rows: &mut Rows, rw: usize, rh: usize, start: (usize, usize), q: (f64, f64)) {
        let p = &self.params;
        let at = |q: (f64, f64)| -> Option<At> {
            let (fx, fy) = (q.0.floor(), q.1.floor());
            let (cx, cy) = (start.0 as i64 + fx as i64, start.1 as i64 + fy as i64);
            let inside = cx >= 0 && cy >= 0 && cx + 1 < rw as i64 && cy + 1 < rh as i64;
            inside.then_some((cx as usize, cy as usize, q.0 - fx, q.1 - fy))
        };
        let Some(mut here) = at(q) else { return };
        let mut q = q;
        let mut drop = Droplet::new(p);
        for _ in 0..p.max_lifetime {
            let Some((height, dir)) = drop.turn(p, rows, 0, rw, here) else { break };
            let next = (q.0 + dir.0, q.1 + dir.1);
            // Leaving the region only happens at the window's border (garbage cells).
            let Some(there) = at(next) else { return };
            let erode = |rows: &mut Rows, amount: f64| {
                self.brush.erode(rows.cells, 0, rw, here.0, here.1, amount / self.brush.total);
            };
            if !drop.flow(p, rows, 0, rw, here, there, height, erode) {
                return;
            }
            (q, here) = (next, there);
        }
        // The load left is spread over the brush around the last cell, as on a map.
        self.brush.erode(rows.cells, 0, rw, here.0, here.1, -drop.sediment / self.brush.total);
    }
}

impl Eroder for WorldDropletEroder {
    fn run_one_step(&mut self) -> Result<()> {
        let (w, h) = (self.surface.width(), self.surface.height());
        if w < 2 || h < 2 {
            return Ok(());
        }
        let b = 2 * Self::margin(&self.params) as i64;
        let (x0, y0) = self.origin;
        let (bx_lo, bx_hi) = (x0.div_euclid(b), (x0 + w as i64 - 1).div_euclid(b));
        let (by_lo, by_hi) = (y0.div_euclid(b), (y0 + h as i64 - 1).div_euclid(b));
        for colour in 0..4 {
            let blocks: Vec<(i64, i64)> = (by_lo..=by_hi)
                .flat_map(|by| (bx_lo..=bx_hi).map(move |bx| (bx, by)))
                .filter(|&(bx, by)| (bx.rem_euclid(2) + 2 * by.rem_euclid(2)) as usize == colour)
                .collect();
            let done: Vec<_> = blocks.par_iter().map(|&(bx, by)| self.run_block(bx, by)).collect();
            // Regions of one colour are disjoint: writing them back in any order is the same.
            let surface = self.surface.as_mut_slice();
            for ((rx, ry, rw, rh), cells) in done {
                for (j, row) in cells.chunks_exact(rw).enumerate().take(rh) {
                    let at = (ry + j) * w + rx;
                    surface[at..at + rw].copy_from_slice(row);
                }
            }
        }
        self.iteration += 1;
        Ok(())
    }

    fn surface(&self) -> &Grid<f64> {
        &self.surface
    }
}

/// Narrowest map on which a droplet asks for the cells of its next step ahead
/// ([`prefetch_around`] at every step). Its 16 hints per step cost more than they save where
/// the rows a droplet works on stay in the caches: on one thread, 4 rounds of droplets on a
/// 513² map took 0.103 s without them against 0.111 s with them, and 0.128 against 0.136 s
/// on a 1025² map; on a 2049² map they save 8 % (0.73 against 0.79 s; medians of 5). The
/// hint for the next droplet's start is kept on every map.
const STEP_PREFETCH_WIDTH: usize = 1536;

/// Asks the processor to start loading the cells a droplet at `(x, y)` will read and erode
/// (rows `y − reach ..= y + reach + 1`, columns `x − reach ..= x + reach + 1`) while it works
/// on something else. A hint only: it changes no value, never faults, and any position (even
/// off the map) is allowed. On a 4097² map a row is 32 KiB, so each step into a new row missed
/// the caches: the droplets spent most of their time waiting for these loads.
#[inline(always)]
fn prefetch_around(rows: &Rows, w: usize, x: f64, y: f64, reach: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // Wrapping arithmetic: a wild position gives a wild address, never an overflow.
        let (x, y, r) = (x as isize, (y as isize).wrapping_sub(rows.y_lo as isize), reach as isize);
        let base = rows.cells.as_ptr();
        for dy in -r..=r + 1 {
            let row = y.wrapping_add(dy).wrapping_mul(w as isize);
            for dx in [-r, r + 1] {
                let cell = base.wrapping_offset(row.wrapping_add(x).wrapping_add(dx));
                // SAFETY: a prefetch reads nothing into the program and never faults, whatever
                // the address.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(cell.cast()) };
            }
        }
    }
    // Elsewhere no hint (the stable prefetch intrinsics are x86's).
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (rows, w, x, y, reach);
}

/// Bilinear height and gradient inside cell `(x0, y0)` at fractional offset `(u, v)`; `first`
/// is the map index of the first cell of `rows`.
#[inline]
fn sample(rows: &Rows, first: usize, w: usize, x0: usize, y0: usize, u: f64, v: f64) -> (f64, f64, f64) {
    let i = y0 * w + x0;
    let at = |j| rows.at(first, j);
    let (nw, ne, sw, se) = (at(i), at(i + 1), at(i + w), at(i + w + 1));
    let gx = (ne - nw) * (1.0 - v) + (se - sw) * v;
    let gy = (sw - nw) * (1.0 - u) + (se - ne) * u;
    let height = nw * (1.0 - u) * (1.0 - v) + ne * u * (1.0 - v) + sw * (1.0 - u) * v + se * u * v;
    (height, gx, gy)
}

/// Adds `amount` to the 4 corners of map cell `cell` with bilinear weights at `(u, v)`;
/// returns the sum actually added.
#[inline]
fn deposit(rows: &mut Rows, first: usize, w: usize, cell: usize, u: f64, v: f64, amount: f64) -> f64 {
    let mut added = 0.0;
    for (off, a) in [0, 1, w, w + 1].into_iter().zip(bilinear_parts(u, v, amount)) {
        rows.cells[cell + off - first] += a;
        added += a;
    }
    added
}

impl Eroder for DropletEroder {
    fn run_one_step(&mut self) -> Result<()> {
        if self.surface.width() < 2 || self.surface.height() < 2 {
            return Ok(());
        }
        let total = self.params.droplets as u64;
        let batch = self.params.batch_size as u64;
        let start = self.next_droplet;
        let end = start + total;
        if batch == 1 {
            let (w, h) = (self.surface.width(), self.surface.height());
            let sim = Sim { params: &self.params, brush: &self.brush, width: w, height: h };
            let mut rows = Rows { cells: self.surface.as_mut_slice(), y_lo: 0 };
            for k in start..end {
                self.lost += sim.simulate(k, sim.start(k), &mut rows);
            }
        } else {
            let mut b = start;
            while b < end {
                let e = (b + batch).min(end);
                self.run_batch(b, e);
                b = e;
            }
        }
        self.next_droplet = end;
        Ok(())
    }

    fn surface(&self) -> &Grid<f64> {
        &self.surface
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tall map with relief, and droplet parameters that give it many strips.
    fn setup() -> (Heightmap, DropletParams) {
        let map = Heightmap::from_fn(40, 300, 1.0, |x, y| {
            let (x, y) = (x as f32, y as f32);
            1.0 - (x + 0.3 * y) / 200.0 + 0.05 * (x * 0.37).sin() * (y * 0.23).cos()
        })
        .unwrap();
        let p = DropletParams {
            droplets: 3000,
            batch_size: 700,
            max_lifetime: 8,
            radius: 2.0,
            seed: 5,
            ..Default::default()
        };
        (map, p)
    }

    fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
    }

    /// A parallel batch gives exactly the sequential in-place result for the documented order
    /// (strips 0, 2, 4, …, then 1, 3, …; index order inside a strip), on 1, 2 and 4 threads;
    /// and this differs from the plain index order (batch size 1) only by that reordering.
    #[test]
    fn parallel_batches_are_the_sequential_run_in_strip_order() {
        let (map, p) = setup();
        let parallel = |threads| {
            in_pool(threads, || {
                let mut e = DropletEroder::new(&map, p).unwrap();
                e.run_one_step().unwrap();
                e
            })
        };
        let e = parallel(2);
        let count = e.strips.bounds.len() - 1;
        assert!(count >= 10, "{count} strips");
        assert_eq!(e.strips.margin, 8 + 1 + 2);
        // Reference: one in-place pass over the whole map in strip order, batch by batch.
        let mut reference = DropletEroder::new(&map, DropletParams { batch_size: 1, ..p }).unwrap();
        let (w, h) = (map.width(), map.height());
        let sim = Sim { params: &p, brush: &reference.brush, width: w, height: h };
        let mut rows = Rows { cells: reference.surface.as_mut_slice(), y_lo: 0 };
        let mut lost = 0.0;
        for b in (0..p.droplets as u64).step_by(p.batch_size) {
            let batch: Vec<u64> = (b..(b + p.batch_size as u64).min(p.droplets as u64)).collect();
            let strip = |k: &u64| e.strips.strip_of_row[sim.start(*k).1 as usize] as usize;
            let mut per_strip = vec![0.0; count];
            for s in (0..count).step_by(2).chain((1..count).step_by(2)) {
                for k in batch.iter().filter(|k| strip(k) == s) {
                    per_strip[s] += sim.simulate(*k, sim.start(*k), &mut rows);
                }
            }
            // Each strip's loss is added to the total in turn, as the eroder does.
            for s in (0..count).step_by(2).chain((1..count).step_by(2)) {
                lost += per_strip[s];
            }
        }
        let bits = |e: &DropletEroder| e.surface.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let want = rows.cells.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert!(bits(&e) == want, "parallel batch differs from the sequential run in strip order");
        assert_eq!(e.lost.to_bits(), lost.to_bits());
        for threads in [1, 4] {
            let other = parallel(threads);
            assert!(bits(&other) == want, "{threads} threads");
            assert_eq!(other.lost.to_bits(), lost.to_bits());
        }
        let mut sequential = DropletEroder::new(&map, DropletParams { batch_size: 1, ..p }).unwrap();
        sequential.run_one_step().unwrap();
        assert!(bits(&sequential) != want, "the strip order is not the index order");
    }

    /// Maps shorter than four margins have one strip: a batch is the sequential run.
    #[test]
    fn one_strip_batches_equal_the_sequential_run() {
        let (map, p) = setup();
        let p = DropletParams { max_lifetime: 100, ..p };
        let mut batched = DropletEroder::new(&map, p).unwrap();
        assert_eq!(batched.strips.bounds, [0, 300]);
        batched.run_one_step().unwrap();
        let mut sequential = DropletEroder::new(&map, DropletParams { batch_size: 1, ..p }).unwrap();
        sequential.run_one_step().unwrap();
        assert!(batched.surface.as_slice() == sequential.surface.as_slice());
    }

    /// The prefetch hint takes any position, on or off the map, even absurd ones (it never
    /// faults, overflows or changes a cell).
    #[test]
    fn prefetch_takes_any_position() {
        let mut cells: Vec<f64> = (0..64).map(f64::from).collect();
        let rows = Rows { cells: &mut cells, y_lo: 3 };
        for (x, y) in [(0.0, 3.0), (-5.0, -7.0), (1e300, -1e300), (f64::NAN, f64::INFINITY), (7.9, 10.5)] {
            prefetch_around(&rows, 8, x, y, 16);
        }
        assert!(cells.iter().enumerate().all(|(i, &v)| v == i as f64));
    }

    /// The brush rows hold exactly the cells with dist < radius, with weights 1 − dist/radius,
    /// and a clipped disc is normalised over its cells inside the map.
    #[test]
    fn brush_is_the_disc_and_normalises_over_the_map() {
        let b = Brush::new(3.0);
        let cells: Vec<(i32, i32, f64)> = b
            .rows
            .iter()
            .scan(0, |k, &(dy, dx0, len)| {
                let row: Vec<_> = (0..len).map(|j| (dx0 + j as i32, dy, b.weights[*k + j])).collect();
                *k += len;
                Some(row)
            })
            .flatten()
            .collect();
        assert_eq!(cells.len(), 25);
        for (dx, dy, wt) in &cells {
            assert!(((dx * dx + dy * dy) as f64) < 9.0);
            assert_eq!(*wt, 1.0 - ((dx * dx + dy * dy) as f64).sqrt() / 3.0);
        }
        assert_eq!(b.reach, 2);
        // In the corner (0, 0) of a 10×10 map only dx, dy ≥ 0 count.
        let inside: f64 = cells.iter().filter(|c| c.0 >= 0 && c.1 >= 0).map(|c| c.2).sum();
        assert!((b.scale(10, 10, 0, 0, 2.0) - 2.0 / inside).abs() < 1e-15);
        assert_eq!(b.scale(10, 10, 5, 5, 2.0), 2.0 / b.total);
        let mut h = vec![0.0; 100];
        b.erode(&mut h, 0, 10, 0, 0, b.scale(10, 10, 0, 0, 2.0));
        assert!((h.iter().sum::<f64>() + 2.0).abs() < 1e-14);
        assert_eq!(h.iter().filter(|&&v| v < 0.0).count(), 9);
    }
}
