//! Flow routing: D8 receivers (O'Callaghan & Mark 1984), their topological order, flow
//! accumulation, watershed labels, and D∞ flow angles and accumulation (Tarboton 1997).
//!
//! D8: each cell sends all its water to the neighbour of steepest descent, slope
//! `s = (z(c) − z(n)) / d` with `d = 1` for the 4 side neighbours and `√2` for diagonals (in
//! cells; the cell size cancels out of the comparison). Only strictly lower neighbours count;
//! ties go to the first neighbour in [`D8`] order (E, SE, S, SW, W, NW, N, NE). Edge
//! cells and cells below the sea level are outlets: their receiver is themselves. On a surface
//! filled with [`DepressionFiller::with_epsilon`](super::DepressionFiller) every other cell has
//! a strictly lower neighbour, so every cell drains to an outlet.
//!
//! Accumulation: every cell contributes a weight (1 by default: the result is the number of
//! cells draining through each cell, its drainage area in cells) and passes its total to its
//! receiver, visiting cells in topological order (donors before receivers), which is O(n).

use rayon::prelude::*;
use terrasynth_noise::detmath;

use super::fill::check_dem;
use super::flood::FloodHeight;
use crate::grid::D8;
use crate::{Error, Grid, Heightmap, Result};

const SQRT2: f32 = std::f32::consts::SQRT_2;

/// Index of the steepest strictly lower neighbour of interior cell `(x, y)`, or `None`.
#[inline]
pub(crate) fn steepest_lower(z: &[f32], w: usize, h: usize, x: usize, y: usize) -> Option<usize> {
    let zc = z[y * w + x];
    let mut best = None;
    let mut best_s = 0.0f32;
    for (k, &(dx, dy)) in D8.iter().enumerate() {
        let (nx, ny) = (x as i64 + dx as i64, y as i64 + dy as i64);
        if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
            continue;
        }
        steeper(zc, z, ny as usize * w + nx as usize, k, &mut best, &mut best_s);
    }
    best
}

/// Keeps neighbour `n` (direction `k` in [`D8`]) if its slope from height `zc` is
/// strictly steeper than the best so far (so ties keep the earlier direction).
#[inline(always)]
fn steeper(zc: f32, z: &[f32], n: usize, k: usize, best: &mut Option<usize>, best_s: &mut f32) {
    let drop = zc - z[n];
    if drop > 0.0 {
        let s = if k % 2 == 1 { drop / SQRT2 } else { drop };
        if s > *best_s {
            *best_s = s;
            *best = Some(n);
        }
    }
}

/// The D8 kernel shared by [`D8Router::d8`] and [`StreamPowerRouter`](super::StreamPowerRouter): for the
/// `dirs.len()` consecutive cells starting at index `start` of `z` (row stride `stride`; all
/// their 8 neighbours must be inside `z`), the direction (index in [`D8`]) of the
/// steepest strictly lower neighbour, or 8 if there is none. Slope `(z(c) − z(n)) / d`,
/// `d = 1` or `√2`; a slope is kept only when strictly above the best so far (starting from 0),
/// so ties keep the earlier direction, as [`steepest_lower`]. Computed direction by direction
/// over the whole run (`slope` is scratch), which the compiler vectorises. A +∞ neighbour
/// (the flood's border) is never chosen.
pub(crate) fn d8_directions<H: FloodHeight>(
    z: &[H],
    stride: usize,
    start: usize,
    dirs: &mut [u8],
    slope: &mut Vec<H>,
) {
    // On AVX2 lanes where the CPU has them: the same comparisons and IEEE divisions, so the
    // same directions, in about a third of the time for f64 heights.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn directions_avx2<H: FloodHeight>(
        z: &[H],
        stride: usize,
        start: usize,
        dirs: &mut [u8],
        slope: &mut Vec<H>,
    ) {
        d8_directions_portable(z, stride, start, dirs, slope);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2 (checked just above).
        unsafe { directions_avx2(z, stride, start, dirs, slope) };
        return;
    }
    d8_directions_portable(z, stride, start, dirs, slope);
}

