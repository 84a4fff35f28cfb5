//! Single-flow (D8) routing with Braun & Willett's stack order, for stream power.
//!
//! Kept inside `erode/` so stream power does not depend on the hydrology module's progress.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use rayon::prelude::*;

/// The 8 neighbour offsets and whether each is diagonal.
const D8: [(i32, i32, bool); 8] = [
    (-1, -1, true),
    (0, -1, false),
    (1, -1, true),
    (-1, 0, false),
    (1, 0, false),
    (-1, 1, true),
    (0, 1, false),
    (1, 1, true),
];

/// D8 flow routing over a grid whose base-level cells (outlets) are given by a mask
/// (Braun & Willett 2013, §2; research notes §4a).
///
/// Steps, all O(n) except the depression pass:
/// 1. depressions: a priority-flood + ε fill (Barnes, Lehman & Mulla 2014, Algorithm 3) from
///    the base-level cells gives a surface on which every cell has a strictly lower neighbour,
///    so flow crosses pits and lakes towards an outlet (heights themselves are not changed);
/// 2. receivers: each non-outlet cell drains to its steepest-descent neighbour on that surface,
///    slope = drop / distance (distance `dx` or `dx·√2`); outlets are their own receivers;
/// 3. stack: donors lists, then a depth-first walk from each outlet, so every cell comes after
///    its receiver (the order the implicit solver needs);
/// 4. drainage area: `A_i = dx² + Σ A_donors`, accumulated in reverse stack order.
///
/// Cells not connected to any outlet (only when the mask is empty) are their own receivers.
#[derive(Clone, Debug, Default)]
pub struct FlowRouting {
    /// Receiver of each cell (itself for outlets).
    pub receiver: Vec<u32>,
    /// Distance to the receiver (0 for outlets), in the units of `dx`.
    pub distance: Vec<f64>,
    /// Cells ordered from outlets upstream: each cell appears after its receiver.
    pub stack: Vec<u32>,
    /// Drainage area of each cell (its own `dx²` plus everything upstream).
    pub area: Vec<f64>,
    filled: Vec<f64>,
    closed: Vec<bool>,
    donor_start: Vec<u32>,
    donors: Vec<u32>,
}

#[derive(Clone, Copy, PartialEq)]
struct Open {
    z: f64,
    i: u32,
}

impl Eq for Open {}

impl Ord for Open {
    fn cmp(&self, other: &Self) -> Ordering {
        // Min-heap on (z, index): reversed for BinaryHeap; ties broken by index for determinism.
        other.z.total_cmp(&self.z).then_with(|| other.i.cmp(&self.i))
    }
}

impl PartialOrd for Open {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl FlowRouting {
    /// Routes flow over `heights` (`width × height`, row-major) with outlets `base` and cell
    /// spacing `dx`. Reuses this value's buffers.
    pub fn compute(&mut self, heights: &[f64], width: usize, height: usize, dx: f64, base: &[bool]) {
        let n = width * height;
        assert_eq!(heights.len(), n, "FlowRouting::compute: heights length");
        assert_eq!(base.len(), n, "FlowRouting::compute: base mask length");
        self.fill(heights, width, height, base);
        self.receivers(width, height, dx, base);
        self.build_stack(n);
        self.area.clear();
        self.area.resize(n, dx * dx);
        for &i in self.stack.iter().rev() {
            let r = self.receiver[i as usize];
            if r != i {
                self.area[r as usize] += self.area[i as usize];
            }
        }
    }

    fn fill(&mut self, heights: &[f64], width: usize, height: usize, base: &[bool]) {
        let n = width * height;
        self.filled.clear();
        self.filled.extend_from_slice(heights);
        self.closed.clear();
        self.closed.extend_from_slice(base);
        let mut open = BinaryHeap::new();
        let mut pit = VecDeque::new();
        for (i, &b) in base.iter().enumerate() {
            if b {
                open.push(Open { z: heights[i], i: i as u32 });
            }
        }
        while let Some(c) = pit.pop_front().or_else(|| open.pop().map(|o: Open| o.i)) {
            let c = c as usize;
            let (x, y) = (c % width, c / width);
            let up = self.filled[c].next_up();
            for &(dx, dy, _) in &D8 {
                let (nx, ny) = (x as i64 + dx as i64, y as i64 + dy as i64);
                if nx < 0 || ny < 0 || nx >= width as i64 || ny >= height as i64 {
                    continue;
                }
                let j = ny as usize * width + nx as usize;
                if self.closed[j] {
                    continue;
                }
                self.closed[j] = true;
                if heights[j] <= up {
                    self.filled[j] = up;
                    pit.push_back(j as u32);
                } else {
                    open.push(Open { z: heights[j], i: j as u32 });
                }
            }
        }
        debug_assert!(n == self.filled.len());
    }

    fn receivers(&mut self, width: usize, height: usize, dx: f64, base: &[bool]) {
        let n = width * height;
        self.receiver.resize(n, 0);
        self.distance.resize(n, 0.0);
        let (filled, closed) = (&self.filled, &self.closed);
        let diag = dx * std::f64::consts::SQRT_2;
        self.receiver.par_chunks_mut(width).zip(self.distance.par_chunks_mut(width)).enumerate().for_each(
            |(y, (rec_row, dist_row))| {
                for x in 0..width {
                    let i = y * width + x;
                    let (mut best, mut best_slope, mut best_dist) = (i, 0.0f64, 0.0);
                    // Outlets and cells the flood never reached keep themselves as receivers.
                    if closed[i] && !base[i] {
                        for &(ox, oy, is_diag) in &D8 {
                            let (nx, ny) = (x as i64 + ox as i64, y as i64 + oy as i64);
                            if nx < 0 || ny < 0 || nx >= width as i64 || ny >= height as i64 {
                                continue;
                            }
                            let j = ny as usize * width + nx as usize;
                            let d = if is_diag { diag } else { dx };
                            let slope = (filled[i] - filled[j]) / d;
                            if slope > best_slope {
                                best_slope = slope;
                                best = j;
                                best_dist = d;
                            }
                        }
                    }
                    rec_row[x] = best as u32;
                    dist_row[x] = best_dist;
                }
            },
        );
    }

    fn build_stack(&mut self, n: usize) {
        self.donor_start.clear();
        self.donor_start.resize(n + 1, 0);
        for (i, &r) in self.receiver.iter().enumerate() {
            if r as usize != i {
                self.donor_start[r as usize + 1] += 1;
            }
        }
        for i in 0..n {
            self.donor_start[i + 1] += self.donor_start[i];
        }
        self.donors.clear();
        self.donors.resize(self.donor_start[n] as usize, 0);
        let mut fill = self.donor_start.clone();
        for (i, &r) in self.receiver.iter().enumerate() {
            if r as usize != i {
                self.donors[fill[r as usize] as usize] = i as u32;
                fill[r as usize] += 1;
            }
        }
        self.stack.clear();
        let mut work = Vec::new();
        for outlet in 0..n {
            if self.receiver[outlet] as usize != outlet {
                continue;
            }
            work.push(outlet as u32);
            while let Some(c) = work.pop() {
                self.stack.push(c);
                let (s, e) =
                    (self.donor_start[c as usize] as usize, self.donor_start[c as usize + 1] as usize);
                work.extend_from_slice(&self.donors[s..e]);
            }
        }
    }
}
