//! Stream-power fluvial erosion with uplift and hillslope diffusion, solved with Braun &
//! Willett's implicit O(n) scheme.

use rayon::prelude::*;
use terrasynth_noise::detmath::{self, pow};

use super::rates::RateFields;
use super::steps::STREAM_POWER;
use super::{Eroder, check_finite, to_f64};
use crate::hydro::{Routing, StreamPowerRouter, TreeCells};
use crate::step::params::check_number;
use crate::{Error, Grid, Heightmap, Result, memory};

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
    /// Deposition coefficient G (dimensionless, Yuan et al. 2019): sediment coming from
    /// upstream settles at rate `G·Qs/A`. 0 (default) = detachment-limited, no deposition;
    /// about 1 gives flat valley floors and fans. Range [0, 100].
    pub g: f64,
    /// Uplift and erodibility varying over the land ([`RateFields`]): `uplift` and `k` are
    /// then the fields' means. Default: uniform.
    pub rates: RateFields,
    /// Drainage area, in cells of the grid the step runs on, below which a cell's incision
    /// factor `F` is blended towards the mean `F` of its 3×3 neighbourhood: fully at one cell,
    /// less on a log scale, not at all from this area up. A rill one cell wide then cannot
    /// out-cut its neighbours, so hillslopes are not combed by one-cell rills
    /// ([`StreamPowerEroder`], step 3). 0 (default) = off; range [0, 1e6].
    pub hillslope_area: f64,
    /// Exponent γ of the aspect balance: every cell's `F` is multiplied by `b^γ`, with
    /// `b = max(|∂h/∂x|, |∂h/∂y|) / |∇h|` (1 on slopes facing along a grid axis, 1/√2 on the
    /// diagonals). It evens out which slope directions the grid's routing favours; its value
    /// is measured, not derived (docs/EROSION.md, "Hillslopes without the comb"). 0 (default)
    /// = off; range [-2, 2].
    pub aspect_balance: f64,
    /// Drainage area, in cells of the grid the eroder runs on, from which a river gets a
    /// flat floor planed beside it after the last step (see [`super::floodplain`]). 0
    /// (default) = no floodplains; range [0, 1e9].
    pub floodplain_area: f64,
    /// Flood depth, height units, that planes a river's floor where it drains
    /// `floodplain_area`; it grows downstream as `(A/floodplain_area)^0.4`. Range [0, 1e6];
    /// 0 = no floodplains.
    pub floodplain_depth: f64,
    /// Critical slope (height per unit of `dx`) of the talus rule (`critical-slope`): before
    /// the eroder's first step, every cell standing steeper than this above any other comes
    /// down to the lower envelope of the cones of this slope ([`super::talus`]); the failed
    /// material leaves with the rivers. Cells on gentler ground keep their heights. 0
    /// (default) = off; range [0, 1e6].
    pub critical_slope: f64,
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
            g: 0.0,
            rates: RateFields::default(),
            hillslope_area: 0.0,
            aspect_balance: 0.0,
            floodplain_area: 0.0,
            floodplain_depth: 0.0,
            critical_slope: 0.0,
        }
    }
}

const MAX_DIFFUSION_SUBSTEPS: f64 = 1000.0;

impl StreamPowerParams {
    /// Whether floodplains are planed after the last step: both `floodplain_area` and
    /// `floodplain_depth` above 0.
    pub fn floodplains(&self) -> bool {
        self.floodplain_area > 0.0 && self.floodplain_depth > 0.0
    }

