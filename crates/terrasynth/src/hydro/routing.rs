//! Single-flow (D8 or ρ8) routing over `f64` heights with an arbitrary outlet mask, for stream
//! power (Braun & Willett 2013, §2), on a reusable workspace: the same D8 kernel and
//! receivers-first order as the hydrology chain ([`D8Router`](super::D8Router) →
//! [`FlowField`](super::FlowField)), with depressions crossed by the basin graph of Cordonnier,
//! Bovy & Braun 2019 instead of a Priority-Flood.

use rayon::prelude::*;

use terrasynth_noise::rng::mix64;

use super::flood::FloodHeight;
use super::flow::{d8_directions, neighbour_offsets};
use crate::grid::D8;
use crate::memory;
use crate::step::params::choice_enum;

choice_enum! {
    /// How [`StreamPowerRouter`] picks each cell's receiver among its lower neighbours (the
    /// `routing` key of `stream-power`).
    pub enum Routing {
        /// ρ8, the stochastic D8 of Fairfield & Leymarie 1991 (the default): the distance to a
        /// diagonal neighbour is `dx·(2 − r)` with `r` uniform in [0, 1) drawn per cell and per
        /// call, so on a plane whose aspect lies between a side and a diagonal direction the
        /// diagonal is taken with probability `tan θ` and the mean path follows the aspect: the
        /// valleys carved over many steps run in every direction, not along 0°, 45° and 90°.
        Rho8 = "rho8",
        /// Deterministic D8 (O'Callaghan & Mark 1984): the steepest descent with distances
        /// `dx` and `dx·√2`. Valleys follow the eight grid directions.
        D8 = "d8",
    }
}

/// D8 flow routing over a grid whose base-level cells (outlets) are given by a mask, flowing
/// across depressions (Braun & Willett 2013, §2; research notes §4a).
///
/// Depressions are crossed with the basin graph of Cordonnier, Bovy & Braun 2019 ("A
/// versatile, linear complexity algorithm for flow routing in topographies with depressions",
/// Earth Surface Dynamics 7:549–562), which fastscapelib also uses, instead of a
/// Priority-Flood of the whole grid each step (before session 10: 85 % of a step's time):
/// 1. **receivers** on the heights themselves: each non-outlet cell drains to its
///    steepest strictly lower neighbour, slope = drop / distance (`dx` or `dx·√2`; ties go to
///    the first of E, SE, S, SW, W, NW, N, NE), or with [`StreamPowerRouter::compute_rho8`] the
///    ρ8 rule ([`Routing::Rho8`]). Outlets, and pits (no lower neighbour), are their own
///    receivers. Per row, in parallel;
/// 2. **basins**: each cell's donors as a bit mask (per row, in parallel); from every root
///    (outlet or pit) a depth-first walk up its tree labels the tree's cells: all outlet
///    cells form basin 0, each pit its own basin. Pieces of rows in parallel, pits numbered
///    in index order;
/// 3. **links**: every pair of 8-neighbours in different basins is a link, weighted by its
///    pass height `max(z_a, z_b)`, and only the lowest link of each pair of basins is kept
///    (the others are never in the tree); the minimum spanning tree of the basin graph (Kruskal,
///    ties broken by cell index) holds, for every basin, the lowest-pass route to an outlet
///    (a minimum spanning tree minimises the highest link on the path between any two nodes,
///    the same minimax height a Priority-Flood spills at);
/// 4. **carving**: each basin, taken from the tree's root outwards, drains through the link
///    to its parent: the receivers on the path from the link's cell down to the basin's pit
///    are reversed, and the link's cell drains into the parent basin. Every receiver stays a
///    neighbour, and the pit's water leaves along the path it would spill by;
/// 5. **stack**: from every root left (the outlets, and pits with no outlet in reach), its
///    tree depth-first, each cell before its donors, the trees one after another in root
///    order. Walked in parallel pieces of rows and concatenated in order, so the stack is
///    cut into runs of whole trees ([`StreamPowerRouter::runs`]) that later passes solve in
///    parallel;
/// 6. **drainage area**: `A_i = dx² + Σ A_donors`, accumulated in reverse stack order, runs in
///    parallel.
///
/// All of it is O(n) but the sort of the links, which only exist around depressions. Basins
/// with no outlet in reach (only when the mask is empty) keep draining to their own pits.
/// Deterministic: receivers depend only on each cell's neighbourhood, the stack only on the
/// receivers (never on how the roots were shared among threads), the tree links are merged
/// in row order and sorted, and each tree's area is summed in its stack order.
#[derive(Clone, Debug, Default)]
pub struct StreamPowerRouter {
    /// Receiver of each cell (itself for outlets).
    pub receiver: Vec<u32>,
    /// Cells ordered from outlets upstream: each cell appears after its receiver.
    pub stack: Vec<u32>,
    /// Drainage area of each cell (its own `dx²` plus everything upstream).
    pub area: Vec<f64>,
    /// Heights with a one-cell border at +∞ (row stride `width + 2`), for the D8 kernel.
    padded: Vec<f64>,
    /// Where each run of [`StreamPowerRouter::runs`] ends in the stack.
    run_ends: Vec<usize>,
    /// Direction of each cell's receiver (index into [`D8`], 8: none) before depressions are
    /// crossed, with a one-cell border of 8 (row stride `width + 2`).
    directions: Vec<u8>,
    /// Donors of each cell, one bit per direction of [`D8`].
    donors: Vec<u8>,
    /// Basin of each cell (0: draining to an outlet), while crossing depressions.
    basin: Vec<u32>,
    /// The stack's pieces, walked in parallel before they are put end to end.
    pieces: Vec<Vec<u32>>,
    /// Grid width and cell spacing of the last [`StreamPowerRouter::compute`].
    width: usize,
    dx: f64,
}

/// A link between two basins: its pass height's order-preserving key and the two cells.
type Link = (u64, u32, u32);

/// The rows are cut into at most this many pieces whose roots are walked in parallel (enough
/// for rayon to balance trees of very different sizes).
const PIECES: usize = 64;

impl StreamPowerRouter {
    /// Routes flow over `heights` (`width × height`, row-major) with outlets `base` and cell
    /// spacing `dx`. Reuses this value's buffers.
    ///
    /// # Panics
    /// If `heights` or `base` does not hold `width × height` values (a caller bug).
    pub fn compute(&mut self, heights: &[f64], width: usize, height: usize, dx: f64, base: &[bool]) {
        self.route(heights, width, height, dx, base, None);
    }

    /// As [`StreamPowerRouter::compute`] with ρ8 receivers ([`Routing::Rho8`], Fairfield &
    /// Leymarie 1991): each cell draws `r` from `seed` and its index (the same bytes on every
    /// thread count), and a diagonal neighbour's slope is `drop / (dx·(2 − r))`. Pass a new
    /// `seed` per call (per erosion step) so the choices average out over time.
    ///
    /// # Panics
    /// As [`StreamPowerRouter::compute`].
    pub fn compute_rho8(
        &mut self,
        heights: &[f64],
        width: usize,
        height: usize,
        dx: f64,
        base: &[bool],
        seed: u64,
    ) {
        self.route(heights, width, height, dx, base, Some(seed));
    }

