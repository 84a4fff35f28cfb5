//! Stream-power fluvial erosion with uplift and hillslope diffusion, solved with Braun &
//! Willett's implicit O(n) scheme.

use rayon::prelude::*;

use super::steps::STREAM_POWER;
use super::{Eroder, check_finite, to_f64};
use crate::hydro::{Routing, StreamPowerRouter};
use crate::step::params::check_number;
use crate::{Error, Grid, Heightmap, Result};

/// Parameters of [`StreamPowerEroder`]. Units: heights in height units (metres if the map is),
/// lengths in the unit of `dx`, time in the unit of `dt`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamPowerParams {
    /// Erodibility K (units length^(1−2m)/time for n = 1). Default 0.2; range [0, 1e6].
    pub k: f64,
    /// Drainage-area exponent m. Default 0.4; range [0, 2].
    pub m: f64,
    /// Slope exponent n; n ≠ 1 is solved by Newton iteration. Default 1; range [0.5, 4].
    pub n: f64,
    /// Uplift rate U, height per unit time, applied to every cell except base level.
    /// Default 0.005; range [0, 1e6].
    pub uplift: f64,
    /// Time step. Default 1; range (0, 1e9].
    pub dt: f64,
    /// Hillslope diffusivity Kd (length²/time), explicit, sub-stepped for stability
    /// (`Kd·dt/dx² ≤ 0.2` per sub-step, at most 1000 sub-steps). Default 0.01; range [0, 1e6].
    pub kd: f64,
    /// Cell spacing dx. Default 1 (lengths in cells); range (0, 1e9].
    pub dx: f64,
    /// Cells below this height are base level (sea), besides the map edges. Default: none.
    pub sea_level: Option<f64>,
    /// How each step routes the flow: [`Routing::Rho8`] (default; valleys in every direction)
    /// or [`Routing::D8`] (deterministic steepest descent; valleys along the grid).
    pub routing: Routing,
    /// Seed of ρ8's draws (a new stream per step). Default 0; unused by D8.
    pub seed: u64,
}

impl Default for StreamPowerParams {
    fn default() -> Self {
        Self {
            k: 0.2,
            m: 0.4,
            n: 1.0,
            uplift: 0.005,
            dt: 1.0,
            kd: 0.01,
            dx: 1.0,
            sea_level: None,
            routing: Routing::Rho8,
            seed: 0,
        }
    }
}

const MAX_DIFFUSION_SUBSTEPS: f64 = 1000.0;

impl StreamPowerParams {
    fn check(&self) -> Result<()> {
        // The recipe keys' ranges come from the `stream-power` step's specs (one source).
        for (name, v) in [
            ("k", self.k),
            ("m", self.m),
            ("n", self.n),
            ("uplift", self.uplift),
            ("kd", self.kd),
            ("dt", self.dt),
        ] {
            check_number(STREAM_POWER, name, v)?;
        }
        if !(self.dx.is_finite() && self.dx > 0.0 && self.dx <= 1e9) {
            return Err(Error::param("dx", self.dx, "a number in (0, 1e9]"));
        }
        if let Some(s) = self.sea_level
            && !s.is_finite()
        {
            return Err(Error::param("sea-level", s, "a finite number"));
        }
        let ratio = self.kd * self.dt / (self.dx * self.dx);
        if ratio > 0.2 * MAX_DIFFUSION_SUBSTEPS {
            return Err(Error::param(
                "kd",
                self.kd,
                format!("kd·dt/dx² ≤ {} (here {ratio}); lower kd or dt", 0.2 * MAX_DIFFUSION_SUBSTEPS),
            ));
        }
        Ok(())
    }
}

/// Stream-power landscape evolution (Braun & Willett 2013; research notes §4a):
/// `∂h/∂t = U − K·A^m·S^n + Kd·∇²h`.
///
/// One step (`dt`):
/// 1. uplift `h += U·dt` on every cell that is not base level;
/// 2. routing, stack and drainage area A ([`StreamPowerRouter`]), flowing across depressions:
///    ρ8 (Fairfield & Leymarie 1991) with a fresh draw per step by default, so the carved
///    valleys take every direction instead of the eight of D8; or D8;
/// 3. implicit incision in stack order (downstream first), with `F = K·dt·A^m / L^n` and the
///    receiver r already updated: for n = 1, `h ← (h + F·h_r)/(1 + F)`; otherwise Newton
///    iterations on `h − h_old + F·(h − h_r)^n = 0`. Cells not above their receiver (in a
///    lake) are not incised. Unconditionally stable for n = 1;
/// 4. linear hillslope diffusion `Kd·∇²h`, explicit 5-point stencil, zero flux at the map
///    edge, base level fixed, sub-stepped for stability.
///
/// Base level: the map edges and the cells below `sea_level` (at construction), or a mask
/// given with [`StreamPowerEroder::with_base_level`]; base cells never change. At steady
/// state (n = 1 or not) each cell sits `L·(U/(K·A^m))^(1/n)` above its receiver.
///
/// Deterministic: routing and diffusion are per-cell gathers (ρ8's draws hash the seed, the
/// step number and the cell), the solver is sequential.
#[derive(Clone, Debug)]
pub struct StreamPowerEroder {
    surface: Grid<f64>,
    base: Vec<bool>,
    params: StreamPowerParams,
    flow: StreamPowerRouter,
    /// Diffusion's second buffer; during incision it holds the per-cell factor
    /// `K·dt·A^m / L^n` of the step (one f64 array fewer).
    scratch: Grid<f64>,
    /// Steps run so far (ρ8 draws a new stream per step).
    steps: u64,
}