    fn check(&self) -> Result<()> {
        // The recipe keys' ranges come from the `stream-power` step's specs (one source).
        for (name, v) in [
            ("k", self.k),
            ("m", self.m),
            ("n", self.n),
            ("uplift", self.uplift),
            ("kd", self.kd),
            ("dt", self.dt),
            ("g", self.g),
            ("hillslope-area", self.hillslope_area),
            ("aspect-balance", self.aspect_balance),
            ("floodplain-area", self.floodplain_area),
            ("floodplain-depth", self.floodplain_depth),
            ("critical-slope", self.critical_slope),
        ] {
            check_number(STREAM_POWER, name, v)?;
        }
        self.rates.check()?;
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
/// 1. uplift `h += U·dt` on every cell that is not base level (`U` per cell with
///    [`RateFields`], which also make `K` per cell);
/// 2. routing, stack and drainage area A ([`StreamPowerRouter`]), flowing across each
///    depression by its lowest pass (the basin graph of Cordonnier, Bovy & Braun 2019): ρ8
///    (Fairfield & Leymarie 1991) with a fresh draw per step by default, so the carved
///    valleys take every direction instead of the eight of D8; or D8;
/// 3. implicit incision in stack order (downstream first), with `F = K·dt·A^m / L^n` (shaped
///    first by the hillslope blend and the aspect balance when they are on:
///    [`StreamPowerParams::hillslope_area`], [`StreamPowerParams::aspect_balance`]) and the
///    receiver r already updated: for n = 1, `h ← (h + F·h_r)/(1 + F)`; otherwise Newton
///    iterations on `h − h_old + F·(h − h_r)^n = 0`. Cells not above their receiver (in a
///    lake) are not incised. Unconditionally stable for n = 1. With deposition (`g > 0`, Yuan
///    et al. 2019, "A new efficient method to solve the stream power law model taking into
///    account sediment deposition", JGR Earth Surface 124, eq. 4 and §3) the law gains
///    `+ (G/A)·∫_A (U − ∂h/∂t) dA`, the sediment flux from upstream settling, solved
///    exactly for n = 1 by elimination along the drainage tree (two sweeps,
///    [`StreamPowerEroder::solve_deposition`]), by relaxed passes otherwise
///    ([`StreamPowerEroder::deposit_and_incise`]);
/// 4. linear hillslope diffusion `Kd·∇²h`, explicit 5-point stencil, zero flux at the map
///    edge, base level fixed, sub-stepped for stability.
///
/// Base level: the map edges and the open sea, the cells below `sea_level` that join the edge
/// through such cells (at construction; [`base_level`]), or a mask given with
/// [`StreamPowerEroder::with_base_level`]; base cells never change. At steady
/// state (n = 1 or not) each cell sits `L·(U/(K·A^m))^(1/n)` above its receiver.
///
/// Deterministic: routing and diffusion are per-cell gathers (ρ8's draws hash the seed, the
/// step number and the cell); the solver runs the router's runs of whole trees in parallel,
/// each in stack order, so every cell sees the same values whatever the thread count.
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
    /// With deposition and n ≠ 1: the heights after uplift `h*` (reused buffer), each cell's
    /// sediment volume from upstream `S`, kept from step to step as the next first guess, and
    /// each pass's net sediment leaving each cell (reused buffer; see `deposit_and_incise`).
    deposit_from: Vec<f64>,
    sediment: Vec<f64>,
    outflow: Vec<f64>,
    /// With deposition and n = 1: the cells in stack order with what the solve reads and
    /// writes of each ([`Node`]), and each cell's place in the stack (reused buffers; see
    /// `solve_deposition`).
    nodes: Vec<Node>,
    places: Vec<u32>,
    /// With [`RateFields`]: each cell's uplift multiplier and erodibility multiplier (empty
    /// when uniform).
    uplift_factor: Vec<f64>,
    k_factor: Vec<f64>,
    /// `K·dt·A^m` for whole catchments of `c` < [`POWER_TABLE`] cells (`A = c·dx²`), computed
    /// by the first step (the parameters are fixed for the eroder's life).
    power_table: Vec<f64>,
    /// With a hillslope area or an aspect balance ([`StreamPowerEroder::balance_factors`]):
    /// the factors before they are blended (a buffer swapped with `scratch` each step), the
    /// blend's weight per whole number of cells below the hillslope area, and the balance's
    /// table of `(b²)^(γ/2)`.
    unblended: Option<Grid<f64>>,
    hillslope_weights: Vec<f64>,
    balance_table: Vec<f64>,
}

/// Steps of the aspect balance's table of `(b²)^(γ/2)` over `b²` in [1/2, 1]; `b²` is rounded
/// to the nearest step (an error under 1.3·10⁻⁴ in `b²`).
const BALANCE_STEPS: usize = 2048;

/// The default base level of `map`: its edge cells and, with `sea_level`, the open sea: the
/// cells below it that join the map's edge through cells below it (8-connected, as D8 flow
/// runs). A pocket below sea level inside the land is not sea: it is land in a hollow, which
/// the routing drains across its lowest pass like any depression. (Until session 41 every cell
/// below sea level was an outlet, so the land around an inland pocket eroded down towards it,
/// a fixed outlet below the sea, and the pocket grew into a closed basin: `highlands` at 513²,
/// seed 29, kept a fifth of its land in one, 25 m deep on average.)
pub(crate) fn base_level(map: &Heightmap, sea_level: Option<f64>) -> Vec<bool> {
    let (w, h) = (map.width(), map.height());
    let mut out = Vec::new();
    memory::resize_par(&mut out, w * h, false);
    // The edge first: rows in parallel (no division per cell to find the row and column).
    out.par_chunks_mut(w.max(1)).enumerate().for_each(|(y, row)| {
        if y == 0 || y + 1 == h {
            row.fill(true);
        } else {
            let last = row.len() - 1;
            (row[0], row[last]) = (true, true);
        }
    });
    if let Some(sea) = sea_level {
        open_sea(&mut out, map.as_slice(), sea, w, h);
    }
    out
}

/// Marks in `mask` (already true on the map's edge) every cell below `sea` that joins an edge
/// cell below it through such cells, 8-connected: a scan-line flood from the edge over a state
/// per cell (land, below the sea, open sea), each run of cells below the sea marked once, then
/// the rows above and below it (one column beyond each end, for the diagonals) searched for
/// runs not reached yet.
fn open_sea(mask: &mut [bool], z: &[f32], sea: f64, w: usize, h: usize) {
    const LAND: u8 = 0;
    const BELOW: u8 = 1;
    const OPEN: u8 = 2;
    if w == 0 || h == 0 {
        return;
    }
    let mut state: Vec<u8> = z.par_iter().map(|&v| if (v as f64) < sea { BELOW } else { LAND }).collect();
    let edge = (0..w).flat_map(|x| [(0, x), (h - 1, x)]).chain((0..h).flat_map(|y| [(y, 0), (y, w - 1)]));
    let mut pending: Vec<(usize, usize)> = edge.filter(|&(y, x)| state[y * w + x] == BELOW).collect();
    while let Some((y, x)) = pending.pop() {
        let row = &mut state[y * w..(y + 1) * w];
        if row[x] != BELOW {
            continue;
        }
        let (mut left, mut right) = (x, x);
        while left > 0 && row[left - 1] == BELOW {
            left -= 1;
        }
        while right + 1 < w && row[right + 1] == BELOW {
            right += 1;
        }
        row[left..=right].fill(OPEN);
        let (from, to) = (left.saturating_sub(1), (right + 1).min(w - 1));
        for ny in [y.wrapping_sub(1), y + 1] {
            if ny >= h {
                continue;
            }
            let mut in_run = false;
            for (nx, &s) in state[ny * w + from..=ny * w + to].iter().enumerate() {
                let open = s == BELOW;
                if open && !in_run {
                    pending.push((ny, from + nx));
                }
                in_run = open;
            }
        }
    }
    mask.par_iter_mut().zip(&state).for_each(|(m, &s)| *m |= s == OPEN);
}

/// The passes of [`StreamPowerEroder::deposit_and_incise`] stop when no height moves by more
/// than this times `1 + max|h|`: about one `f32` step (2^-23 ≈ 1.2e-7), the precision of the
/// map the step returns. (It was 1e-9 until session 10: the passes shrink the change about 5×
/// each, so 1e-9 took the 12 passes allowed at nearly every step, for digits the `f32` map
/// drops.)
pub const DEPOSITION_TOLERANCE: f64 = 1e-7;

/// Catchments of fewer cells than this take `A^m` from a table in [`StreamPowerEroder`]'s
/// factors (no `powf`).
const POWER_TABLE: usize = 4096;

/// `((a / cell) + 0.5) as usize` (the whole number of cells of area `a`) without the
/// division where it cannot matter: `a · (1/cell)` is within a few ulps of `a / cell`, so the
/// two round to the same whole number unless the quotient lies within 10⁻⁶ of a half (then,
/// and for quotients of 2³⁰ cells or more, the division decides, so the result is always the
/// division's).
#[inline]
fn whole_cells(a: f64, cell: f64, per_cell: f64) -> usize {
    match quick_cells(a, per_cell) {
        (whole, true) => whole as usize,
        _ => ((a / cell) + 0.5) as usize,
    }
}

/// The multiplication's whole number of cells of area `a` (`per_cell` = 1/cell), and whether
/// [`whole_cells`] may take it (a quotient below 2³⁰ and not within 10⁻⁶ of a half; never for
/// NaN or negative areas). `x = a · (1/cell)` is rounded to the nearest whole number by adding
/// and taking away 1.5·2⁵² (the sum's low mantissa bits are then that number), and the test is
/// on `x`'s distance to it: additions, an absolute value and comparisons, with no conversion
/// from a float, whose saturating `as i32` is a sequence per value on x86-64.
#[inline(always)]
fn quick_cells(a: f64, per_cell: f64) -> (i32, bool) {
    const SHIFT: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
    let x = a * per_cell;
    let shifted = x + SHIFT;
    // Exact (Sterbenz): x and its nearest whole number are within a half of each other.
    let off = x - (shifted - SHIFT);
    let whole = shifted.to_bits() as i32;
    (whole, (x >= 0.0) & (x < (1u64 << 30) as f64) & (off.abs() < 0.5 - 1e-6))
}

/// No entry of the factor table: the cell's factor is computed (see [`table_entries`]).
const NO_ENTRY: u32 = u32::MAX;

/// The factor table's entry of each cell of a block starting at cell `start`, from its drainage
/// area and receiver: `2·cells + diagonal` where [`quick_cells`] applies and the table holds the
/// area, else [`NO_ENTRY`] (the diagonal test of [`StreamPowerRouter::distance`] on the
/// receiver's offset: 1 or `width` is a side). Without a branch, on AVX2 lanes where the CPU has
/// them (the same entries: the arithmetic is exact or a comparison).
fn table_entries(area: &[f64], receivers: &[u32], start: u32, width: u32, per_cell: f64, entry: &mut [u32]) {
    use table_entries_portable as entries;
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn entries_avx2(
        area: &[f64],
        receivers: &[u32],
        start: u32,
        width: u32,
        per_cell: f64,
        entry: &mut [u32],
    ) {
        entries(area, receivers, start, width, per_cell, entry);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2 (checked just above).
        unsafe { entries_avx2(area, receivers, start, width, per_cell, entry) };
        return;
    }
    entries(area, receivers, start, width, per_cell, entry);
}

/// [`table_entries`] on any CPU (and its AVX2 version's test oracle).
#[inline(always)]
fn table_entries_portable(
    area: &[f64],
    receivers: &[u32],
    start: u32,
    width: u32,
    per_cell: f64,
    entry: &mut [u32],
) {
    for (k, ((e, &a), &r)) in entry.iter_mut().zip(area).zip(receivers).enumerate() {
        let (whole, quick) = quick_cells(a, per_cell);
        let fast = quick & (whole < POWER_TABLE as i32);
        let d = r.abs_diff(start + k as u32);
        let diagonal = u32::from((d != 1) & (d != width));
        *e = if fast { 2 * whole as u32 + diagonal } else { NO_ENTRY };
    }
}

/// At most this many Gauss–Seidel passes per step in [`StreamPowerEroder::deposit_and_incise`]
/// (n ≠ 1), and at most this many direct solves per step for n = 1.
pub const MAX_DEPOSITION_PASSES: usize = 12;

/// What a [`StreamPowerEroder`] of one size needs besides its heights and base level, checked:
/// the parameters, the memory its buffers will take and its rate fields. Made before the
/// heights are handed over, so that building the eroder cannot fail once they are.
pub(crate) struct Parts {
    params: StreamPowerParams,
    uplift_factor: Vec<f64>,
    k_factor: Vec<f64>,
    hillslope_weights: Vec<f64>,
}

impl Parts {
    /// Checks `params` and that the buffers of a `w × h` eroder fit in memory, and samples the
    /// rate fields on a grid whose cell `(X, Y)` is world cell `(X·step, Y·step)`.
    pub(crate) fn new(w: usize, h: usize, params: StreamPowerParams, step: usize) -> Result<Self> {
        params.check()?;
        // Heights and scratch (16), the mask (1), the router's padded heights, area,
        // receivers, stack, basins, directions and donors (30), the stack's pieces while it is
        // built (4), and its links around depressions (16 bytes each: counted as one per cell,
        // which rough terrain reaches; white noise has up to 4): about 72 bytes per cell, and
        // for deposition 60 more with n = 1 (a 56-byte node per cell and its place in the
        // stack) or 24 with n ≠ 1 (h* and two sums), 8 more per rate field, 8 more for the
        // hillslope blend's unblended factors.
        let rates = params.rates;
        let fields = 8 * (rates.has_uplift() as u64 + rates.has_rock() as u64);
        // The blend's weights say whether it runs (an area of at most one cell blends nothing).
        let hillslope_weights = hillslope_weights(params.hillslope_area);
        let blend = if hillslope_weights.is_empty() { 0 } else { 8 };
        let deposition = match (params.g > 0.0, params.n == 1.0) {
            (false, _) => 0,
            (true, true) => 60,
            (true, false) => 24,
        };
        // The floodplains' rivers (24 bytes each; every cell at worst, with a tiny area), the
        // cells near a floor and their mean HAND (12), and each cell's HAND (8, in the
        // hillslope blend's buffer when there is one).
        let floodplain = match (params.floodplains(), blend) {
            (false, _) => 0,
            (true, 0) => 44,
            (true, _) => 36,
        };
        // The talus rule's source of each cell (4), before the first step.
        let talus = if params.critical_slope > 0.0 { 4 } else { 0 };
        let per_cell = 72 + deposition + fields + blend + floodplain + talus;
        crate::memory::check_cells(w, h, per_cell, "stream power's buffers")?;
        let uplift_factor = if rates.has_uplift() { rates.uplift_factors(w, h, step)? } else { Vec::new() };
        let k_factor = if rates.has_rock() { rates.rock_factors(w, h, step)? } else { Vec::new() };
        Ok(Self { params, uplift_factor, k_factor, hillslope_weights })
    }

