//! Grid-based hydraulic erosion: the reference water/sediment-map scheme and Olsen's
//! optimised form (Olsen 2004, after Beneš & Forsbach 2002; seed 001 §3).

use rayon::prelude::*;

use super::exchange::Exchange;
use super::olsen_inplace::{Sweep, route_water_in_place};
use super::steps::HYDRAULIC;
use super::{Eroder, check_finite, to_f64};
use crate::grid::{Boundary, Neighbourhood, Stencil, Topology};
use crate::step::params::check_number;
use crate::{Grid, Heightmap, Result};

/// Parameters of [`HydraulicEroder`] (defaults are Olsen's constants).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HydraulicParams {
    /// Rain Kr: water added to every cell per iteration, in height units. Default 0.01;
    /// range [0, 1].
    pub kr: f64,
    /// Solubility Ks: height dissolved per unit of water per iteration. Default 0.01; range [0, 1].
    pub ks: f64,
    /// Evaporation Ke: fraction of the water evaporating per iteration. Default 0.5; range [0, 1].
    pub ke: f64,
    /// Sediment capacity Kc: sediment a unit of water can carry. Default 0.01; range [0, 1].
    pub kc: f64,
    /// Neighbourhood. Default Moore (the reference).
    pub neighbourhood: Neighbourhood,
    /// Edge rule. Default closed (no water or sediment leaves the map).
    pub boundary: Boundary,
}

impl Default for HydraulicParams {
    fn default() -> Self {
        Self {
            kr: 0.01,
            ks: 0.01,
            ke: 0.5,
            kc: 0.01,
            neighbourhood: Neighbourhood::Moore,
            boundary: Boundary::Closed,
        }
    }
}

/// Checks a rate against the `hydraulic` step's spec of the same key (one source of ranges).
fn check_unit(name: &str, v: f64) -> Result<()> {
    check_number(HYDRAULIC, name, v)
}

/// Reference hydraulic erosion (Olsen 2004's altered Beneš & Forsbach scheme; seed 001 §3).
/// State: height h, water w, suspended sediment m. Each iteration:
/// 1. rain `w += Kr`;
/// 2. dissolve `h −= Ks·w`, `m += Ks·w`;
/// 3. transport: with total altitude `a = h + w`, the neighbours with `a_i < a` get
///    `Δw_i = min(w, Δa)·d_i/d_total` (`d_i = a − a_i`, `Δa = a − ā`, ā the mean altitude of
///    the cell and those neighbours), and sediment `Δm_i = m·Δw_i/w`;
/// 4. evaporate `w *= 1 − Ke`, then deposit `Δm = max(0, m − Kc·w)`: `m −= Δm`, `h += Δm`.
///
/// Transport uses deferred updates computed as a parallel gather (each cell's factors first,
/// then each cell sums its own outflow and its inflow with identical arithmetic), so the
/// result is bit-identical for any thread count.
///
/// **Conserved**: Σ(h + m) — rain and evaporation change only water, dissolving and
/// depositing move material between h and m, transport moves m between cells. This is what
/// [`Eroder::volume`] returns here. [`HydraulicEroder::deposit_sediment`] drops the suspended
/// sediment back onto h (the recipe step does this at the end, so Σh is conserved).
///
/// **Worlds**: no visit order and no parity; rain, evaporation and deposit are per cell and the
/// transport gather reads the neighbours' factors, which read theirs: a reach of 2 cells per
/// iteration on a window of an endless world.
#[derive(Clone, Debug)]
pub struct HydraulicEroder {
    surface: Grid<f64>,
    water: Vec<f64>,
    sediment: Vec<f64>,
    next_w: Vec<f64>,
    next_m: Vec<f64>,
    water_factor: Vec<f64>,
    sediment_factor: Vec<f64>,
    stencil: Stencil,
    params: HydraulicParams,
}