/// [`d8_directions`] on any CPU.
#[inline(always)]
fn d8_directions_portable<H: FloodHeight>(
    z: &[H],
    stride: usize,
    start: usize,
    dirs: &mut [u8],
    slope: &mut Vec<H>,
) {
    let m = dirs.len();
    let zc = &z[start..start + m];
    slope.clear();
    slope.resize(m, H::ZERO);
    dirs.fill(8);
    for (k, &(dx, dy)) in D8.iter().enumerate() {
        let s = (start as isize + dy as isize * stride as isize + dx as isize) as usize;
        let zn = &z[s..s + m];
        let d = if k % 2 == 1 { H::SQRT2 } else { H::ONE };
        for (((s, dk), &c), &n) in slope.iter_mut().zip(dirs.iter_mut()).zip(zc).zip(zn) {
            let v = (c - n) / d;
            let better = v > *s;
            *s = if better { v } else { *s };
            *dk = if better { k as u8 } else { *dk };
        }
    }
}

/// D8 receivers of one row `y` of a `w`-wide unpadded surface into `row`, and their directions
/// (indices into [`D8`]) into `dir_row` (left at 8, none, for outlets): edge cells and cells
/// below `sea_level` are outlets (their own receiver).
#[allow(clippy::too_many_arguments)]
fn d8_row(
    z: &[f32],
    w: usize,
    h: usize,
    y: usize,
    sea_level: f32,
    row: &mut [u32],
    dir_row: &mut [u8],
    scratch: &mut (Vec<f32>, Vec<u8>),
) {
    let base = y * w;
    for (x, r) in row.iter_mut().enumerate() {
        *r = (base + x) as u32;
    }
    if y == 0 || y + 1 == h || w < 3 {
        return;
    }
    let (slope, dir) = scratch;
    dir.resize(w - 2, 8);
    d8_directions(z, w, base + 1, dir, slope);
    let offsets = neighbour_offsets(w);
    for (x, (&k, &c)) in dir.iter().zip(&z[base + 1..base + w - 1]).enumerate() {
        if k < 8 && c >= sea_level {
            row[x + 1] = ((base + 1 + x) as isize + offsets[k as usize]) as u32;
            dir_row[x + 1] = k;
        }
    }
}

/// Linear index offsets of the 8 neighbours in a grid of row stride `w`, in [`D8`] order.
pub(crate) fn neighbour_offsets(w: usize) -> [isize; 8] {
    D8.map(|(dx, dy)| dy as isize * w as isize + dx as isize)
}

/// D8 routing of a surface: one receiver per cell and a topological order.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowField {
    width: usize,
    height: usize,
    cell_size: f64,
    /// Receiver (linear index) of each cell; an outlet or a pit is its own receiver.
    receivers: Vec<u32>,
    /// Every cell, receivers before their donors (outlets first). Reverse it to accumulate.
    order: Vec<u32>,
    /// Ends of the runs of whole drainage trees `order` is cut into (every cell's receiver
    /// in its own run, before it), which accumulate in parallel; one run from
    /// [`FlowField::from_receivers`].
    run_ends: Vec<usize>,
}

/// Computes D8 flow directions of an `f32` heightmap with sea-level outlets into a [`FlowField`]
/// (see the module docs): the router for display, rivers and lakes. Its `f64` twin for stream
/// power, with an outlet mask and a reusable workspace, is
/// [`StreamPowerRouter`](super::StreamPowerRouter); both share the flood, the D8 kernel and the
/// topological order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct D8Router;

impl D8Router {
    /// D8 receivers of `surface` and their topological order. Outlets: edge cells and cells
    /// strictly below `sea_level`. Rows are routed in parallel; the result does not depend on
    /// the thread count (each cell's receiver depends only on its own neighbourhood).
    pub fn d8(&self, surface: &Heightmap, sea_level: f32) -> Result<FlowField> {
        check_dem(surface)?;
        if sea_level.is_nan() {
            return Err(Error::param("sea-level", sea_level, "a number (or -inf for no sea)"));
        }
        let (w, h) = (surface.width(), surface.height());
        let z = surface.as_slice();
        let mut receivers = vec![0u32; w * h];
        // Each cell's direction (8: none) with a border of 8, for the donor masks.
        let wp = w + 2;
        let mut dirs = vec![8u8; wp * (h + 2)];
        receivers.par_chunks_mut(w).zip(dirs[wp..wp * (h + 1)].par_chunks_mut(wp)).enumerate().for_each_init(
            || (Vec::new(), Vec::new()),
            |scratch, (y, (row, dir_row))| {
                d8_row(z, w, h, y, sea_level, row, &mut dir_row[1..w + 1], scratch)
            },
        );
        let mut donors = Vec::new();
        super::routing::donor_masks(&dirs, w, h, &mut donors);
        drop(dirs);
        let (order, run_ends) = grid_order(&receivers, &donors, w);
        Ok(FlowField { width: w, height: h, cell_size: surface.cell_size(), receivers, order, run_ends })
    }
}