    /// The eroder on `surface` with base level `base` (both of the size given to [`Parts::new`]).
    fn assemble(self, surface: Grid<f64>, base: Vec<bool>) -> StreamPowerEroder {
        let Self { params, uplift_factor, k_factor, hillslope_weights } = self;
        debug_assert_eq!(base.len(), surface.len());
        // A copy written by the rayon threads (no size or memory check that could fail here:
        // `Parts::new` counted this buffer).
        let scratch = surface.par_map(|&v| v);
        StreamPowerEroder {
            scratch,
            surface,
            base,
            params,
            flow: StreamPowerRouter::default(),
            steps: 0,
            deposit_from: Vec::new(),
            sediment: Vec::new(),
            outflow: Vec::new(),
            nodes: Vec::new(),
            places: Vec::new(),
            uplift_factor,
            k_factor,
            power_table: Vec::new(),
            unblended: None,
            hillslope_weights,
            balance_table: balance_table(params.aspect_balance),
        }
    }
}

impl StreamPowerEroder {
    /// Starts from `map`. Errors on bad parameters or non-finite heights.
    pub fn new(map: &Heightmap, params: StreamPowerParams) -> Result<Self> {
        Self::with_grid_step(map, params, 1)
    }

    /// [`StreamPowerEroder::new`] on a grid whose cell `(X, Y)` is world cell `(X·step,
    /// Y·step)`, for the rate fields (a coarse grid of [`CoarseToFine`](super::CoarseToFine)).
    pub(crate) fn with_grid_step(map: &Heightmap, params: StreamPowerParams, step: usize) -> Result<Self> {
        let parts = Parts::new(map.width(), map.height(), params, step)?;
        check_finite(map)?;
        Ok(parts.assemble(to_f64(map), base_level(map, params.sea_level)))
    }

    /// [`StreamPowerEroder::new`] on a surface already in `f64` (every height an `f32` value)
    /// and its base-level mask, both moved in: the full-resolution eroder of
    /// [`CoarseToFine`](super::CoarseToFine) takes its prolonged map this way, without an `f32`
    /// copy, a second `f64` copy and a base level computed only to be replaced (about 13 bytes
    /// a cell of fresh pages). `parts` from [`Parts::new`] for this size: nothing here can fail.
    pub(crate) fn from_parts(parts: Parts, surface: Grid<f64>, base: Vec<bool>) -> Self {
        parts.assemble(surface, base)
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
        self.base = memory::to_vec_par(mask.as_slice());
        Ok(self)
    }

    /// The routing of the last step (receivers, stack, drainage area).
    pub fn flow(&self) -> &StreamPowerRouter {
        &self.flow
    }

    /// The per-cell factor `F = K·dt·A^m / L^n` of the step into the scratch buffer.
    fn factors(&mut self) {
        let StreamPowerParams { k, m, n, dt, dx, .. } = self.params;
        let flow = &self.flow;
        // F = K·dt·A^m / L^n per cell, in parallel (the same per-cell arithmetic whatever the
        // thread count); L is dx or dx·√2, so L^n takes two values.
        // Powers by `detmath::pow`, not the platform's libm: the same bits on every platform.
        let (side, diagonal) = (pow(dx, n), pow(dx * std::f64::consts::SQRT_2, n));
        // A is a whole number of cells: `A^m = cells^m · (dx²)^m`, looked up for the small
        // catchments that most cells have (a power per cell was about a tenth of a step).
        let cell = dx * dx;
        let scale = k * dt * pow(cell, m);
        if self.power_table.is_empty() {
            self.power_table = (0..POWER_TABLE).map(|c| pow(c as f64, m) * scale).collect();
        }
        let table = &self.power_table;
        let width = self.surface.width();
        let factor = self.scratch.as_mut_slice();
        let per_cell = 1.0 / cell;
        // `K·dt·A^m` and `L^n` of cell i with drainage area a.
        let parts = |i: usize, a: f64| {
            let ln = if flow.distance(i) == dx { side } else { diagonal };
            // A whole number of cells up to rounding: `+ 0.5` and a truncating cast give the
            // same number as `round`, which is a library call on x86-64 without SSE4.1 (1.4 %
            // of a run); the cast saturates, so a huge area takes the `powf` branch as before.
            let cells = whole_cells(a, cell, per_cell);
            let am = if cells < POWER_TABLE { table[cells] } else { k * dt * pow(a, m) };
            (am, ln)
        };
        // Two loops rather than a test per cell, which cost 5 % of a step.
        if self.k_factor.is_empty() {
            // `am / ln` of the tabled areas divided once per table entry (the same quotient,
            // bit for bit, as dividing per cell), side and diagonal side by side: entry
            // `2·cells + diagonal`.
            let both: Vec<f64> = table.iter().flat_map(|&t| [t / side, t / diagonal]).collect();
            let tabled = |i: usize, a: f64| {
                let cells = whole_cells(a, cell, per_cell);
                if cells < POWER_TABLE {
                    both[2 * cells + usize::from(flow.distance(i) != dx)]
                } else {
                    let (am, ln) = parts(i, a);
                    am / ln
                }
            };
            if width < 3 || factor.len() >= u32::MAX as usize {
                factor.par_iter_mut().zip(&flow.area).enumerate().for_each(|(i, (f, &a))| *f = tabled(i, a));
                return;
            }
            // Blocks of cells in two passes: first each cell's table entry, or none where
            // `whole_cells` needs its division (`quick_cells` does not apply) or the table
            // ends, in a loop without branches that runs on SIMD
            // lanes (the diagonal test of `distance` on the receivers' offsets: 1 or `width` is
            // a side); then the lookups, and `tabled` for the rest. The same entry as `tabled`
            // for every cell, so the same bits.
            const BLOCK: usize = 512;
            let receiver = &flow.receiver;
            factor.par_chunks_mut(BLOCK).zip(flow.area.par_chunks(BLOCK)).enumerate().for_each(
                |(b, (f, area))| {
                    let start = b * BLOCK;
                    let mut entry = [NO_ENTRY; BLOCK];
                    let receivers = &receiver[start..start + f.len()];
                    let entry = &mut entry[..f.len()];
                    table_entries(area, receivers, start as u32, width as u32, per_cell, entry);
                    for (k, ((f, &e), &a)) in f.iter_mut().zip(entry.iter()).zip(area).enumerate() {
                        *f = if e != NO_ENTRY { both[e as usize] } else { tabled(start + k, a) };
                    }
                },
            );
        } else {
            let rock = &self.k_factor;
            factor.par_iter_mut().zip(&flow.area).enumerate().for_each(|(i, (f, &a))| {
                let (am, ln) = parts(i, a);
                *f = am * rock[i] / ln;
            });
        }
    }

    /// The hillslope blend and the aspect balance of the step's factors (`hillslope_area`,
    /// `aspect_balance`; both off by default, and then this does nothing), on the cells that are
    /// not base level (base level, the map's edge among it, is never incised). Per cell, from
    /// the factors as [`Self::factors`] left them and the heights after uplift, rows in
    /// parallel: the same values on any thread count.
    ///
    /// The blend: a cell of `c` whole cells of drainage area below the hillslope area takes
    /// `F + t_c·(F̄ − F)`, `F̄` the mean of the 9 factors of its 3×3 neighbourhood (column
    /// sums of three rows, then three of them). The balance: `F·b^γ` with `b² = max(gx², gy²)
    /// / (gx² + gy²)` from central differences, `b^γ = (b²)^(γ/2)` from a table over
    /// `b²` in [1/2, 1] (no square root per cell).
    fn balance_factors(&mut self) {
        let (w, h) = (self.surface.width(), self.surface.height());
        let blend = !self.hillslope_weights.is_empty();
        if (!blend && self.balance_table.is_empty()) || w < 3 || h < 3 {
            return;
        }
        if blend {
            // The unblended factors move to `unblended` (kept from step to step) and the
            // scratch buffer receives the blended ones.
            let spare = match self.unblended.take() {
                Some(g) if g.same_size(&self.scratch) => g,
                _ => self.scratch.clone(),
            };
            self.unblended = Some(std::mem::replace(&mut self.scratch, spare));
        }
        let f0 = self.unblended.as_ref().map_or(&[][..], |g| g.as_slice());
        let (area, heights, base) = (&self.flow.area, self.surface.as_slice(), &self.base);
        let cell = self.params.dx * self.params.dx;
        let tables = BalanceTables::new(&self.hillslope_weights, &self.balance_table, cell);
        self.scratch.as_mut_slice().par_chunks_mut(w).enumerate().for_each_init(
            || vec![0.0f64; if blend { w } else { 0 }],
            |columns, (y, row)| {
                let start = y * w;
                if blend {
                    row.copy_from_slice(&f0[start..start + w]);
                }
                if y == 0 || y + 1 == h {
                    return;
                }
                if blend {
                    let (above, here, below) =
                        (&f0[start - w..start], &f0[start..start + w], &f0[start + w..start + 2 * w]);
                    for (((c, &a), &m), &b) in columns.iter_mut().zip(above).zip(here).zip(below) {
                        *c = a + m + b;
                    }
                }
                let rows = BalanceRow {
                    columns,
                    area: &area[start..start + w],
                    base: &base[start..start + w],
                    up: &heights[start - w..start],
                    mid: &heights[start..start + w],
                    down: &heights[start + w..start + 2 * w],
                };
                balance_row(&tables, &rows, row);
            },
        );
    }