    fn route(
        &mut self,
        heights: &[f64],
        width: usize,
        height: usize,
        dx: f64,
        base: &[bool],
        rho8: Option<u64>,
    ) {
        let n = width * height;
        assert_eq!(heights.len(), n, "StreamPowerRouter::compute: heights length");
        assert_eq!(base.len(), n, "StreamPowerRouter::compute: base mask length");
        // `pad` compares the new width with the last call's, so it runs first.
        self.pad(heights, width, height);
        (self.width, self.dx) = (width, dx);
        self.receivers(width, height, base, rho8);
        self.donor_masks(width, height);
        let basins = self.label_basins(base);
        if basins > 1 {
            self.cross_depressions(heights, width, height, basins as usize);
        }
        self.order();
        memory::fill_par(&mut self.area, n, dx * dx);
        accumulate_runs(&cut_runs(&self.stack, &self.run_ends), &self.receiver, &mut self.area);
    }

    /// Adds every cell's value to its receiver's, donors first (the accumulation of `values`
    /// along the receivers), the runs in parallel: the same bytes as one pass over the
    /// reversed stack.
    ///
    /// # Panics
    /// If `values` does not hold one value per cell (a caller bug).
    pub fn accumulate(&self, values: &mut [f64]) {
        accumulate_runs(&self.runs(), &self.receiver, values);
    }

    /// The stack cut into runs of whole drainage trees: every cell's receiver is in the same
    /// run, before it. Runs can be solved in parallel, each in order, with the same bytes as
    /// one pass over [`StreamPowerRouter::stack`]. The cuts fall between pieces of rows fixed
    /// by the map's size, so neither they nor the stack depend on the thread count.
    pub fn runs(&self) -> Vec<&[u32]> {
        cut_runs(&self.stack, &self.run_ends)
    }

    /// Distance from cell `i` to its receiver in the last [`StreamPowerRouter::compute`]: `dx`, or
    /// `dx·√2` for a diagonal receiver, 0 for an outlet. Computed from the receiver index
    /// (no per-cell array is kept).
    #[inline]
    pub fn distance(&self, i: usize) -> f64 {
        let r = self.receiver[i] as usize;
        let w = self.width;
        if r == i {
            0.0
        } else if w > 2 {
            // From 3 columns up, a side neighbour is 1 or w cells away in the index and a
            // diagonal one w − 1 or w + 1: no division needed.
            let d = r.abs_diff(i);
            if d == 1 || d == w { self.dx } else { self.dx * std::f64::consts::SQRT_2 }
        } else if r % w != i % w && r / w != i / w {
            self.dx * std::f64::consts::SQRT_2
        } else {
            self.dx
        }
    }

    /// Copies `heights` into the padded buffer, border at +∞ (never a receiver). The border is
    /// written when the buffer is (re)made for a size; the steps after only copy the rows.
    fn pad(&mut self, heights: &[f64], width: usize, height: usize) {
        let wp = width + 2;
        if self.padded.len() != wp * (height + 2) || self.width != width {
            memory::fill_par(&mut self.padded, wp * (height + 2), f64::INFINITY);
        }
        self.padded[wp..wp * (height + 1)]
            .par_chunks_mut(wp)
            .zip(heights.par_chunks(width))
            .for_each(|(row, src)| row[1..=width].copy_from_slice(src));
    }

    /// Receivers on the heights: steepest strictly lower neighbour (D8 or ρ8); outlets and
    /// pits drain to themselves. Each cell's direction (8: none) is kept in `directions`, with
    /// a border of 8, for [`Self::donor_masks`].
    fn receivers(&mut self, width: usize, height: usize, base: &[bool], rho8: Option<u64>) {
        let n = width * height;
        let wp = width + 2;
        memory::resize_par(&mut self.receiver, n, 0);
        memory::fill_par(&mut self.directions, wp * (height + 2), 8);
        let z = &self.padded;
        let offsets = neighbour_offsets(width);
        self.directions[wp..wp * (height + 1)]
            .par_chunks_mut(wp)
            .zip(self.receiver.par_chunks_mut(width))
            .enumerate()
            .for_each_init(Vec::new, |scratch, (y, (padded_row, rec_row))| {
                let dirs = &mut padded_row[1..=width];
                let row_base = &base[y * width..(y + 1) * width];
                // The choice runs over each span of non-outlet cells only: an outlet drains
                // nowhere, and on an island map most cells are sea. Each cell's choice (and
                // ρ8's draw, from its index) depends on its own neighbourhood alone.
                let mut x = 0;
                while x < width {
                    if row_base[x] {
                        dirs[x] = 8;
                        x += 1;
                        continue;
                    }
                    let from = x;
                    while x < width && !row_base[x] {
                        x += 1;
                    }
                    let (span, start) = (&mut dirs[from..x], (y + 1) * wp + 1 + from);
                    match rho8 {
                        None => d8_directions(z, wp, start, span, scratch),
                        Some(seed) => rho8_directions(z, wp, start, y * width + from, seed, span, scratch),
                    }
                }
                for (x, (k, r)) in dirs.iter_mut().zip(rec_row.iter_mut()).enumerate() {
                    let i = y * width + x;
                    if base[i] {
                        *k = 8;
                    }
                    *r = if *k == 8 { i as u32 } else { (i as isize + offsets[*k as usize]) as u32 };
                }
            });
    }

    /// Each cell's donors as a bit mask ([`donor_masks`]).
    fn donor_masks(&mut self, width: usize, height: usize) {
        donor_masks(&self.directions, width, height, &mut self.donors);
    }

    /// Cells per piece of rows the roots are taken from in parallel (whole rows, at most
    /// [`PIECES`] pieces).
    fn piece_cells(&self) -> usize {
        let rows = self.receiver.len() / self.width;
        rows.div_ceil(PIECES).max(1) * self.width
    }

    /// Labels every cell with its basin: basin 0 for the cells draining to an outlet, 1, 2, …
    /// for each pit's (pits in index order), by a depth-first walk up from each pit (the rest
    /// is basin 0 without a walk). Pieces of rows in parallel, each numbering its pits from
    /// the counts of the pieces before.
    /// Returns the number of basins (pits + 1).
    fn label_basins(&mut self, base: &[bool]) -> u32 {
        let piece = self.piece_cells();
        let receiver = &self.receiver;
        let is_pit = |c: usize| receiver[c] as usize == c && !base[c];
        let counts: Vec<u32> = receiver
            .par_chunks(piece)
            .enumerate()
            .map(|(p, rows)| (p * piece..p * piece + rows.len()).filter(|&c| is_pit(c)).count() as u32)
            .collect();
        let pits: u32 = counts.iter().sum();
        if pits == 0 {
            return 1;
        }
        let first: Vec<u32> = counts
            .iter()
            .scan(1u32, |next, &k| {
                *next += k;
                Some(*next - k)
            })
            .collect();
        // Every cell not upstream of a pit drains to an outlet: basin 0 for all first, then
        // only the pits' trees are walked (on an island most land drains to the sea).
        memory::fill_par(&mut self.basin, receiver.len(), 0);
        let basin = TreeCells::new(&mut self.basin);
        let (donors, table) = (&self.donors, DonorOffsets::new(self.width));
        receiver.par_chunks(piece).zip(first).enumerate().for_each_init(
            Vec::new,
            |pending, (p, (rows, first))| {
                let mut next = first;
                for c in p * piece..p * piece + rows.len() {
                    if !is_pit(c) {
                        continue;
                    }
                    let label = next;
                    next += 1;
                    walk_up(c as u32, donors, &table, pending, |d| {
                        // SAFETY: every cell is in exactly one root's tree.
                        unsafe { basin.set(d as usize, label) }
                    });
                }
            },
        );
        pits + 1
    }

