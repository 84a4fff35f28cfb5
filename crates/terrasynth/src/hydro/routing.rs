//! Single-flow (D8) routing over `f64` heights with an arbitrary outlet mask, for stream power
//! (Braun & Willett 2013, §2): the same flood, D8 kernel and receivers-first order as the
//! hydrology chain ([`DepressionFiller`](super::DepressionFiller) → [`FlowRouter`](super::FlowRouter)
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
pub struct FlowRouting {
    /// Receiver of each cell (itself for outlets).
    pub receiver: Vec<u32>,
    /// Distance to the receiver (0 for outlets), in the units of `dx`.
    pub distance: Vec<f64>,
    /// Cells ordered from outlets upstream: each cell appears after its receiver.
    pub stack: Vec<u32>,
    /// Drainage area of each cell (its own `dx²` plus everything upstream).
    pub area: Vec<f64>,
    flood: Flood<f64>,
}

impl FlowRouting {
    /// Routes flow over `heights` (`width × height`, row-major) with outlets `base` and cell
    /// spacing `dx`. Reuses this value's buffers.
    ///
    /// # Panics
    /// If `heights` or `base` does not hold `width × height` values (a caller bug).
    pub fn compute(&mut self, heights: &[f64], width: usize, height: usize, dx: f64, base: &[bool]) {
        let n = width * height;
        assert_eq!(heights.len(), n, "FlowRouting::compute: heights length");
        assert_eq!(base.len(), n, "FlowRouting::compute: base mask length");
        self.flood.load(heights, width, height);
        self.flood.run(true, |x, y, _| base[y * width + x], |_, _| {});
        self.receivers(width, height, dx, base);
        self.stack = topological_order(&self.receiver);
        self.area.clear();
        self.area.resize(n, dx * dx);
        accumulate_in_order(&self.stack, &self.receiver, &mut self.area);
    }

    fn receivers(&mut self, width: usize, height: usize, dx: f64, base: &[bool]) {
        let n = width * height;
        self.receiver.resize(n, 0);
        self.distance.resize(n, 0.0);
        let flood = &self.flood;
        let wp = flood.stride();
        let offsets = neighbour_offsets(width);
        let diag = dx * std::f64::consts::SQRT_2;
        self.receiver
            .par_chunks_mut(width)
            .zip(self.distance.par_chunks_mut(width))
            .enumerate()
            .for_each_init(
                || (Vec::new(), Vec::new()),
                |(slope, dirs), (y, (rec_row, dist_row))| {
                    dirs.resize(width, 8u8);
                    d8_directions(&flood.z, wp, flood.padded(0, y), dirs, slope);
                    for (x, (&k, (r, d))) in
                        dirs.iter().zip(rec_row.iter_mut().zip(dist_row.iter_mut())).enumerate()
                    {
                        let i = y * width + x;
                        // Outlets and cells the flood never reached keep themselves as receivers.
                        if k == 8 || base[i] || !flood.is_closed(flood.padded(x, y)) {
                            (*r, *d) = (i as u32, 0.0);
                        } else {
                            *r = (i as isize + offsets[k as usize]) as u32;
                            *d = if k % 2 == 1 { diag } else { dx };
                        }
                    }
                },
            );
        debug_assert_eq!(self.receiver.len(), height * width);
    }
}