    /// Detachment-limited incision (`g = 0`): one pass in stack order.
    fn incise(&mut self) {
        self.factors();
        self.balance_factors();
        let n = self.params.n;
        let flow = &self.flow;
        let factor = self.scratch.as_slice();
        let base = &self.base;
        let h = TreeCells::new(self.surface.as_mut_slice());
        flow.runs().par_iter().for_each(|run| {
            for &i in *run {
                let i = i as usize;
                let r = flow.receiver[i] as usize;
                if r == i || base[i] {
                    continue;
                }
                // SAFETY: a run holds whole trees: no other task touches `i` or its receiver.
                let (h0, hr) = unsafe { (h.get(i), h.get(r)) };
                if h0 <= hr {
                    continue;
                }
                let f = factor[i];
                let new = if n == 1.0 { (h0 + f * hr) / (1.0 + f) } else { newton(h0, hr, f, n) };
                // SAFETY: as above.
                unsafe { h.set(i, new) };
            }
        });
    }

    /// Incision with deposition (`g > 0`) for n ≠ 1, Yuan et al. 2019's implicit scheme
    /// solved by relaxed Gauss–Seidel passes (n = 1 is solved exactly by
    /// [`StreamPowerEroder::solve_deposition`]; these passes are its test oracle). With
    /// `h* = h_old + U·dt`, cell area `a = dx²`, drainage area `A` and `S` the net sediment
    /// volume from the cells strictly upstream (`Σ a·(h* − h)` over them, at least 0), each
    /// cell solves `h = h* − F·(h − h_r)^n + (G/A)·(a·(h* − h) + S)`, i.e. with
    /// `c = 1 + G·a/A` the detachment-limited equation towards the target
    /// `t = h* + G·S/(A·c)` with factor `F/c`: `t` if `t ≤ h_r` (a lake or flat fills up, no
    /// incision), else `(t + (F/c)·h_r)/(1 + F/c)` for n = 1 or Newton's method.
    ///
    /// `S` and `h` depend on each other in opposite directions (h on the receiver downstream,
    /// S on the donors upstream), so passes alternate: heights in stack order from the current
    /// `S`, then `S` accumulated from donors to receivers and relaxed,
    /// `S ← S + ω·(S_new − S)` with `ω = 2/(2 + G)` (plain substitution diverges for G above
    /// about 1). `S` starts from the previous step's (zero at first), and passes stop when no
    /// height moves by more than `tolerance·(1 + max|h|)` ([`DEPOSITION_TOLERANCE`] in a step),
    /// or after `max_passes` ([`MAX_DEPOSITION_PASSES`]). At steady state each cell sits
    /// `L·(U·(1 + G)/(K·A^m))^(1/n)` above its receiver (unit-tested on a strip).
    fn deposit_and_incise(&mut self, max_passes: usize, tolerance: f64) {
        self.factors();
        self.balance_factors();
        let StreamPowerParams { n, g, dx, .. } = self.params;
        let a = dx * dx;
        let omega = 2.0 / (2.0 + g);
        let flow = &self.flow;
        let factor = self.scratch.as_slice();
        let h = self.surface.as_mut_slice();
        let mut h_star = std::mem::take(&mut self.deposit_from);
        h_star.clear();
        h_star.extend_from_slice(h);
        let mut upstream = std::mem::take(&mut self.sediment);
        upstream.resize(h.len(), 0.0);
        let mut q = std::mem::take(&mut self.outflow);
        q.resize(h.len(), 0.0);
        let top = h.iter().fold(0.0f64, |t, v| t.max(v.abs()));
        let runs = flow.runs();
        let base = &self.base;
        for pass in 0..max_passes {
            let heights = TreeCells::new(h);
            let moved = runs
                .par_iter()
                .map(|run| {
                    let mut moved = 0.0f64;
                    for &i in *run {
                        let i = i as usize;
                        let r = flow.receiver[i] as usize;
                        if r == i || base[i] {
                            continue;
                        }
                        let area = flow.area[i];
                        let c = 1.0 + g * a / area;
                        let target = h_star[i] + g * upstream[i] / (area * c);
                        // SAFETY: a run holds whole trees: no other task touches `i` or `r`.
                        let (hi, hr) = unsafe { (heights.get(i), heights.get(r)) };
                        let new = if target <= hr {
                            target
                        } else {
                            let f = factor[i] / c;
                            if n == 1.0 { (target + f * hr) / (1.0 + f) } else { newton(target, hr, f, n) }
                        };
                        moved = moved.max((new - hi).abs());
                        // SAFETY: as above.
                        unsafe { heights.set(i, new) };
                    }
                    moved
                })
                .reduce(|| 0.0, f64::max);
            if pass > 0 && moved <= tolerance * (1.0 + top) {
                break;
            }
            // Net sediment leaving each cell (its own plus everything upstream), donors first.
            q.par_iter_mut().zip(h_star.par_iter().zip(h.par_iter())).for_each(|(qi, (&hs, &hi))| {
                *qi = a * (hs - hi);
            });
            flow.accumulate(&mut q);
            upstream.par_iter_mut().enumerate().for_each(|(i, s)| {
                let fresh = (q[i] - a * (h_star[i] - h[i])).max(0.0);
                *s += omega * (fresh - *s);
            });
        }
        self.deposit_from = h_star;
        self.sediment = upstream;
        self.outflow = q;
    }

    /// Incision with deposition for n = 1, solved exactly instead of by relaxed passes. With
    /// `n = 1` the equations of [`StreamPowerEroder::deposit_and_incise`] are linear once each
    /// cell's regime is fixed (incised, or filling: its target not above its receiver), and
    /// they couple cells only along the drainage tree: `h_i` depends on its receiver downstream
    /// and on `S_i`, the net sediment of its donors, upstream. Such a system is solved by
    /// elimination on the tree (Gaussian elimination ordered leaves first, as for a
    /// tridiagonal system), two sweeps per solve:
    /// 1. **donors first**: each donor's net sediment is an affine function of its receiver's
    ///    height, `Q_d = P_d + R_d·h_i`, so `S_i = ΣP_d + ΣR_d·h_i`, and cell i's equation
    ///    `h_i = w·(h*_i + γ·S_i) + (1 − w)·h_r` (`w = 1/(1 + F/c)`, or 1 if the cell fills;
    ///    `γ = G/(A·c)`) gives `h_i = α + β·h_r` with `α = w·(h*_i + γ·ΣP)/D`,
    ///    `β = (1 − w)/D`, `D = 1 − w·γ·ΣR ≥ 1` (every `R ≤ 0`); then
    ///    `Q_i = a·(h*_i − h_i) + S_i` is affine in `h_r` and is added to the receiver's sums;
    /// 2. **receivers first**: from the receiver's new height, the cell's regime and height:
    ///    it fills iff its filled height `(h*_i + γ·ΣP)/(1 − γ·ΣR)` is not above `h_r` (the
    ///    incised solution is then not above it either, and conversely), else
    ///    `h_i = α + β·h_r`.
    ///
    /// The clamp `S ≥ 0` of the relaxed passes never binds at the solution: a cell keeps
    /// `a·(h* − h) ≥ −a·γ·S` of its own, so `Q ≥ (1 − a·γ)·S ≥ 0`, donors first. Sweep 1
    /// guesses each cell's regime from its receiver's latest height (the uplifted one, then
    /// the last solve's); a cell whose regime turns out otherwise in sweep 2 sent wrong sums
    /// downstream, so its tree is solved again, alone, until no regime changes (an active-set
    /// iteration; at most [`MAX_DEPOSITION_PASSES`] solves). Trees depend on no other tree:
    /// the runs of whole trees ([`StreamPowerRouter::runs`]) are solved in parallel. Cells
    /// solved per cell and step: 1.02 on `highlands` and 1.10 on `eroded-island` at 1025², about
    /// 2–2.8 in the first steps from rough diamond-square noise (the hydro bench). The
    /// Gauss–Seidel passes it replaces for n = 1 shrank the error about 5× per pass and often
    /// stopped at their cap before [`DEPOSITION_TOLERANCE`].
    ///
    /// The sweeps run on a copy of each run laid out in stack order ([`Node`], [`solve_run`]):
    /// a cell's receiver is then usually a few nodes back, where indexing eight arrays by cell
    /// sent every sweep to scattered memory. Since session 42; one step with deposition at
    /// 4096² (the hydro bench) 5.1–5.4 → 1.9 s on one thread, 2.5–2.6 → 1.0 s on two.
    fn solve_deposition(&mut self) {
        self.factors();
        self.balance_factors();
        let StreamPowerParams { g, dx, .. } = self.params;
        let a = dx * dx;
        let flow = &self.flow;
        let base = &self.base;
        let len = flow.stack.len();
        // The sweeps visit the cells in stack order: they read and write each cell's values in
        // one node of a buffer laid out in that order, where a cell's receiver is usually a
        // few nodes back, instead of eight arrays indexed by cell (on large maps, most of a
        // solve's time went to waiting on those). Filled per run in parallel: each cell's place in
        // the stack, then its node (heights after uplift, `w`, `γ`, receiver's place), read
        // back into the surface after the solve. The same arithmetic in the same order as per
        // cell, so the same bits.
        let factor = self.scratch.as_slice();
        let mut nodes = std::mem::take(&mut self.nodes);
        memory::resize_par(&mut nodes, len, Node::default());
        let mut places = std::mem::take(&mut self.places);
        memory::resize_par(&mut places, len, 0);
        let runs = flow.runs();
        let mut pieces = Vec::with_capacity(runs.len());
        let mut rest = nodes.as_mut_slice();
        let mut first = 0usize;
        for run in &runs {
            let (here, after) = rest.split_at_mut(run.len());
            pieces.push((first, *run, here));
            first += run.len();
            rest = after;
        }
        let h = TreeCells::new(self.surface.as_mut_slice());
        let place = TreeCells::new(&mut places);
        pieces.into_par_iter().for_each(|(first, run, nodes)| {
            for (k, &i) in run.iter().enumerate() {
                // SAFETY: a run holds whole trees: no other task touches its cells.
                unsafe { place.set(i as usize, (first + k) as u32) };
            }
            for (node, &i) in nodes.iter_mut().zip(run) {
                let i = i as usize;
                let r = flow.receiver[i] as usize;
                let area = flow.area[i];
                let c = 1.0 + g * a / area;
                // SAFETY: as above (`r` is in the same run).
                let (height, receiver) = unsafe { (h.get(i), place.get(r) as usize - first) };
                *node = Node {
                    h_star: height,
                    height,
                    w: 1.0 / (1.0 + factor[i] / c),
                    gamma: g / (area * c),
                    p: 0.0,
                    q: 0.0,
                    receiver: receiver as u32,
                    root: r == i,
                    fixed: r == i || base[i],
                    fills: false,
                };
            }
            solve_run(nodes, a);
            for (node, &i) in nodes.iter().zip(run) {
                // SAFETY: as above.
                unsafe { h.set(i as usize, node.height) };
            }
        });
        self.nodes = nodes;
        self.places = places;
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
                let cells = |out: &mut [f64], from: usize| {
                    for (x, out) in out.iter_mut().enumerate().map(|(k, o)| (k + from, o)) {
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
                };
                if y == 0 || y + 1 == hgt || w < 3 {
                    cells(row, 0);
                    return;
                }
                // The inner cells of an inner row: all four neighbours exist (the same sums).
                let rows = DiffusionRows {
                    up: &h[(y - 1) * w..y * w],
                    mid: &h[y * w..(y + 1) * w],
                    down: &h[(y + 1) * w..(y + 2) * w],
                    base: &base[y * w..(y + 1) * w],
                };
                diffuse_inner(&rows, a, &mut row[1..w - 1]);
                cells(&mut row[..1], 0);
                cells(&mut row[w - 1..], w - 1);
            });
            std::mem::swap(&mut self.surface, &mut self.scratch);
        }
    }
}

