//! Droplet (particle) hydraulic erosion after Beyer 2015, as popularised by Lague.

use rayon::prelude::*;
use terrasynth_noise::rng::{SplitMix64, derive_seed};

use super::{Eroder, check_finite, check_range, to_f64};
use crate::{Error, Grid, Heightmap, Result};

/// Parameters of [`DropletEroder`]. Defaults are Lague's CPU defaults (research notes §6a),
/// which assume heights of order 1 (e.g. a [0, 1] map); all lengths are in cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DropletParams {
    /// Droplets simulated per [`Eroder::run_one_step`]. Default 50,000; range 1..=100,000,000.
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
    /// Droplets per batch. Droplets of one batch all read the heights as they were at the
    /// batch start and are simulated in parallel; their height changes are then applied in
    /// droplet order. 1 means fully sequential, in place (each droplet sees every earlier
    /// change, as in Lague's code; measured faster than batches on 2 cores). Default 1; range 1..=1,000,000.
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
        let int = |name: &str, v: usize, lo: usize, hi: usize| {
            if v < lo || v > hi {
                Err(Error::param(name, v, format!("an integer in {lo}..={hi}")))
            } else {
                Ok(())
            }
        };
        int("droplets", self.droplets, 1, 100_000_000)?;
        int("max-lifetime", self.max_lifetime, 1, 10_000)?;
        int("batch-size", self.batch_size, 1, 1_000_000)?;
        check_range("radius", self.radius, 1.0, 16.0)?;
        if !(self.inertia.is_finite() && (0.0..1.0).contains(&self.inertia)) {
            return Err(Error::param("inertia", self.inertia, "a number in [0, 1)"));
        }
        check_range("capacity", self.capacity, 0.0, 1000.0)?;
        check_range("min-capacity", self.min_capacity, 0.0, 1000.0)?;
        check_range("erode", self.erode, 0.0, 1.0)?;
        check_range("deposit", self.deposit, 0.0, 1.0)?;
        check_range("evaporate", self.evaporate, 0.0, 1.0)?;
        check_range("gravity", self.gravity, 0.0, 1000.0)?;
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
/// 5. otherwise erode `min((C − sediment)·erode, −Δh)` from the cells within `radius` of the
///    old cell (weights ∝ 1 − dist/radius, normalised over the cells inside the map);
/// 6. `speed = sqrt(max(0, speed² + Δh·gravity))`, `water *= 1 − evaporate`.
///
/// With a sea level ([`DropletParams::sea_level`]), a droplet whose position is below it has
/// capacity 0 (it only deposits, `sediment·deposit` per step, and stops once empty), so the
/// sea floor is never dug and rivers build small deltas.
///
/// Differences from Lague, for mass accounting: a droplet that dies on the map deposits its
/// remaining sediment at its last position (bilinear); one that leaves the map takes its
/// sediment with it, which is counted in [`DropletEroder::lost`]. So `Σh + lost` is conserved
/// exactly up to `f64` rounding. Heights are not clamped at 0 (our heights may be negative).
///
/// Determinism: see [`DropletParams::batch_size`]; batch membership depends only on the
/// droplet index, so the result is bit-identical for any thread count. Maps narrower than 2
/// cells in either direction are left unchanged.
#[derive(Clone, Debug)]
pub struct DropletEroder {
    surface: Grid<f64>,
    params: DropletParams,
    brush: Vec<(i32, i32, f64)>,
    next_droplet: u64,
    lost: f64,
}

/// One recorded height change.
#[derive(Clone, Copy, Debug)]
enum Change {
    /// Add a delta to one cell.
    Add(u32, f64),
    /// Erode `amount` with the brush centred on a cell (expanded when applied, with the same
    /// arithmetic as in place, so the log stays ~30× shorter).
    Brush(u32, f64),
}

/// Height changes recorded by droplets, in order.
type HeightLog = Vec<Change>;

/// Droplets per parallel work item inside a batch (fixed, so results ignore the thread count).
const CHUNK: u64 = 32;

/// Read heights and record changes: either in place or against a frozen snapshot.
trait Field {
    fn at(&self, i: usize) -> f64;
    fn add(&mut self, i: usize, delta: f64);
    /// Erodes `amount` with the brush around `centre`; returns the amount removed.
    fn brush(&mut self, sim: &Sim, centre: usize, amount: f64) -> f64;
}

struct InPlace<'a>(&'a mut [f64]);

