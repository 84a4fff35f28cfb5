//! Single-flow (D8 or ρ8) routing over `f64` heights with an arbitrary outlet mask, for stream
//! power (Braun & Willett 2013, §2), on a reusable workspace: the same D8 kernel and
//! receivers-first order as the hydrology chain ([`D8Router`](super::D8Router) →
//! [`FlowField`](super::FlowField)), with depressions crossed by the basin graph of Cordonnier,
//! Bovy & Braun 2019 instead of a Priority-Flood.

use rayon::prelude::*;

use terrasynth_noise::rng::mix64;

use super::flood::FloodHeight;
use super::flow::{accumulate_in_order, d8_directions, neighbour_offsets, topological_order};
use crate::grid::D8;
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
/// 2. **stack and basins**: every cell after its receiver, from the donor counts by downstream
///    walks (see [`FlowField::order`](super::FlowField::order)); in that order every cell takes
///    its receiver's basin; all outlet cells form basin 0, each pit its own basin;
/// 3. **links**: every pair of 8-neighbours in different basins is a link, weighted by its
///    pass height `max(z_a, z_b)`; the minimum spanning tree of the basin graph (Kruskal,
///    ties broken by cell index) holds, for every basin, the lowest-pass route to an outlet
///    (a minimum spanning tree minimises the highest link on the path between any two nodes,
///    the same minimax height a Priority-Flood spills at);
/// 4. **carving**: each basin, taken from the tree's root outwards, drains through the link
///    to its parent: the receivers on the path from the link's cell down to the basin's pit
///    are reversed, and the link's cell drains into the parent basin. Every receiver stays a
///    neighbour, and the pit's water leaves along the path it would spill by;
/// 5. **stack repaired**: the basins not carved keep their order; each carved basin follows its
///    parent, its path first, then its other cells in their old order;
/// 6. **drainage area**: `A_i = dx² + Σ A_donors`, accumulated in reverse stack order.
///
/// All of it is O(n) but the sort of the links, which only exist around depressions. Basins
/// with no outlet in reach (only when the mask is empty) keep draining to their own pits.
/// Deterministic: receivers depend only on each cell's neighbourhood, and everything after is
/// sequential or merged in row order.
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
    /// Basin of each cell (0: draining to an outlet).
    basin: Vec<u32>,
    /// Grid width and cell spacing of the last [`StreamPowerRouter::compute`].
    width: usize,
    dx: f64,
}

/// A link between two basins: its pass height's order-preserving key and the two cells.
type Link = (u64, u32, u32);