/// One cell of [`StreamPowerEroder::solve_deposition`], in stack order: its heights after
/// uplift (`h*`) and in the solve, its weights `w` (incised) and `γ`, the sums `ΣP`, `ΣR` from
/// its donors, its receiver's place in the run, whether it is a root (its own receiver) or
/// fixed (a root or base level: never solved), and whether it fills.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    h_star: f64,
    height: f64,
    w: f64,
    gamma: f64,
    p: f64,
    q: f64,
    receiver: u32,
    root: bool,
    fixed: bool,
    fills: bool,
}

/// The solve of one run of whole trees laid out as [`Node`]s (receivers' places relative to
/// the run), see [`StreamPowerEroder::solve_deposition`]: both sweeps over the run, then each
/// tree where a cell changed regime again, alone, until none does (at most
/// [`MAX_DEPOSITION_PASSES`] solves).
fn solve_run(nodes: &mut [Node], a: f64) {
    let (mut dirty, mut again) = (Vec::new(), Vec::new());
    solve_nodes(nodes, 0, a, &mut dirty);
    for _ in 1..MAX_DEPOSITION_PASSES {
        if dirty.is_empty() {
            break;
        }
        for &(start, end) in &dirty {
            solve_nodes(&mut nodes[..end], start, a, &mut again);
        }
        std::mem::swap(&mut dirty, &mut again);
        again.clear();
    }
}

/// One solve of the whole trees `nodes[from..]` (their receivers' places index `nodes`);
/// pushes the ranges of the trees where a cell changed regime onto `dirty`.
fn solve_nodes(nodes: &mut [Node], from: usize, a: f64, dirty: &mut Vec<(usize, usize)>) {
    for node in &mut nodes[from..] {
        (node.p, node.q) = (0.0, 0.0);
    }
    // Donors first: each cell's affine sediment `Q = P + R·h_r` into its receiver.
    for k in (from..nodes.len()).rev() {
        let n = nodes[k];
        if n.fixed {
            continue;
        }
        let r = n.receiver as usize;
        let (p, q, hr, gamma) = (n.p, n.q, nodes[r].height, n.gamma);
        // The regime guessed from the receiver's latest height.
        let fills = (n.h_star + gamma * p) / (1.0 - gamma * q) <= hr;
        nodes[k].fills = fills;
        let w = if fills { 1.0 } else { n.w };
        let d = 1.0 - w * gamma * q;
        let (alpha, beta) = (w * (n.h_star + gamma * p) / d, (1.0 - w) / d);
        let to = &mut nodes[r];
        // Summed in the order of the per-cell formula (not `+=`): the same bits.
        to.p = to.p + a * n.h_star + p + (q - a) * alpha;
        to.q += (q - a) * beta;
    }
    // Receivers first: the heights, each cell's regime from its receiver's height.
    let (mut tree, mut changed) = (from, false);
    for k in from..nodes.len() {
        let n = nodes[k];
        if n.root {
            // A root starts the next tree.
            if changed {
                dirty.push((tree, k));
            }
            (tree, changed) = (k, false);
            continue;
        }
        if n.fixed {
            continue;
        }
        let hr = nodes[n.receiver as usize].height;
        // The cell fills iff its filled height is not above its receiver (then the incised
        // solution would not be above it either, and conversely).
        let (w, gamma, p, q) = (n.w, n.gamma, n.p, n.q);
        let filled = (n.h_star + gamma * p) / (1.0 - gamma * q);
        let fills = filled <= hr;
        let hi = if fills {
            filled
        } else {
            (w * (n.h_star + gamma * p) + (1.0 - w) * hr) / (1.0 - w * gamma * q)
        };
        changed |= fills != n.fills;
        (nodes[k].height, nodes[k].fills) = (hi, fills);
    }
    if changed {
        dirty.push((tree, nodes.len()));
    }
}

/// The tables of [`StreamPowerEroder::balance_factors`]: the blend's weights by whole cells of
/// drainage area (empty: no blend) and the balance's `(b²)^(γ/2)` by step of `b²` (empty: no
/// balance), with the cell area for the whole number of cells.
struct BalanceTables<'a> {
    weights: &'a [f64],
    balance: &'a [f64],
    cell: f64,
    per_cell: f64,
}

impl<'a> BalanceTables<'a> {
    fn new(weights: &'a [f64], balance: &'a [f64], cell: f64) -> Self {
        Self { weights, balance, cell, per_cell: 1.0 / cell }
    }
}

/// One inner row for [`balance_row`]: the column sums of the unblended factors over the rows
/// above, here and below (empty without the blend), the row's drainage areas and base-level
/// mask, and the heights of the three rows.
struct BalanceRow<'a> {
    columns: &'a [f64],
    area: &'a [f64],
    base: &'a [bool],
    up: &'a [f64],
    mid: &'a [f64],
    down: &'a [f64],
}

/// The blend and the balance of the inner cells `1..w − 1` of an inner row of factors `row`
/// (holding the unblended factors on entry), without a branch per cell, on AVX2 lanes where the
/// CPU has them: the same arithmetic as a loop per cell with its tests, so the same bits (test
/// `balanced_rows_equal_the_per_cell_loop`).
fn balance_row(t: &BalanceTables, rows: &BalanceRow, row: &mut [f64]) {
    match (t.weights.is_empty(), t.balance.is_empty()) {
        (false, false) => balance_row_on::<true, true>(t, rows, row),
        (false, true) => balance_row_on::<true, false>(t, rows, row),
        (true, false) => balance_row_on::<false, true>(t, rows, row),
        (true, true) => {}
    }
}

/// [`balance_row`] with the blend (`BLEND`) and the balance (`BALANCE`) on or off.
fn balance_row_on<const BLEND: bool, const BALANCE: bool>(
    t: &BalanceTables,
    rows: &BalanceRow,
    row: &mut [f64],
) {
    let w = row.len();
    if w < 3 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2 (checked just above).
        let done = unsafe { balance_lanes_avx2::<BLEND, BALANCE>(t, rows, row) };
        balance_cells::<BLEND, BALANCE>(t, rows, row, done..w - 1);
        return;
    }
    balance_cells::<BLEND, BALANCE>(t, rows, row, 1..w - 1);
}

/// The cells `range` of [`balance_row`], one at a time, with the tests of
/// [`StreamPowerEroder::balance_factors`]' description (its AVX2 version's oracle and tail).
fn balance_cells<const BLEND: bool, const BALANCE: bool>(
    t: &BalanceTables,
    rows: &BalanceRow,
    row: &mut [f64],
    range: std::ops::Range<usize>,
) {
    let (area, base, up, mid, down, columns) =
        (rows.area, rows.base, rows.up, rows.mid, rows.down, rows.columns);
    for x in range {
        if base[x] {
            continue;
        }
        if BLEND {
            let cells = whole_cells(area[x], t.cell, t.per_cell);
            if let Some(&weight) = t.weights.get(cells) {
                let mean = (columns[x - 1] + columns[x] + columns[x + 1]) / 9.0;
                row[x] += weight * (mean - row[x]);
            }
        }
        if BALANCE {
            let gx = mid[x + 1] - mid[x - 1];
            let gy = down[x] - up[x];
            let (xx, yy) = (gx * gx, gy * gy);
            let s2 = xx + yy;
            if s2 > 0.0 {
                // b² in [1/2, 1] onto the table's steps.
                let step = (xx.max(yy) / s2 - 0.5) * 2.0 * BALANCE_STEPS as f64;
                row[x] *= t.balance[((step + 0.5) as usize).min(BALANCE_STEPS)];
            }
        }
    }
}