/// Receivers-first order of a forest given by `receivers` (a root is its own receiver), O(n):
/// count each cell's donors; then, scanning cells in row-major order, start at every cell
/// with no donor and walk downstream, emitting each cell and moving on to its receiver as soon
/// as the receiver's last donor has been emitted. The walks follow the flow from cell to
/// neighbouring cell, so memory access stays local (a breadth-first walk from the roots jumps
/// across the map). Cells are written from the back, so the result lists receivers before
/// donors. Cells on a cycle are never emitted: the result is then shorter than `receivers`.
pub(crate) fn topological_order(receivers: &[u32]) -> Vec<u32> {
    let n = receivers.len();
    // Donor counts; a D8 cell has at most 8 donors, other receiver lists may have more.
    const DONE: u32 = u32::MAX;
    // Read before written: zeros written now (see `memory::zeros_written`).
    let mut pending: Vec<u32> = crate::memory::zeros_written(n);
    for (i, &r) in receivers.iter().enumerate() {
        if r as usize != i {
            pending[r as usize] += 1;
        }
    }
    let mut order = vec![0u32; n];
    let mut next = n;
    for start in 0..n {
        if pending[start] != 0 {
            continue;
        }
        let mut c = start;
        loop {
            next -= 1;
            order[next] = c as u32;
            pending[c] = DONE;
            let r = receivers[c] as usize;
            if r == c {
                break;
            }
            pending[r] -= 1;
            if pending[r] != 0 {
                break;
            }
            c = r;
        }
    }
    if next != 0 {
        order.drain(..next);
    }
    order
}

/// Rows per piece of [`grid_order`] (fixed, so the order does not depend on the thread count).
const ORDER_PIECE_ROWS: usize = 16;

/// A receivers-first order of a forest whose receivers are 8-neighbours (or the cell itself),
/// on a grid `w` wide, and the ends of the runs of whole trees it is cut into, from each cell's
/// donors as a bit mask (`donors`, [`super::routing::donor_masks`]): for pieces of
/// [`ORDER_PIECE_ROWS`] rows in parallel, every root of the piece in index order walked up
/// depth-first, each cell before its donors (the walk of
/// [`super::routing::StreamPowerRouter`]'s stack); the pieces concatenated in order. Cells on a
/// cycle are never reached: the order is then shorter than `receivers`.
fn grid_order(receivers: &[u32], donors: &[u8], w: usize) -> (Vec<u32>, Vec<usize>) {
    let n = receivers.len();
    if n == 0 || w == 0 {
        return (Vec::new(), Vec::new());
    }
    let table = super::routing::DonorOffsets::new(w);
    let pieces: Vec<Vec<u32>> = receivers
        .par_chunks(ORDER_PIECE_ROWS * w)
        .enumerate()
        .map_init(Vec::new, |pending, (p, cells)| {
            let mut out = Vec::new();
            for (x, &r) in cells.iter().enumerate() {
                let c = p * ORDER_PIECE_ROWS * w + x;
                if r as usize == c {
                    super::routing::walk_up(c as u32, donors, &table, pending, |d| out.push(d));
                }
            }
            out
        })
        .collect();
    let mut order = Vec::with_capacity(n);
    let mut ends = Vec::new();
    for piece in pieces.into_iter().filter(|p| !p.is_empty()) {
        order.extend_from_slice(&piece);
        ends.push(order.len());
    }
    (order, ends)
}

impl FlowField {
    /// Builds a flow field from explicit receivers (linear indices; a root is its own
    /// receiver). Errors if the length is wrong, an index is out of range, or receivers form a
    /// cycle.
    pub fn from_receivers(width: usize, height: usize, cell_size: f64, receivers: Vec<u32>) -> Result<Self> {
        crate::grid::check_size::<u32>(width, height)?;
        if receivers.len() != width * height || receivers.iter().any(|&r| r as usize >= receivers.len()) {
            return Err(Error::param("receivers", "(list)", "one in-range receiver index per cell"));
        }
        let order = topological_order(&receivers);
        if order.len() != receivers.len() {
            return Err(Error::param("receivers", "(list)", "receivers without cycles"));
        }
        let run_ends = vec![order.len()];
        Ok(Self { width, height, cell_size, receivers, order, run_ends })
    }