impl Field for InPlace<'_> {
    #[inline]
    fn at(&self, i: usize) -> f64 {
        self.0[i]
    }
    #[inline]
    fn add(&mut self, i: usize, delta: f64) {
        self.0[i] += delta;
    }
    fn brush(&mut self, sim: &Sim, centre: usize, amount: f64) -> f64 {
        sim.brush_takes(centre, amount, |i, take| self.0[i] -= take)
    }
}

struct Logged<'a> {
    heights: &'a [f64],
    log: HeightLog,
}

impl Field for Logged<'_> {
    #[inline]
    fn at(&self, i: usize) -> f64 {
        self.heights[i]
    }
    #[inline]
    fn add(&mut self, i: usize, delta: f64) {
        self.log.push(Change::Add(i as u32, delta));
    }
    fn brush(&mut self, sim: &Sim, centre: usize, amount: f64) -> f64 {
        self.log.push(Change::Brush(centre as u32, amount));
        sim.brush_takes(centre, amount, |_, _| {})
    }
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
        let r = params.radius;
        let reach = r.ceil() as i32;
        let mut brush = Vec::new();
        for dy in -reach..=reach {
            for dx in -reach..=reach {
                let dist = ((dx * dx + dy * dy) as f64).sqrt();
                if dist < r {
                    brush.push((dx, dy, 1.0 - dist / r));
                }
            }
        }
        Ok(Self { surface: to_f64(map), params, brush, next_droplet: 0, lost: 0.0 })
    }

    /// Sediment carried off the map by droplets so far (height units × cells).
    pub fn lost(&self) -> f64 {
        self.lost
    }
}

/// What a droplet needs besides the heights (split from the eroder so the surface can be
/// borrowed mutably while droplets run in place).
struct Sim<'a> {
    params: &'a DropletParams,
    brush: &'a [(i32, i32, f64)],
    width: usize,
    height: usize,
}

impl Sim<'_> {
    /// Simulates one droplet; returns the sediment it carried off the map.
    fn simulate(&self, index: u64, field: &mut impl Field) -> f64 {
        let p = self.params;
        let (w, h) = (self.width, self.height);
        let (xmax, ymax) = ((w - 1) as f64, (h - 1) as f64);
        let mut rng = SplitMix64::new(derive_seed(p.seed, index));
        let mut pos = (rng.range_f64(0.0, xmax), rng.range_f64(0.0, ymax));
        let mut dir = (0.0f64, 0.0f64);
        let (mut speed, mut water, mut sediment) = (p.initial_speed, p.initial_water, 0.0f64);
        let sea_level = p.sea_level;
        for _ in 0..p.max_lifetime {
            let (x0, y0) = (pos.0 as usize, pos.1 as usize);
            let (u, v) = (pos.0 - x0 as f64, pos.1 - y0 as f64);
            let (height, gx, gy) = sample(field, w, x0, y0, u, v);
            dir = (dir.0 * p.inertia - gx * (1.0 - p.inertia), dir.1 * p.inertia - gy * (1.0 - p.inertia));
            let len = (dir.0 * dir.0 + dir.1 * dir.1).sqrt();
            if len == 0.0 || !len.is_finite() {
                break;
            }
            dir = (dir.0 / len, dir.1 / len);
            let next = (pos.0 + dir.0, pos.1 + dir.1);
            if !(next.0 >= 0.0 && next.0 < xmax && next.1 >= 0.0 && next.1 < ymax) {
                return sediment;
            }
            let (nx0, ny0) = (next.0 as usize, next.1 as usize);
            let (new_height, _, _) = sample(field, w, nx0, ny0, next.0 - nx0 as f64, next.1 - ny0 as f64);
            let dh = new_height - height;
            let underwater = sea_level.is_some_and(|s| height < s);
            if underwater && sediment == 0.0 {
                return 0.0;
            }
            let capacity =
                if underwater { 0.0 } else { (-dh * speed * water * p.capacity).max(p.min_capacity) };
            if sediment > capacity || dh > 0.0 {
                let amount = if dh > 0.0 { dh.min(sediment) } else { (sediment - capacity) * p.deposit };
                sediment -= deposit_bilinear(field, w, x0, y0, u, v, amount);
            } else {
                let amount = ((capacity - sediment) * p.erode).min(-dh);
                if amount > 0.0 {
                    sediment += field.brush(self, y0 * w + x0, amount);
                }
            }
            speed = (speed * speed + dh * p.gravity).max(0.0).sqrt();
            water *= 1.0 - p.evaporate;
            pos = next;
        }
        if sediment != 0.0 {
            let (x0, y0) = (pos.0 as usize, pos.1 as usize);
            deposit_bilinear(field, w, x0, y0, pos.0 - x0 as f64, pos.1 - y0 as f64, sediment);
        }
        0.0
    }

    /// Calls `take(i, part)` for each cell of the brush disc around `centre` with its share of
    /// `amount` (weights normalised over the cells inside the map); returns the sum of parts.
    #[inline]
    fn brush_takes(&self, centre: usize, amount: f64, mut take: impl FnMut(usize, f64)) -> f64 {
        let (x0, y0) = ((centre % self.width) as i64, (centre / self.width) as i64);
        let (w, h) = (self.width as i64, self.height as i64);
        let inside = |dx: i32, dy: i32| {
            let (x, y) = (x0 + dx as i64, y0 + dy as i64);
            (x >= 0 && y >= 0 && x < w && y < h).then_some((y * w + x) as usize)
        };
        let total: f64 = self.brush.iter().filter(|b| inside(b.0, b.1).is_some()).map(|b| b.2).sum();
        let mut removed = 0.0;
        for &(dx, dy, weight) in self.brush {
            if let Some(i) = inside(dx, dy) {
                let part = amount * weight / total;
                take(i, part);
                removed += part;
            }
        }
        removed
    }
}