    /// The stack: from every root in index order, its tree depth-first, so every cell follows
    /// its receiver and the trees lie one after another. Pieces of rows are walked in parallel
    /// and concatenated in order; their ends are [`Self::runs`].
    fn order(&mut self) {
        let piece = self.piece_cells();
        let receiver = &self.receiver;
        let (donors, table) = (&self.donors, DonorOffsets::new(self.width));
        // The pieces' buffers are kept from step to step: no new pages to fault in and no
        // growth once they have reached their size.
        let mut pieces = std::mem::take(&mut self.pieces);
        pieces.resize_with(receiver.len().div_ceil(piece), Vec::new);
        pieces.par_iter_mut().zip(receiver.par_chunks(piece)).enumerate().for_each_init(
            Vec::new,
            |pending, (p, (out, rows))| {
                out.clear();
                for (x, &r) in rows.iter().enumerate() {
                    let c = p * piece + x;
                    if r as usize == c {
                        walk_up(c as u32, donors, &table, pending, |d| out.push(d));
                    }
                }
            },
        );
        self.stack.clear();
        self.run_ends.clear();
        for piece in pieces.iter().filter(|p| !p.is_empty()) {
            self.stack.extend_from_slice(piece);
            self.run_ends.push(self.stack.len());
        }
        self.pieces = pieces;
        // Every cell exactly once: the runs' parallel writes rely on it (a cell listed twice
        // would be a donor of two cells, which the masks cannot hold unless they disagree
        // with the receivers).
        assert_eq!(self.stack.len(), self.receiver.len(), "stack does not hold every cell once");
    }

    /// Steps 3 and 4 of the type's docs: the minimum spanning tree of the basin graph, then
    /// each basin's receivers carved towards the link to its parent, donor masks kept in step.
    /// `basins` is the count [`Self::label_basins`] gave.
    fn cross_depressions(&mut self, heights: &[f64], width: usize, height: usize, basins: usize) {
        let links = lowest_links(&self.basin, heights, width, height);
        let basin = &self.basin;
        let mut parent: Vec<u32> = (0..basins as u32).collect();
        fn find(parent: &mut [u32], mut b: u32) -> u32 {
            while parent[b as usize] != b {
                let up = parent[parent[b as usize] as usize];
                parent[b as usize] = up;
                b = up;
            }
            b
        }
        // Tree links, as adjacency lists (CSR) of link indices.
        let mut tree: Vec<u32> = Vec::with_capacity(basins);
        for (li, &(_, a, b)) in links.iter().enumerate() {
            let (ra, rb) = (find(&mut parent, basin[a as usize]), find(&mut parent, basin[b as usize]));
            if ra != rb {
                parent[ra.max(rb) as usize] = ra.min(rb);
                tree.push(li as u32);
                if tree.len() + 1 == basins {
                    break;
                }
            }
        }
        let mut first = vec![0u32; basins + 1];
        for &li in &tree {
            let (_, a, b) = links[li as usize];
            first[basin[a as usize] as usize + 1] += 1;
            first[basin[b as usize] as usize + 1] += 1;
        }
        for k in 1..=basins {
            first[k] += first[k - 1];
        }
        let mut fill = first.clone();
        let mut adjacent = vec![0u32; 2 * tree.len()];
        for &li in &tree {
            let (_, a, b) = links[li as usize];
            for c in [a, b] {
                let k = basin[c as usize] as usize;
                adjacent[fill[k] as usize] = li;
                fill[k] += 1;
            }
        }
        // Breadth-first from basin 0: each basin reached drains through the link it was reached
        // by, from its own cell into the parent's.
        let mut seen = vec![false; basins];
        seen[0] = true;
        let mut queue = std::collections::VecDeque::from([0u32]);
        let receiver = &mut self.receiver;
        let donors = &mut self.donors;
        // The direction bit of `donor` in its receiver's mask.
        let bit = |to: usize, donor: usize| {
            let dx = (donor % width) as isize - (to % width) as isize;
            let dy = (donor / width) as isize - (to / width) as isize;
            let k = D8.iter().position(|&(x, y)| (x as isize, y as isize) == (dx, dy));
            1u8 << k.expect("receivers are neighbours")
        };
        while let Some(p) = queue.pop_front() {
            for &li in &adjacent[first[p as usize] as usize..first[p as usize + 1] as usize] {
                let (_, a, b) = links[li as usize];
                let (inner, outer) = if basin[a as usize] == p { (b, a) } else { (a, b) };
                let child = basin[inner as usize];
                if seen[child as usize] {
                    continue;
                }
                seen[child as usize] = true;
                queue.push_back(child);
                // Reverse the path from `inner` down to the pit; `inner` drains to `outer`.
                let (mut prev, mut c) = (outer as usize, inner as usize);
                loop {
                    let next = receiver[c] as usize;
                    receiver[c] = prev as u32;
                    donors[prev] |= bit(prev, c);
                    if next == c {
                        break;
                    }
                    donors[next] &= !bit(next, c);
                    (prev, c) = (c, next);
                }
            }
        }
    }
}

/// Of the links between 8-neighbours in different basins (each pair of cells once: E, SE, S,
/// SW of every cell), the lowest of each pair of basins, sorted by pass height then cells.
/// Kruskal over these takes the same tree links, in the same order, as over every link: it
/// meets the lowest link of two basins first, and from then on the two are joined, so it
/// skips the others (Cordonnier et al. 2019 keep one link per pair of basins, too). Rows in
/// parallel; the lowest link of a pair does not depend on how the rows were shared.
fn lowest_links(basin: &[u32], heights: &[f64], width: usize, height: usize) -> Vec<Link> {
    let lowest: PairLinks = (0..height)
        .into_par_iter()
        .with_min_len(64)
        .fold(PairLinks::default, |mut out, y| {
            let row = &basin[y * width..(y + 1) * width];
            let below = (y + 1 < height).then(|| &basin[(y + 1) * width..(y + 2) * width]);
            let mut from = 0;
            while from < width {
                let to = (from + LINK_BLOCK).min(width);
                // Most blocks lie inside one basin: when every cell they link to (E, SE, S, SW)
                // is in the first cell's basin, there is no link, and the block is skipped
                // after a branch-free scan.
                if to < width {
                    let b = row[from];
                    let differ = |cells: &[u32]| cells.iter().fold(0, |acc, &c| acc | (c ^ b));
                    let mut diff = differ(&row[from..=to]);
                    if let Some(below) = below {
                        diff |= differ(&below[from.saturating_sub(1)..=to]);
                    }
                    if diff == 0 {
                        from = to;
                        continue;
                    }
                }
                for x in from..to {
                    let i = y * width + x;
                    let b = basin[i];
                    let mut link = |j: usize| {
                        let c = basin[j];
                        if c != b {
                            keep_lowest(
                                &mut out,
                                b,
                                c,
                                (heights[i].max(heights[j]).key(), i as u32, j as u32),
                            );
                        }
                    };
                    if x + 1 < width {
                        link(i + 1);
                    }
                    if below.is_some() {
                        if x + 1 < width {
                            link(i + width + 1);
                        }
                        link(i + width);
                        if x > 0 {
                            link(i + width - 1);
                        }
                    }
                }
                from = to;
            }
            out
        })
        .reduce(PairLinks::default, |a, b| {
            let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
            for (&pair, &link) in &small {
                keep_lowest_of_pair(&mut big, pair, link);
            }
            big
        });
    let mut links: Vec<Link> = lowest.into_values().collect();
    links.par_sort_unstable();
    links
}

