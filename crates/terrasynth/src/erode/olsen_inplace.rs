//! Olsen's in-place sweeps: the optimised thermal erosion, the optimised hydraulic erosion and
//! his erosion algorithm exactly as published (Olsen 2004, "Realtime Procedural Terrain
//! Generation", sections "Thermal erosion — Optimizations", "Hydraulic erosion —
//! Optimizations" and "A new proposed algorithm"; seed 001 §3.3.1–§3.3.3).
//!
//! Olsen's fourth optimisation of both processes is that "the calculations for each cell
//! change the height map immediately instead of being written to a difference map that is
//! applied after an entire iteration is completed". His pseudocode (for the erosion
//! algorithm, "run on every cell each iteration"):
//!
//! ```text
//! dmax = 0
//! for every i in neighbourhood:
//!     di = h − hi
//!     if (di > dmax): dmax = di; l = i
//! if (0 < dmax ≤ T): Δh = dmax/2; h = h − Δh; hl = hl + Δh      (thermal: dmax > T)
//! ```
//!
//! Our reading, where the paper leaves a choice open:
//! - **Sweep order**: one raster sweep per iteration, rows top to bottom, each row left to
//!   right (cells `h_{i,j}`, `i` the row, both "from 0 to 511"); every cell reads the heights
//!   as already changed by the cells before it in the sweep.
//! - **Neighbourhoods** and their order (which decides exact ties, the first strict maximum
//!   wins): Von Neumann `h1` up, `h2` left, `h3` right, `h4` down (his Fig. 11); the "rotated"
//!   Von Neumann of his Fig. 13 (the optimised thermal erosion) up-left, up-right, down-left,
//!   down-right; Moore row by row (Fig. 11). These are [`crate::grid::Neighbourhood`]'s offset
//!   orders, so the step's `neighbourhood` key picks them (the steps' defaults are the paper's:
//!   rotated Von Neumann for `thermal-olsen`, Von Neumann for `olsen-erosion` and
//!   `hydraulic-olsen`).
//! - **Boundaries**: his maps wrap ("modulo is used to wrap the coordinates around");
//!   `boundary = "wrap"` does that, `"closed"` gives edge cells fewer neighbours.
//! - **Height range and talus**: his maps hold heights in [0, 1] and `T = k/N`; the steps'
//!   `talus-k` gives `T = k/N × (height range)`, exactly his T on a [0, 1] map.
//! - **Hydraulic**: rain and evaporation/deposit stay per-cell passes before and after the
//!   sweep (they read no neighbour, so their order is immaterial); only the transport is the
//!   in-place sweep: with `a = h + w`, a cell whose lowest neighbour `l` has `d = a − a_l > 0`
//!   moves `Δw = min(w, d/2)` of water to `l` (the reference's `min(w, Δa)` with `ā` the mean
//!   of the cell and its one receiver), the saturated load `Kc·Δw` travelling with it, so `h`
//!   does not change (see [`super::HydraulicOlsenEroder`] for rain and evaporation).
//!
//! Why the default is not this: carrying material along the sweep gives a directional bias
//! (a ramp facing the sweep is levelled across its whole length in one iteration, one facing
//! away by one cell), visible as row/column streaks; the coloured exchange passes
//! ([`super::exchange`]) have no visit order. A sweep is also one long sequential chain, so
//! it neither parallelises nor runs on a window of a world (refused there: a cell's new height
//! depends on every cell before it in the sweep, a global step).

use crate::grid::Stencil;
use crate::step::params::choice_enum;

choice_enum! {
    /// How Olsen's fast erosions visit the cells in one iteration (the `sweep` key of
    /// `thermal-olsen`, `olsen-erosion` and `hydraulic-olsen`).
    pub enum Sweep {
        /// Coloured exchange passes (the default): no visit order, parallel, world-exact.
        Coloured = "coloured",
        /// Olsen 2004 as published: one raster sweep updating the map in place.
        InPlace = "in-place",
    }
}

/// The `(lowest neighbour, d_max)` of cell `(x, y)` over `value` (`d_i = value(i) − value(j)`,
/// first strict maximum in offset order; `d_max = 0` and no neighbour when none is lower).
#[inline]
fn lowest(stencil: &Stencil, x: usize, y: usize, i: usize, value: impl Fn(usize) -> f64) -> (usize, f64) {
    let vi = value(i);
    let (mut l, mut d_max) = (i, 0.0f64);
    stencil.for_each(x, y, |j| {
        let d = vi - value(j);
        if d > d_max {
            d_max = d;
            l = j;
        }
    });
    (l, d_max)
}