/// The cells of [`balance_row`] four at a time from cell 1, as many as fit before the last:
/// each test computed on all four lanes and its outcome chosen per lane, the tables read by
/// gathers, groups of four base-level cells skipped (the sea, half of an island's map: about
/// half the loop's time), the same operations in the same order as [`balance_cells`] (no
/// fused multiply-add), so the same bits. A group where [`quick_cells`] does not apply goes to
/// [`balance_cells`]. Returns the first cell not done. (Four scalar loads instead of each
/// gather made no difference here.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn balance_lanes_avx2<const BLEND: bool, const BALANCE: bool>(
    t: &BalanceTables,
    rows: &BalanceRow,
    row: &mut [f64],
) -> usize {
    use std::arch::x86_64::*;
    let w = row.len();
    let (area, base, up, mid, down, columns) =
        (rows.area, rows.base, rows.up, rows.mid, rows.down, rows.columns);
    assert!(area.len() >= w && base.len() >= w && (!BLEND || columns.len() >= w));
    assert!(!BALANCE || (up.len() >= w && mid.len() >= w && down.len() >= w));
    assert!(
        !BALANCE || t.balance.len() == BALANCE_STEPS + 1,
        "the balance table has BALANCE_STEPS + 1 steps"
    );
    assert!(!BLEND || (!t.weights.is_empty() && t.weights.len() < i32::MAX as usize));
    const SHIFT: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52, as in `quick_cells`
    let mut x = 1;
    // SAFETY: every load and store is of cells x − 1 ..= x + 4 < w (the loop's condition) of
    // slices at least w long (asserted above); the gathers' indices are at most the last entry
    // of their tables (clamped in each lane).
    unsafe {
        let shift = _mm256_set1_pd(SHIFT);
        let per_cell = _mm256_set1_pd(t.per_cell);
        let zero = _mm256_setzero_pd();
        let limit = _mm256_set1_pd((1u64 << 30) as f64);
        let near_half = _mm256_set1_pd(0.5 - 1e-6);
        let sign = _mm256_set1_pd(-0.0);
        let nine = _mm256_set1_pd(9.0);
        let weights_len = _mm_set1_epi32(t.weights.len() as i32);
        let last_weight = _mm_set1_epi32(t.weights.len() as i32 - 1);
        let low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        let (half, two, top) =
            (_mm256_set1_pd(0.5), _mm256_set1_pd(2.0), _mm256_set1_pd(BALANCE_STEPS as f64));
        while x + 5 <= w {
            let held = [base[x] as u8, base[x + 1] as u8, base[x + 2] as u8, base[x + 3] as u8];
            if held == [1; 4] {
                // Four base-level cells (the sea, on an island) keep their factors: nothing to
                // compute or store.
                x += 4;
                continue;
            }
            let bytes = _mm_cvtsi32_si128(i32::from_le_bytes(held));
            let free =
                _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_cvtepu8_epi64(bytes), _mm256_setzero_si256()));
            let mut f = _mm256_loadu_pd(row.as_ptr().add(x));
            if BLEND {
                let a = _mm256_loadu_pd(area.as_ptr().add(x));
                let q = _mm256_mul_pd(a, per_cell);
                let shifted = _mm256_add_pd(q, shift);
                let off = _mm256_sub_pd(q, _mm256_sub_pd(shifted, shift));
                let quick = _mm256_and_pd(
                    _mm256_and_pd(
                        _mm256_cmp_pd::<_CMP_GE_OQ>(q, zero),
                        _mm256_cmp_pd::<_CMP_LT_OQ>(q, limit),
                    ),
                    _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_andnot_pd(sign, off), near_half),
                );
                if _mm256_movemask_pd(quick) != 0b1111 {
                    balance_cells::<BLEND, BALANCE>(t, rows, row, x..x + 4);
                    x += 4;
                    continue;
                }
                let whole = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                    _mm256_castpd_si256(shifted),
                    low_halves,
                ));
                let listed = _mm256_cvtepi32_epi64(_mm_cmplt_epi32(whole, weights_len));
                let weight = _mm256_i32gather_pd::<8>(t.weights.as_ptr(), _mm_min_epi32(whole, last_weight));
                let sum = _mm256_add_pd(
                    _mm256_add_pd(
                        _mm256_loadu_pd(columns.as_ptr().add(x - 1)),
                        _mm256_loadu_pd(columns.as_ptr().add(x)),
                    ),
                    _mm256_loadu_pd(columns.as_ptr().add(x + 1)),
                );
                let mean = _mm256_div_pd(sum, nine);
                let blended = _mm256_add_pd(f, _mm256_mul_pd(weight, _mm256_sub_pd(mean, f)));
                f = _mm256_blendv_pd(f, blended, _mm256_and_pd(free, _mm256_castsi256_pd(listed)));
            }
            if BALANCE {
                let gx = _mm256_sub_pd(
                    _mm256_loadu_pd(mid.as_ptr().add(x + 1)),
                    _mm256_loadu_pd(mid.as_ptr().add(x - 1)),
                );
                let gy =
                    _mm256_sub_pd(_mm256_loadu_pd(down.as_ptr().add(x)), _mm256_loadu_pd(up.as_ptr().add(x)));
                let (xx, yy) = (_mm256_mul_pd(gx, gx), _mm256_mul_pd(gy, gy));
                let s2 = _mm256_add_pd(xx, yy);
                // Where xx or yy is NaN, so is s2 and the lane keeps its factor: the max's NaN
                // rule does not matter.
                let ratio = _mm256_div_pd(_mm256_max_pd(xx, yy), s2);
                let step = _mm256_mul_pd(_mm256_mul_pd(_mm256_sub_pd(ratio, half), two), top);
                let step = _mm256_add_pd(step, half);
                // `as usize` of the scalar loop: NaN and negatives to 0, then at most the top.
                let step = _mm256_and_pd(_mm256_min_pd(step, top), _mm256_cmp_pd::<_CMP_GE_OQ>(step, zero));
                let k = _mm256_cvttpd_epi32(step);
                let b = _mm256_i32gather_pd::<8>(t.balance.as_ptr(), k);
                let balanced = _mm256_mul_pd(f, b);
                f = _mm256_blendv_pd(f, balanced, _mm256_and_pd(free, _mm256_cmp_pd::<_CMP_GT_OQ>(s2, zero)));
            }
            _mm256_storeu_pd(row.as_mut_ptr().add(x), f);
            x += 4;
        }
    }
    x
}

/// Three rows of heights and the middle row's base-level mask, for [`diffuse_inner`].
struct DiffusionRows<'a> {
    up: &'a [f64],
    mid: &'a [f64],
    down: &'a [f64],
    base: &'a [bool],
}

