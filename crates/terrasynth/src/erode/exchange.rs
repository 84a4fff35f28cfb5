//! Coloured exchange passes shared by the cellular erosions (Olsen's "move to the lowest
//! neighbour" schemes without a visit order).

use rayon::prelude::*;

use crate::grid::{Neighbourhood, Stencil};

/// The colour of cell `(x, y)` for neighbourhood `nb` (see [`Exchange`]): no two neighbours
/// share a colour (except across the seam of a wrapped map with an odd side). On a window of a
/// world, `(x, y)` are the WORLD cell's coordinates (only their parities matter).
#[inline]
pub(crate) fn colour_of(nb: Neighbourhood, x: usize, y: usize) -> usize {
    match nb {
        Neighbourhood::VonNeumann => (x + y) & 1,
        Neighbourhood::RotatedVonNeumann => x & 1,
        Neighbourhood::Moore => (x & 1) | ((y & 1) << 1),
    }
}

/// Number of colours of [`colour_of`].
pub(crate) fn colours(nb: Neighbourhood) -> usize {
    if nb == Neighbourhood::Moore { 4 } else { 2 }
}

/// Scratch buffers of one coloured exchange pass (Olsen's "move to the lowest neighbour"
/// schemes without a visit order).
///
/// A pass handles the cells of one colour (no two neighbours share a colour: Von Neumann
/// `(x + y) mod 2`, rotated Von Neumann `x mod 2`, Moore `(x mod 2, y mod 2)`):
/// 1. [`Exchange::choose`]: every cell of the colour picks, from the current values, one
///    receiver (a neighbour, so of another colour), a wanted amount `d` and a cap;
/// 2. [`Exchange::apply`]: a receiver fed by `k` cells gets `min(cap_i, d_i/(k + 1))` from each,
///    and each feeder loses exactly that. With one feeder this is Olsen's `d/2` (the pair is
///    levelled); with k feeders of equal drop the group is levelled, so a pit fed from all sides
///    does not overshoot as it would with `d/2` from each.
///
/// Every cell is computed from values fixed before the phase, so the result does not depend on
/// any visit order (no directional bias) nor on the thread count (rows run in parallel), and
/// what a feeder loses is computed with the same arithmetic as what its receiver gains, so the
/// total is conserved up to `f64` rounding.
///
/// **Worlds.** On a window of an endless world the colours are those of the WORLD cells
/// ([`Exchange::at_world_origin`]: the parities of the window's origin are added), so two windows
/// holding the same world cell give it the same colour and the same pass order, whatever their
/// origins: a prerequisite of the bit-exact rule (any window = the same cells cut from a larger
/// one). On a finite map the origin is (0, 0).
#[derive(Clone, Debug, Default)]
pub(crate) struct Exchange {
    /// Parities `(x0 mod 2, y0 mod 2)` of the world cell at the surface's cell (0, 0).
    origin: (usize, usize),
    receiver: Vec<u32>,
    want: Vec<f64>,
    cap: Vec<f64>,
    feeders: Vec<u32>,
}

/// No receiver.
const NONE: u32 = u32::MAX;

impl Exchange {
    /// An exchange whose colours are those of world cells, the surface's cell (0, 0) being
    /// world cell `(x0, y0)` (negative allowed).
    pub fn at_world_origin(x0: i64, y0: i64) -> Self {
        Self { origin: (x0.rem_euclid(2) as usize, y0.rem_euclid(2) as usize), ..Self::default() }
    }

    /// Parities `(x0 mod 2, y0 mod 2)` of the world cell at the surface's cell (0, 0).
    pub fn origin(&self) -> (usize, usize) {
        self.origin
    }

    /// The colours in the order sweep number `sweep` visits them: starting at `sweep mod c`,
    /// so no colour always goes first.
    pub fn colour_order(nb: Neighbourhood, sweep: u64) -> impl Iterator<Item = usize> {
        let c = colours(nb);
        (0..c).map(move |k| (sweep as usize + k) % c)
    }