/// One in-place sweep of Olsen's levelling (his pseudocode above): each cell, in raster
/// order, moves `d_max/2` to its lowest neighbour when `d_max > talus` (`gentle = false`, the
/// optimised thermal erosion) or when `0 < d_max ≤ talus` (`gentle = true`, his erosion
/// algorithm). Σh is conserved up to `f64` rounding.
pub(crate) fn level_in_place(h: &mut [f64], stencil: &Stencil, talus: f64, gentle: bool) {
    let w = stencil.topo.width;
    for y in 0..stencil.topo.height {
        for x in 0..w {
            let i = y * w + x;
            let (l, d_max) = lowest(stencil, x, y, i, |j| h[j]);
            let act = if gentle { d_max > 0.0 && d_max <= talus } else { d_max > talus };
            if act {
                let dh = 0.5 * d_max;
                h[i] -= dh;
                h[l] += dh;
            }
        }
    }
}

/// One in-place transport sweep of Olsen's optimised hydraulic erosion: each cell, in raster
/// order, moves `min(w, d/2)` of water to the neighbour of lowest total altitude `a = h + w`
/// when `d = a − a_l > 0` (heights `h` unchanged: the load moves with the water).
pub(crate) fn route_water_in_place(h: &[f64], water: &mut [f64], stencil: &Stencil) {
    let w = stencil.topo.width;
    for y in 0..stencil.topo.height {
        for x in 0..w {
            let i = y * w + x;
            if water[i] <= 0.0 {
                continue;
            }
            let (l, d) = lowest(stencil, x, y, i, |j| h[j] + water[j]);
            if d > 0.0 {
                let moved = water[i].min(0.5 * d);
                water[i] -= moved;
                water[l] += moved;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{
        Eroder, HydraulicOlsenEroder, HydraulicOlsenParams, OlsenEroder, ThermalOlsenEroder,
        ThermalOlsenParams,
    };
    use super::*;
    use crate::grid::{Boundary, Neighbourhood};
    use crate::{Grid, Heightmap};

    fn map(rows: [[f32; 5]; 5]) -> Heightmap {
        Heightmap::from_fn(5, 5, 1.0, |x, y| rows[y][x]).unwrap()
    }

    fn rows_of(g: &Grid<f64>) -> Vec<Vec<f64>> {
        g.as_slice().chunks(5).map(|r| r.to_vec()).collect()
    }

    /// Olsen's erosion algorithm, one in-place sweep of a 5×5 ramp `h = x/8` (all values
    /// dyadic, so exact), Von Neumann, closed edges, T = 0.3, traced by hand:
    /// row 0: (1,0) levels with (0,0): both 1/16; (2,0) = 1/4 with its left neighbour now
    /// 1/16: d = 3/16, both 5/32; (3,0) = 3/8 − 5/32: d = 7/32, both 17/64; (4,0): d = 15/64,
    /// both 49/128. The ramp is carried down the whole row in ONE sweep (in place: each cell
    /// sees its left neighbour already changed). Rows 1–4: a cell's up neighbour is higher
    /// (the row above was already lowered less than its left one; e.g. (4,1): up gives
    /// d = 15/128 < left 15/64), so every row repeats row 0.
    #[test]
    fn olsen_erosion_in_place_matches_the_hand_computed_ramp() {
        let ramp = map([[0.0, 0.125, 0.25, 0.375, 0.5]; 5]);
        let p = ThermalOlsenParams {
            talus: 0.3,
            neighbourhood: Neighbourhood::VonNeumann,
            boundary: Boundary::Closed,
        };
        let mut e = OlsenEroder::new(&ramp, p).unwrap().with_sweep(Sweep::InPlace);
        e.run_one_step().unwrap();
        let row = vec![1.0 / 16.0, 5.0 / 32.0, 17.0 / 64.0, 49.0 / 128.0, 49.0 / 128.0];
        assert_eq!(rows_of(e.surface()), vec![row; 5]);
        // The coloured form moves each cell at most once per colour: not the same map.
        let mut c = OlsenEroder::new(&ramp, p).unwrap();
        c.run_one_step().unwrap();
        assert_ne!(rows_of(c.surface()), rows_of(e.surface()));
    }

    /// Olsen's optimised thermal erosion, one in-place sweep, Von Neumann, WRAPPED edges,
    /// T = 0.1, a spike of 1 at (0,0) on 0, by hand: (0,0) goes first; its neighbours (up =
    /// (0,4) across the wrap, left = (4,0) across the wrap, right, down) all give d = 1, the
    /// first (up) wins: (0,0) = (0,4) = 1/2. Nothing else moves until (0,4) in the last row:
    /// its up neighbour (0,3) gives d = 1/2 > T (first of four equal drops: up, left (4,4),
    /// right (1,4); down is (0,0) = 1/2, d = 0), so (0,4) = (0,3) = 1/4. The spike travelled
    /// two cells in one sweep.
    #[test]
    fn thermal_olsen_in_place_matches_the_hand_computed_wrapped_spike() {
        let mut rows = [[0.0f32; 5]; 5];
        rows[0][0] = 1.0;
        let p = ThermalOlsenParams {
            talus: 0.1,
            neighbourhood: Neighbourhood::VonNeumann,
            boundary: Boundary::Wrap,
        };
        let mut e = ThermalOlsenEroder::new(&map(rows), p).unwrap().with_sweep(Sweep::InPlace);
        e.run_one_step().unwrap();
        let mut want = vec![vec![0.0; 5]; 5];
        want[0][0] = 0.5;
        want[3][0] = 0.25;
        want[4][0] = 0.25;
        assert_eq!(rows_of(e.surface()), want);
    }

    /// Olsen's optimised hydraulic erosion, one iteration with the in-place transport sweep,
    /// on the ramp `h = x/8`, Von Neumann, closed, Kr = 1/16, Kc = 1/2, Ke = 1/2, by hand:
    /// rain gives w = 1/16 and dissolves Kc·Kr = 1/32 everywhere (differences unchanged);
    /// row 0 in order: (0,0) has no lower neighbour; (1,0) sends all its 1/16 left (d = 1/8,
    /// d/2 ≥ w), then (2,0) sends all left to (1,0), (3,0) to (2,0), (4,0) to (3,0): water
    /// [1/8, 1/16, 1/16, 1/16, 0]; every row repeats it (up neighbours are level or higher).
    /// Evaporation halves w and deposits Kc·(evaporated): h = x/8 − 1/32 + w_before/4.
    #[test]
    fn hydraulic_olsen_in_place_matches_the_hand_computed_ramp() {
        let ramp = map([[0.0, 0.125, 0.25, 0.375, 0.5]; 5]);
        let p = HydraulicOlsenParams {
            kr: 1.0 / 16.0,
            kc: 0.5,
            ke: 0.5,
            neighbourhood: Neighbourhood::VonNeumann,
            boundary: Boundary::Closed,
        };
        let mut e = HydraulicOlsenEroder::new(&ramp, p).unwrap().with_sweep(Sweep::InPlace);
        let before = e.volume();
        e.run_one_step().unwrap();
        let h = vec![0.0, 0.109375, 0.234375, 0.359375, 0.46875];
        assert_eq!(rows_of(e.surface()), vec![h; 5]);
        let water: Vec<Vec<f64>> = e.water().chunks(5).map(|r| r.to_vec()).collect();
        assert_eq!(water, vec![vec![1.0 / 16.0, 1.0 / 32.0, 1.0 / 32.0, 1.0 / 32.0, 0.0]; 5]);
        // Σ(h + Kc·w) is conserved (the rain's load is taken from h).
        assert!((e.volume() - before).abs() < 1e-12);
    }

    /// The in-place sweeps conserve Σh (thermal and erosion) on a rough wrapped map over 20
    /// sweeps, and do move material.
    #[test]
    fn in_place_sweeps_conserve_volume() {
        let m = Heightmap::from_fn(17, 13, 1.0, |x, y| (((x * 37 + y * 91) % 23) as f32) / 23.0).unwrap();
        for gentle in [false, true] {
            let p = ThermalOlsenParams {
                talus: 0.05,
                neighbourhood: Neighbourhood::VonNeumann,
                boundary: Boundary::Wrap,
            };
            let mut e: Box<dyn Eroder> = if gentle {
                Box::new(OlsenEroder::new(&m, p).unwrap().with_sweep(Sweep::InPlace))
            } else {
                Box::new(ThermalOlsenEroder::new(&m, p).unwrap().with_sweep(Sweep::InPlace))
            };
            let v0 = e.volume();
            for _ in 0..20 {
                e.run_one_step().unwrap();
            }
            assert!((e.volume() - v0).abs() < 1e-9 * v0, "gentle = {gentle}");
            let start: Vec<f64> = m.as_slice().iter().map(|&v| v as f64).collect();
            assert_ne!(e.surface().as_slice(), &start[..], "gentle = {gentle}");
        }
    }
}