/// Cells per block of a row that [`lowest_links`] skips at once when the block and its
/// neighbours lie in one basin.
const LINK_BLOCK: usize = 16;

/// The lowest link of each pair of basins, by the pair `(lower basin << 32) | higher basin`.
type PairLinks = std::collections::HashMap<u64, Link, std::hash::BuildHasherDefault<PairHasher>>;

/// Keeps `link`, between a cell of basin `a` and one of basin `b`, if it is the lowest of the
/// pair so far.
#[inline]
fn keep_lowest(links: &mut PairLinks, a: u32, b: u32, link: Link) {
    keep_lowest_of_pair(links, (u64::from(a.min(b)) << 32) | u64::from(a.max(b)), link);
}

#[inline]
fn keep_lowest_of_pair(links: &mut PairLinks, pair: u64, link: Link) {
    links.entry(pair).and_modify(|l| *l = (*l).min(link)).or_insert(link);
}

/// Hashes a basin pair by a 64-bit mix (a cheaper hash than the standard library's SipHash;
/// the keys are not chosen by anyone who could aim at collisions).
#[derive(Default)]
struct PairHasher(u64);

impl std::hash::Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = mix64(self.0 ^ v);
    }
}

/// `stack` cut at `ends`.
pub(crate) fn cut_runs<'a>(stack: &'a [u32], ends: &[usize]) -> Vec<&'a [u32]> {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let run = &stack[start..end];
            start = end;
            run
        })
        .collect()
}

/// [`StreamPowerRouter::accumulate`] over given runs.
pub(crate) fn accumulate_runs(runs: &[&[u32]], receiver: &[u32], values: &mut [f64]) {
    assert_eq!(values.len(), receiver.len(), "StreamPowerRouter::accumulate: one value per cell");
    let cells = TreeCells::new(values);
    runs.par_iter().for_each(|run| {
        for &c in run.iter().rev() {
            let (c, r) = (c as usize, receiver[c as usize] as usize);
            if r != c {
                // SAFETY: a run holds whole trees: no other task touches `c` or `r`.
                unsafe { cells.set(r, cells.get(r) + cells.get(c)) };
            }
        }
    });
}

/// Each donor mask's neighbours as index offsets on a map of one width, in the order of
/// [`D8`] (the bits from the lowest), and their count: [`walk_up`] pushes a cell's donors
/// from one row of this table.
pub(crate) struct DonorOffsets {
    lists: Box<[[isize; 8]; 256]>,
    counts: [u8; 256],
}

impl DonorOffsets {
    pub(crate) fn new(width: usize) -> Self {
        let offsets = neighbour_offsets(width);
        let mut lists = Box::new([[0isize; 8]; 256]);
        let mut counts = [0u8; 256];
        for (mask, (list, count)) in lists.iter_mut().zip(&mut counts).enumerate() {
            for (k, &offset) in offsets.iter().enumerate() {
                if mask >> k & 1 == 1 {
                    list[*count as usize] = offset;
                    *count += 1;
                }
            }
        }
        Self { lists, counts }
    }
}

/// Each cell's donors as a bit mask, into `donors` (`width × height`): bit `k` of `donors[c]` is
/// set when the neighbour in direction `D8[k]` drains into `c`, i.e. its direction is the
/// opposite one, `(k + 4) mod 8`. `directions` holds each cell's direction (8: none) on a grid
/// padded with a border of 8 (`(width + 2) × (height + 2)`), so there are no bounds to test;
/// per row, in parallel, the compares over whole rows vectorise.
pub(crate) fn donor_masks(directions: &[u8], width: usize, height: usize, donors: &mut Vec<u8>) {
    let wp = width + 2;
    memory::resize_par(donors, width * height, 0);
    donors.par_chunks_mut(width.max(1)).enumerate().for_each(|(y, row)| {
        row.fill(0);
        for (k, &(dx, dy)) in D8.iter().enumerate() {
            let from = ((y + 1) as isize + dy as isize) as usize * wp + (1 + dx) as usize;
            let towards = ((k + 4) % 8) as u8;
            for (mask, &d) in row.iter_mut().zip(&directions[from..from + width]) {
                *mask |= u8::from(d == towards) << k;
            }
        }
    });
}

/// Visits `root` and every cell upstream of it, depth-first, each before its donors (`pending`
/// is the walk's reusable stack; a cell's donors are pushed in the order of [`D8`], so the
/// last of them is walked first). The stack keeps room for 8 cells above its top, and each
/// cell's donors are written as one row of [`DonorOffsets`] (the slots past their count are
/// overwritten later): no branch per donor, whose count varies from cell to cell (a
/// mispredicted branch per cell was about a third of the walk until session 36).
pub(crate) fn walk_up(
    root: u32,
    donors: &[u8],
    table: &DonorOffsets,
    pending: &mut Vec<u32>,
    mut visit: impl FnMut(u32),
) {
    if donors[root as usize] == 0 {
        // Most outlets (sea cells) receive nothing.
        visit(root);
        return;
    }
    if pending.len() < 64 {
        pending.resize(64, 0);
    }
    pending[0] = root;
    let mut top = 1;
    while top > 0 {
        top -= 1;
        let c = pending[top];
        visit(c);
        let mask = donors[c as usize] as usize;
        if top + 8 > pending.len() {
            pending.resize(2 * pending.len(), 0);
        }
        for (slot, &offset) in pending[top..top + 8].iter_mut().zip(&table.lists[mask]) {
            *slot = (c as isize + offset) as u32;
        }
        top += table.counts[mask] as usize;
    }
}

/// Cells of one slice written by parallel tasks that never touch the same cell: the trees of
/// [`StreamPowerRouter::runs`] are disjoint, so a task solving one run reads and writes the
/// cells of its own trees only. Indices are bounds-checked; only the exclusivity is the
/// caller's promise.
pub(crate) struct TreeCells<'a, T> {
    cells: *mut T,
    len: usize,
    _slice: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: the wrapper hands out copies of `T` across threads; its users promise that no two
// tasks touch the same cell (see the type's docs).
unsafe impl<T: Send> Sync for TreeCells<'_, T> {}

impl<'a, T: Copy> TreeCells<'a, T> {
    pub(crate) fn new(cells: &'a mut [T]) -> Self {
        Self { cells: cells.as_mut_ptr(), len: cells.len(), _slice: std::marker::PhantomData }
    }

    /// Cell `i`'s value.
    /// # Safety
    /// No other task may write cell `i` while this one works on it.
    #[inline]
    pub(crate) unsafe fn get(&self, i: usize) -> T {
        assert!(i < self.len);
        // SAFETY: in bounds, and no concurrent write (the caller's promise).
        unsafe { *self.cells.add(i) }
    }

    /// Sets cell `i`.
    /// # Safety
    /// No other task may read or write cell `i` while this one works on it.
    #[inline]
    pub(crate) unsafe fn set(&self, i: usize, value: T) {
        assert!(i < self.len);
        // SAFETY: in bounds, and exclusive (the caller's promise).
        unsafe { *self.cells.add(i) = value }
    }
}