/// The basins [`StreamPowerRouter::cross_depressions`] carved, in order, and their paths: the
/// cells of basin `basins[k]`'s path (link cell first, pit last) are
/// `paths[first[k]..first[k + 1]]`.
struct Carved {
    basins: Vec<u32>,
    paths: Vec<u32>,
    first: Vec<usize>,
}

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
        (self.width, self.dx) = (width, dx);
        self.pad(heights, width, height);
        self.receivers(width, height, base, rho8);
        // The old stack is freed before the new one (and its donor counts) is built.
        self.stack = Vec::new();
        self.stack = topological_order(&self.receiver);
        let basins = self.label_basins(base);
        if basins > 1 {
            let carved = self.cross_depressions(heights, width, height, basins as usize);
            self.reorder_carved(&carved, basins as usize);
        }
        self.area.clear();
        self.area.resize(n, dx * dx);
        accumulate_in_order(&self.stack, &self.receiver, &mut self.area);
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
        } else if r % w != i % w && r / w != i / w {
            self.dx * std::f64::consts::SQRT_2
        } else {
            self.dx
        }
    }

    /// Copies `heights` into the padded buffer, border at +∞ (never a receiver).
    fn pad(&mut self, heights: &[f64], width: usize, height: usize) {
        let wp = width + 2;
        self.padded.clear();
        self.padded.resize(wp * (height + 2), f64::INFINITY);
        self.padded[wp..wp * (height + 1)]
            .par_chunks_mut(wp)
            .zip(heights.par_chunks(width))
            .for_each(|(row, src)| row[1..=width].copy_from_slice(src));
    }

    /// Receivers on the heights: steepest strictly lower neighbour (D8 or ρ8); outlets and
    /// pits drain to themselves.
    fn receivers(&mut self, width: usize, height: usize, base: &[bool], rho8: Option<u64>) {
        let n = width * height;
        self.receiver.resize(n, 0);
        let z = &self.padded;
        let wp = width + 2;
        let offsets = neighbour_offsets(width);
        self.receiver.par_chunks_mut(width).enumerate().for_each_init(
            || (Vec::new(), Vec::new()),
            |(scratch, dirs), (y, rec_row)| {
                dirs.resize(width, 8u8);
                let start = (y + 1) * wp + 1;
                match rho8 {
                    None => d8_directions(z, wp, start, dirs, scratch),
                    Some(seed) => rho8_directions(z, wp, start, y * width, seed, dirs, scratch),
                }
                for (x, (&k, r)) in dirs.iter().zip(rec_row.iter_mut()).enumerate() {
                    let i = y * width + x;
                    *r = if k == 8 || base[i] { i as u32 } else { (i as isize + offsets[k as usize]) as u32 };
                }
            },
        );
        debug_assert_eq!(self.receiver.len(), height * width);
    }

    /// Labels every cell with its basin, in stack order (each cell after its receiver): basin
    /// 0 for the cells draining to an outlet, 1, 2, … for each pit's. Returns the number of
    /// basins (pits + 1).
    fn label_basins(&mut self, base: &[bool]) -> u32 {
        self.basin.clear();
        self.basin.resize(self.receiver.len(), 0);
        let mut next = 1u32;
        for &c in &self.stack {
            let c = c as usize;
            let r = self.receiver[c] as usize;
            self.basin[c] = if r != c {
                self.basin[r]
            } else if base[c] {
                0
            } else {
                next += 1;
                next - 1
            };
        }
        next
    }

    /// Repairs the stack after [`Self::cross_depressions`] changed the receivers of the carved
    /// paths, in O(n) without ordering again: the cells of basins that were not carved keep
    /// their order (their receivers did not change), then each carved basin follows, in the
    /// order the basins were carved (a parent before its children): first its path from the
    /// link cell down to the pit (each drains into the one before, the first into the parent
    /// basin), then its other cells in their old order (each after its receiver, which is
    /// either in the path or earlier in the old order). `carved` lists, per carved basin, its
    /// number and its path's cells, link cell first.
    fn reorder_carved(&mut self, carved: &Carved, basins: usize) {
        // Slot of each basin: 0 for basins kept in place, k + 1 for the k-th carved one.
        let mut slot = vec![0u32; basins];
        for (k, &b) in carved.basins.iter().enumerate() {
            slot[b as usize] = k as u32 + 1;
        }
        let mut on_path = vec![0u64; self.stack.len().div_ceil(64)];
        for &c in &carved.paths {
            on_path[c as usize >> 6] |= 1 << (c & 63);
        }
        let off_path = |c: u32| on_path[c as usize >> 6] >> (c & 63) & 1 == 0;
        // Start of each slot's run in the new stack: its path, then its other cells.
        let mut start = vec![0usize; carved.basins.len() + 2];
        for &c in &self.stack {
            if off_path(c) {
                start[slot[self.basin[c as usize] as usize] as usize + 1] += 1;
            }
        }
        for k in 0..carved.basins.len() {
            start[k + 2] += carved.first[k + 1] - carved.first[k];
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut order = vec![0u32; self.stack.len()];
        let mut fill = start;
        for k in 0..carved.basins.len() {
            let path = &carved.paths[carved.first[k]..carved.first[k + 1]];
            order[fill[k + 1]..fill[k + 1] + path.len()].copy_from_slice(path);
            fill[k + 1] += path.len();
        }
        for &c in &self.stack {
            if off_path(c) {
                let s = slot[self.basin[c as usize] as usize] as usize;
                order[fill[s]] = c;
                fill[s] += 1;
            }
        }
        self.stack = order;
    }

    /// Steps 3 and 4 of the type's docs: the minimum spanning tree of the basin graph, then
    /// each basin's receivers carved towards the link to its parent. Returns the carved
    /// basins and paths, in carving order. `basins` is the count [`Self::label_basins`] gave.
    fn cross_depressions(&mut self, heights: &[f64], width: usize, height: usize, basins: usize) -> Carved {
        let basin = &self.basin;
        // Links between 8-neighbours in different basins, each pair once (E, SE, S, SW of
        // every cell), gathered per row in parallel and concatenated in row order.
        let mut links: Vec<Link> = (0..height)
            .into_par_iter()
            .fold(Vec::new, |mut out, y| {
                for x in 0..width {
                    let i = y * width + x;
                    let b = basin[i];
                    let mut link = |j: usize| {
                        if basin[j] != b {
                            out.push((heights[i].max(heights[j]).key(), i as u32, j as u32));
                        }
                    };
                    if x + 1 < width {
                        link(i + 1);
                    }
                    if y + 1 < height {
                        if x + 1 < width {
                            link(i + width + 1);
                        }
                        link(i + width);
                        if x > 0 {
                            link(i + width - 1);
                        }
                    }
                }
                out
            })
            .reduce(Vec::new, |mut a, mut b| {
                a.append(&mut b);
                a
            });
        // Kruskal: links by pass height, ties by cells (each pair is listed once, so the order
        // is total and the tree does not depend on how the rows were gathered).
        links.par_sort_unstable();
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
        let mut carved = Carved { basins: Vec::new(), paths: Vec::new(), first: vec![0] };
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
                    carved.paths.push(c as u32);
                    let next = receiver[c] as usize;
                    receiver[c] = prev as u32;
                    if next == c {
                        break;
                    }
                    (prev, c) = (c, next);
                }
                carved.basins.push(child);
                carved.first.push(carved.paths.len());
            }
        }
        carved
    }
}