    /// Phase 1: `pick(x, y, i)` for every cell of `colour` returns `Some((receiver, d, cap))`
    /// or `None`.
    pub fn choose(
        &mut self,
        stencil: &Stencil,
        nb: Neighbourhood,
        colour: usize,
        pick: impl Fn(usize, usize, usize) -> Option<(usize, f64, f64)> + Sync,
    ) {
        let t = stencil.topo;
        let (w, n) = (t.width, t.width * t.height);
        let (px, py) = self.origin;
        if self.receiver.len() != n {
            // Receivers are reset to NONE as they are used (in `apply`), so only cells of the
            // colour need writing here.
            self.receiver = vec![NONE; n];
            self.want = vec![0.0; n];
            self.cap = vec![0.0; n];
            self.feeders = vec![0; n];
        }
        self.receiver
            .par_chunks_mut(w)
            .zip(self.want.par_chunks_mut(w))
            .zip(self.cap.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, ((r, d), c))| {
                let Some(first) = first_of_colour(nb, colour, (px, py), y) else { return };
                for x in (first..w).step_by(2) {
                    debug_assert_eq!(colour_of(nb, x + px, y + py), colour);
                    if let Some((j, want, cap)) = pick(x, y, y * w + x) {
                        r[x] = j as u32;
                        d[x] = want;
                        c[x] = cap;
                    }
                }
            });
    }

    /// Phase 2: moves the chosen amounts within `values` (receivers gain, feeders lose) and
    /// clears the choices. `nb` and `colour` must be those of the [`Exchange::choose`] before.
    pub fn apply(&mut self, stencil: &Stencil, nb: Neighbourhood, colour: usize, values: &mut [f64]) {
        let t = stencil.topo;
        let (w, h) = (t.width, t.height);
        let (px, py) = self.origin;
        let (want, cap) = (&self.want, &self.cap);
        let share = |j: usize, k: u32| cap[j].min(want[j] / (k + 1) as f64);
        let receiver = &self.receiver;
        values.par_chunks_mut(w).zip(self.feeders.par_chunks_mut(w)).enumerate().for_each(|(y, (v, f))| {
            // Cell x of row y: how many cells feed it, and what it gains.
            let mut gather = |x: usize| {
                let i = (y * w + x) as u32;
                let mut from = [0usize; 8];
                let mut k = 0;
                stencil.for_each(x, y, |j| {
                    if receiver[j] == i {
                        from[k] = j;
                        k += 1;
                    }
                });
                f[x] = k as u32;
                match k {
                    0 => {}
                    1 => v[x] += share(from[0], 1),
                    _ => {
                        // Shares summed in ascending order, so the gain does not depend on
                        // which side each feeder is on (a + b + c is not c + b + a in floating
                        // point).
                        let mut shares = [0.0f64; 8];
                        for (s, &j) in shares.iter_mut().zip(&from[..k]) {
                            *s = share(j, k as u32);
                        }
                        let shares = &mut shares[..k];
                        if k > 2 {
                            shares.sort_unstable_by(f64::total_cmp);
                        }
                        v[x] += shares.iter().sum::<f64>();
                    }
                }
            };
            if y == 0 || y + 1 == h || w < 3 {
                (0..w).for_each(gather);
                return;
            }
            // An interior cell of the colour is fed by no one: its neighbours (no seam between
            // them) are all of other colours, which chose nothing in this phase. Its feeder
            // count is never read (only receivers' are), so it is not written.
            gather(0);
            match first_of_colour(nb, colour, (px, py), y) {
                None => (1..w - 1).for_each(&mut gather),
                // The colour's cells are 2 apart in x from `first`: the others are in between.
                Some(first) => (1 + first..w - 1).step_by(2).for_each(&mut gather),
            }
            gather(w - 1);
        });
        let feeders = &self.feeders;
        values.par_chunks_mut(w).zip(self.receiver.par_chunks_mut(w)).enumerate().for_each(|(y, (v, r))| {
            // Only the cells of the colour chose a receiver.
            let Some(first) = first_of_colour(nb, colour, (px, py), y) else { return };
            for x in (first..w).step_by(2) {
                let rx = &mut r[x];
                if *rx != NONE {
                    v[x] -= share(y * w + x, feeders[*rx as usize]);
                    *rx = NONE;
                }
            }
        });
    }
}