    /// Grid width.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Grid height.
    pub fn height(&self) -> usize {
        self.height
    }
    /// Receiver of every cell (linear index); a root is its own receiver.
    pub fn receivers(&self) -> &[u32] {
        &self.receivers
    }
    /// All cells, receivers before donors.
    pub fn order(&self) -> &[u32] {
        &self.order
    }
    /// Whether cell `i` is a root (an outlet, or an undrained pit on an unfilled surface).
    pub fn is_root(&self, i: usize) -> bool {
        self.receivers[i] as usize == i
    }

    /// Flow accumulation: each cell's weight plus everything upstream of it. With `weights =
    /// None` every cell weighs 1 (drainage area in cells). Summed in f64.
    pub fn accumulate(&self, weights: Option<&Heightmap>) -> Result<Grid<f64>> {
        let n = self.receivers.len();
        let mut acc = match weights {
            None => vec![1.0f64; n],
            Some(wt) => {
                if wt.width() != self.width || wt.height() != self.height {
                    return Err(Error::SizeMismatch {
                        what: "accumulation weights".into(),
                        expected_w: self.width,
                        expected_h: self.height,
                        got_w: wt.width(),
                        got_h: wt.height(),
                    });
                }
                wt.as_slice().iter().map(|&v| v as f64).collect()
            }
        };
        super::routing::accumulate_runs(
            &super::routing::cut_runs(&self.order, &self.run_ends),
            &self.receivers,
            &mut acc,
        );
        Grid::from_vec(self.width, self.height, self.cell_size, acc)
    }

    /// Watershed labels: each cell gets the id of the root it drains to; roots are numbered
    /// 0, 1, 2, … in row-major order.
    pub fn watersheds(&self) -> Grid<u32> {
        let mut label = vec![u32::MAX; self.receivers.len()];
        let mut next = 0u32;
        for (i, l) in label.iter_mut().enumerate() {
            if self.receivers[i] as usize == i {
                *l = next;
                next += 1;
            }
        }
        for &c in &self.order {
            let r = self.receivers[c as usize] as usize;
            if r != c as usize {
                label[c as usize] = label[r];
            }
        }
        Grid::from_vec(self.width, self.height, self.cell_size, label).expect("same size as the flow field")
    }
}

/// D∞ flow (Tarboton 1997, "A new method for the determination of flow directions and upslope
/// areas in grid digital elevation models", Water Resources Research 33(2):309–319).
///
/// For each of the 8 triangular facets around a cell (centre `e0`, a side neighbour `e1` at
/// distance 1, the next diagonal neighbour `e2`), slopes `s1 = e0 − e1` and `s2 = e1 − e2`
/// give the facet direction `r = atan2(s2, s1)` and slope `√(s1² + s2²)`; `r` outside
/// `[0, π/4]` is clamped to the facet edge, whose slope is then `s1` or `(e0 − e2)/√2`. The
/// steepest facet wins; its angle is split between the two bracketing neighbours in proportion
/// `(π/4 − r)/(π/4)` to the side neighbour and `r/(π/4)` to the diagonal. Cells without a
/// downslope facet (outlets, pits) keep their water.
#[derive(Clone, Debug, PartialEq)]
pub struct DInfinity {
    width: usize,
    height: usize,
    cell_size: f64,
    /// Per cell: (first receiver, second receiver, fraction to the first); receivers equal to
    /// the cell itself mean "keeps the water".
    split: Vec<(u32, u32, f32)>,
}

