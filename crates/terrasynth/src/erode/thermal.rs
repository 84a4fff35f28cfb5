//! Thermal erosion: Musgrave et al.'s reference form, Olsen's optimised form, and Olsen's
//! inverted "erosion" algorithm (Olsen 2004; seed 001 §3).

use rayon::prelude::*;

use super::exchange::Exchange;
use super::level_tiles;
use super::olsen_inplace::{Sweep, level_in_place};
use super::steps::THERMAL;
use super::{Eroder, check_finite, check_range, to_f64};
use crate::grid::{Boundary, Neighbourhood, Stencil, Topology};
use crate::step::params::check_number;
use crate::{Grid, Heightmap, Result};

/// Talus threshold from Olsen's size-relative form `T = k / N`, scaled by the map's height
/// range: `T = k / max(width, height) × (h_max − h_min)`.
///
/// Olsen's maps span [0, 1], so for them this is exactly his `T = k/N`; for other height
/// ranges it keeps the same relative slope. `k` is unitless (paper: 4 for thermal, 8..16 for
/// his erosion); the result is in height units per cell. A flat map gives `T = 0`.
pub fn talus_from_k(k: f64, map: &Heightmap) -> f64 {
    let n = map.width().max(map.height()) as f64;
    let range = map.min_max().map(|(lo, hi)| (hi - lo) as f64).unwrap_or(0.0);
    k / n * range
}

/// Parameters of [`ThermalEroder`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThermalParams {
    /// Talus threshold T, in height units per cell (a height difference to one neighbour);
    /// material moves only across differences above T. Default 4/512 (Olsen's `T = 4/N` for
    /// a [0, 1] map with N = 512); range [0, ∞). See [`talus_from_k`].
    pub talus: f64,
    /// Fraction c of the excess `d_max − T` moved per iteration. Default 0.5 (Olsen: higher
    /// oscillates with deferred updates); range (0, 1].
    pub c: f64,
    /// Neighbourhood. Default Moore (Musgrave et al.).
    pub neighbourhood: Neighbourhood,
    /// Edge rule. Default closed.
    pub boundary: Boundary,
}

impl Default for ThermalParams {
    fn default() -> Self {
        Self { talus: 4.0 / 512.0, c: 0.5, neighbourhood: Neighbourhood::Moore, boundary: Boundary::Closed }
    }
}

impl ThermalParams {
    fn check(&self) -> Result<()> {
        check_range("talus", self.talus, 0.0, f64::MAX)?;
        // `c` is the `thermal` step's key: its range comes from that spec. `talus` is absolute
        // (the step derives it from `talus-k` and the map), so only its sign is checked here.
        check_number(THERMAL, "c", self.c)?;
        Ok(())
    }
}

/// Reference thermal erosion (Musgrave, Kolb & Mace 1989, as given by Olsen 2004 and seed 001
/// §3). For each cell with height h, `d_i = h − h_i` over its neighbours; `d_max` is the
/// largest and `d_total` the sum of those with `d_i > T`. If `d_max > T`, each such neighbour
/// receives `c·(d_max − T)·d_i / d_total` and h loses the same. Updates are deferred (a
/// difference map applied after the sweep).
///
/// Parallel and thread-count independent: a first pass stores each cell's factor
/// `c·(d_max − T)/d_total`, a second pass gathers, for each cell, its outflow and its inflow
/// from every neighbour with the same arithmetic, so the result is bit-identical for any
/// number of threads. Volume (Σh) is conserved up to `f64` rounding.
///
/// **Worlds**: no visit order and no parity, so it runs unchanged on a window of an endless
/// world; a cell's new height depends on the factors of its neighbours, which depend on theirs:
/// a reach of 2 cells per iteration.
#[derive(Clone, Debug)]
pub struct ThermalEroder {
    surface: Grid<f64>,
    next: Grid<f64>,
    factor: Vec<f64>,
    stencil: Stencil,
    params: ThermalParams,
}

impl ThermalEroder {
    /// Starts from `map`. Errors on bad parameters or non-finite heights.
    pub fn new(map: &Heightmap, params: ThermalParams) -> Result<Self> {
        params.check()?;
        check_finite(map)?;
        // Surface, next surface and factors: 3 f64 per cell.
        crate::memory::check_cells(map.width(), map.height(), 24, "thermal erosion's buffers")?;
        let topo = Topology { width: map.width(), height: map.height(), boundary: params.boundary };
        let stencil = Stencil::new(topo, params.neighbourhood);
        let surface = to_f64(map);
        Ok(Self { next: surface.clone(), surface, factor: vec![0.0; map.len()], stencil, params })
    }
}