/// The ρ8 twin of [`d8_directions`] (Fairfield & Leymarie 1991): for the `dirs.len()` cells
/// from padded index `start` (linear cell index `first` for the draws), the direction of the
/// steepest strictly lower neighbour with side slopes `drop` and diagonal slopes
/// `drop / (2 − r)` (in cells; `dx` cancels), `r = rho8_draw(seed, cell)`; 8 if none is lower.
/// Ties keep the earlier direction, as D8.
fn rho8_directions(
    z: &[f64],
    stride: usize,
    start: usize,
    first: usize,
    seed: u64,
    dirs: &mut [u8],
    inverse: &mut Vec<f64>,
) {
    let m = dirs.len();
    let zc = &z[start..start + m];
    // The reciprocal diagonal distance 1/(2 − r) of each cell, in (1/2, 1].
    inverse.clear();
    inverse.extend((0..m).map(|x| 1.0 / (2.0 - rho8_draw(seed, first + x))));
    for ((x, dk), &c) in dirs.iter_mut().enumerate().zip(zc) {
        let mut best = 0.0f64;
        *dk = 8;
        for (k, &(dx, dy)) in D8.iter().enumerate() {
            let s = (start as isize + x as isize + dy as isize * stride as isize + dx as isize) as usize;
            let drop = c - z[s];
            let v = if k % 2 == 1 { drop * inverse[x] } else { drop };
            if v > best {
                best = v;
                *dk = k as u8;
            }
        }
    }
}

/// ρ8's draw `r` in [0, 1) of cell `cell` for `seed`: the top 53 bits of a SplitMix64 hash.
#[inline]
fn rho8_draw(seed: u64, cell: usize) -> f64 {
    let bits = mix64(seed ^ mix64(cell as u64 ^ 0xD1B5_4A32_D192_ED03));
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

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
