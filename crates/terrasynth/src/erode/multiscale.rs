//! Coarse-to-fine stream power (issue 13 §3): most of the landscape evolution on a grid `f`
//! times coarser, then a few full-resolution steps.
//!
//! The large-scale drainage network (main valleys, divides) forms over many time steps, but
//! needs no fine cells; the fine cells only have to carry the small valleys and make every
//! cell drain. So [`CoarseToFine`] runs:
//! 1. **restrict**: the coarse grid samples every `f`-th cell (lattice point `(X·f, Y·f)`, the
//!    last row and column clamped to the map), each coarse height the mean of the fine cells
//!    within `f/2` of its lattice point;
//! 2. **coarse steps**: stream power ([`StreamPowerEroder`]) on the coarse grid with spacing
//!    `f·dx`, so drainage areas, slopes and diffusion keep their physical units;
//! 3. **prolong**: the change the coarse steps made (`coarse_after − coarse_before`),
//!    interpolated bilinearly, is added to the fine map, which keeps the fine map's own detail
//!    (its small-scale roughness) under the carved valleys;
//! 4. **fine steps**: stream power at full resolution, from there, so every cell drains and
//!    the small valleys grow. Base level (edges, sea) is taken from the original fine map.
//!
//! The idea is the multigrid one (coarse correction, fine smoothing; Briggs, Henson & McCormick
//! 2000, "A Multigrid Tutorial", ch. 3); its use for landscape evolution follows the
//! coarse-to-fine terrain erosion of Cordonnier et al. 2016 ("Large scale terrain generation
//! from tectonic uplift and fluvial erosion", Eurographics), which also upsamples a coarse
//! stream-power solution. Cost: `coarse` steps at `1/f²` of the cells, plus the fine steps.

use rayon::prelude::*;
use terrasynth_noise::detmath;

use super::droplets::{DropletEroder, DropletParams};
use super::steps::STREAM_POWER;
use super::stream_power::{Parts, StreamPowerEroder, StreamPowerParams, base_level};
use super::{Eroder, check_finite};
use crate::step::params::check_number;
use crate::{Error, Grid, Heightmap, Result};

/// Stream power run coarse then fine, as one [`Eroder`]: the first `coarse_steps` calls of
/// [`Eroder::run_one_step`] advance the coarse grid (the surface stays the starting map until
/// the last of them, then holds the prolonged result), the following ones the full grid.
#[derive(Debug)]
pub struct CoarseToFine {
    factor: usize,
    params: StreamPowerParams,
    /// The starting map, then (after the coarse steps) the prolonged one; moved into the
    /// full-resolution eroder when that is built (exactly one of the two is held).
    fine_start: Option<Grid<f64>>,
    /// Base level of the full grid, from the starting map.
    base: Grid<bool>,
    coarse_before: Grid<f64>,
    coarse: Option<StreamPowerEroder>,
    fine: Option<StreamPowerEroder>,
    coarse_left: usize,
}

impl CoarseToFine {
    /// Stream power on `map` with `params`, `coarse_steps` steps on a grid `factor` times
    /// coarser (2 to 16) before the full-resolution ones. Errors on bad parameters, a factor
    /// out of range, or a map smaller than 2 coarse cells across.
    pub fn new(
        map: &Heightmap,
        params: StreamPowerParams,
        factor: usize,
        coarse_steps: usize,
    ) -> Result<Self> {
        Self::with_coarse_dt(map, params, factor, coarse_steps, params.dt)
    }