impl StreamPowerEroder {
    /// Starts from `map`. Errors on bad parameters or non-finite heights.
    pub fn new(map: &Heightmap, params: StreamPowerParams) -> Result<Self> {
        params.check()?;
        check_finite(map)?;
        let (w, h) = (map.width(), map.height());
        // Heights, areas and the router's queues and receivers: about 40 bytes per cell.
        crate::memory::check_cells(w, h, 40, "stream power's buffers")?;
        let base = map
            .as_slice()
            .iter()
            .enumerate()
            .map(|(i, &z)| {
                let (x, y) = (i % w, i / w);
                let edge = x == 0 || y == 0 || x + 1 == w || y + 1 == h;
                edge || params.sea_level.is_some_and(|s| (z as f64) < s)
            })
            .collect();
        let surface = to_f64(map);
        Ok(Self {
            scratch: surface.clone(),
            surface,
            base,
            params,
            flow: StreamPowerRouter::default(),
            steps: 0,
        })
    }

    /// Replaces the base-level mask (`true` = outlet, fixed height).
    pub fn with_base_level(mut self, mask: &Grid<bool>) -> Result<Self> {
        if !mask.same_size(&self.surface) {
            return Err(Error::SizeMismatch {
                what: "base-level mask".into(),
                expected_w: self.surface.width(),
                expected_h: self.surface.height(),
                got_w: mask.width(),
                got_h: mask.height(),
            });
        }
        self.base = mask.as_slice().to_vec();
        Ok(self)
    }

    /// The routing of the last step (receivers, stack, drainage area).
    pub fn flow(&self) -> &StreamPowerRouter {
        &self.flow
    }

    fn incise(&mut self) {
        let StreamPowerParams { k, m, n, dt, dx, .. } = self.params;
        let flow = &self.flow;
        // F = K·dt·A^m / L^n per cell, in parallel (the same per-cell arithmetic whatever the
        // thread count); L is dx or dx·√2, so L^n takes two values.
        let (side, diagonal) = (dx.powf(n), (dx * std::f64::consts::SQRT_2).powf(n));
        let factor = self.scratch.as_mut_slice();
        factor.par_iter_mut().zip(&flow.area).enumerate().for_each(|(i, (f, &a))| {
            let ln = if flow.distance(i) == dx { side } else { diagonal };
            *f = k * dt * a.powf(m) / ln;
        });
        let factor = self.scratch.as_slice();
        let h = self.surface.as_mut_slice();
        for &i in &flow.stack {
            let i = i as usize;
            let r = flow.receiver[i] as usize;
            if r == i || self.base[i] {
                continue;
            }
            let hr = h[r];
            let h0 = h[i];
            if h0 <= hr {
                continue;
            }
            let f = factor[i];
            h[i] = if n == 1.0 { (h0 + f * hr) / (1.0 + f) } else { newton(h0, hr, f, n) };
        }
    }

    fn diffuse(&mut self) {
        let StreamPowerParams { kd, dt, dx, .. } = self.params;
        if kd == 0.0 {
            return;
        }
        let ratio = kd * dt / (dx * dx);
        let substeps = (ratio / 0.2).ceil().max(1.0) as usize;
        let a = ratio / substeps as f64;
        let (w, hgt) = (self.surface.width(), self.surface.height());
        let base = &self.base;
        for _ in 0..substeps {
            let h = self.surface.as_slice();
            self.scratch.as_mut_slice().par_chunks_mut(w).enumerate().for_each(|(y, row)| {
                for (x, out) in row.iter_mut().enumerate() {
                    let i = y * w + x;
                    let c = h[i];
                    if base[i] {
                        *out = c;
                        continue;
                    }
                    let left = if x > 0 { h[i - 1] } else { c };
                    let right = if x + 1 < w { h[i + 1] } else { c };
                    let up = if y > 0 { h[i - w] } else { c };
                    let down = if y + 1 < hgt { h[i + w] } else { c };
                    *out = c + a * ((left - c) + (right - c) + (up - c) + (down - c));
                }
            });
            std::mem::swap(&mut self.surface, &mut self.scratch);
        }
    }
}

/// Solves `x − h0 + f·(x − hr)^n = 0` for `x` in `(hr, h0]` by Newton's method started at h0.
fn newton(h0: f64, hr: f64, f: f64, n: f64) -> f64 {
    let mut x = h0;
    for _ in 0..100 {
        let d = x - hr;
        if d <= 0.0 {
            return hr;
        }
        let g = x - h0 + f * d.powf(n);
        let dg = 1.0 + f * n * d.powf(n - 1.0);
        let next = (x - g / dg).clamp(hr, h0);
        let done = (next - x).abs() <= 1e-12 * (1.0 + x.abs());
        x = next;
        if done {
            break;
        }
    }
    x
}

impl Eroder for StreamPowerEroder {
    fn run_one_step(&mut self) -> Result<()> {
        let lift = self.params.uplift * self.params.dt;
        if lift != 0.0 {
            for (h, &b) in self.surface.as_mut_slice().iter_mut().zip(&self.base) {
                if !b {
                    *h += lift;
                }
            }
        }
        let (w, h) = (self.surface.width(), self.surface.height());
        let (heights, dx) = (self.surface.as_slice(), self.params.dx);
        match self.params.routing {
            Routing::D8 => self.flow.compute(heights, w, h, dx, &self.base),
            Routing::Rho8 => {
                let seed = terrasynth_noise::rng::derive_seed(self.params.seed, self.steps);
                self.flow.compute_rho8(heights, w, h, dx, &self.base, seed);
            }
        }
        self.steps += 1;
        self.incise();
        self.diffuse();
        Ok(())
    }

    fn surface(&self) -> &Grid<f64> {
        &self.surface
    }
}