impl DInfinity {
    /// Computes D∞ directions of `surface`; edge cells and cells below `sea_level` are outlets.
    pub fn new(surface: &Heightmap, sea_level: f32) -> Result<Self> {
        check_dem(surface)?;
        let (w, h) = (surface.width(), surface.height());
        let z = surface.as_slice();
        let quarter = std::f32::consts::FRAC_PI_4;
        let mut split = vec![(0u32, 0u32, 1.0f32); w * h];
        split.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, s) in row.iter_mut().enumerate() {
                let i = y * w + x;
                *s = (i as u32, i as u32, 1.0);
                if x == 0 || y == 0 || x + 1 == w || y + 1 == h || z[i] < sea_level {
                    continue;
                }
                let idx = |k: usize| {
                    let (dx, dy) = D8[k % 8];
                    ((y as i64 + dy as i64) as usize) * w + (x as i64 + dx as i64) as usize
                };
                let e0 = z[i];
                let mut best = 0.0f32;
                let mut chosen = (i as u32, i as u32, 1.0f32);
                // Facets: side neighbour k (even) paired with diagonal k+1 and with diagonal k-1.
                for side in [0usize, 2, 4, 6] {
                    for diag in [side + 1, side + 7] {
                        let (n1, n2) = (idx(side), idx(diag));
                        let s1 = e0 - z[n1];
                        let s2 = z[n1] - z[n2];
                        let (mut r, mut s) = (detmath::atan2_fast(s2, s1), (s1 * s1 + s2 * s2).sqrt());
                        if r < 0.0 {
                            r = 0.0;
                            s = s1;
                        } else if r > quarter {
                            r = quarter;
                            s = (e0 - z[n2]) / SQRT2;
                        }
                        if s > best {
                            best = s;
                            chosen = (n1 as u32, n2 as u32, 1.0 - r / quarter);
                        }
                    }
                }
                *s = chosen;
            }
        });
        Ok(Self { width: w, height: h, cell_size: surface.cell_size(), split })
    }

    /// Flow accumulation with unit weights: each cell's area in cells plus the share of
    /// everything upstream. Cells are visited from highest to lowest (ties by index), which is
    /// a topological order because D∞ only sends water to strictly lower cells.
    pub fn accumulate(&self, surface: &Heightmap) -> Result<Grid<f64>> {
        if surface.width() != self.width || surface.height() != self.height {
            return Err(Error::SizeMismatch {
                what: "D∞ surface".into(),
                expected_w: self.width,
                expected_h: self.height,
                got_w: surface.width(),
                got_h: surface.height(),
            });
        }
        let z = surface.as_slice();
        let mut order: Vec<u32> = (0..z.len() as u32).collect();
        order
            .par_sort_unstable_by_key(|&i| (std::cmp::Reverse(super::flood::ordered_bits(z[i as usize])), i));
        let mut acc = vec![1.0f64; z.len()];
        for &c in &order {
            let c = c as usize;
            let (a, b, f) = self.split[c];
            if a as usize == c {
                continue;
            }
            let q = acc[c];
            acc[a as usize] += q * f as f64;
            acc[b as usize] += q * (1.0 - f as f64);
        }
        Grid::from_vec(self.width, self.height, self.cell_size, acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_d8_matches_the_bounds_checked_reference() {
        let (w, h) = (37usize, 29usize);
        let mut rng = terrasynth_noise::rng::SplitMix64::new(3);
        // Quantised heights so ties between neighbours are common.
        let z: Vec<f32> = (0..w * h).map(|_| rng.below(6) as f32).collect();
        let dem = Heightmap::from_vec(w, h, 1.0, z.clone()).unwrap();
        let sea = 1.0;
        let flow = D8Router.d8(&dem, sea).unwrap();
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                let outlet = x == 0 || y == 0 || x + 1 == w || y + 1 == h || z[i] < sea;
                let expect = if outlet { i } else { steepest_lower(&z, w, h, x, y).unwrap_or(i) };
                assert_eq!(flow.receivers()[i] as usize, expect, "cell ({x}, {y})");
            }
        }
    }

    #[test]
    fn walk_order_lists_receivers_before_donors_and_detects_cycles() {
        let mut rng = terrasynth_noise::rng::SplitMix64::new(5);
        let n = 500;
        // A random forest: each cell drains to a lower-numbered cell or is a root.
        let receivers: Vec<u32> = (0..n as u32)
            .map(|i| if i < 3 || rng.below(10) == 0 { i } else { rng.below(i as u64) as u32 })
            .collect();
        let order = topological_order(&receivers);
        assert_eq!(order.len(), n);
        let mut pos = vec![usize::MAX; n];
        for (p, &c) in order.iter().enumerate() {
            assert_eq!(pos[c as usize], usize::MAX, "cell {c} listed twice");
            pos[c as usize] = p;
        }
        for (i, &r) in receivers.iter().enumerate() {
            assert!(r as usize == i || pos[r as usize] < pos[i], "cell {i} before its receiver {r}");
        }
        // Unit accumulation along the order: every root collects its whole tree.
        let mut acc = vec![1.0; n];
        super::super::routing::accumulate_runs(&[&order], &receivers, &mut acc);
        let roots: f64 = (0..n).filter(|&i| receivers[i] as usize == i).map(|i| acc[i]).sum();
        assert_eq!(roots, n as f64);
        // A 2-cycle (cells 1 and 2) with a donor (3): the cycle is never listed.
        let cyclic = vec![0, 2, 1, 1, 0];
        let mut listed = topological_order(&cyclic);
        listed.sort_unstable();
        assert_eq!(listed, vec![0, 3, 4]);
        assert!(FlowField::from_receivers(5, 1, 1.0, cyclic).is_err());
    }

    /// The parallel order of a D8 field: every cell once, each after its receiver and in its
    /// receiver's run; the same order and runs on one thread and on three; the accumulation
    /// equals one sequential pass over [`topological_order`]; a 2-cycle is left out.
    #[test]
    fn grid_order_holds_whole_trees_in_runs_on_any_thread_count() {
        let (w, h) = (97, 61);
        let mut rng = terrasynth_noise::rng::SplitMix64::new(11);
        let z: Vec<f32> = (0..w * h).map(|_| rng.below(1000) as f32).collect();
        let dem = Grid::from_vec(w, h, 1.0, z).unwrap();
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| D8Router.d8(&dem, 0.0).unwrap())
        };
        let flow = on(1);
        assert_eq!(flow, on(3));
        // The donor masks from the padded directions equal those gathered from the receivers.
        let wp = w + 2;
        let mut dirs = vec![8u8; wp * (h + 2)];
        let offsets = neighbour_offsets(w);
        for (c, &r) in flow.receivers().iter().enumerate() {
            if let Some(k) = (0..8).find(|&k| r as usize != c && c as isize + offsets[k] == r as isize) {
                dirs[(c / w + 1) * wp + c % w + 1] = k as u8;
            }
        }
        let mut donors = Vec::new();
        super::super::routing::donor_masks(&dirs, w, h, &mut donors);
        assert_eq!(donors, donors_of(flow.receivers(), w), "donor masks");
        let (rec, order) = (flow.receivers(), flow.order());
        assert!(flow.run_ends.len() > 1, "several runs");
        let mut run_of = vec![usize::MAX; rec.len()];
        let mut pos = vec![usize::MAX; rec.len()];
        let mut start = 0;
        for (run, &end) in flow.run_ends.iter().enumerate() {
            for (p, &c) in order.iter().enumerate().take(end).skip(start) {
                let c = c as usize;
                assert_eq!(pos[c], usize::MAX, "cell {c} listed twice");
                (pos[c], run_of[c]) = (p, run);
            }
            start = end;
        }
        assert_eq!(start, rec.len());
        for (i, &r) in rec.iter().enumerate() {
            let r = r as usize;
            assert!(r == i || (pos[r] < pos[i] && run_of[r] == run_of[i]), "cell {i}, receiver {r}");
        }
        let mut expected = vec![1.0f64; rec.len()];
        for &c in topological_order(rec).iter().rev() {
            let (c, r) = (c as usize, rec[c as usize] as usize);
            if r != c {
                expected[r] += expected[c];
            }
        }
        assert_eq!(flow.accumulate(None).unwrap().as_slice(), &expected[..]);
        // Cells 1 and 2 of a 4×1 row drain into each other: only the roots 0 and 3 are listed.
        let cycle = [0, 2, 1, 3];
        let (listed, ends) = grid_order(&cycle, &donors_of(&cycle, 4), 4);
        assert_eq!((listed, ends), (vec![0, 3], vec![2]));
    }

    /// Each cell's donors as a bit mask, gathered from the receivers (bit `k`: the neighbour in
    /// direction `D8[k]` drains into the cell), bounds tested cell by cell: the oracle of
    /// [`super::super::routing::donor_masks`].
    fn donors_of(receivers: &[u32], w: usize) -> Vec<u8> {
        let h = receivers.len() / w;
        let mut donors = vec![0u8; receivers.len()];
        for (c, mask) in donors.iter_mut().enumerate() {
            let (x, y) = ((c % w) as i32, (c / w) as i32);
            for (k, &(dx, dy)) in D8.iter().enumerate() {
                let (nx, ny) = (x + dx, y + dy);
                if nx >= 0 && ny >= 0 && (nx as usize) < w && (ny as usize) < h {
                    let nb = ny as usize * w + nx as usize;
                    *mask |= u8::from(receivers[nb] as usize == c && nb != c) << k;
                }
            }
        }
        donors
    }
}