impl Eroder for ThermalEroder {
    fn run_one_step(&mut self) -> Result<()> {
        let ThermalParams { talus, c, .. } = self.params;
        let stencil = &self.stencil;
        let (w, rows) = (stencil.topo.width, stencil.topo.height);
        let h = self.surface.as_slice();
        // Pass 1: each cell's transfer factor c·(d_max − T)/d_total (0 if nothing moves).
        self.factor.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            let (lo, hi) = interior_span(y, w, rows);
            for x in (0..lo).chain(hi..w) {
                let hi = h[y * w + x];
                let (mut d_max, mut d_total) = (0.0f64, 0.0f64);
                stencil.for_each(x, y, |j| {
                    let d = hi - h[j];
                    if d > talus {
                        d_total += d;
                        d_max = d_max.max(d);
                    }
                });
                row[x] = if d_max > talus { c * (d_max - talus) / d_total } else { 0.0 };
            }
            if lo < hi {
                factor_row(h, y * w + lo, stencil.interior_offsets(), talus, c, &mut row[lo..hi]);
            }
        });
        // Pass 2: gather outflow and inflow per cell.
        let factor = &self.factor;
        self.next.as_mut_slice().par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            let (lo, hi) = interior_span(y, w, rows);
            for x in (0..lo).chain(hi..w) {
                let i = y * w + x;
                let hi = h[i];
                let mut delta = 0.0;
                stencil.for_each(x, y, |j| {
                    let (d_out, d_in) = (hi - h[j], h[j] - hi);
                    if d_out > talus {
                        delta -= factor[i] * d_out;
                    } else if d_in > talus {
                        delta += factor[j] * d_in;
                    }
                });
                row[x] = hi + delta;
            }
            if lo < hi {
                gather_row(h, factor, y * w + lo, stencil.interior_offsets(), talus, &mut row[lo..hi]);
            }
        });
        std::mem::swap(&mut self.surface, &mut self.next);
        Ok(())
    }

    fn surface(&self) -> &Grid<f64> {
        &self.surface
    }
}

/// The interior columns `lo..hi` of row `y` (every neighbour inside the grid), or an empty
/// span on the first and last rows.
fn interior_span(y: usize, width: usize, height: usize) -> (usize, usize) {
    if y == 0 || y + 1 >= height || width < 3 { (0, 0) } else { (1, width - 1) }
}

/// The `(i + o)..(i + o + n)` slice of `h` for a neighbour offset `o`.
fn shifted(h: &[f64], start: usize, o: isize, n: usize) -> &[f64] {
    &h[(start as isize + o) as usize..][..n]
}

/// Pass 1 of [`ThermalEroder`] on the interior cells `start..start + out.len()` of one row:
/// the same arithmetic as the per-cell form, in the same neighbour order, written offset by
/// offset over the row so that it runs on SIMD lanes (an unmoved neighbour adds 0.0 instead of
/// nothing, which leaves every sum and maximum bit-identical: they start at +0.0 and only grow).
/// Plain IEEE operations lane by lane (no fused multiply-add, no reassociation): the AVX2 and
/// the portable builds give the same bits.
fn factor_row(h: &[f64], start: usize, offsets: &[isize], talus: f64, c: f64, out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2 (checked just above).
        unsafe { factor_row_avx2(h, start, offsets, talus, c, out) };
        return;
    }
    factor_row_body(h, start, offsets, talus, c, out);
}

/// [`factor_row`] compiled for AVX2 (4 f64 lanes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn factor_row_avx2(h: &[f64], start: usize, offsets: &[isize], talus: f64, c: f64, out: &mut [f64]) {
    factor_row_body(h, start, offsets, talus, c, out);
}

#[inline(always)]
fn factor_row_body(h: &[f64], start: usize, offsets: &[isize], talus: f64, c: f64, out: &mut [f64]) {
    let n = out.len();
    let centre = &h[start..start + n];
    let mut d_total = vec![0.0f64; n];
    let mut d_max = vec![0.0f64; n];
    for &o in offsets {
        let nb = shifted(h, start, o, n);
        for (((t, m), &hc), &hn) in d_total.iter_mut().zip(&mut d_max).zip(centre).zip(nb) {
            let d = hc - hn;
            let d = if d > talus { d } else { 0.0 };
            *t += d;
            *m = if d > *m { d } else { *m };
        }
    }
    for ((f, &t), &m) in out.iter_mut().zip(&d_total).zip(&d_max) {
        *f = if m > talus { c * (m - talus) / t } else { 0.0 };
    }
}