impl HydraulicEroder {
    /// Starts from `map` with no water and no sediment. Errors on a parameter outside [0, 1]
    /// or non-finite heights.
    pub fn new(map: &Heightmap, params: HydraulicParams) -> Result<Self> {
        check_unit("kr", params.kr)?;
        check_unit("ks", params.ks)?;
        check_unit("ke", params.ke)?;
        check_unit("kc", params.kc)?;
        check_finite(map)?;
        // Surface, water, sediment, their next values and two factors: 7 f64 per cell.
        crate::memory::check_cells(map.width(), map.height(), 56, "hydraulic erosion's buffers")?;
        let n = map.len();
        let topo = Topology { width: map.width(), height: map.height(), boundary: params.boundary };
        Ok(Self {
            surface: to_f64(map),
            water: vec![0.0; n],
            sediment: vec![0.0; n],
            next_w: vec![0.0; n],
            next_m: vec![0.0; n],
            water_factor: vec![0.0; n],
            sediment_factor: vec![0.0; n],
            stencil: Stencil::new(topo, params.neighbourhood),
            params,
        })
    }

    /// Water depth per cell (row-major).
    pub fn water(&self) -> &[f64] {
        &self.water
    }

    /// Suspended sediment per cell (row-major), in height units.
    pub fn sediment(&self) -> &[f64] {
        &self.sediment
    }

    /// Deposits all suspended sediment onto the surface (`h += m`, `m = 0`).
    pub fn deposit_sediment(&mut self) {
        for (h, m) in self.surface.as_mut_slice().iter_mut().zip(&mut self.sediment) {
            *h += *m;
            *m = 0.0;
        }
    }

    fn transport(&mut self) {
        let stencil = &self.stencil;
        let w = stencil.topo.width;
        let h = self.surface.as_slice();
        let (water, sed) = (&self.water, &self.sediment);
        let alt = |i: usize| h[i] + water[i];
        self.water_factor.par_chunks_mut(w).zip(self.sediment_factor.par_chunks_mut(w)).enumerate().for_each(
            |(y, (wf_row, sf_row))| {
                for x in 0..w {
                    let i = y * w + x;
                    let a = alt(i);
                    let (mut d_total, mut sum_a, mut count) = (0.0, 0.0, 0usize);
                    stencil.for_each(x, y, |j| {
                        let aj = alt(j);
                        if aj < a {
                            d_total += a - aj;
                            sum_a += aj;
                            count += 1;
                        }
                    });
                    let (mut wf, mut sf) = (0.0, 0.0);
                    if count > 0 && water[i] > 0.0 {
                        let mean = (a + sum_a) / (count + 1) as f64;
                        let moved = water[i].min(a - mean);
                        wf = moved / d_total;
                        sf = sed[i] * wf / water[i];
                    }
                    wf_row[x] = wf;
                    sf_row[x] = sf;
                }
            },
        );
        let (wf, sf) = (&self.water_factor, &self.sediment_factor);
        self.next_w.par_chunks_mut(w).zip(self.next_m.par_chunks_mut(w)).enumerate().for_each(
            |(y, (nw_row, nm_row))| {
                for x in 0..w {
                    let i = y * w + x;
                    let a = alt(i);
                    let (mut dw, mut dm) = (0.0, 0.0);
                    stencil.for_each(x, y, |j| {
                        let aj = alt(j);
                        if aj < a {
                            let d = a - aj;
                            dw -= wf[i] * d;
                            dm -= sf[i] * d;
                        } else if aj > a {
                            let d = aj - a;
                            dw += wf[j] * d;
                            dm += sf[j] * d;
                        }
                    });
                    nw_row[x] = water[i] + dw;
                    nm_row[x] = sed[i] + dm;
                }
            },
        );
        std::mem::swap(&mut self.water, &mut self.next_w);
        std::mem::swap(&mut self.sediment, &mut self.next_m);
    }
}