/// Bilinear height and gradient inside cell `(x0, y0)` at fractional offset `(u, v)`.
#[inline]
fn sample(field: &impl Field, w: usize, x0: usize, y0: usize, u: f64, v: f64) -> (f64, f64, f64) {
    let i = y0 * w + x0;
    let (nw, ne, sw, se) = (field.at(i), field.at(i + 1), field.at(i + w), field.at(i + w + 1));
    let gx = (ne - nw) * (1.0 - v) + (se - sw) * v;
    let gy = (sw - nw) * (1.0 - u) + (se - ne) * u;
    let height = nw * (1.0 - u) * (1.0 - v) + ne * u * (1.0 - v) + sw * (1.0 - u) * v + se * u * v;
    (height, gx, gy)
}

/// Adds `amount` to the 4 corners of cell `(x0, y0)` with bilinear weights; returns the sum
/// actually added. Corners past the last row/column fold onto the cell itself.
#[inline]
fn deposit_bilinear(
    field: &mut impl Field,
    w: usize,
    x0: usize,
    y0: usize,
    u: f64,
    v: f64,
    amount: f64,
) -> f64 {
    let i = y0 * w + x0;
    let parts = [
        (i, amount * (1.0 - u) * (1.0 - v)),
        (i + 1, amount * u * (1.0 - v)),
        (i + w, amount * (1.0 - u) * v),
        (i + w + 1, amount * u * v),
    ];
    let mut added = 0.0;
    for (j, a) in parts {
        field.add(j, a);
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
            let sim = Sim {
                params: &self.params,
                brush: &self.brush,
                width: self.surface.width(),
                height: self.surface.height(),
            };
            let mut field = InPlace(self.surface.as_mut_slice());
            for k in start..end {
                self.lost += sim.simulate(k, &mut field);
            }
        } else {
            let mut b = start;
            while b < end {
                let e = (b + batch).min(end);
                let sim = Sim {
                    params: &self.params,
                    brush: &self.brush,
                    width: self.surface.width(),
                    height: self.surface.height(),
                };
                let heights = self.surface.as_slice();
                // Fixed chunks of droplets (not per-thread work) so the order of the
                // concatenated logs, and thus the result, is the same for any thread count.
                let chunks = (e - b).div_ceil(CHUNK);
                let results: Vec<(HeightLog, Vec<f64>)> = (0..chunks)
                    .into_par_iter()
                    .map(|c| {
                        let mut field = Logged { heights, log: Vec::new() };
                        let first = b + c * CHUNK;
                        let lost =
                            (first..(first + CHUNK).min(e)).map(|k| sim.simulate(k, &mut field)).collect();
                        (field.log, lost)
                    })
                    .collect();
                let h = self.surface.as_mut_slice();
                for (log, lost) in results {
                    for change in log {
                        match change {
                            Change::Add(i, d) => h[i as usize] += d,
                            Change::Brush(c, amount) => {
                                sim.brush_takes(c as usize, amount, |i, part| h[i] -= part);
                            }
                        }
                    }
                    for l in lost {
                        self.lost += l;
                    }
                }
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