/// The first x of colour `colour` in row y (cells of one colour are 2 apart in x), the colour
/// being that of world cell `(x + x0, y + y0)` with parities `(px, py)`; `None` when the row
/// has no cell of the colour (Moore's rows of the other row parity).
#[inline]
fn first_of_colour(nb: Neighbourhood, colour: usize, (px, py): (usize, usize), y: usize) -> Option<usize> {
    match nb {
        Neighbourhood::VonNeumann => Some((colour + y + px + py) & 1),
        Neighbourhood::RotatedVonNeumann => Some((colour + px) & 1),
        Neighbourhood::Moore if (colour >> 1) == ((y + py) & 1) => Some((colour + px) & 1),
        Neighbourhood::Moore => None,
    }
}

#[cfg(test)]
mod tests {
    use terrasynth_noise::rng::{SplitMix64, derive_seed};

    use super::*;
    use crate::grid::{Boundary, Topology};

    /// Phase 2 as first written, cell by cell over the whole map: every cell gathers its
    /// feeders, then every cell that chose a receiver pays its share.
    fn apply_every_cell(ex: &mut Exchange, stencil: &Stencil, values: &mut [f64]) {
        let t = stencil.topo;
        let n = t.width * t.height;
        let share = |j: usize, k: u32| ex.cap[j].min(ex.want[j] / (k + 1) as f64);
        let mut feeders = vec![0u32; n];
        let mut gain = vec![0.0; n];
        for y in 0..t.height {
            for x in 0..t.width {
                let i = y * t.width + x;
                let mut from = Vec::new();
                stencil.for_each(x, y, |j| {
                    if ex.receiver[j] == i as u32 {
                        from.push(j);
                    }
                });
                let k = from.len() as u32;
                feeders[i] = k;
                let mut shares: Vec<f64> = from.iter().map(|&j| share(j, k)).collect();
                shares.sort_by(f64::total_cmp);
                gain[i] = shares.iter().sum();
            }
        }
        for i in 0..n {
            if feeders[i] > 0 {
                values[i] += gain[i];
            }
        }
        for i in 0..n {
            if ex.receiver[i] != NONE {
                values[i] -= share(i, feeders[ex.receiver[i] as usize]);
            }
        }
    }

    #[test]
    fn apply_equals_the_cell_by_cell_exchange_bit_for_bit() {
        // Odd and even sides (a wrapped odd side puts two cells of one colour side by side
        // across the seam), every neighbourhood and edge rule, world origins of each parity.
        let mut cases = 0;
        for (w, h) in [(1, 1), (2, 3), (7, 5), (16, 9), (33, 34)] {
            for &nb in Neighbourhood::ALL {
                for &boundary in Boundary::ALL {
                    for origin in [(0, 0), (-3, 2), (5, -7)] {
                        let topo = Topology { width: w, height: h, boundary };
                        let stencil = Stencil::new(topo, nb);
                        let seed = derive_seed(cases, 17);
                        let cell = |i: usize| SplitMix64::new(derive_seed(seed, i as u64));
                        let mut values: Vec<f64> = (0..w * h).map(|i| cell(i).next_f64()).collect();
                        let mut expected = values.clone();
                        let mut fast = Exchange::at_world_origin(origin.0, origin.1);
                        for sweep in 0..3 {
                            for colour in Exchange::colour_order(nb, sweep) {
                                fast.choose(&stencil, nb, colour, |x, y, i| {
                                    let mut rng = cell(i + 1000 * (sweep as usize + 1));
                                    let mut near = Vec::new();
                                    stencil.for_each(x, y, |j| near.push(j));
                                    if near.is_empty() || rng.next_f64() < 0.2 {
                                        return None;
                                    }
                                    let j = near[rng.below(near.len() as u64) as usize];
                                    let cap =
                                        if rng.next_f64() < 0.5 { f64::INFINITY } else { rng.next_f64() };
                                    Some((j, rng.next_f64(), cap))
                                });
                                let mut reference = fast.clone();
                                apply_every_cell(&mut reference, &stencil, &mut expected);
                                fast.apply(&stencil, nb, colour, &mut values);
                                assert!(
                                    fast.receiver.iter().all(|&r| r == NONE),
                                    "{w}×{h} {nb:?} {boundary:?}: a choice was left behind"
                                );
                                let same =
                                    values.iter().zip(&expected).all(|(a, b)| a.to_bits() == b.to_bits());
                                assert!(same, "{w}×{h} {nb:?} {boundary:?} origin {origin:?} sweep {sweep}");
                            }
                        }
                        cases += 1;
                    }
                }
            }
        }
        assert_eq!(cases, 5 * 3 * 2 * 3);
    }
}