    /// [`CoarseToFine::new`] with the coarse steps' own time step `coarse_dt` (the fine steps
    /// keep `params.dt`): fewer and longer coarse steps lay out the same valleys in less time,
    /// while the fine steps' uplift per step, which sets how deep the hollows they leave are,
    /// stays small. Errors as [`CoarseToFine::new`], and on `coarse_dt` outside the
    /// `coarse-dt` key's range, [1e-9, 1e9].
    pub fn with_coarse_dt(
        map: &Heightmap,
        params: StreamPowerParams,
        factor: usize,
        coarse_steps: usize,
        coarse_dt: f64,
    ) -> Result<Self> {
        // The range is the `coarse-dt` key's (one declaration for recipes and this API).
        check_number(STREAM_POWER, "coarse-dt", coarse_dt)?;
        // The recipe key allows 1 (every step at full resolution: `StreamPowerEroder`); this
        // type always has a coarse grid.
        check_coarse_grid(map, factor, 16, "every step at full resolution, use StreamPowerEroder")?;
        let (w, h) = (map.width(), map.height());
        crate::memory::check_cells(w, h, 24, "coarse-to-fine stream power's full-resolution copies")?;
        let fine_start = super::to_f64(map);
        let base = Grid::from_vec(w, h, map.cell_size(), base_level(map, params.sea_level))?;
        let coarse_map = restrict(&fine_start, factor)?.par_map(|&v| v as f32);
        // Floodplains are planed at full resolution only, after the fine steps, and the talus
        // fails before the first of them.
        let coarse_params = StreamPowerParams {
            dx: params.dx * factor as f64,
            dt: coarse_dt,
            floodplain_area: 0.0,
            floodplain_depth: 0.0,
            critical_slope: 0.0,
            ..params
        };
        // The coarse cell X is the fine cell X·factor for the rate fields.
        let coarse = StreamPowerEroder::with_grid_step(&coarse_map, coarse_params, factor)?;
        // The change is measured from the coarse eroder's own start (the restriction rounded
        // to f32), so the rounding is not prolonged onto the map as a change (as the coarse
        // droplets do).
        let coarse_before = coarse.surface().clone();
        Ok(Self {
            factor,
            params,
            fine_start: Some(fine_start),
            base,
            coarse_before,
            coarse: Some(coarse),
            fine: None,
            coarse_left: coarse_steps,
        })
    }

    /// Ends the coarse phase: adds the prolonged coarse change to the fine map. The
    /// full-resolution eroder is built by the first full-resolution step ([`Self::fine_step`]),
    /// so a run without one (`fine-iterations = 0`) never allocates it.
    fn refine(&mut self) -> Result<()> {
        if let Some(coarse) = self.coarse.take() {
            let after = coarse.surface();
            let change = Grid::from_vec(
                after.width(),
                after.height(),
                after.cell_size(),
                after.as_slice().iter().zip(self.coarse_before.as_slice()).map(|(a, b)| a - b).collect(),
            )?;
            let fine =
                self.fine_start.as_mut().expect("the coarse phase ends before the fine eroder is built");
            // Base level never moves, even where the interpolation reaches it.
            prolong_add(&change, self.factor, fine, self.base.as_slice());
        }
        Ok(())
    }

    /// One full-resolution step, from the prolonged map (building the eroder the first time).
    fn fine_step(&mut self) -> Result<()> {
        if self.fine.is_none() {
            // Another ρ8 stream than the coarse steps', so the fine draws are not the same.
            let params = StreamPowerParams { seed: self.params.seed ^ 0x5EED_F1AE, ..self.params };
            let start = self.fine_start.as_mut().expect("held until the fine eroder is built");
            let parts = Parts::new(start.width(), start.height(), params, 1)?;
            // The eroder starts from the prolonged map rounded to `f32` (the map's precision
            // between steps), rounded in place, and moved into it with a copy of the base level.
            start.as_mut_slice().par_iter_mut().for_each(|v| *v = *v as f32 as f64);
            check_finite(start)?;
            let surface = self.fine_start.take().expect("checked above");
            let base = crate::memory::to_vec_par(self.base.as_slice());
            self.fine = Some(StreamPowerEroder::from_parts(parts, surface, base));
        }
        self.fine.as_mut().expect("built above").run_one_step()
    }
}

impl Eroder for CoarseToFine {
    fn run_one_step(&mut self) -> Result<()> {
        if self.coarse_left > 0 {
            if let Some(coarse) = self.coarse.as_mut() {
                coarse.run_one_step()?;
            }
            self.coarse_left -= 1;
            if self.coarse_left == 0 {
                self.refine()?;
            }
            return Ok(());
        }
        self.refine()?;
        self.fine_step()
    }

    /// The fine eroder's floodplains, if full-resolution steps ran.
    fn finish(&mut self) {
        if let Some(fine) = self.fine.as_mut() {
            fine.finish();
        }
    }