/// Pass 2 of [`ThermalEroder`] on the interior cells `start..start + out.len()` of one row,
/// offset by offset like [`factor_row`]. `delta − f·d` is written `delta + (−(f·d))`, the same
/// IEEE result; of the outflow and inflow terms at most one is non-zero (the other is +0.0),
/// so their sum is that term, and adding +0.0 changes no sum here (the sums start at +0.0).
fn gather_row(h: &[f64], factor: &[f64], start: usize, offsets: &[isize], talus: f64, out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2 (checked just above).
        unsafe { gather_row_avx2(h, factor, start, offsets, talus, out) };
        return;
    }
    gather_row_body(h, factor, start, offsets, talus, out);
}

/// [`gather_row`] compiled for AVX2 (4 f64 lanes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn gather_row_avx2(h: &[f64], factor: &[f64], start: usize, offsets: &[isize], talus: f64, out: &mut [f64]) {
    gather_row_body(h, factor, start, offsets, talus, out);
}

#[inline(always)]
fn gather_row_body(h: &[f64], factor: &[f64], start: usize, offsets: &[isize], talus: f64, out: &mut [f64]) {
    let n = out.len();
    let centre = &h[start..start + n];
    let own = &factor[start..start + n];
    let mut delta = vec![0.0f64; n];
    for &o in offsets {
        let nb = shifted(h, start, o, n);
        let theirs = shifted(factor, start, o, n);
        for ((((dl, &hc), &hn), &fi), &fj) in delta.iter_mut().zip(centre).zip(nb).zip(own).zip(theirs) {
            let (d_out, d_in) = (hc - hn, hn - hc);
            let outflow = if d_out > talus { -(fi * d_out) } else { 0.0 };
            let inflow = if d_in > talus { fj * d_in } else { 0.0 };
            *dl += outflow + inflow;
        }
    }
    for ((o, &hc), &dl) in out.iter_mut().zip(centre).zip(&delta) {
        *o = hc + dl;
    }
}

/// Parameters shared by [`ThermalOlsenEroder`] and [`OlsenEroder`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThermalOlsenParams {
    /// Talus threshold T in height units per cell. Thermal: material moves where the drop to
    /// the lowest neighbour exceeds T (default 4/512, Olsen's 4/N for a [0, 1] map at N = 512).
    /// Olsen's erosion: where it is in (0, T] (Olsen recommends 16/N). Range [0, ∞).
    pub talus: f64,
    /// Neighbourhood. Olsen's optimised thermal erosion uses the rotated Von Neumann one
    /// (the default here); his erosion algorithm uses Von Neumann.
    pub neighbourhood: Neighbourhood,
    /// Edge rule. Default closed.
    pub boundary: Boundary,
}

impl Default for ThermalOlsenParams {
    fn default() -> Self {
        Self {
            talus: 4.0 / 512.0,
            neighbourhood: Neighbourhood::RotatedVonNeumann,
            boundary: Boundary::Closed,
        }
    }
}

/// Which slopes the in-place leveller acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// `d_max > T` (thermal).
    Steep,
    /// `0 < d_max ≤ T` (Olsen's erosion).
    Gentle,
}

/// The shared in-place kernel of Olsen's two fast algorithms.
#[derive(Clone, Debug)]
struct Leveller {
    surface: Grid<f64>,
    stencil: Stencil,
    params: ThermalOlsenParams,
    mode: Mode,
    /// Sweeps done so far (picks the colour that goes first in the next one).
    sweeps: u64,
    exchange: Exchange,
    /// Coloured passes (default) or Olsen's in-place raster sweep.
    sweep: Sweep,
    /// The next surface of [`level_tiles::sweep`] (made when it first runs).
    spare: Option<Grid<f64>>,
}

impl Leveller {
    fn new(map: &Heightmap, params: ThermalOlsenParams, mode: Mode) -> Result<Self> {
        check_range("talus", params.talus, 0.0, f64::MAX)?;
        check_finite(map)?;
        // Surface, then the next surface (tiles) or the exchange's receivers, amounts, caps
        // and feeder counts: at most 32 bytes per cell.
        crate::memory::check_cells(map.width(), map.height(), 32, "Olsen's levelling buffers")?;
        let topo = Topology { width: map.width(), height: map.height(), boundary: params.boundary };
        Ok(Self {
            surface: to_f64(map),
            stencil: Stencil::new(topo, params.neighbourhood),
            params,
            mode,
            sweeps: 0,
            exchange: Exchange::default(),
            sweep: Sweep::Coloured,
            spare: None,
        })
    }

