//! Single-flow (D8) routing over `f64` heights with an arbitrary outlet mask, for stream power
//! (Braun & Willett 2013, §2): the same flood, D8 kernel and receivers-first order as the
//! hydrology chain ([`DepressionFiller`](super::DepressionFiller) → [`D8Router`](super::D8Router)
//! → [`FlowField`](super::FlowField)), on a reusable workspace.

use rayon::prelude::*;

use super::flood::Flood;
use super::flow::{accumulate_in_order, d8_directions, neighbour_offsets, topological_order};

/// D8 flow routing over a grid whose base-level cells (outlets) are given by a mask
/// (Braun & Willett 2013, §2; research notes §4a).
///
/// Steps, all O(n) except the flood (O(n) amortised with its radix heap):
/// 1. depressions: the shared Priority-Flood + ε (Barnes, Lehman & Mulla 2014, with Zhou, Sun &
///    Fu 2016's slope stack; `hydro/flood.rs`) from the base-level cells gives a surface on
///    which every reached cell has a strictly lower neighbour, so flow crosses pits and lakes
///    towards an outlet (the heights themselves are not changed);
/// 2. receivers: each non-outlet cell drains to its steepest-descent neighbour on that surface,
///    slope = drop / distance (distance `dx` or `dx·√2`; ties go to the first of E, SE, S, SW,
///    W, NW, N, NE); outlets are their own receivers;
/// 3. stack: every cell after its receiver (the order the implicit solver needs), from the
///    donor counts by downstream walks (see [`FlowField::order`](super::FlowField::order));
/// 4. drainage area: `A_i = dx² + Σ A_donors`, accumulated in reverse stack order.
///
/// Cells not connected to any outlet (only when the mask is empty) are their own receivers.
/// Deterministic: the flood and the stack are sequential, D8 is a per-row gather.
#[derive(Clone, Debug, Default)]
pub struct StreamPowerRouter {
    /// Receiver of each cell (itself for outlets).
    pub receiver: Vec<u32>,
    /// Cells ordered from outlets upstream: each cell appears after its receiver.
    pub stack: Vec<u32>,
    /// Drainage area of each cell (its own `dx²` plus everything upstream).
    pub area: Vec<f64>,
    flood: Flood<f64>,
    /// Grid width and cell spacing of the last [`StreamPowerRouter::compute`].
    width: usize,
    dx: f64,
}

impl StreamPowerRouter {
    /// Routes flow over `heights` (`width × height`, row-major) with outlets `base` and cell
    /// spacing `dx`. Reuses this value's buffers.
    ///
    /// # Panics
    /// If `heights` or `base` does not hold `width × height` values (a caller bug).
    pub fn compute(&mut self, heights: &[f64], width: usize, height: usize, dx: f64, base: &[bool]) {
        let n = width * height;
        assert_eq!(heights.len(), n, "StreamPowerRouter::compute: heights length");
        assert_eq!(base.len(), n, "StreamPowerRouter::compute: base mask length");
        (self.width, self.dx) = (width, dx);
        self.flood.load(heights, width, height);
        self.flood.run(true, |x, y, _| base[y * width + x], |_, _| {});
        self.receivers(width, height, base);
        // The old stack is freed before the new one (and its donor counts) is built.
        self.stack = Vec::new();
        self.stack = topological_order(&self.receiver);
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

    fn receivers(&mut self, width: usize, height: usize, base: &[bool]) {
        let n = width * height;
        self.receiver.resize(n, 0);
        let flood = &self.flood;
        let wp = flood.stride();
        let offsets = neighbour_offsets(width);
        self.receiver.par_chunks_mut(width).enumerate().for_each_init(
            || (Vec::new(), Vec::new()),
            |(slope, dirs), (y, rec_row)| {
                dirs.resize(width, 8u8);
                d8_directions(&flood.z, wp, flood.padded(0, y), dirs, slope);
                for (x, (&k, r)) in dirs.iter().zip(rec_row.iter_mut()).enumerate() {
                    let i = y * width + x;
                    // Outlets and cells the flood never reached keep themselves as receivers.
                    if k == 8 || base[i] || !flood.is_closed(flood.padded(x, y)) {
                        *r = i as u32;
                    } else {
                        *r = (i as isize + offsets[k as usize]) as u32;
                    }
                }
            },
        );
        debug_assert_eq!(self.receiver.len(), height * width);
    }
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
}