    fn surface(&self) -> &Grid<f64> {
        match (&self.fine, &self.fine_start) {
            (Some(fine), _) => fine.surface(),
            (None, Some(start)) => start,
            (None, None) => unreachable!("the map is held by the fine eroder or as the start"),
        }
    }

    /// During the coarse steps, the coarse grid (the full-resolution start does not move).
    fn stepped_surface(&self) -> &Grid<f64> {
        match (&self.fine, &self.coarse) {
            (None, Some(coarse)) => coarse.surface(),
            _ => self.surface(),
        }
    }
}

/// Droplet erosion (Beyer 2015, [`DropletEroder`]) run on a grid `factor` times coarser, its
/// change added to the full-resolution map: the coarse-to-fine scheme of [`CoarseToFine`]
/// (same [`restrict`] and bilinear prolongation) applied to droplets.
///
/// A droplet's brush (radius 3 cells by default) spreads its erosion over a disc of cells, so
/// its gullies are several cells wide and need no full-resolution grid: on a grid twice as
/// coarse a quarter of the droplets, each living half as many steps over a brush of a quarter
/// of the cells, carve gullies of the same width in metres, for about a seventh of the work
/// (`eroded-island` at 1025²: 0.18 s on one thread against 1.24 s). The fine map keeps its
/// own small-scale detail under the prolonged change.
///
/// The droplets move one coarse cell, `factor` fine cells, per step; their per-step
/// parameters are converted so that a droplet does per metre what it would do on the full grid
/// ([`CoarseDroplets::coarse_params`]). `droplets` counts full-resolution droplets: the coarse
/// grid runs `droplets / factor²` (at least 1). Mass: `Σh + lost` is conserved on the coarse
/// grid as by [`DropletEroder`]; the full-resolution change sums to `factor²` times the coarse
/// one wherever it stays a lattice step away from the map's border (bilinear weights of a
/// lattice point sum to `factor²`), so there too the map keeps its volume.
#[derive(Debug)]
pub struct CoarseDroplets {
    factor: usize,
    fine_start: Grid<f64>,
    coarse_before: Grid<f64>,
    coarse: DropletEroder,
    /// `coarse − coarse_before` after the last step (a buffer kept between steps).
    change: Grid<f64>,
    surface: Grid<f64>,
}

impl CoarseDroplets {
    /// Droplets with `params` (for the full-resolution `map`) on a grid `factor` times coarser,
    /// 2 to 4. Errors on bad parameters, non-finite heights, a factor out of range, a map
    /// whose smaller side is at most `2·factor`, or too little memory.
    pub fn new(map: &Heightmap, params: DropletParams, factor: usize) -> Result<Self> {
        check_coarse_grid(map, factor, 4, "droplets at full resolution, use DropletEroder")?;
        let (w, h) = (map.width(), map.height());
        crate::memory::check_cells(w, h, 16, "coarse droplets' full-resolution copies")?;
        let fine_start = super::to_f64(map);
        let restricted = restrict(&fine_start, factor)?.par_map(|&v| v as f32);
        let coarse = DropletEroder::new(&restricted, Self::coarse_params(params, factor))?;
        // The change is measured from the droplets' own start (the restriction rounded to f32),
        // so the rounding is not added to the map as a change.
        let coarse_before = coarse.surface().clone();
        let change =
            Grid::filled(coarse_before.width(), coarse_before.height(), coarse_before.cell_size(), 0.0)?;
        let surface = fine_start.par_map(|&v| v); // a clone written by the rayon threads
        Ok(Self { factor, fine_start, coarse_before, coarse, change, surface })
    }

    /// `params` converted for a grid `factor` times coarser, where a droplet step covers
    /// `factor` fine cells: lengths in cells (`radius`, `max_lifetime`, rounded up) divided by
    /// `factor`; a share `r` applied per step (`erode`, `deposit`, `evaporate`) becomes
    /// `1 − (1 − r)^factor`, and the `inertia` kept per step `inertia^factor`, their effect
    /// over `factor` fine steps; `capacity` divided by `factor`, since a step's height drop,
    /// which the capacity multiplies, is `factor` times the fine one on the same slope. The
    /// count is divided by `factor²` (one per coarse cell for one per fine cell). The rest is
    /// unchanged (`gravity` turns a height drop into speed², the same per metre of descent).
    pub fn coarse_params(params: DropletParams, factor: usize) -> DropletParams {
        let f = factor as f64;
        let per_distance = |rate: f64| 1.0 - detmath::pow(1.0 - rate, f);
        DropletParams {
            droplets: (params.droplets / (factor * factor)).max(1),
            radius: (params.radius / f).max(1.0),
            inertia: detmath::pow(params.inertia, f),
            capacity: params.capacity / f,
            erode: per_distance(params.erode),
            deposit: per_distance(params.deposit),
            evaporate: per_distance(params.evaporate),
            max_lifetime: params.max_lifetime.div_ceil(factor),
            ..params
        }
    }

