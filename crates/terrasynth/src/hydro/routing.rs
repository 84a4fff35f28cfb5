//! Single-flow (D8) routing over `f64` heights with an arbitrary outlet mask, for stream power
//! (Braun & Willett 2013, §2): the same flood, D8 kernel and receivers-first order as the
//! hydrology chain ([`DepressionFiller`](super::DepressionFiller) → [`D8Router`](super::D8Router)
//! → [`FlowField`](super::FlowField)), on a reusable workspace.

use rayon::prelude::*;

use terrasynth_noise::rng::mix64;

use super::flood::Flood;
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
///    W, NW, N, NE), or with [`StreamPowerRouter::compute_rho8`] the ρ8 rule ([`Routing::Rho8`]);
///    outlets are their own receivers;
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
        self.flood.load(heights, width, height);
        self.flood.run(true, |x, y, _| base[y * width + x], |_, _| {});
        self.receivers(width, height, base, rho8);
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

    fn receivers(&mut self, width: usize, height: usize, base: &[bool], rho8: Option<u64>) {
        let n = width * height;
        self.receiver.resize(n, 0);
        let flood = &self.flood;
        let wp = flood.stride();
        let offsets = neighbour_offsets(width);
        self.receiver.par_chunks_mut(width).enumerate().for_each_init(
            || (Vec::new(), Vec::new()),
            |(slope, dirs), (y, rec_row)| {
                dirs.resize(width, 8u8);
                match rho8 {
                    None => d8_directions(&flood.z, wp, flood.padded(0, y), dirs, slope),
                    Some(seed) => {
                        rho8_directions(&flood.z, wp, flood.padded(0, y), y * width, seed, dirs, slope)
                    }
                }
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
    slope: &mut Vec<f64>,
) {
    let m = dirs.len();
    let zc = &z[start..start + m];
    // The reciprocal diagonal distance 1/(2 − r) of each cell, in (1/2, 1].
    slope.clear();
    slope.extend((0..m).map(|x| 1.0 / (2.0 - rho8_draw(seed, first + x))));
    for ((x, dk), &c) in dirs.iter_mut().enumerate().zip(zc) {
        let mut best = 0.0f64;
        *dk = 8;
        for (k, &(dx, dy)) in D8.iter().enumerate() {
            let s = (start as isize + x as isize + dy as isize * stride as isize + dx as isize) as usize;
            let drop = c - z[s];
            let v = if k % 2 == 1 { drop * slope[x] } else { drop };
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
}