impl Eroder for HydraulicEroder {
    fn run_one_step(&mut self) -> Result<()> {
        let HydraulicParams { kr, ks, ke, kc, .. } = self.params;
        let h = self.surface.as_mut_slice();
        h.par_iter_mut().zip(self.water.par_iter_mut()).zip(self.sediment.par_iter_mut()).for_each(
            |((h, w), m)| {
                *w += kr;
                let dissolved = ks * *w;
                *h -= dissolved;
                *m += dissolved;
            },
        );
        self.transport();
        let h = self.surface.as_mut_slice();
        h.par_iter_mut().zip(self.water.par_iter_mut()).zip(self.sediment.par_iter_mut()).for_each(
            |((h, w), m)| {
                *w *= 1.0 - ke;
                let excess = (*m - kc * *w).max(0.0);
                *m -= excess;
                *h += excess;
            },
        );
        Ok(())
    }

    fn surface(&self) -> &Grid<f64> {
        &self.surface
    }

    fn finish(&mut self) {
        self.deposit_sediment();
    }

    fn water(&self) -> Option<&[f64]> {
        Some(&self.water)
    }

    /// Σ(h + m): the conserved quantity.
    fn volume(&self) -> f64 {
        self.surface.as_slice().iter().sum::<f64>() + self.sediment.iter().sum::<f64>()
    }
}

/// Parameters of [`HydraulicOlsenEroder`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HydraulicOlsenParams {
    /// Rain Kr per iteration, height units. Default 0.01; range [0, 1].
    pub kr: f64,
    /// Solubility = capacity Kc (Olsen sets Ks = Kc). Default 0.01; range [0, 1].
    pub kc: f64,
    /// Evaporation Ke, fraction per iteration. Default 0.5; range [0, 1].
    pub ke: f64,
    /// Neighbourhood. Default Von Neumann (Olsen).
    pub neighbourhood: Neighbourhood,
    /// Edge rule. Default closed.
    pub boundary: Boundary,
}

impl Default for HydraulicOlsenParams {
    fn default() -> Self {
        Self {
            kr: 0.01,
            kc: 0.01,
            ke: 0.5,
            neighbourhood: Neighbourhood::VonNeumann,
            boundary: Boundary::Closed,
        }
    }
}

/// Olsen's optimised hydraulic erosion (Olsen 2004; seed 001 §3): Ks = Kc so water is always
/// saturated, `m = Kc·w`, and no sediment map is kept; water moves only to the lowest
/// neighbour; updates are in place (here: per colour, see step 2). Our exact reading, per iteration:
/// 1. rain: `w += Kr` and the new water dissolves its load at once, `h −= Kc·Kr`;
/// 2. one sweep moving water down: with `a = h + w`, a cell whose lowest neighbour l (lowest
///    `a_l`) has `d = a − a_l > 0` moves `Δw = min(w, d/2)` of water to l (its saturated load
///    `Kc·Δw` travels with it, so h does not change). Olsen does this in place in row-major
///    order, which carries water along the sweep; here it is a coloured exchange (see
///    [`super::ThermalOlsenEroder`]): per colour, each cell sends `min(w, d/(k + 1))`, k being
///    the number of cells feeding the same neighbour;
/// 3. evaporate `Δw_e = Ke·w`, `w −= Δw_e`, and the load that no longer fits is deposited,
///    `h += Kc·Δw_e`.
///
/// **Conserved**: Σ(h + Kc·w) ([`Eroder::volume`] returns it). No visit order: parallel and
/// bit-identical for any thread count.
#[derive(Clone, Debug)]
pub struct HydraulicOlsenEroder {
    surface: Grid<f64>,
    water: Vec<f64>,
    /// Whether the water holds its load `Kc·w` (false after [`Eroder::finish`], until the next
    /// step takes it up again).
    loaded: bool,
    stencil: Stencil,
    params: HydraulicOlsenParams,
    /// Sweeps done so far (picks the colour that goes first in the next one).
    sweeps: u64,
    exchange: Exchange,
    /// Coloured passes (default) or Olsen's in-place raster sweep.
    sweep: Sweep,
}