    /// Sediment carried off the map by the coarse droplets (height units × coarse cells).
    pub fn lost(&self) -> f64 {
        self.coarse.lost()
    }
}

impl Eroder for CoarseDroplets {
    fn run_one_step(&mut self) -> Result<()> {
        self.coarse.run_one_step()?;
        let (after, before) = (self.coarse.surface().as_slice(), self.coarse_before.as_slice());
        self.change
            .as_mut_slice()
            .par_iter_mut()
            .zip(after.par_iter().zip(before))
            .for_each(|(c, (a, b))| *c = a - b);
        let start = self.fine_start.as_slice();
        self.surface.as_mut_slice().par_iter_mut().zip(start).for_each(|(v, s)| *v = *s);
        prolong_add(&self.change, self.factor, &mut self.surface, &[]);
        Ok(())
    }

    fn surface(&self) -> &Grid<f64> {
        &self.surface
    }
}

/// Errors unless `factor` is in `[2, max]` (`for_one` says what to use for 1), the heights are
/// finite, and both sides of `map` exceed `2·factor` (so the coarse grid has 3 cells across).
fn check_coarse_grid(map: &Heightmap, factor: usize, max: usize, for_one: &str) -> Result<()> {
    if !(2..=max).contains(&factor) {
        return Err(Error::param("coarse", factor, format!("an integer in [2, {max}] (for 1, {for_one})")));
    }
    check_finite(map)?;
    if !fits_coarse_grid(map, factor) {
        let side = map.width().min(map.height());
        return Err(Error::param(
            "coarse",
            factor,
            format!("less than half the map's smaller side (at most {} here)", (side - 1) / 2),
        ));
    }
    Ok(())
}

/// Whether both sides of `map` exceed `2·factor`, so its coarse grid has at least 3 cells
/// across (the steps run at full resolution on smaller maps).
pub(crate) fn fits_coarse_grid(map: &Heightmap, factor: usize) -> bool {
    map.width().min(map.height()) > 2 * factor
}

/// The coarse grid of `fine` at factor `f`: `⌈(w − 1)/f⌉ + 1` columns (and rows likewise),
/// coarse cell `(X, Y)` the mean of the fine cells `(x, y)` with `|x − X·f| ≤ f/2` and
/// `|y − Y·f| ≤ f/2` inside the map (the lattice point clamped to the map's last cell).
fn restrict(fine: &Grid<f64>, f: usize) -> Result<Grid<f64>> {
    let (w, h) = (fine.width(), fine.height());
    let (cw, ch) = ((w - 1).div_ceil(f) + 1, (h - 1).div_ceil(f) + 1);
    let half = f / 2;
    let span = |c: usize, n: usize| {
        let centre = (c * f).min(n - 1);
        (centre.saturating_sub(half), (centre + half).min(n - 1))
    };
    let mut coarse = Vec::new();
    crate::memory::resize_par(&mut coarse, cw * ch, 0.0);
    // Coarse rows in parallel (each mean is summed in the same order on any thread count).
    coarse.par_chunks_mut(cw).enumerate().for_each(|(cy, row)| {
        for (cx, out) in row.iter_mut().enumerate() {
            let ((x0, x1), (y0, y1)) = (span(cx, w), span(cy, h));
            let mut sum = 0.0;
            for y in y0..=y1 {
                sum += fine.as_slice()[y * w + x0..=y * w + x1].iter().sum::<f64>();
            }
            *out = sum / ((x1 - x0 + 1) * (y1 - y0 + 1)) as f64;
        }
    });
    Grid::from_vec(cw, ch, fine.cell_size() * f as f64, coarse)
}