    /// One sweep: one coloured exchange pass per colour ([`Exchange`]); each cell of the
    /// colour moves `d_max/2` (shared when several cells feed the same neighbour) to its lowest
    /// neighbour when the mode's condition on `d_max` holds.
    fn sweep(&mut self) {
        let Self { surface, stencil, params, mode, sweeps, exchange, sweep, spare } = self;
        let (talus, nb, mode) = (params.talus, params.neighbourhood, *mode);
        if *sweep == Sweep::InPlace {
            level_in_place(surface.as_mut_slice(), stencil, talus, mode == Mode::Gentle);
            *sweeps += 1;
            return;
        }
        let size = (stencil.topo.width, stencil.topo.height);
        if level_tiles::supports(nb, params.boundary, size) {
            // The same passes, tile by tile (the same bits, fewer trips through memory).
            let next = spare.get_or_insert_with(|| surface.clone());
            let mut order = Exchange::colour_order(nb, *sweeps);
            let order = [order.next().unwrap_or(0), order.next().unwrap_or(1)];
            let rule = level_tiles::Rule { talus, gentle: mode == Mode::Gentle };
            let (from, to) = (surface.as_slice(), next.as_mut_slice());
            level_tiles::sweep(from, to, size, params.boundary, nb, exchange.origin(), order, rule);
            std::mem::swap(surface, next);
            *sweeps += 1;
            return;
        }
        let level = |h: &[f64], x: usize, y: usize, i: usize| {
            let hi = h[i];
            let mut d_max = 0.0;
            let mut lowest = i;
            stencil.for_each(x, y, |j| {
                let d = hi - h[j];
                if d > d_max {
                    d_max = d;
                    lowest = j;
                }
            });
            let act = match mode {
                Mode::Steep => d_max > talus,
                Mode::Gentle => d_max > 0.0 && d_max <= talus,
            };
            act.then_some((lowest, d_max))
        };
        for colour in Exchange::colour_order(nb, *sweeps) {
            let h = surface.as_slice();
            exchange
                .choose(stencil, nb, colour, |x, y, i| level(h, x, y, i).map(|(l, d)| (l, d, f64::INFINITY)));
            exchange.apply(stencil, nb, colour, surface.as_mut_slice());
        }
        *sweeps += 1;
    }
}