/// The ρ8 twin of [`d8_directions`] (Fairfield & Leymarie 1991): for the `dirs.len()` cells
/// from padded index `start` (linear cell index `first` for the draws), the direction of the
/// steepest strictly lower neighbour with side slopes `drop` and diagonal slopes
/// `drop / (2 − r)` (in cells; `dx` cancels), `r = rho8_draw(seed, cell)`; 8 if none is lower.
/// Ties keep the earlier direction, as D8. `scratch` holds the draws' reciprocals and the
/// running best slopes.
fn rho8_directions(
    z: &[f64],
    stride: usize,
    start: usize,
    first: usize,
    seed: u64,
    dirs: &mut [u8],
    scratch: &mut Vec<f64>,
) {
    let m = dirs.len();
    // The reciprocal diagonal distance 1/(2 − r) of each cell, in (1/2, 1].
    scratch.clear();
    scratch.resize(2 * m, 0.0);
    let (inverse, best) = scratch.split_at_mut(m);
    rho8_inverses(seed, first, inverse);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2 (checked just above).
        let done = unsafe { rho8_select_avx2(z, stride, start, dirs, inverse) };
        let (dirs, inverse) = (&mut dirs[done..], &inverse[done..]);
        let n = dirs.len();
        rho8_select(z, stride, start + done, dirs, inverse, &mut best[..n]);
        return;
    }
    rho8_select(z, stride, start, dirs, inverse, best);
}

/// [`rho8_select`] on AVX2 lanes, 4 cells at a time with the running best slope and
/// direction kept in registers across the 8 neighbours: the same IEEE operations
/// (`(c − n)·inv`, an ordered `>`), so the same directions as the portable build. Returns how
/// many cells it did (all but the last `len mod 4`, left to [`rho8_select`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn rho8_select_avx2(z: &[f64], stride: usize, start: usize, dirs: &mut [u8], inverse: &[f64]) -> usize {
    use std::arch::x86_64::*;
    let m = dirs.len();
    let offsets = D8.map(|(dx, dy)| dy as isize * stride as isize + dx as isize);
    // Every neighbour read below lies in `z` (the caller's padded rows): checked once here.
    let reach = stride as isize + 1;
    assert!(m == 0 || (start as isize >= reach && start + m + reach as usize <= z.len()));
    assert!(inverse.len() >= m);
    let mut x = 0;
    while x + 4 <= m {
        let at = start + x;
        // SAFETY: `at − reach ..= at + 3 + reach` lies in `z` (asserted above), and
        // `x + 3 < m ≤ inverse.len()`.
        unsafe {
            let centre = _mm256_loadu_pd(z.as_ptr().add(at));
            let inv = _mm256_loadu_pd(inverse.as_ptr().add(x));
            let mut best = _mm256_setzero_pd();
            let mut code = _mm256_set1_pd(8.0);
            for (k, &o) in offsets.iter().enumerate() {
                let n = _mm256_loadu_pd(z.as_ptr().offset(at as isize + o));
                let drop = _mm256_sub_pd(centre, n);
                let v = if k % 2 == 1 { _mm256_mul_pd(drop, inv) } else { drop };
                let better = _mm256_cmp_pd::<_CMP_GT_OQ>(v, best);
                best = _mm256_blendv_pd(best, v, better);
                code = _mm256_blendv_pd(code, _mm256_set1_pd(k as f64), better);
            }
            let codes: [i32; 4] = std::mem::transmute(_mm256_cvttpd_epi32(code));
            for (d, c) in dirs[x..x + 4].iter_mut().zip(codes) {
                *d = c as u8;
            }
        }
        x += 4;
    }
    x
}

/// The choice of [`rho8_directions`], neighbour by neighbour over the row (in [`D8`] order,
/// each cell keeping its best slope so far, strictly greater replacing it), so that it runs on
/// SIMD lanes instead of branching per cell; the same choices as a per-cell loop over the
/// eight neighbours.
#[inline(always)]
fn rho8_select(z: &[f64], stride: usize, start: usize, dirs: &mut [u8], inverse: &[f64], best: &mut [f64]) {
    let m = dirs.len();
    let zc = &z[start..start + m];
    best.fill(0.0);
    dirs.fill(8);
    for (k, &(dx, dy)) in D8.iter().enumerate() {
        let s = (start as isize + dy as isize * stride as isize + dx as isize) as usize;
        let zn = &z[s..s + m];
        let code = k as u8;
        let cells = best.iter_mut().zip(dirs.iter_mut()).zip(zc).zip(zn);
        if k % 2 == 1 {
            for ((((b, d), &c), &n), &inv) in cells.zip(inverse) {
                let v = (c - n) * inv;
                let better = v > *b;
                *b = if better { v } else { *b };
                *d = if better { code } else { *d };
            }
        } else {
            for (((b, d), &c), &n) in cells {
                let v = c - n;
                let better = v > *b;
                *b = if better { v } else { *b };
                *d = if better { code } else { *d };
            }
        }
    }
}

/// ρ8's draw `r` in [0, 1) of cell `cell` for `seed`: the top 53 bits of a SplitMix64 hash,
/// times 2⁻⁵³. The 53-bit number is turned into a float as two halves, each by putting it in
/// the mantissa of 2⁵² and taking 2⁵² away: exact, as the conversion is, and in additions and
/// bit operations that run on SIMD lanes (x86-64 has no vector conversion from 64-bit integers
/// before AVX-512).
#[inline(always)]
fn rho8_draw(seed: u64, cell: usize) -> f64 {
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    let bits = mix64(seed ^ mix64(cell as u64 ^ 0xD1B5_4A32_D192_ED03)) >> 11;
    let half = |v: u64| f64::from_bits(TWO_52.to_bits() | v) - TWO_52;
    (half(bits >> 32) * 4_294_967_296.0 + half(bits & 0xFFFF_FFFF)) * (1.0 / (1u64 << 53) as f64)
}