/// Adds `change` (a coarse grid at factor `f`, lattice as [`restrict`]) to `fine`, bilinearly
/// interpolated: fine cell `x` lies between lattice points `⌊x/f⌋` and `⌊x/f⌋ + 1` at weight
/// `(x mod f)/f` (the clamped last lattice point is taken at `X·f` all the same: it is base
/// level, where the change is 0). Cells where `fixed` is true are left alone (`fixed` empty:
/// none are).
fn prolong_add(change: &Grid<f64>, f: usize, fine: &mut Grid<f64>, fixed: &[bool]) {
    let (w, cw, ch) = (fine.width(), change.width(), change.height());
    let c = change.as_slice();
    let inv = 1.0 / f as f64;
    // Rows in parallel (each cell's arithmetic is the same on any thread count); a row is
    // walked `f` cells at a time, the cells between lattice points `x0` and `x0 + 1`, so no
    // cell divides its column by `f`: its weight is `k·(1/f)`, `k = x mod f`, as before.
    fine.as_mut_slice().par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        let (y0, ty) = (y / f, (y % f) as f64 * inv);
        let y1 = (y0 + 1).min(ch - 1);
        let (top_row, bottom_row) = (&c[y0 * cw..(y0 + 1) * cw], &c[y1 * cw..(y1 + 1) * cw]);
        let fixed_row = (!fixed.is_empty()).then(|| &fixed[y * w..(y + 1) * w]);
        for (x0, cells) in row.chunks_mut(f).enumerate() {
            let x1 = (x0 + 1).min(cw - 1);
            let (nw, ne, sw, se) = (top_row[x0], top_row[x1], bottom_row[x0], bottom_row[x1]);
            for (k, v) in cells.iter_mut().enumerate() {
                if fixed_row.is_some_and(|fixed| fixed[x0 * f + k]) {
                    continue;
                }
                let tx = k as f64 * inv;
                let top = nw * (1.0 - tx) + ne * tx;
                let bottom = sw * (1.0 - tx) + se * tx;
                *v += top * (1.0 - ty) + bottom * ty;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cone island in a sea, whose droplets never reach a lattice step from the border.
    fn island() -> Heightmap {
        Heightmap::from_fn(129, 129, 1.0, |x, y| {
            let r = ((x as f32 - 64.0).powi(2) + (y as f32 - 64.0).powi(2)).sqrt();
            (1.0 - r / 40.0).max(0.0) + 0.02 * ((x as f32 * 0.7).sin() * (y as f32 * 0.45).cos())
        })
        .unwrap()
    }

    fn island_params() -> DropletParams {
        DropletParams {
            droplets: 129 * 129,
            batch_size: 512,
            seed: 3,
            sea_level: Some(0.2),
            ..Default::default()
        }
    }

    /// Reference values of the conversion (Lague's defaults, one droplet per cell of 1025²).
    #[test]
    fn coarse_params_act_alike_per_metre() {
        let p = DropletParams { droplets: 1025 * 1025, deposit: 0.6, ..Default::default() };
        let c = CoarseDroplets::coarse_params(p, 2);
        assert_eq!((c.droplets, c.max_lifetime, c.radius, c.capacity), (262_656, 15, 1.5, 2.0));
        for (got, want) in [(c.erode, 0.51), (c.deposit, 0.84), (c.evaporate, 0.0199), (c.inertia, 0.0025)] {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
        assert_eq!(
            (c.min_capacity, c.gravity, c.batch_size, c.seed),
            (p.min_capacity, p.gravity, p.batch_size, p.seed)
        );
        let c4 = CoarseDroplets::coarse_params(DropletParams { droplets: 5, max_lifetime: 30, ..p }, 4);
        assert_eq!((c4.droplets, c4.max_lifetime, c4.radius), (1, 8, 1.0));
    }

    /// The map keeps its volume: the full-resolution change sums to 0 (to rounding) when the
    /// droplets stay a lattice step away from the border, as the bilinear weights of a lattice
    /// point sum to factor²; and the change is the coarse one prolonged (it is exact at the
    /// lattice points). Nothing is lost off the map. Same bytes on 1 and 2 threads.
    #[test]
    fn coarse_droplets_keep_the_volume_and_any_thread_count_gives_the_same_bytes() {
        let map = island();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let mut e = CoarseDroplets::new(&map, island_params(), 2).unwrap();
                e.run_one_step().unwrap();
                e
            })
        };
        let e = run(2);
        let start = super::super::to_f64(&map);
        let change: Vec<f64> =
            e.surface().as_slice().iter().zip(start.as_slice()).map(|(a, b)| a - b).collect();
        let moved: f64 = change.iter().map(|d| d.abs()).sum();
        assert!(moved > 1.0, "the droplets moved {moved}");
        assert!(change.iter().sum::<f64>().abs() < 1e-9 * moved, "net change {}", change.iter().sum::<f64>());
        assert_eq!(e.lost(), 0.0);
        for (cy, cx) in [(20, 30), (32, 32), (40, 25)] {
            let coarse_change = e.coarse.surface()[(cx, cy)] - e.coarse_before[(cx, cy)];
            assert_eq!(change[2 * cy * 129 + 2 * cx], coarse_change);
        }
        let bits =
            |e: &CoarseDroplets| e.surface().as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert!(bits(&run(1)) == bits(&e), "1 thread differs from 2");
    }

    /// Bad factors and maps too small for the coarse grid get one error naming the range.
    #[test]
    fn coarse_droplets_refuse_bad_factors_and_small_maps() {
        let map = island();
        for factor in [0, 1, 5] {
            let e = CoarseDroplets::new(&map, island_params(), factor).unwrap_err().to_string();
            assert!(e.contains("`coarse`") && e.contains("[2, 4]"), "{factor}: {e}");
        }
        let small = Heightmap::from_fn(8, 20, 1.0, |x, _| x as f32).unwrap();
        let e = CoarseDroplets::new(&small, island_params(), 4).unwrap_err().to_string();
        assert!(e.contains("at most 3 here"), "{e}");
    }

    /// The finiteness check of `run_iterations` reads the grid each step changed: the coarse
    /// one during the coarse steps, the full-resolution one from the step that refines on.
    /// No full-resolution eroder is built before a full-resolution step asks for it.
    #[test]
    fn the_stepped_surface_is_the_grid_the_step_changed() {
        let map = Heightmap::from_fn(17, 17, 1.0, |x, y| ((x * 7 + y * 3) % 11) as f32 * 0.1).unwrap();
        let mut e = CoarseToFine::new(&map, StreamPowerParams::default(), 2, 3).unwrap();
        let side = |e: &CoarseToFine| e.stepped_surface().width();
        assert_eq!(side(&e), 9);
        for (k, want) in [9, 9, 17, 17].into_iter().enumerate() {
            e.run_one_step().unwrap();
            assert_eq!(side(&e), want);
            assert_eq!(e.surface().width(), 17);
            // The full-resolution eroder exists from the first full-resolution step only.
            assert_eq!(e.fine.is_some(), k == 3, "after step {k}");
        }
    }

    /// Coarse steps that change nothing (no uplift, incision or diffusion) leave the map
    /// exactly as it was: the restriction's rounding to the coarse eroder's `f32` start is not
    /// taken for a change and prolonged (it was, by up to ~1e-8, until session 29).
    #[test]
    fn coarse_steps_that_change_nothing_leave_the_map_bit_for_bit() {
        let map =
            Heightmap::from_fn(33, 33, 1.0, |x, y| 0.3 + ((x * 7 + y * 3) % 11) as f32 * 0.0137).unwrap();
        let idle = StreamPowerParams { k: 0.0, uplift: 0.0, kd: 0.0, ..Default::default() };
        let mut e = CoarseToFine::new(&map, idle, 2, 3).unwrap();
        for _ in 0..3 {
            e.run_one_step().unwrap();
        }
        let start = super::super::to_f64(&map);
        let moved = e.surface().as_slice().iter().zip(start.as_slice()).filter(|(a, b)| a != b).count();
        assert_eq!(moved, 0, "{moved} cells moved");
        // The restriction is not f32-representable here, so the test can see the rounding.
        let restricted = restrict(&start, 2).unwrap();
        assert!(restricted.as_slice().iter().any(|&v| v != v as f32 as f64));
    }

    /// Restriction averages the fine cells around each lattice point; prolongation of a
    /// change that is linear in x and y reproduces it exactly at every fine cell (bilinear
    /// interpolation is exact on linear fields).
    #[test]
    fn restrict_averages_and_prolong_is_exact_on_linear_changes() {
        let fine = Grid::from_fn(9, 9, 1.0, |x, y| (x + 10 * y) as f64).unwrap();
        let coarse = restrict(&fine, 4).unwrap();
        assert_eq!((coarse.width(), coarse.height()), (3, 3));
        // (0, 0): cells x, y in 0..=2: mean x 1, mean y 1 → 11.
        assert_eq!(coarse[(0, 0)], 11.0);
        // (1, 1): cells 2..=6 → 4 + 40.
        assert_eq!(coarse[(1, 1)], 44.0);
        // (2, 2): lattice point 8 clamped, cells 6..=8 → 7 + 70.
        assert_eq!(coarse[(2, 2)], 77.0);
        let change = Grid::from_fn(3, 3, 4.0, |x, y| 0.5 * (4 * x) as f64 - 2.0 * (4 * y) as f64).unwrap();
        let mut out = Grid::filled(9, 9, 1.0, 0.0).unwrap();
        let fixed: Vec<bool> = (0..81).map(|i| i == 40).collect();
        prolong_add(&change, 4, &mut out, &fixed);
        for y in 0..9 {
            for x in 0..9 {
                let want = if (x, y) == (4, 4) { 0.0 } else { 0.5 * x as f64 - 2.0 * y as f64 };
                assert!((out[(x, y)] - want).abs() < 1e-12, "({x}, {y})");
            }
        }
    }

    /// The prolongation cell by cell, each cell's lattice points and weights from its own
    /// column (`x / f`, `x mod f`): the oracle of [`prolong_add`]'s walk `f` cells at a time.
    fn prolong_add_reference(change: &Grid<f64>, f: usize, fine: &mut Grid<f64>, fixed: &[bool]) {
        let (w, h, cw, ch) = (fine.width(), fine.height(), change.width(), change.height());
        let c = change.as_slice();
        let inv = 1.0 / f as f64;
        for y in 0..h {
            let (y0, ty) = (y / f, (y % f) as f64 * inv);
            let y1 = (y0 + 1).min(ch - 1);
            for x in 0..w {
                if !fixed.is_empty() && fixed[y * w + x] {
                    continue;
                }
                let (x0, tx) = (x / f, (x % f) as f64 * inv);
                let x1 = (x0 + 1).min(cw - 1);
                let top = c[y0 * cw + x0] * (1.0 - tx) + c[y0 * cw + x1] * tx;
                let bottom = c[y1 * cw + x0] * (1.0 - tx) + c[y1 * cw + x1] * tx;
                fine.as_mut_slice()[y * w + x] += top * (1.0 - ty) + bottom * ty;
            }
        }
    }

    #[test]
    fn prolongation_equals_the_cell_by_cell_formula_bit_for_bit() {
        for f in 2..=4 {
            // Sides that are and are not one more than a multiple of f (a last partial run).
            for (w, h) in [(4 * f + 1, 3 * f + 1), (4 * f + 3, 3 * f + 2), (2 * f + 1, 5 * f)] {
                let fine = Grid::from_fn(w, h, 1.0, |x, y| ((x * 31 + y * 17) % 23) as f64 * 0.31).unwrap();
                let coarse = restrict(&fine, f).unwrap();
                let change = coarse.map(|&v| (v * 7.3).sin() * 1e-3);
                let fixed: Vec<bool> = (0..w * h).map(|i| i % 7 == 3).collect();
                for fixed in [&[][..], &fixed[..]] {
                    let (mut a, mut b) = (fine.clone(), fine.clone());
                    prolong_add(&change, f, &mut a, fixed);
                    prolong_add_reference(&change, f, &mut b, fixed);
                    let bits = |g: &Grid<f64>| g.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&a), bits(&b), "factor {f}, {w}×{h}, fixed {}", fixed.len());
                    assert_ne!(bits(&a), bits(&fine), "factor {f}, {w}×{h}: nothing added");
                }
            }
        }
    }
}