/// Declares a public newtype over [`Leveller`] with a given [`Mode`], plus its [`Eroder`] impl.
macro_rules! leveller_eroder {
    ($(#[$doc:meta])* $name:ident, $mode:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name(Leveller);

        impl $name {
            /// Starts from `map`. Errors on a negative or non-finite talus, or non-finite heights.
            pub fn new(map: &Heightmap, params: ThermalOlsenParams) -> Result<Self> {
                Leveller::new(map, params, $mode).map(Self)
            }

            /// The same eroder on a window of an endless world whose cell (0, 0) is world cell
            /// `(x0, y0)`: the coloured passes use the world cells' colours (see
            /// [`ThermalOlsenEroder`]'s "Worlds"), so any window gives the same cells as a
            /// larger one away from its border.
            pub fn at_world_origin(mut self, x0: i64, y0: i64) -> Self {
                self.0.exchange = Exchange::at_world_origin(x0, y0);
                self
            }

            /// The same eroder with sweep `sweep`: [`Sweep::InPlace`] is Olsen's published
            /// in-place raster sweep (`super::olsen_inplace`), not for world windows.
            pub fn with_sweep(mut self, sweep: Sweep) -> Self {
                self.0.sweep = sweep;
                self
            }
        }

        impl Eroder for $name {
            fn run_one_step(&mut self) -> Result<()> {
                self.0.sweep();
                Ok(())
            }
            fn surface(&self) -> &Grid<f64> {
                &self.0.surface
            }
        }
    };
}

leveller_eroder!(
    /// Olsen's speed-optimised thermal erosion (Olsen 2004, "Thermal erosion — optimised";
    /// seed 001 §3): Von Neumann-type neighbourhood (rotated by default), material moves only to
    /// the lowest neighbour, by `Δh = d_max/2` (levelling the pair) whenever `d_max > T`, with
    /// no difference map.
    ///
    /// Olsen updates in place during a row-major sweep; that carries material along the sweep
    /// and leaves streaks, so each sweep here is a coloured exchange instead (see the module
    /// docs and `docs/EROSION.md`): the cells are split into colours with no two neighbours
    /// alike (2 for Von Neumann and rotated Von Neumann, 4 for Moore), and per colour every cell
    /// picks its lowest neighbour from the current heights, then moves `d_max/(k + 1)` to it,
    /// k being the number of cells of that colour feeding the same neighbour (`d_max/2` when it
    /// is alone, as in Olsen). No visit order, so no directional bias; parallel and
    /// bit-identical for any thread count. Volume is conserved up to `f64` rounding. Exact ties
    /// between lowest neighbours go to the first in offset order.
    ///
    /// **Worlds** ([`ThermalOlsenEroder::at_world_origin`]): the colours are those of the world
    /// cells, and a cell's new height after one colour pass depends on the cells within 3 of it
    /// (its receiver's other feeders and their lowest neighbours), so `iterations` sweeps of
    /// `c` colours reach `3·c·iterations` cells (c = 2, or 4 for Moore).
    ThermalOlsenEroder,
    Mode::Steep
);

leveller_eroder!(
    /// Olsen's erosion algorithm (Olsen 2004, "erosion", inverted thermal erosion; seed 001 §3):
    /// the optimised thermal scheme applied where `0 < d_max ≤ T` instead of `d_max > T`. Per
    /// cell: find the lowest neighbour l with `d_max = h − h_l`; if `0 < d_max ≤ T`, move
    /// `d_max/2` from h to h_l. Gentle slopes are levelled into plateaus while steep slopes are
    /// kept, raising the erosion score ε. Olsen: T between 8/N and 16/N (16/N chosen), 50
    /// iterations, Von Neumann neighbourhood (set `neighbourhood` accordingly; see
    /// [`ThermalOlsenParams`]). Each sweep is a coloured exchange as in
    /// [`ThermalOlsenEroder`] (Olsen's in-place row-major sweep drew row/column streaks).
    OlsenEroder,
    Mode::Gentle
);

#[cfg(test)]
mod tests {
    use super::*;

    /// One reference iteration cell by cell through [`Stencil::for_each`] (the form the row
    /// kernels replace), for comparing bits.
    fn per_cell_step(h: &[f64], stencil: &Stencil, talus: f64, c: f64) -> Vec<f64> {
        let (w, rows) = (stencil.topo.width, stencil.topo.height);
        let mut factor = vec![0.0; h.len()];
        for y in 0..rows {
            for x in 0..w {
                let (mut d_max, mut d_total) = (0.0f64, 0.0f64);
                stencil.for_each(x, y, |j| {
                    let d = h[y * w + x] - h[j];
                    if d > talus {
                        d_total += d;
                        d_max = d_max.max(d);
                    }
                });
                factor[y * w + x] = if d_max > talus { c * (d_max - talus) / d_total } else { 0.0 };
            }
        }
        let mut next = vec![0.0; h.len()];
        for y in 0..rows {
            for x in 0..w {
                let i = y * w + x;
                let mut delta = 0.0;
                stencil.for_each(x, y, |j| {
                    if h[i] - h[j] > talus {
                        delta -= factor[i] * (h[i] - h[j]);
                    } else if h[j] - h[i] > talus {
                        delta += factor[j] * (h[j] - h[i]);
                    }
                });
                next[i] = h[i] + delta;
            }
        }
        next
    }

    /// The row kernels (SIMD on AVX2 machines) give exactly the bits of the per-cell form, for
    /// every neighbourhood and boundary, on heights full of ties, flats, differences equal to
    /// the talus and signed zeros.
    #[test]
    fn row_kernels_equal_the_per_cell_form_bit_for_bit() {
        let (w, rows) = (23usize, 17usize);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let heights: Vec<f32> = (0..w * rows)
            .map(|_| {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                match state >> 61 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => 0.25,
                    _ => ((state >> 40) % 64) as f32 / 64.0 - 0.3,
                }
            })
            .collect();
        let map = Heightmap::from_vec(w, rows, 1.0, heights).unwrap();
        for &neighbourhood in Neighbourhood::ALL {
            for &boundary in Boundary::ALL {
                let params = ThermalParams { talus: 0.125, c: 0.5, neighbourhood, boundary };
                let mut eroder = ThermalEroder::new(&map, params).unwrap();
                let mut expected = eroder.surface().as_slice().to_vec();
                for _ in 0..4 {
                    expected = per_cell_step(&expected, &eroder.stencil, params.talus, params.c);
                    eroder.run_one_step().unwrap();
                    let got = eroder.surface().as_slice();
                    for (i, (a, b)) in got.iter().zip(&expected).enumerate() {
                        assert_eq!(
                            a.to_bits(),
                            b.to_bits(),
                            "{neighbourhood:?} {boundary:?} cell {i}: {a} vs {b}"
                        );
                    }
                }
            }
        }
    }
}
