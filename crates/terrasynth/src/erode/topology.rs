//! Neighbourhoods and boundaries shared by the cellular erosions.

use rayon::prelude::*;

use crate::{Error, Result};

/// Which cells count as neighbours of a cell (Olsen 2004, Fig. 13; seed 001 §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Neighbourhood {
    /// The 8 surrounding cells (Musgrave et al.'s reference thermal erosion).
    #[default]
    Moore,
    /// The 4 axis neighbours (left, right, up, down).
    VonNeumann,
    /// The 4 diagonal neighbours: Olsen's "rotated" Von Neumann neighbourhood (our reading of
    /// his Fig. 13, see research notes §1), used by his optimised thermal erosion.
    RotatedVonNeumann,
}

impl Neighbourhood {
    /// Recipe names, in the order of [`Neighbourhood::from_name`].
    pub const NAMES: &'static [&'static str] = &["moore", "von-neumann", "rotated-von-neumann"];

    /// Parses a recipe name (`moore`, `von-neumann`, `rotated-von-neumann`).
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "moore" => Ok(Self::Moore),
            "von-neumann" => Ok(Self::VonNeumann),
            "rotated-von-neumann" => Ok(Self::RotatedVonNeumann),
            _ => Err(Error::param("neighbourhood", name, "one of moore, von-neumann, rotated-von-neumann")),
        }
    }

    /// The `(dx, dy)` offsets of the neighbours. Every set is symmetric (contains `-o` for
    /// each `o`), which the gather formulations rely on.
    pub fn offsets(self) -> &'static [(i32, i32)] {
        match self {
            Self::Moore => &[(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)],
            Self::VonNeumann => &[(0, -1), (-1, 0), (1, 0), (0, 1)],
            Self::RotatedVonNeumann => &[(-1, -1), (1, -1), (-1, 1), (1, 1)],
        }
    }
}

/// What lies beyond the map edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Boundary {
    /// Nothing: edge cells simply have fewer neighbours and no material leaves the map.
    #[default]
    Closed,
    /// Toroidal wrap (modulo), as in all of Olsen's 2004 experiments. Use on tileable maps.
    Wrap,
}

impl Boundary {
    /// Recipe names.
    pub const NAMES: &'static [&'static str] = &["closed", "wrap"];

    /// Parses a recipe name (`closed`, `wrap`).
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "closed" => Ok(Self::Closed),
            "wrap" => Ok(Self::Wrap),
            _ => Err(Error::param("boundary", name, "one of closed, wrap")),
        }
    }
}

/// Grid shape plus boundary rule: resolves a neighbour's linear index.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Topology {
    pub width: usize,
    pub height: usize,
    pub boundary: Boundary,
}

impl Topology {
    /// The linear index of `(x + dx, y + dy)`, or `None` beyond a closed edge.
    #[inline]
    pub fn neighbour(&self, x: usize, y: usize, dx: i32, dy: i32) -> Option<usize> {
        let nx = x as i64 + dx as i64;
        let ny = y as i64 + dy as i64;
        let (w, h) = (self.width as i64, self.height as i64);
        match self.boundary {
            Boundary::Closed => {
                if nx < 0 || ny < 0 || nx >= w || ny >= h {
                    None
                } else {
                    Some(ny as usize * self.width + nx as usize)
                }
            }
            Boundary::Wrap => Some(ny.rem_euclid(h) as usize * self.width + nx.rem_euclid(w) as usize),
        }
    }
}

/// Neighbour offsets resolved once for a grid: interior cells use precomputed linear offsets,
/// border cells go through [`Topology::neighbour`]. Both visit neighbours in the same order, so
/// results are identical whichever path a cell takes.
#[derive(Clone, Debug)]
pub(crate) struct Stencil {
    pub topo: Topology,
    offsets: &'static [(i32, i32)],
    linear: Vec<isize>,
}

impl Stencil {
    pub fn new(topo: Topology, neighbourhood: Neighbourhood) -> Self {
        let offsets = neighbourhood.offsets();
        let linear =
            offsets.iter().map(|&(dx, dy)| dy as isize * topo.width as isize + dx as isize).collect();
        Self { topo, offsets, linear }
    }

    /// Calls `f(j)` for each neighbour index `j` of cell `(x, y)`, in offset order.
    #[inline(always)]
    pub fn for_each(&self, x: usize, y: usize, mut f: impl FnMut(usize)) {
        let t = &self.topo;
        if x > 0 && y > 0 && x + 1 < t.width && y + 1 < t.height {
            let i = (y * t.width + x) as isize;
            for &o in &self.linear {
                f((i + o) as usize);
            }
        } else {
            for &(dx, dy) in self.offsets {
                if let Some(j) = t.neighbour(x, y, dx, dy) {
                    f(j);
                }
            }
        }
    }
}

/// The colour of cell `(x, y)` for neighbourhood `nb` (see [`Exchange`]): no two neighbours
/// share a colour (except across the seam of a wrapped map with an odd side).
#[inline]
pub(crate) fn colour_of(nb: Neighbourhood, x: usize, y: usize) -> usize {
    match nb {
        Neighbourhood::VonNeumann => (x + y) & 1,
        Neighbourhood::RotatedVonNeumann => x & 1,
        Neighbourhood::Moore => (x & 1) | ((y & 1) << 1),
    }
}

/// Number of colours of [`colour_of`].
fn colours(nb: Neighbourhood) -> usize {
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
#[derive(Clone, Debug, Default)]
pub(crate) struct Exchange {
    receiver: Vec<u32>,
    want: Vec<f64>,
    cap: Vec<f64>,
    feeders: Vec<u32>,
}

/// No receiver.
const NONE: u32 = u32::MAX;

impl Exchange {
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
                // The first x of the colour in row y (cells of one colour are 2 apart in x).
                let first = match nb {
                    Neighbourhood::VonNeumann => (colour + y) & 1,
                    Neighbourhood::RotatedVonNeumann => colour,
                    Neighbourhood::Moore if (colour >> 1) == (y & 1) => colour & 1,
                    Neighbourhood::Moore => return,
                };
                for x in (first..w).step_by(2) {
                    debug_assert_eq!(colour_of(nb, x, y), colour);
                    if let Some((j, want, cap)) = pick(x, y, y * w + x) {
                        r[x] = j as u32;
                        d[x] = want;
                        c[x] = cap;
                    }
                }
            });
    }

    /// Phase 2: moves the chosen amounts within `values` (receivers gain, feeders lose) and
    /// clears the choices.
    pub fn apply(&mut self, stencil: &Stencil, values: &mut [f64]) {
        let w = stencil.topo.width;
        let (want, cap) = (&self.want, &self.cap);
        let share = |j: usize, k: u32| cap[j].min(want[j] / (k + 1) as f64);
        let receiver = &self.receiver;
        values.par_chunks_mut(w).zip(self.feeders.par_chunks_mut(w)).enumerate().for_each(|(y, (v, f))| {
            for x in 0..w {
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
            }
        });
        let feeders = &self.feeders;
        values.par_chunks_mut(w).zip(self.receiver.par_chunks_mut(w)).enumerate().for_each(|(y, (v, r))| {
            for (x, (value, rx)) in v.iter_mut().zip(r.iter_mut()).enumerate() {
                if *rx != NONE {
                    *value -= share(y * w + x, feeders[*rx as usize]);
                    *rx = NONE;
                }
            }
        });
    }
}