/// One explicit diffusion sub-step of the inner cells `1..w − 1` of a row into `out`
/// (`c + a·Σ(neighbour − c)` over the 4 sides; base-level cells keep their height), without a
/// branch, on AVX2 lanes where the CPU has them: the same sums in the same order, so the same
/// bits as a loop per cell.
fn diffuse_inner(rows: &DiffusionRows, a: f64, out: &mut [f64]) {
    #[inline(always)]
    fn inner(rows: &DiffusionRows, a: f64, out: &mut [f64]) {
        let n = out.len();
        let (up, mid, down, base) =
            (&rows.up[1..=n], &rows.mid[..n + 2], &rows.down[1..=n], &rows.base[1..=n]);
        for (x, o) in out.iter_mut().enumerate() {
            let c = mid[x + 1];
            let sum = (mid[x] - c) + (mid[x + 2] - c) + (up[x] - c) + (down[x] - c);
            let moved = c + a * sum;
            *o = if base[x] { c } else { moved };
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn inner_avx2(rows: &DiffusionRows, a: f64, out: &mut [f64]) {
        inner(rows, a, out);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2 (checked just above).
        unsafe { inner_avx2(rows, a, out) };
        return;
    }
    inner(rows, a, out);
}

/// The hillslope blend's weight for catchments of 0, 1, … cells below `hillslope_area`:
/// `1 − ln(c)/ln(hillslope_area)` (1 at one cell, 0 at the area), 1 for no cells; empty when
/// off (an area of at most one cell blends nothing).
fn hillslope_weights(hillslope_area: f64) -> Vec<f64> {
    if hillslope_area <= 1.0 {
        return Vec::new();
    }
    let top = hillslope_area.ceil() as usize;
    let ln_area = detmath::ln(hillslope_area);
    (0..top)
        .map(|c| if c <= 1 { 1.0 } else { (1.0 - detmath::ln(c as f64) / ln_area).clamp(0.0, 1.0) })
        .collect()
}

/// `(b²)^(γ/2)` at the aspect balance's [`BALANCE_STEPS`] + 1 even steps of `b²` over
/// [1/2, 1]; empty for γ = 0 (off).
fn balance_table(gamma: f64) -> Vec<f64> {
    if gamma == 0.0 {
        return Vec::new();
    }
    (0..=BALANCE_STEPS).map(|k| pow(0.5 + 0.5 * k as f64 / BALANCE_STEPS as f64, 0.5 * gamma)).collect()
}

/// Solves `x − h0 + f·(x − hr)^n = 0` for `x` in `(hr, h0]` by Newton's method started at h0.
fn newton(h0: f64, hr: f64, f: f64, n: f64) -> f64 {
    let mut x = h0;
    for _ in 0..100 {
        let d = x - hr;
        if d <= 0.0 {
            return hr;
        }
        let g = x - h0 + f * pow(d, n);
        let dg = 1.0 + f * n * pow(d, n - 1.0);
        let next = (x - g / dg).clamp(hr, h0);
        let done = (next - x).abs() <= 1e-12 * (1.0 + x.abs());
        x = next;
        if done {
            break;
        }
    }
    x
}

impl StreamPowerEroder {
    /// Steps 1 and 2 of a step: uplift, then the routing of the uplifted surface.
    fn uplift_and_route(&mut self) {
        let lift = self.params.uplift * self.params.dt;
        if lift != 0.0 && self.uplift_factor.is_empty() {
            self.surface.as_mut_slice().par_iter_mut().zip(&self.base).for_each(|(h, &b)| {
                if !b {
                    *h += lift;
                }
            });
        } else if lift != 0.0 {
            let cells = self.surface.as_mut_slice().par_iter_mut().zip(&self.base);
            cells.zip(&self.uplift_factor).for_each(|((h, &b), &u)| {
                if !b {
                    *h += lift * u;
                }
            });
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
    }
}

impl Eroder for StreamPowerEroder {
    fn run_one_step(&mut self) -> Result<()> {
        if self.steps == 0 && self.params.critical_slope > 0.0 {
            let (w, dx, critical) = (self.surface.width(), self.params.dx, self.params.critical_slope);
            super::talus::fail_steep_slopes(self.surface.as_mut_slice(), w, dx, critical, &self.base);
        }
        self.uplift_and_route();
        self.steps += 1;
        if self.params.g > 0.0 && self.params.n == 1.0 {
            self.solve_deposition()
        } else if self.params.g > 0.0 {
            self.deposit_and_incise(MAX_DEPOSITION_PASSES, DEPOSITION_TOLERANCE)
        } else {
            self.incise()
        }
        self.diffuse();
        Ok(())
    }

    fn surface(&self) -> &Grid<f64> {
        &self.surface
    }

    /// Planes the floodplains (`floodplain_area`, `floodplain_depth`) from the last step's
    /// routing; nothing when no step has run.
    fn finish(&mut self) {
        let StreamPowerParams { floodplain_area, floodplain_depth, dx, .. } = self.params;
        let n = self.surface.len();
        if !self.params.floodplains() || self.steps == 0 || self.flow.area.len() != n {
            return;
        }
        let per_cell = 1.0 / (dx * dx);
        let (area, width) = (&self.flow.area, self.surface.width());
        // The hillslope blend's buffer is free by now (and already in memory).
        let mut fresh = Vec::new();
        let hands = match self.unblended.as_mut() {
            Some(g) if g.len() == n => g.as_mut_slice(),
            _ => {
                fresh.resize(n, 0.0);
                &mut fresh[..]
            }
        };
        super::floodplain::plane(
            self.surface.as_mut_slice(),
            width,
            &self.flow.receiver,
            &self.flow.stack,
            |c| area[c] * per_cell,
            &self.base,
            floodplain_area,
            floodplain_depth,
            self.scratch.as_mut_slice(),
            hands,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The base level is the edge and the open sea: below-sea cells joined to the edge through
    /// below-sea cells (8-connected, so a diagonal joint counts), not a pocket below sea level
    /// inside the land; without a sea level, the edge alone.
    #[test]
    fn base_level_is_the_edge_and_the_open_sea_not_inland_pockets() {
        // 0 = below sea level, 1 = land. A bay from the west edge that turns and narrows to a
        // diagonal joint (rows 4–5), and a pocket (rows 2–3, columns 6–7) closed by land.
        let rows = [
            "1111111111",
            "1111111111",
            "1111110011",
            "0001110011",
            "1101111111",
            "1110011111",
            "1111001111",
            "1111111111",
        ];
        let (w, h) = (rows[0].len(), rows.len());
        let heights: Vec<f32> = rows.concat().bytes().map(|b| if b == b'0' { 0.0 } else { 1.0 }).collect();
        let map = Heightmap::from_vec(w, h, 1.0, heights).unwrap();
        let base = base_level(&map, Some(0.5));
        let expected: Vec<bool> = (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                let edge = x == 0 || y == 0 || x + 1 == w || y + 1 == h;
                let open_sea =
                    [(3, 0), (3, 1), (3, 2), (4, 2), (5, 3), (5, 4), (6, 4), (6, 5)].contains(&(y, x));
                edge || open_sea
            })
            .collect();
        assert_eq!(base, expected);
        let edge_only = base_level(&map, None);
        assert!(
            edge_only
                .iter()
                .enumerate()
                .all(|(i, &b)| b == (i % w == 0 || i / w == 0 || i % w == w - 1 || i / w == h - 1))
        );
    }

    /// [`whole_cells`] is the division's rounding for whole areas (sums of cell areas), areas
    /// a hair either side of a half cell, random areas and huge ones, on cell sizes whose
    /// reciprocal is and is not exact.
    #[test]
    fn whole_cells_equals_the_rounded_division() {
        let mut rng = terrasynth_noise::rng::SplitMix64::new(13);
        for dx in [1.0f64, 10.0, 40.0, 3.0, 0.1, 12.345] {
            let cell = dx * dx;
            let per_cell = 1.0 / cell;
            let mut areas: Vec<f64> = Vec::new();
            let mut sum = 0.0;
            for _ in 0..5000 {
                sum += cell;
                areas.push(sum);
            }
            for _ in 0..20000 {
                let half = (rng.below(5000) as f64 + 0.5) * cell;
                areas.extend([half, f64::from_bits(half.to_bits() + 1), f64::from_bits(half.to_bits() - 1)]);
                areas.push(rng.range_f64(0.0, 1e7) * cell);
            }
            areas.extend([0.0, 1e30, f64::MAX, (1u64 << 31) as f64 * cell, f64::NAN, f64::INFINITY]);
            for a in areas {
                assert_eq!(
                    whole_cells(a, cell, per_cell),
                    ((a / cell) + 0.5) as usize,
                    "a = {a}, cell = {cell}"
                );
            }
        }
    }

    /// The table entries on SIMD lanes (AVX2 where the CPU has it) equal the portable loop's, on
    /// areas whole, a hair either side of a half cell, beyond the table, huge, negative and NaN,
    /// with side, diagonal and own receivers; and an entry, where there is one, is the table
    /// row of the area's whole number of cells.
    #[test]
    fn table_entries_equal_the_portable_loop() {
        let mut rng = terrasynth_noise::rng::SplitMix64::new(29);
        for dx in [1.0f64, 10.0, 12.345] {
            let (cell, width) = (dx * dx, 37u32);
            let per_cell = 1.0 / cell;
            let n = 4000usize;
            let area: Vec<f64> = (0..n)
                .map(|i| match i % 7 {
                    0 => (rng.below(5000) + 1) as f64 * cell,
                    1 => f64::from_bits(((rng.below(4000) as f64 + 0.5) * cell).to_bits() + 1),
                    2 => f64::from_bits(((rng.below(4000) as f64 + 0.5) * cell).to_bits() - 1),
                    3 => rng.range_f64(0.0, 1e7) * cell,
                    4 => [f64::NAN, -cell, 1e30, f64::INFINITY, 0.0][rng.below(5) as usize],
                    _ => rng.range_f64(0.0, 5000.0) * cell,
                })
                .collect();
            let start = 100u32;
            let receivers: Vec<u32> = (0..n as u32)
                .map(|k| {
                    let i = start + k;
                    [i, i + 1, i - 1, i + width, i - width, i + width + 1, i - width - 1]
                        [rng.below(7) as usize]
                })
                .collect();
            let (mut simd, mut portable) = (vec![0u32; n], vec![0u32; n]);
            table_entries(&area, &receivers, start, width, per_cell, &mut simd);
            table_entries_portable(&area, &receivers, start, width, per_cell, &mut portable);
            assert_eq!(simd, portable, "dx = {dx}");
            for (k, &e) in simd.iter().enumerate() {
                if e != NO_ENTRY {
                    assert_eq!(e as usize / 2, whole_cells(area[k], cell, per_cell), "dx = {dx}, cell {k}");
                }
            }
            assert!(simd.iter().filter(|&&e| e != NO_ENTRY).count() > n / 3, "most areas have an entry");
        }
    }

    /// The blend and balance of a row on SIMD lanes equal the loop per cell with its tests,
    /// bit for bit: blend, balance and both, on rows of several lengths with base cells, flat
    /// spots (no gradient), areas that are whole, a hair either side of a half cell, past the
    /// blend's table and huge.
    #[test]
    fn balanced_rows_equal_the_per_cell_loop() {
        let mut rng = terrasynth_noise::rng::SplitMix64::new(37);
        let weights = hillslope_weights(30.0);
        let balance = balance_table(0.3);
        for cell in [100.0f64, 9.0, 152.399025] {
            for w in [3usize, 4, 5, 6, 9, 64, 517] {
                let mut heights = || -> Vec<f64> {
                    (0..w).map(|x| if x % 7 == 3 { 5.0 } else { rng.range_f64(-50.0, 900.0) }).collect()
                };
                let (up, mid, down) = (heights(), heights(), heights());
                let area: Vec<f64> = (0..w)
                    .map(|_| match rng.below(5) {
                        0 => rng.below(40) as f64 * cell,
                        1 => (rng.below(40) as f64 + 0.5) * cell,
                        2 => f64::from_bits(((rng.below(40) as f64 + 0.5) * cell).to_bits() + 1),
                        3 => rng.range_f64(1.0, 1e4) * cell,
                        _ => rng.range_f64(1.0, 5.0) * cell * (1u64 << 31) as f64,
                    })
                    .collect();
                // A run of base cells (the sea) in the first third, then scattered ones.
                let base: Vec<bool> = (0..w).map(|x| x < w / 3 || x % 5 == 2).collect();
                let columns: Vec<f64> = (0..w).map(|_| rng.range_f64(0.0, 3.0)).collect();
                let factors: Vec<f64> = (0..w).map(|_| rng.range_f64(0.0, 1.0)).collect();
                let rows = BalanceRow {
                    columns: &columns,
                    area: &area,
                    base: &base,
                    up: &up,
                    mid: &mid,
                    down: &down,
                };
                for (wt, bt) in
                    [(&weights[..], &balance[..]), (&weights[..], &[][..]), (&[][..], &balance[..])]
                {
                    let tables = BalanceTables::new(wt, bt, cell);
                    let mut got = factors.clone();
                    balance_row(&tables, &rows, &mut got);
                    let mut want = factors.clone();
                    match (wt.is_empty(), bt.is_empty()) {
                        (false, false) => balance_cells::<true, true>(&tables, &rows, &mut want, 1..w - 1),
                        (false, true) => balance_cells::<true, false>(&tables, &rows, &mut want, 1..w - 1),
                        _ => balance_cells::<false, true>(&tables, &rows, &mut want, 1..w - 1),
                    }
                    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&want), "w {w}, cell {cell}, blend {}", !wt.is_empty());
                    assert!(w < 9 || bits(&got) != bits(&factors), "w {w}: the row moved");
                }
            }
        }
    }

    /// The inner cells' diffusion on SIMD lanes equals the per-cell sum, bit for bit, with base
    /// cells held, on rows of several lengths.
    #[test]
    fn inner_diffusion_equals_the_per_cell_sum() {
        let mut rng = terrasynth_noise::rng::SplitMix64::new(31);
        for w in [3usize, 4, 9, 64, 517] {
            let mut row = || (0..w).map(|_| rng.range_f64(-50.0, 900.0)).collect::<Vec<f64>>();
            let (up, mid, down) = (row(), row(), row());
            let base: Vec<bool> = (0..w).map(|x| x % 5 == 2).collect();
            let a = 0.1875;
            let mut out = vec![0.0; w - 2];
            diffuse_inner(&DiffusionRows { up: &up, mid: &mid, down: &down, base: &base }, a, &mut out);
            for x in 1..w - 1 {
                let c = mid[x];
                let want = if base[x] {
                    c
                } else {
                    c + a * ((mid[x - 1] - c) + (mid[x + 1] - c) + (up[x] - c) + (down[x] - c))
                };
                assert_eq!(out[x - 1].to_bits(), want.to_bits(), "w {w}, x {x}");
            }
        }
    }

    /// The blocked factors equal the per-cell formula `K·dt·A^m / L^n` (the table for small
    /// whole catchments, `pow` beyond, `L` from the receiver's offset) bit for bit, on drainage
    /// areas that are whole, a hair either side of a half cell, random, beyond the table and
    /// huge, on maps wider and narrower than a block, with every receiver direction and
    /// outlets.
    #[test]
    fn blocked_factors_equal_the_per_cell_formula() {
        let mut rng = terrasynth_noise::rng::SplitMix64::new(29);
        for (w, h, dx, m, n) in
            [(37usize, 23usize, 40.0, 0.4, 1.0), (700, 3, 3.0, 0.5, 1.5), (2, 9, 10.0, 0.45, 1.0)]
        {
            let map = rough(w, h);
            let p = StreamPowerParams { dx, m, n, dt: 5.0, k: 0.2, ..Default::default() };
            let mut e = StreamPowerEroder::new(&map, p).unwrap();
            e.run_one_step().unwrap();
            let cell = dx * dx;
            for a in e.flow.area.iter_mut() {
                *a = match rng.below(5) {
                    0 => rng.below(6000) as f64 * cell,
                    1 => (rng.below(5000) as f64 + 0.5) * cell,
                    2 => f64::from_bits(((rng.below(5000) as f64 + 0.5) * cell).to_bits() + 1),
                    3 => rng.range_f64(1.0, 1e7) * cell,
                    _ => rng.range_f64(1.0, 5.0) * cell * (1u64 << 31) as f64,
                };
            }
            e.factors();
            let (side, diagonal) = (pow(dx, n), pow(dx * std::f64::consts::SQRT_2, n));
            for (i, (&got, &a)) in e.scratch.as_slice().iter().zip(&e.flow.area).enumerate() {
                let ln = if e.flow.distance(i) == dx { side } else { diagonal };
                let cells = ((a / cell) + 0.5) as usize;
                let want =
                    if cells < POWER_TABLE { e.power_table[cells] / ln } else { p.k * p.dt * pow(a, m) / ln };
                assert_eq!(got.to_bits(), want.to_bits(), "{w}×{h}, cell {i}, area {a}");
            }
        }
    }

    /// `critical_slope` fails the steep ground once, before the first step: the eroder with it
    /// equals, bit for bit over three steps, one without it started from the map the talus
    /// rule left (base level and sea included); the rule did lower cells, and a talus slope
    /// above every slope of the map changes nothing.
    #[test]
    fn talus_fails_steep_ground_before_the_first_step_only() {
        let map = rough(61, 47);
        let p = StreamPowerParams { dt: 5.0, sea_level: Some(0.35), dx: 2.0, ..Default::default() };
        let talus = StreamPowerParams { critical_slope: 0.05, ..p };
        let mut with = StreamPowerEroder::new(&map, talus).unwrap();
        let mut failed = with.surface.clone();
        let w = failed.width();
        let removed = super::super::talus::fail_steep_slopes(failed.as_mut_slice(), w, 2.0, 0.05, &with.base);
        assert!(removed > 0.0);
        let parts = Parts::new(failed.width(), failed.height(), p, 1).unwrap();
        let mut without = StreamPowerEroder::from_parts(parts, failed, with.base.clone());
        for _ in 0..3 {
            with.run_one_step().unwrap();
            without.run_one_step().unwrap();
            assert_eq!(with.surface.as_slice(), without.surface.as_slice());
        }
        let gentle = StreamPowerParams { critical_slope: 1e5, ..p };
        let (mut a, mut b) =
            (StreamPowerEroder::new(&map, gentle).unwrap(), StreamPowerEroder::new(&map, p).unwrap());
        a.run_one_step().unwrap();
        b.run_one_step().unwrap();
        assert_eq!(a.surface.as_slice(), b.surface.as_slice());
    }

    /// A rough relief in [0, 1]: sines plus a hashed jitter, so it has pits, flats' edges and
    /// depressions that fill.
    fn rough(w: usize, h: usize) -> Heightmap {
        Heightmap::from_fn(w, h, 1.0, |x, y| {
            let (u, v) = (x as f64 / w as f64, y as f64 / h as f64);
            let smooth = 0.5 + 0.25 * (u * 9.0).sin() * (v * 7.0 + 1.0).cos() + 0.15 * (u * v * 23.0).sin();
            let jitter = ((x * 7919 + y * 104_729) % 1013) as f64 / 1013.0;
            (smooth + 0.3 * jitter) as f32
        })
        .unwrap()
    }

    /// The direct deposition solve (n = 1) lands on the fixed point the relaxed Gauss–Seidel
    /// passes converge to, run to 1e-13 with up to 2000 passes: the same equations, one
    /// solved exactly, one iteratively. Checked at each of 13 steps of evolution (pits that
    /// fill, a sea), for G = 0.5, 1 and 4.
    #[test]
    fn direct_deposition_solve_matches_converged_passes() {
        let map = rough(57, 43);
        for g in [0.5, 1.0, 4.0] {
            let p = StreamPowerParams { g, dt: 5.0, sea_level: Some(0.3), ..Default::default() };
            let mut e = StreamPowerEroder::new(&map, p).unwrap();
            let mut filled = 0;
            for step in 0..13 {
                e.uplift_and_route();
                e.steps += 1;
                let mut relaxed = e.clone();
                relaxed.deposit_and_incise(2000, 1e-13);
                e.solve_deposition();
                filled += e.nodes.iter().filter(|n| n.fills && !n.fixed).count();
                let worst = e
                    .surface
                    .as_slice()
                    .iter()
                    .zip(relaxed.surface.as_slice())
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(worst < 1e-9, "G {g}, step {step}: direct and relaxed differ by {worst}");
                e.diffuse();
            }
            // The rough map's pits fill during the first steps: both regimes were solved.
            assert!(filled > 20, "G {g}: only {filled} filling cells");
        }
    }
}