impl HydraulicOlsenEroder {
    /// Starts from `map` with no water. Errors on a parameter outside [0, 1] or non-finite
    /// heights.
    pub fn new(map: &Heightmap, params: HydraulicOlsenParams) -> Result<Self> {
        check_unit("kr", params.kr)?;
        check_unit("kc", params.kc)?;
        check_unit("ke", params.ke)?;
        check_finite(map)?;
        // Surface and water (f64), plus the exchange passes' receivers, wants, capacities and
        // feeders: 40 bytes per cell.
        crate::memory::check_cells(map.width(), map.height(), 40, "Olsen erosion's buffers")?;
        let topo = Topology { width: map.width(), height: map.height(), boundary: params.boundary };
        let stencil = Stencil::new(topo, params.neighbourhood);
        Ok(Self {
            surface: to_f64(map),
            water: vec![0.0; map.len()],
            loaded: true,
            stencil,
            params,
            sweeps: 0,
            exchange: Exchange::default(),
            sweep: Sweep::Coloured,
        })
    }

    /// The same eroder with sweep `sweep`: [`Sweep::InPlace`] moves the water in Olsen's
    /// published in-place raster sweep (`super::olsen_inplace`), not for world windows.
    pub fn with_sweep(mut self, sweep: Sweep) -> Self {
        self.sweep = sweep;
        self
    }

    /// Water depth per cell (row-major).
    pub fn water(&self) -> &[f64] {
        &self.water
    }

    /// The same eroder on a window of an endless world whose cell (0, 0) is world cell
    /// `(x0, y0)`: the coloured sweeps use the world cells' colours, so any window gives the
    /// same cells as a larger one away from its border (reach `3·c` cells per iteration, c the
    /// number of colours, as [`super::ThermalOlsenEroder`]).
    pub fn at_world_origin(mut self, x0: i64, y0: i64) -> Self {
        self.exchange = Exchange::at_world_origin(x0, y0);
        self
    }
}

impl Eroder for HydraulicOlsenEroder {
    fn run_one_step(&mut self) -> Result<()> {
        let HydraulicOlsenParams { kr, kc, ke, .. } = self.params;
        let stencil = &self.stencil;
        let h = self.surface.as_mut_slice();
        let water = &mut self.water;
        if !self.loaded {
            for (h, w) in h.iter_mut().zip(water.iter()) {
                *h -= kc * *w;
            }
            self.loaded = true;
        }
        for (h, w) in h.iter_mut().zip(water.iter_mut()) {
            *w += kr;
            *h -= kc * kr;
        }
        let nb = self.params.neighbourhood;
        let colour_passes = if self.sweep == Sweep::InPlace {
            route_water_in_place(h, water, stencil);
            0
        } else {
            super::exchange::colours(nb)
        };
        for colour in Exchange::colour_order(nb, self.sweeps).take(colour_passes) {
            let (hs, ws) = (&*h, &*water);
            self.exchange.choose(stencil, nb, colour, |x, y, i| {
                let a = hs[i] + ws[i];
                let (mut d_max, mut lowest) = (0.0, i);
                stencil.for_each(x, y, |j| {
                    let d = a - (hs[j] + ws[j]);
                    if d > d_max {
                        d_max = d;
                        lowest = j;
                    }
                });
                (d_max > 0.0 && ws[i] > 0.0).then_some((lowest, d_max, ws[i]))
            });
            self.exchange.apply(stencil, nb, colour, water);
        }
        self.sweeps += 1;
        for (h, w) in h.iter_mut().zip(water.iter_mut()) {
            let evaporated = ke * *w;
            *w -= evaporated;
            *h += kc * evaporated;
        }
        Ok(())
    }

    fn surface(&self) -> &Grid<f64> {
        &self.surface
    }

    /// Deposits the water's load but keeps the water (reported as [`Eroder::water`]).
    fn finish(&mut self) {
        let kc = self.params.kc;
        for (h, w) in self.surface.as_mut_slice().iter_mut().zip(&self.water) {
            *h += kc * *w;
        }
        self.loaded = false;
    }

    fn water(&self) -> Option<&[f64]> {
        Some(&self.water)
    }

    /// Σ(h + Kc·w) while the water holds its load, Σh after [`Eroder::finish`].
    fn volume(&self) -> f64 {
        if !self.loaded {
            return self.surface.as_slice().iter().sum();
        }
        self.surface.as_slice().iter().sum::<f64>() + self.params.kc * self.water.iter().sum::<f64>()
    }
}