/// `1 / (2 − r)` of the cells `first, first + 1, …` into `out` (ρ8's reciprocal diagonal
/// distance), on AVX2 lanes where the CPU has them: the same bits, the arithmetic being exact
/// or one IEEE division.
fn rho8_inverses(seed: u64, first: usize, out: &mut [f64]) {
    #[inline(always)]
    fn inverses(seed: u64, first: usize, out: &mut [f64]) {
        for (x, o) in out.iter_mut().enumerate() {
            *o = 1.0 / (2.0 - rho8_draw(seed, first + x));
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn inverses_avx2(seed: u64, first: usize, out: &mut [f64]) {
        inverses(seed, first, out);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2 (checked just above).
        unsafe { inverses_avx2(seed, first, out) };
        return;
    }
    inverses(seed, first, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ρ8's draws equal the plain conversion of the hash's top 53 bits, and the reciprocals on
    /// SIMD lanes (AVX2 where the CPU has it) the per-cell division, bit for bit, over seeds
    /// and cells up to 2³².
    #[test]
    fn rho8_draws_and_inverses_equal_the_plain_formulas() {
        for seed in [0u64, 1, 0xDEAD_BEEF, u64::MAX] {
            for first in [0usize, 7, 1 << 20, u32::MAX as usize - 700] {
                let plain = |cell: usize| {
                    let bits = mix64(seed ^ mix64(cell as u64 ^ 0xD1B5_4A32_D192_ED03));
                    ((bits >> 11) as i64) as f64 * (1.0 / (1u64 << 53) as f64)
                };
                let mut out = vec![0.0; 613];
                rho8_inverses(seed, first, &mut out);
                for (x, &o) in out.iter().enumerate() {
                    let r = plain(first + x);
                    assert_eq!(
                        rho8_draw(seed, first + x).to_bits(),
                        r.to_bits(),
                        "seed {seed}, cell {}",
                        first + x
                    );
                    assert_eq!(o.to_bits(), (1.0 / (2.0 - r)).to_bits(), "seed {seed}, cell {}", first + x);
                }
            }
        }
    }

    /// `distance(i)` is the Euclidean distance to the receiver, on grids as narrow as 2 cells
    /// (where a diagonal step and a side step can have the same index difference).
    #[test]
    fn distance_is_the_receiver_offset_length() {
        for (w, h) in [(2, 9), (3, 7), (17, 13)] {
            let heights: Vec<f64> =
                (0..w * h).map(|i| ((i * 7919) % 31) as f64 + 0.5 * (i % w) as f64).collect();
            // Outlet: the top-left cell only, so narrow grids still route diagonally.
            let base: Vec<bool> = (0..w * h).map(|i| i == 0).collect();
            let mut flow = StreamPowerRouter::default();
            flow.compute(&heights, w, h, 2.5, &base);
            let mut diagonals = 0;
            for i in 0..w * h {
                let r = flow.receiver[i] as usize;
                let (ddx, ddy) = ((r % w).abs_diff(i % w) as f64, (r / w).abs_diff(i / w) as f64);
                assert!(ddx <= 1.0 && ddy <= 1.0);
                let want = 2.5 * (ddx * ddx + ddy * ddy).sqrt();
                assert_eq!(
                    flow.distance(i),
                    if ddx == 1.0 && ddy == 1.0 { 2.5 * std::f64::consts::SQRT_2 } else { want }
                );
                diagonals += usize::from(ddx == 1.0 && ddy == 1.0);
            }
            assert!(diagonals > 0, "{w}x{h}: no diagonal receiver tested");
            assert_eq!(flow.distance(0), 0.0);
        }
    }

    /// A router reused for another size gives what a new one gives, also when the padded
    /// buffer keeps its length (10 × 20 then 20 × 10: the border cells of one are interior
    /// cells of the other) and when the same size comes back with other heights. Edge cells
    /// that are not outlets read the border, so only one corner is an outlet here.
    #[test]
    fn reused_router_equals_a_new_one_whatever_the_sizes() {
        let surface = |w: usize, h: usize, salt: u64| -> Vec<f64> {
            (0..w * h).map(|i| (mix64(i as u64 ^ salt) >> 11) as f64 / (1u64 << 53) as f64).collect()
        };
        // One outlet, in a corner: the other edge cells read the border (+∞ for a new router).
        let edges = |w: usize, h: usize| -> Vec<bool> { (0..w * h).map(|i| i == 0).collect() };
        let mut reused = StreamPowerRouter::default();
        for (w, h, salt) in [(10usize, 20usize, 1u64), (20, 10, 2), (20, 10, 3), (7, 5, 4)] {
            let (z, base) = (surface(w, h, salt), edges(w, h));
            reused.compute_rho8(&z, w, h, 1.0, &base, salt);
            let mut fresh = StreamPowerRouter::default();
            fresh.compute_rho8(&z, w, h, 1.0, &base, salt);
            assert_eq!(reused.receiver, fresh.receiver, "{w}x{h}");
            assert_eq!(reused.stack, fresh.stack, "{w}x{h}");
            assert_eq!(reused.area, fresh.area, "{w}x{h}");
        }
    }

    /// The row-wise ρ8 choice (AVX2 on CPUs that have it, the portable lanes otherwise) picks
    /// the same direction as the per-cell loop it replaced: eight neighbours in D8 order, the
    /// first strictly steepest kept. Heights on a coarse lattice of 4 values, so ties are
    /// common, plus flats, pits and peaks.
    /// The receivers' choice runs over the spans of non-outlet cells only; every cell's
    /// direction is still the one the whole row's choice gives it (outlets: none). A patchy
    /// outlet mask (runs of every length, down to single cells, and whole rows), D8 and ρ8,
    /// widths on both sides of the AVX2 lanes.
    #[test]
    fn spans_between_outlets_choose_as_whole_rows_do() {
        for (w, h) in [(37usize, 23usize), (6, 9), (64, 17)] {
            let n = w * h;
            let wp = w + 2;
            let heights: Vec<f64> = (0..n).map(|i| (mix64(i as u64 ^ 0xBEEF) % 5) as f64 * 0.25).collect();
            let base: Vec<bool> = (0..n)
                .map(|i| {
                    let (x, y) = (i % w, i / w);
                    x == 0
                        || y == 0
                        || x + 1 == w
                        || y + 1 == h
                        || y == 5
                        || mix64(i as u64 ^ 0x5EA).is_multiple_of(3)
                })
                .collect();
            let mut padded = vec![f64::INFINITY; wp * (h + 2)];
            for y in 0..h {
                padded[(y + 1) * wp + 1..(y + 1) * wp + 1 + w].copy_from_slice(&heights[y * w..(y + 1) * w]);
            }
            for rho in [None, Some(3u64), Some(77)] {
                let mut flow = StreamPowerRouter::default();
                match rho {
                    None => flow.compute(&heights, w, h, 1.0, &base),
                    Some(seed) => flow.compute_rho8(&heights, w, h, 1.0, &base, seed),
                }
                let mut scratch = Vec::new();
                for y in 0..h {
                    let start = (y + 1) * wp + 1;
                    let mut whole = vec![0u8; w];
                    match rho {
                        None => d8_directions(&padded, wp, start, &mut whole, &mut scratch),
                        Some(seed) => {
                            rho8_directions(&padded, wp, start, y * w, seed, &mut whole, &mut scratch)
                        }
                    }
                    for x in 0..w {
                        let want = if base[y * w + x] { 8 } else { whole[x] };
                        assert_eq!(flow.directions[start + x], want, "{w}x{h} {rho:?} cell ({x}, {y})");
                    }
                }
            }
        }
    }

    #[test]
    fn rho8_row_choice_equals_the_per_cell_loop() {
        let (w, h) = (37usize, 9usize);
        let wp = w + 2;
        let mut z = vec![f64::INFINITY; wp * (h + 2)];
        for y in 0..h {
            for x in 0..w {
                let v = mix64((y * w + x) as u64 ^ 0xA5A5) % 4;
                z[(y + 1) * wp + x + 1] = v as f64 * 0.5;
            }
        }
        let offsets: Vec<isize> =
            D8.iter().map(|&(dx, dy)| dy as isize * wp as isize + dx as isize).collect();
        for seed in [0u64, 7, 99] {
            let mut scratch = Vec::new();
            for y in 0..h {
                let start = (y + 1) * wp + 1;
                let mut dirs = vec![0u8; w];
                rho8_directions(&z, wp, start, y * w, seed, &mut dirs, &mut scratch);
                let mut portable = vec![0u8; w];
                let inverse: Vec<f64> = (0..w).map(|x| 1.0 / (2.0 - rho8_draw(seed, y * w + x))).collect();
                rho8_select(&z, wp, start, &mut portable, &inverse, &mut vec![0.0; w]);
                for x in 0..w {
                    let c = z[start + x];
                    let (mut best, mut want) = (0.0f64, 8u8);
                    for (k, &o) in offsets.iter().enumerate() {
                        let drop = c - z[(start as isize + x as isize + o) as usize];
                        let v = if k % 2 == 1 { drop * inverse[x] } else { drop };
                        if v > best {
                            best = v;
                            want = k as u8;
                        }
                    }
                    assert_eq!(dirs[x], want, "seed {seed}, cell ({x}, {y})");
                    assert_eq!(portable[x], want, "portable, seed {seed}, cell ({x}, {y})");
                }
            }
        }
    }

    /// ρ8 on a plane whose aspect is θ = 30° from the x axis (between E and the SE diagonal):
    /// the diagonal is taken with probability tan θ, so the mean path follows the aspect, where
    /// D8 always takes the same neighbour. The draws depend on the seed only, not the threads.
    #[test]
    fn rho8_follows_the_aspect_of_a_plane_on_average() {
        let (w, h) = (161usize, 161usize);
        let t = 30f64.to_radians();
        // Height falls towards +x and +y (E and S), so the steepest side is E, the diagonal SE.
        let heights: Vec<f64> =
            (0..w * h).map(|i| -((i % w) as f64 * t.cos() + (i / w) as f64 * t.sin()) * 3.0).collect();
        let base: Vec<bool> = (0..w * h).map(|i| i % w == w - 1 || i / w == h - 1).collect();
        let fraction_diagonal = |flow: &StreamPowerRouter| {
            let (mut diag, mut all) = (0usize, 0usize);
            for (i, &outlet) in base.iter().enumerate() {
                if outlet {
                    continue;
                }
                let r = flow.receiver[i] as usize;
                assert!(r == i + 1 || r == i + w + 1, "cell {i}: receiver {r} is neither E nor SE");
                diag += usize::from(r == i + w + 1);
                all += 1;
            }
            diag as f64 / all as f64
        };
        let mut d8 = StreamPowerRouter::default();
        d8.compute(&heights, w, h, 2.0, &base);
        // D8: SE's slope (cos θ + sin θ)/√2 = 0.966 beats E's cos θ = 0.866 everywhere, so
        // every path runs at 45° instead of 30°.
        assert_eq!(fraction_diagonal(&d8), 1.0);
        let mut rho = StreamPowerRouter::default();
        rho.compute_rho8(&heights, w, h, 2.0, &base, 7);
        let f = fraction_diagonal(&rho);
        // 25 600 draws: the standard deviation of the fraction is about 0.003.
        assert!((f - t.tan()).abs() < 0.015, "diagonal fraction {f}, expected tan 30° = {}", t.tan());
        let again = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| {
            let mut one = StreamPowerRouter::default();
            one.compute_rho8(&heights, w, h, 2.0, &base, 7);
            one.receiver
        });
        assert_eq!(again, rho.receiver, "ρ8 differs on one thread");
        let mut other = StreamPowerRouter::default();
        other.compute_rho8(&heights, w, h, 2.0, &base, 8);
        assert_ne!(other.receiver, rho.receiver, "another seed draws the same receivers");
    }

    /// The lowest-pass oracle: the highest cell on each cell's flow path to an outlet is its
    /// minimax height `W(c) = min over paths to an outlet of the highest cell on the path`
    /// (the exact Priority-Flood fill), found here by a plain Dijkstra on 8-neighbours. So the
    /// basin graph crosses every depression at its lowest pass. Also: receivers are
    /// 8-neighbours, only outlets are roots, the stack lists every cell after its receiver and
    /// the area counts the cells upstream. Rough random surfaces (about one pit in eight
    /// cells) and one with wide flats, D8 and ρ8, edge outlets with and without an interior
    /// "sea".
    /// Kruskal's tree links over `links` (sorted), in the order taken.
    fn kruskal(links: &[Link], basin: &[u32], basins: usize) -> Vec<Link> {
        let mut root: Vec<u32> = (0..basins as u32).collect();
        fn find(root: &[u32], mut b: u32) -> u32 {
            while root[b as usize] != b {
                b = root[b as usize];
            }
            b
        }
        let mut tree = Vec::new();
        for &(k, a, b) in links {
            let (ra, rb) = (find(&root, basin[a as usize]), find(&root, basin[b as usize]));
            if ra != rb {
                root[ra.max(rb) as usize] = ra.min(rb);
                tree.push((k, a, b));
            }
        }
        tree
    }

    /// [`lowest_links`] skips blocks of cells inside one basin: one cell of another basin, at
    /// every position of a map otherwise in one basin (block edges, row ends, last row), is
    /// linked through each of its neighbours in turn (that neighbour the lowest pass).
    #[test]
    fn a_lone_cell_anywhere_is_linked_by_its_lowest_pass() {
        let (w, h) = (3 * LINK_BLOCK + 5, 4);
        for lone in 0..w * h {
            let mut basin = vec![0u32; w * h];
            basin[lone] = 1;
            let (x, y) = ((lone % w) as i64, (lone / w) as i64);
            for (dx, dy) in D8 {
                let (nx, ny) = (x + i64::from(dx), y + i64::from(dy));
                if !((0..w as i64).contains(&nx) && (0..h as i64).contains(&ny)) {
                    continue;
                }
                let j = (ny * w as i64 + nx) as usize;
                let mut heights: Vec<f64> = (0..w * h).map(|i| 1000.0 + i as f64).collect();
                (heights[lone], heights[j]) = (0.0, 1.0);
                let want = (1.0f64.key(), lone.min(j) as u32, lone.max(j) as u32);
                let got = lowest_links(&basin, &heights, w, h);
                assert_eq!(got, vec![want], "lone cell ({x}, {y}), neighbour ({nx}, {ny})");
            }
        }
    }

    /// The links kept are the lowest of each pair of basins among all links (every pair of
    /// 8-neighbours in different basins, listed by brute force), sorted; Kruskal over them takes
    /// the same tree links in the same order as over all links. Random labellings with few and
    /// many basins, blobs narrower and wider than the blocks the scan skips, random and 4-level
    /// heights (ties on the pass heights).
    #[test]
    fn lowest_links_of_each_basin_pair_give_kruskal_the_same_tree() {
        // Width, height, basins, blob width and height, one cell in `lone` set apart (0: none).
        let cases = [
            (23usize, 17usize, 2u32, 4usize, 3usize, 0u64),
            (40, 31, 7, 4, 3, 0),
            (3, 9, 3, 4, 3, 0),
            (64, 48, 60, 4, 3, 0),
            (130, 70, 400, 4, 3, 0),
            // Blobs wider than the blocks `lowest_links` skips whole, with lone cells of
            // another basin anywhere in them (at a block's edge, a row's ends, the last row).
            (97, 40, 5, 40, 12, 53),
            (200, 33, 9, 70, 9, 211),
            (48, 20, 2, 48, 20, 17),
        ];
        for (case, (w, h, basins, bw, bh, lone)) in cases.into_iter().enumerate() {
            let n = w * h;
            let r = |i: usize, salt: u64| mix64(i as u64 ^ salt ^ (case as u64) << 40);
            // Basins in blobs (a coarse labelling), so that pairs share many links.
            let basin: Vec<u32> = (0..n)
                .map(|i| {
                    let blob = (i % w) / bw + 1000 * ((i / w) / bh);
                    let key = if lone > 0 && r(i, 3) % lone == 0 { r(i, 4) as usize } else { blob };
                    (r(key, 1) % u64::from(basins)) as u32
                })
                .collect();
            for levels in [None, Some(4.0)] {
                let heights: Vec<f64> = (0..n)
                    .map(|i| (r(i, 2) >> 11) as f64 / (1u64 << 53) as f64)
                    .map(|v| levels.map_or(v, |l: f64| (v * l).floor() / l))
                    .collect();
                let mut all = Vec::new();
                for i in 0..n {
                    for (dx, dy) in D8 {
                        let (x, y) = ((i % w) as i64 + i64::from(dx), (i / w) as i64 + i64::from(dy));
                        let j = (y * w as i64 + x) as usize;
                        if (0..w as i64).contains(&x)
                            && (0..h as i64).contains(&y)
                            && j > i
                            && basin[i] != basin[j]
                        {
                            all.push((heights[i].max(heights[j]).key(), i as u32, j as u32));
                        }
                    }
                }
                all.sort_unstable();
                let mut want: Vec<Link> = Vec::new();
                let pair = |&(_, a, b): &Link| {
                    let (p, q) = (basin[a as usize], basin[b as usize]);
                    (p.min(q), p.max(q))
                };
                for l in &all {
                    if !want.iter().any(|k| pair(k) == pair(l)) {
                        want.push(*l); // `all` is sorted: the first of a pair is its lowest
                    }
                }
                want.sort_unstable();
                let got = lowest_links(&basin, &heights, w, h);
                let what = format!("{w}x{h}, {basins} basins, levels {levels:?}");
                assert!(all.len() > got.len() || basins == 2, "{what}: pairs share links");
                assert_eq!(got, want, "{what}");
                assert_eq!(
                    kruskal(&got, &basin, basins as usize),
                    kruskal(&all, &basin, basins as usize),
                    "{what}"
                );
            }
        }
    }

    #[test]
    fn flow_crosses_every_depression_at_its_lowest_pass() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        // The last case has only 4 height levels, so most cells lie on flats (each flat cell
        // with no lower neighbour is a pit of its own, linked to its equal neighbours).
        for (case, (w, h)) in [(23usize, 17usize), (40, 31), (3, 9), (37, 29)].into_iter().enumerate() {
            let n = w * h;
            let heights: Vec<f64> = (0..n)
                .map(|i| (mix64(i as u64 ^ (case as u64) << 32) >> 11) as f64 / (1u64 << 53) as f64)
                .map(|v| if case == 3 { (v * 4.0).floor() / 4.0 } else { v })
                .collect();
            for sea in [false, true] {
                let base: Vec<bool> = (0..n)
                    .map(|i| {
                        let (x, y) = (i % w, i / w);
                        x == 0 || y == 0 || x + 1 == w || y + 1 == h || (sea && heights[i] < 0.03)
                    })
                    .collect();
                let key = |v: f64| Reverse(v.to_bits());
                let mut minimax = vec![f64::INFINITY; n];
                let mut heap = BinaryHeap::new();
                for i in (0..n).filter(|&i| base[i]) {
                    minimax[i] = heights[i];
                    heap.push((key(heights[i]), i));
                }
                while let Some((Reverse(bits), c)) = heap.pop() {
                    if f64::from_bits(bits) > minimax[c] {
                        continue;
                    }
                    for (dx, dy) in D8 {
                        let (x, y) = ((c % w) as isize + dx as isize, (c / w) as isize + dy as isize);
                        if x < 0 || y < 0 || x >= w as isize || y >= h as isize {
                            continue;
                        }
                        let m = y as usize * w + x as usize;
                        let v = heights[m].max(minimax[c]);
                        if v < minimax[m] {
                            minimax[m] = v;
                            heap.push((key(v), m));
                        }
                    }
                }
                for rho in [None, Some(11u64)] {
                    let mut flow = StreamPowerRouter::default();
                    match rho {
                        None => flow.compute(&heights, w, h, 1.0, &base),
                        Some(seed) => flow.compute_rho8(&heights, w, h, 1.0, &base, seed),
                    }
                    let what = format!("{w}x{h} sea {sea} rho8 {rho:?}");
                    let mut position = vec![usize::MAX; n];
                    for (k, &c) in flow.stack.iter().enumerate() {
                        position[c as usize] = k;
                    }
                    assert_eq!(flow.stack.len(), n, "{what}: stack");
                    let mut upstream = vec![1.0f64; n];
                    for &c in flow.stack.iter().rev() {
                        let (c, r) = (c as usize, flow.receiver[c as usize] as usize);
                        if r != c {
                            assert!(position[r] < position[c], "{what}: cell {c} before its receiver");
                            upstream[r] += upstream[c];
                        }
                    }
                    for c in 0..n {
                        let r = flow.receiver[c] as usize;
                        assert!(
                            (r % w).abs_diff(c % w) <= 1 && (r / w).abs_diff(c / w) <= 1,
                            "{what}: {c} → {r}"
                        );
                        assert_eq!(r == c, base[c], "{what}: cell {c} root {}", r == c);
                        assert_eq!(flow.area[c], upstream[c], "{what}: area of {c}");
                        let (mut top, mut at) = (heights[c], c);
                        while flow.receiver[at] as usize != at {
                            at = flow.receiver[at] as usize;
                            top = top.max(heights[at]);
                        }
                        assert_eq!(top, minimax[c], "{what}: highest cell on the path from {c}");
                    }
                }
            }
        }
    }

    /// The runs cut the stack into whole trees (every cell's receiver in its own run, before
    /// it), and the stack, receivers and areas are the same bytes on 1, 2 and 3 threads.
    #[test]
    fn runs_hold_whole_trees_whatever_the_thread_count() {
        let (w, h) = (61usize, 47usize);
        let heights: Vec<f64> =
            (0..w * h).map(|i| (mix64(i as u64 + 7) >> 11) as f64 / (1u64 << 53) as f64).collect();
        let base: Vec<bool> = (0..w * h)
            .map(|i| i % w == 0 || i / w == 0 || i % w + 1 == w || i / w + 1 == h || heights[i] < 0.02)
            .collect();
        let route = || {
            let mut flow = StreamPowerRouter::default();
            flow.compute_rho8(&heights, w, h, 1.0, &base, 3);
            let mut run_of = vec![usize::MAX; w * h];
            let mut position = vec![0usize; w * h];
            let mut at = 0;
            for (k, run) in flow.runs().iter().enumerate() {
                assert_eq!(run, &&flow.stack[at..at + run.len()], "runs are the stack in order");
                for &c in *run {
                    (run_of[c as usize], position[c as usize]) = (k, at);
                    at += 1;
                }
            }
            assert_eq!(at, w * h, "the runs cover the stack");
            for c in 0..w * h {
                let r = flow.receiver[c] as usize;
                assert_eq!(run_of[r], run_of[c], "cell {c} and its receiver in different runs");
                assert!(r == c || position[r] < position[c], "cell {c} before its receiver");
            }
            (flow.stack.clone(), flow.receiver.clone(), flow.area.clone(), flow.runs().len())
        };
        let pool = |t: usize| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap().install(route);
        let one = pool(1);
        for t in [2, 3] {
            let other = pool(t);
            assert_eq!((&one.0, &one.1, &one.2), (&other.0, &other.1, &other.2), "{t} threads");
        }
        assert!(one.3 > 1, "the roots are walked in more than one piece");
    }

    /// Without any outlet every pit keeps its own water: no panic, every cell drains to a pit
    /// of its own basin, and the stack still holds every cell.
    #[test]
    fn without_outlets_cells_drain_to_their_pits() {
        let (w, h) = (19usize, 13usize);
        let heights: Vec<f64> = (0..w * h).map(|i| (mix64(i as u64 + 99) >> 40) as f64).collect();
        let mut flow = StreamPowerRouter::default();
        flow.compute(&heights, w, h, 1.0, &vec![false; w * h]);
        assert_eq!(flow.stack.len(), w * h);
        for c in 0..w * h {
            let r = flow.receiver[c] as usize;
            assert!(r == c || heights[r] < heights[c], "cell {c} drains uphill without outlets");
        }
    }
}
