//! Recipe steps for the erosions: parameter specs, registry entries, and [`build_eroder`].

use super::exchange::colours;
use super::multiscale::fits_coarse_grid;
use super::run::run_iterations;
use super::{
    CoarseDroplets, CoarseToFine, DropletEroder, DropletParams, Eroder, HydraulicEroder,
    HydraulicOlsenEroder, HydraulicOlsenParams, HydraulicParams, OlsenEroder, RateFields, StreamPowerEroder,
    StreamPowerParams, Sweep, ThermalEroder, ThermalOlsenEroder, ThermalOlsenParams, ThermalParams,
    WorldDropletEroder, talus_from_k, write_surface,
};
use crate::grid::{Boundary, Neighbourhood};
use crate::hydro::Routing;
use crate::step::params::{Choice, ParamField, choice_enum};
use crate::step::{Category, Frame, IterationHook, Reach, Step, StepContext, StepInfo, Terrain, WorldFrame};
use crate::step::{DefaultValue, ParamKind, ParamSpec, Params};
use crate::{Error, Heightmap, Result};

const fn float(
    name: &'static str,
    label: &'static str,
    min: f64,
    max: f64,
    default: f64,
    unit: &'static str,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        label,
        kind: ParamKind::Float { min, max },
        default: DefaultValue::Number(default),
        unit,
        doc,
    }
}

const fn int(
    name: &'static str,
    label: &'static str,
    min: i64,
    max: i64,
    default: f64,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        label,
        kind: ParamKind::Int { min, max: max as u64 },
        default: DefaultValue::Number(default),
        unit: "",
        doc,
    }
}

const fn iterations(default: f64) -> ParamSpec {
    int(
        "iterations",
        "Iterations",
        0,
        1_000_000,
        default,
        "Iterations (sweeps, droplet rounds or time steps) to run.",
    )
}

const fn neighbourhood(default: &'static str) -> ParamSpec {
    ParamSpec {
        name: "neighbourhood",
        label: "Neighbourhood",
        kind: ParamKind::Choice(Neighbourhood::NAMES),
        default: DefaultValue::Text(default),
        unit: "",
        doc: "Cells exchanging material: moore (8), von-neumann (4 axis), rotated-von-neumann (4 diagonal).",
    }
}

const BOUNDARY: ParamSpec = ParamSpec {
    name: "boundary",
    label: "Edges",
    kind: ParamKind::Choice(Boundary::NAMES),
    default: DefaultValue::Text("closed"),
    unit: "",
    doc: "closed: edges have fewer neighbours; wrap: toroidal, as in Olsen 2004 (for tileable maps).",
};

const fn talus_k(default: f64) -> ParamSpec {
    float(
        "talus-k",
        "Talus threshold k",
        0.0,
        1000.0,
        default,
        "",
        "Talus threshold T = k/N × (height range), N = the longer side in cells (Olsen's T = k/N on a [0, 1] map).",
    )
}

/// `talus-slope`: the talus of a world recipe, where `talus-k` (relative to the map's size and
/// height range) has no meaning.
const TALUS_SLOPE: ParamSpec = ParamSpec {
    name: "talus-slope",
    label: "Talus slope",
    kind: ParamKind::Float { min: 0.0, max: 100.0 },
    default: DefaultValue::Absent,
    unit: "m/m",
    doc: "World recipes only (and required there): talus as a slope, T = talus-slope × cell-size \
          metres per cell, in place of `talus-k`. Olsen's k/N on a [0, 1] map of N = 512 cells \
          read as 2,000 m of relief over 30 m cells: k = 4 gives 0.52, k = 16 gives 2.1.",
};

/// The `thermal` step's parameters; the eroder's constructor checks the same ranges.
pub(crate) const THERMAL: &[ParamSpec] = &[
    iterations(50.0),
    talus_k(4.0),
    float(
        "c",
        "Share moved",
        0.001,
        1.0,
        0.5,
        "",
        "Fraction of the excess d_max − T moved per iteration (Olsen: 0.5).",
    ),
    neighbourhood("moore"),
    BOUNDARY,
    TALUS_SLOPE,
];

/// `sweep`: how Olsen's fast erosions visit the cells ([`Sweep`]).
const SWEEP: ParamSpec = ParamSpec {
    name: "sweep",
    label: "Visit order",
    kind: ParamKind::Choice(Sweep::NAMES),
    default: DefaultValue::Text("coloured"),
    unit: "",
    doc: "coloured: exchange passes by cell colour (no visit order, no streaks, parallel, world-exact); \
          in-place: Olsen 2004 as published, one row-major sweep changing the map at once (a \
          directional bias; not in world recipes).",
};

const THERMAL_OLSEN: &[ParamSpec] =
    &[iterations(50.0), talus_k(4.0), neighbourhood("rotated-von-neumann"), BOUNDARY, TALUS_SLOPE, SWEEP];

const OLSEN: &[ParamSpec] =
    &[iterations(50.0), talus_k(16.0), neighbourhood("von-neumann"), BOUNDARY, TALUS_SLOPE, SWEEP];

const KR: ParamSpec =
    float("kr", "Rain per iteration", 0.0, 1.0, 0.01, "height", "Rain added to every cell per iteration.");
const KE: ParamSpec =
    float("ke", "Evaporation", 0.0, 1.0, 0.5, "", "Fraction of the water evaporating per iteration.");
const KC: ParamSpec =
    float("kc", "Sediment capacity", 0.0, 1.0, 0.01, "", "Sediment capacity per unit of water.");

/// The `hydraulic` step's parameters; the eroder's constructor checks the same ranges.
pub(crate) const HYDRAULIC: &[ParamSpec] = &[
    iterations(100.0),
    KR,
    float("ks", "Dissolving rate", 0.0, 1.0, 0.01, "", "Height dissolved per unit of water per iteration."),
    KE,
    KC,
    neighbourhood("moore"),
    BOUNDARY,
];

const HYDRAULIC_OLSEN: &[ParamSpec] =
    &[iterations(100.0), KR, KE, KC, neighbourhood("von-neumann"), BOUNDARY, SWEEP];

/// The `droplets` step's parameters; the eroder's constructor checks the same ranges.
pub(crate) const DROPLETS: &[ParamSpec] = &[
    iterations(1.0),
    ParamSpec {
        name: "droplets",
        label: "Droplets",
        kind: ParamKind::Int { min: 1, max: 100_000_000 },
        default: DefaultValue::Absent,
        unit: "",
        doc: "Droplets per iteration; auto (the key left out): one per cell of the map, which carves \
              gullies on the slopes at any map size (a fixed count thins out on larger maps).",
    },
    float("radius", "Brush radius", 1.0, 16.0, 3.0, "cells", "Erosion brush radius."),
    float("inertia", "Inertia", 0.0, 0.999, 0.05, "", "Share of its previous direction a droplet keeps."),
    float("capacity", "Capacity factor", 0.0, 1000.0, 4.0, "", "Sediment capacity factor."),
    float(
        "min-capacity",
        "Smallest capacity",
        0.0,
        1000.0,
        0.01,
        "height",
        "Minimum capacity (acts as a minimum slope).",
    ),
    float("erode", "Erosion rate", 0.0, 1.0, 0.3, "", "Fraction of the free capacity eroded per step."),
    float(
        "deposit",
        "Deposition rate",
        0.0,
        1.0,
        0.3,
        "",
        "Fraction of the excess sediment deposited per step.",
    ),
    float("evaporate", "Evaporation rate", 0.0, 1.0, 0.01, "", "Fraction of the water evaporating per step."),
    float("gravity", "Gravity", 0.0, 1000.0, 4.0, "", "Speed² gained per unit of height lost."),
    int("max-lifetime", "Lifetime", 1, 10_000, 30.0, "Steps before a droplet dies."),
    int(
        "coarse",
        "Coarse factor",
        1,
        4,
        1.0,
        "Run the droplets on a grid this many times coarser and add their change, interpolated, to \
         the map (gullies as wide, about a seventh of the work at 2; maps only; 1 = full resolution).",
    ),
    int(
        "batch-size",
        "Batch size",
        1,
        1_000_000,
        1.0,
        "Droplets per batch (1 = sequential, more = parallel strips).",
    ),
    ParamSpec {
        name: "use-sea-level",
        label: "Use sea level",
        kind: ParamKind::Bool,
        default: DefaultValue::Bool(true),
        unit: "",
        doc: "Below the terrain's sea level droplets only deposit (no erosion of the sea floor, small deltas).",
    },
    ParamSpec {
        name: "droplets-per-cell",
        label: "Droplets per cell",
        kind: ParamKind::Float { min: 1e-6, max: 64.0 },
        default: DefaultValue::Absent,
        unit: "droplets/cell",
        doc: "World recipes only (and required there): droplets started per world cell per iteration, \
              in place of `droplets` (world-anchored droplets, see `WorldDropletEroder`).",
    },
];

/// The `stream-power` step's parameters; the eroder's constructor checks the same ranges.
pub(crate) const STREAM_POWER: &[ParamSpec] = &[
    iterations(100.0),
    float("k", "Erodibility K", 0.0, 1e6, 0.2, "", "Erodibility K (lengths in cells, time in dt units)."),
    float("m", "Area exponent m", 0.0, 2.0, 0.4, "", "Drainage-area exponent m."),
    float("n", "Slope exponent n", 0.5, 4.0, 1.0, "", "Slope exponent n (n ≠ 1 solved by Newton iteration)."),
    float(
        "uplift",
        "Uplift rate",
        0.0,
        1e6,
        0.005,
        "height/dt",
        "Uplift rate U (not applied at base level).",
    ),
    float("dt", "Time step", 1e-9, 1e9, 1.0, "", "Time step."),
    float("kd", "Hillslope diffusion", 0.0, 1e6, 0.01, "cells²/dt", "Hillslope diffusivity."),
    float(
        "g",
        "Deposition G",
        0.0,
        100.0,
        0.0,
        "",
        "Deposition coefficient G (Yuan et al. 2019): sediment from upstream settles at G·Qs/A; \
         0 = none, about 1 = flat valley floors and fans.",
    ),
    float(
        "hillslope-area",
        "Hillslope area",
        0.0,
        1e6,
        0.0,
        "cells",
        "Drainage area below which each cell's incision is blended towards its 3×3 neighbourhood's \
         (fully at one cell, less on a log scale up to this area): hillslopes without one-cell \
         rills. 0 = off.",
    ),
    float(
        "aspect-balance",
        "Aspect balance",
        -2.0,
        2.0,
        0.0,
        "",
        "Exponent γ: incision times b^γ, b = max(|∂h/∂x|, |∂h/∂y|)/|∇h| (1 facing a grid axis, \
         1/√2 a diagonal); evens out the slope directions the grid favours. 0 = off.",
    ),
    float(
        "floodplain-area",
        "Floodplain area",
        0.0,
        1e9,
        0.0,
        "cells",
        "Rivers draining at least this many cells get a flat floor beside them after the last \
         full-resolution step: cells of small height above their river are planed down to it. \
         0 = no floodplains.",
    ),
    float(
        "floodplain-depth",
        "Floodplain depth",
        0.0,
        1e6,
        0.0,
        "height",
        "Height above the river below which its valley floor is planed flat, where it drains \
         `floodplain-area`; it grows downstream as (area ratio)^0.4. 0 = no floodplains.",
    ),
    float(
        "critical-slope",
        "Critical slope (talus)",
        0.0,
        1e6,
        0.0,
        "height/cell",
        "Talus: before the first full-resolution step, ground steeper than this fails down to it \
         (round cones of this slope, no grid direction; the failed material leaves with the \
         rivers; gentler ground keeps its heights). 0 = off.",
    ),
    int(
        "coarse",
        "Coarse factor",
        1,
        16,
        1.0,
        "Coarse-to-fine: run the `iterations` steps on a grid this many times coarser, then \
         `fine-iterations` at full resolution (1 = every step at full resolution; so does a map \
         whose smaller side is at most twice this).",
    ),
    ParamSpec {
        name: "coarse-dt",
        label: "Coarse time step",
        kind: ParamKind::Float { min: 1e-9, max: 1e9 },
        default: DefaultValue::Absent,
        unit: "",
        doc: "Time step of the coarse steps (with coarse > 1); absent = dt. Fewer, longer coarse steps \
              lay out the same valleys in less time; the full-resolution steps keep dt.",
    },
    int(
        "fine-iterations",
        "Full-resolution steps",
        0,
        100_000,
        5.0,
        "Full-resolution steps after the coarse ones (with coarse > 1).",
    ),
    ParamSpec {
        name: "routing",
        label: "Flow routing",
        kind: ParamKind::Choice(Routing::NAMES),
        default: DefaultValue::Text("rho8"),
        unit: "",
        doc: "rho8: stochastic D8 (Fairfield & Leymarie 1991), a new draw each iteration, so valleys \
              run in every direction; d8: steepest descent, valleys along 0°, 45° and 90° (the grid \
              shows).",
    },
    ParamSpec {
        name: "use-sea-level",
        label: "Use sea level",
        kind: ParamKind::Bool,
        default: DefaultValue::Bool(true),
        unit: "",
        doc: "The open sea is base level (outlets), besides the map edges: the cells below the terrain's sea \
              level that join the edge through such cells (a pocket below sea level inside the land drains \
              across its pass like any hollow).",
    },
    float(
        "uplift-variation",
        "Uplift variation",
        0.0,
        1.0,
        0.0,
        "",
        "Uplift varies over the land as U·(1 + v·n), n a fractal noise in [−1, 1]: ranges rise where \
         it is high, basins stay where it is low. 0 = the same uplift everywhere.",
    ),
    float(
        "uplift-size",
        "Uplift feature size",
        0.01,
        100.0,
        0.5,
        "",
        "Size of the uplift field's largest features, as a fraction of the map's longer side.",
    ),
    float(
        "rock-contrast",
        "Rock contrast",
        1.0,
        100.0,
        1.0,
        "",
        "Erodibility varies between hard rock (K/c) and soft rock (K·c), in patches of a fractal \
         noise: hard rock stands as ridges, soft rock wears into valleys. 1 = the same rock everywhere.",
    ),
    float(
        "rock-size",
        "Rock feature size",
        0.01,
        100.0,
        0.25,
        "",
        "Size of the rock patches' largest features, as a fraction of the map's longer side.",
    ),
];

choice_enum! {
    /// The erosion registry steps, by recipe name: the kind an [`ErodeStep`] builds its eroder
    /// of.
    pub enum Erosion {
        /// `thermal`: [`ThermalEroder`].
        Thermal = "thermal",
        /// `thermal-olsen`: [`ThermalOlsenEroder`].
        ThermalOlsen = "thermal-olsen",
        /// `hydraulic`: [`HydraulicEroder`].
        Hydraulic = "hydraulic",
        /// `hydraulic-olsen`: [`HydraulicOlsenEroder`].
        HydraulicOlsen = "hydraulic-olsen",
        /// `olsen-erosion`: [`OlsenEroder`].
        OlsenErosion = "olsen-erosion",
        /// `droplets`: [`DropletEroder`].
        Droplets = "droplets",
        /// `stream-power`: [`StreamPowerEroder`].
        StreamPower = "stream-power",
    }
}

/// The erosion registry entries: thermal, thermal-olsen, hydraulic, hydraulic-olsen,
/// olsen-erosion, droplets, stream-power.
pub fn steps() -> Vec<StepInfo> {
    let entry = |kind: Erosion, doc, source, params, build| StepInfo {
        name: kind.name(),
        category: Category::Erode,
        doc,
        source,
        params,
        build,
    };
    vec![
        entry(
            Erosion::Thermal,
            "Reference thermal erosion: material above the talus slope slides to all lower neighbours \
             (deferred updates, parallel).",
            "Musgrave, Kolb & Mace 1989, as in Olsen 2004; seed 001 §3",
            THERMAL,
            |p| ErodeStep::build(Erosion::Thermal, p),
        ),
        entry(
            Erosion::ThermalOlsen,
            "Olsen's optimised thermal erosion: level each cell with its lowest neighbour where the drop \
             exceeds the talus (coloured exchange sweeps, no streaks).",
            "Olsen 2004 (optimised thermal erosion); seed 001 §3",
            THERMAL_OLSEN,
            |p| ErodeStep::build(Erosion::ThermalOlsen, p),
        ),
        entry(
            Erosion::Hydraulic,
            "Reference hydraulic erosion with water and sediment maps: rain, dissolve, transport, \
             evaporate, deposit.",
            "Olsen 2004 after Beneš & Forsbach 2002; seed 001 §3",
            HYDRAULIC,
            |p| ErodeStep::build(Erosion::Hydraulic, p),
        ),
        entry(
            Erosion::HydraulicOlsen,
            "Olsen's optimised hydraulic erosion: saturated water (Ks = Kc), lowest neighbour only (coloured exchange sweeps).",
            "Olsen 2004 (optimised hydraulic erosion); seed 001 §3",
            HYDRAULIC_OLSEN,
            |p| ErodeStep::build(Erosion::HydraulicOlsen, p),
        ),
        entry(
            Erosion::OlsenErosion,
            "Olsen's erosion: the optimised thermal scheme applied to gentle slopes (0 < d ≤ T), making \
             flat plateaus between steep slopes.",
            "Olsen 2004 (new erosion algorithm); seed 001 §3",
            OLSEN,
            |p| ErodeStep::build(Erosion::OlsenErosion, p),
        ),
        entry(
            Erosion::Droplets,
            "Particle hydraulic erosion: droplets run downhill, erode with a brush and deposit sediment.",
            "Beyer 2015, as in Lague's Hydraulic-Erosion",
            DROPLETS,
            |p| ErodeStep::build(Erosion::Droplets, p),
        ),
        entry(
            Erosion::StreamPower,
            "Stream-power fluvial erosion with uplift and hillslope diffusion (implicit O(n) solver): \
             carves a branching valley network.",
            "Braun & Willett 2013",
            STREAM_POWER,
            |p| ErodeStep::build(Erosion::StreamPower, p),
        ),
    ]
}

/// Builds the eroder of registry step `kind` from validated `params`, starting from
/// `terrain` (its heights, and its sea level for stream power), with seed `seed` (droplets).
/// [`crate::analyze::run_traced`] runs such an eroder while recording ε every k iterations;
/// the recipe step runs the same loop through [`run_erosion`].
pub fn build_eroder(kind: Erosion, params: &Params, terrain: &Terrain, seed: u64) -> Result<Box<dyn Eroder>> {
    build_in(kind, params, terrain, seed, &Frame::Map)
}

/// The parameters of the `droplets` step (its sea level from `terrain`).
fn droplet_params(params: &Params, terrain: &Terrain, seed: u64) -> Result<DropletParams> {
    Ok(DropletParams {
        // Auto: one droplet per cell (the count is checked against the key's range below).
        droplets: match params.opt_f64("droplets")? {
            Some(_) => params.usize("droplets")?,
            None => terrain.height.len().clamp(1, 100_000_000),
        },
        radius: params.f64("radius")?,
        inertia: params.f64("inertia")?,
        capacity: params.f64("capacity")?,
        min_capacity: params.f64("min-capacity")?,
        erode: params.f64("erode")?,
        deposit: params.f64("deposit")?,
        evaporate: params.f64("evaporate")?,
        gravity: params.f64("gravity")?,
        max_lifetime: params.usize("max-lifetime")?,
        batch_size: params.usize("batch-size")?,
        seed,
        sea_level: params.bool("use-sea-level")?.then_some(terrain.sea_level as f64),
        ..DropletParams::default()
    })
}

/// The droplets' `coarse` factor is for maps: a world window's coarse grid would depend on
/// where the window starts.
fn coarse_is_map_only(params: &Params) -> Result<()> {
    match params.usize("coarse")? {
        1 => Ok(()),
        factor => {
            Err(Error::param("coarse", factor, "1 in a world recipe (coarse droplets are for maps only)"))
        }
    }
}

/// A world-only parameter that a world recipe must give.
fn required_in_world(params: &Params, name: &str, instead: &str) -> Result<f64> {
    params.opt_f64(name)?.ok_or_else(|| {
        Error::param(name, "(absent)", format!("a value in a world recipe, where `{instead}` has no meaning"))
    })
}

/// [`build_eroder`] on a finite map or, with [`Frame::World`], on a window of an endless world:
/// the talus comes from `talus-slope` (metres per metre) and the cell size instead of the map's
/// size and range, the coloured passes use world cell parities, and droplets are
/// world-anchored ([`WorldDropletEroder`]). Stream power is refused in a world (global).
pub fn build_in(
    kind: Erosion,
    params: &Params,
    terrain: &Terrain,
    seed: u64,
    frame: &Frame,
) -> Result<Box<dyn Eroder>> {
    let map = &terrain.height;
    let nb = || Neighbourhood::from_name(params.text("neighbourhood")?);
    let boundary = || Boundary::from_name(params.text("boundary")?);
    let talus = || match frame {
        Frame::Map => Ok::<_, Error>(talus_from_k(params.f64("talus-k")?, map)),
        Frame::World(w) => Ok(required_in_world(params, "talus-slope", "talus-k")? * w.cell_size),
    };
    let origin = match frame {
        Frame::Map => None,
        Frame::World(w) => Some((w.x0, w.y0)),
    };
    let sweep = sweep_of(kind, params)?;
    if sweep == Sweep::InPlace && origin.is_some() {
        return Err(in_place_is_global(kind));
    }
    Ok(match kind {
        Erosion::Thermal => Box::new(ThermalEroder::new(
            map,
            ThermalParams {
                talus: talus()?,
                c: params.f64("c")?,
                neighbourhood: nb()?,
                boundary: boundary()?,
            },
        )?),
        Erosion::ThermalOlsen | Erosion::OlsenErosion => {
            let p = ThermalOlsenParams { talus: talus()?, neighbourhood: nb()?, boundary: boundary()? };
            match (kind == Erosion::ThermalOlsen, origin) {
                (true, None) => Box::new(ThermalOlsenEroder::new(map, p)?.with_sweep(sweep)),
                (true, Some((x0, y0))) => Box::new(ThermalOlsenEroder::new(map, p)?.at_world_origin(x0, y0)),
                (false, None) => Box::new(OlsenEroder::new(map, p)?.with_sweep(sweep)),
                (false, Some((x0, y0))) => Box::new(OlsenEroder::new(map, p)?.at_world_origin(x0, y0)),
            }
        }
        Erosion::Hydraulic => Box::new(HydraulicEroder::new(
            map,
            HydraulicParams {
                kr: params.f64("kr")?,
                ks: params.f64("ks")?,
                ke: params.f64("ke")?,
                kc: params.f64("kc")?,
                neighbourhood: nb()?,
                boundary: boundary()?,
            },
        )?),
        Erosion::HydraulicOlsen => {
            let e = HydraulicOlsenEroder::new(
                map,
                HydraulicOlsenParams {
                    kr: params.f64("kr")?,
                    kc: params.f64("kc")?,
                    ke: params.f64("ke")?,
                    neighbourhood: nb()?,
                    boundary: boundary()?,
                },
            )?;
            match origin {
                None => Box::new(e.with_sweep(sweep)),
                Some((x0, y0)) => Box::new(e.at_world_origin(x0, y0)),
            }
        }
        Erosion::Droplets => {
            let p = droplet_params(params, terrain, seed)?;
            match origin {
                None => match params.usize("coarse")? {
                    // A map too small for the coarse grid runs at full resolution (as stream
                    // power does).
                    factor if factor > 1 && fits_coarse_grid(map, factor) => {
                        Box::new(CoarseDroplets::new(map, p, factor)?)
                    }
                    _ => Box::new(DropletEroder::new(map, p)?),
                },
                Some((x0, y0)) => {
                    coarse_is_map_only(params)?;
                    let density = required_in_world(params, "droplets-per-cell", "droplets")?;
                    Box::new(WorldDropletEroder::new(map, p, x0, y0, density)?)
                }
            }
        }
        Erosion::StreamPower => {
            if origin.is_some() {
                return Err(stream_power_is_global());
            }
            let p = StreamPowerParams {
                k: params.f64("k")?,
                m: params.f64("m")?,
                n: params.f64("n")?,
                uplift: params.f64("uplift")?,
                dt: params.f64("dt")?,
                kd: params.f64("kd")?,
                dx: 1.0,
                sea_level: params.bool("use-sea-level")?.then_some(terrain.sea_level as f64),
                routing: Routing::read(params, "routing")?,
                seed,
                g: params.f64("g")?,
                rates: rate_fields(params, map, seed)?,
                hillslope_area: params.f64("hillslope-area")?,
                aspect_balance: params.f64("aspect-balance")?,
                floodplain_area: params.f64("floodplain-area")?,
                floodplain_depth: params.f64("floodplain-depth")?,
                critical_slope: params.f64("critical-slope")?,
            };
            match params.usize("coarse")? {
                0 | 1 => Box::new(StreamPowerEroder::new(map, p)?),
                // A map too small for the coarse grid (a side at most 2·coarse, e.g. a preset
                // asked at 4×4) runs every step at full resolution.
                factor if !fits_coarse_grid(map, factor) => Box::new(StreamPowerEroder::new(map, p)?),
                factor => {
                    let coarse_dt = params.opt_f64("coarse-dt")?.unwrap_or(p.dt);
                    Box::new(CoarseToFine::with_coarse_dt(
                        map,
                        p,
                        factor,
                        params.usize("iterations")?,
                        coarse_dt,
                    )?)
                }
            }
        }
    })
}

/// The `stream-power` step's [`RateFields`]: sizes from fractions of `map`'s longer side to
/// cells, the fields' seed derived from the step's `seed`.
fn rate_fields(params: &Params, map: &Heightmap, seed: u64) -> Result<RateFields> {
    let longer = map.width().max(map.height()) as f64;
    Ok(RateFields {
        uplift_variation: params.f64("uplift-variation")?,
        uplift_size: params.f64("uplift-size")? * longer,
        rock_contrast: params.f64("rock-contrast")?,
        rock_size: params.f64("rock-size")? * longer,
        seed: terrasynth_noise::rng::derive_seed(seed, 0x7A7E_F1E1D),
    })
}

/// How many times a run of step `kind` calls [`Eroder::run_one_step`]: `iterations`, plus
/// `fine-iterations` for coarse-to-fine stream power.
pub fn iteration_count(kind: Erosion, params: &Params) -> Result<usize> {
    let iterations = params.usize("iterations")?;
    if kind == Erosion::StreamPower && params.usize("coarse")? > 1 {
        return Ok(iterations.saturating_add(params.usize("fine-iterations")?));
    }
    Ok(iterations)
}

/// The `sweep` of Olsen's fast erosions ([`Sweep::Coloured`] for the other kinds, which have
/// no such key).
fn sweep_of(kind: Erosion, params: &Params) -> Result<Sweep> {
    match kind {
        Erosion::ThermalOlsen | Erosion::OlsenErosion | Erosion::HydraulicOlsen => {
            Sweep::read(params, "sweep")
        }
        _ => Ok(Sweep::Coloured),
    }
}

/// Olsen's in-place sweep on a window of a world: refused (a cell's new height depends on
/// every cell before it in the sweep).
fn in_place_is_global(kind: Erosion) -> Error {
    Error::NotInWorld {
        what: format!(
            "{} with sweep = \"in-place\" needs the whole map (the raster sweep carries material \
             from every cell to the next): it cannot run on a window of a world; use sweep = \"coloured\"",
            kind.name()
        ),
    }
}

/// Stream power on a window of a world: refused (its drainage areas depend on the whole map).
fn stream_power_is_global() -> Error {
    Error::NotInWorld {
        what: "stream-power needs the whole map (drainage areas sum over every upstream cell): it \
               cannot run on a window of a world (a global step; tiled stream power comes later)"
            .into(),
    }
}

/// How far, in cells, `iterations` of erosion `kind` read around a cell on a window of a
/// world (see each eroder's "Worlds"): 2 per iteration for the gather schemes (thermal,
/// hydraulic), 3 per colour pass for the coloured exchanges (2 colours, 4 with Moore),
/// `16·M` per iteration for world droplets; stream power and Olsen's in-place sweeps are
/// global.
pub fn reach_of(kind: Erosion, params: &Params) -> Result<Reach> {
    let iterations = params.usize("iterations")?;
    if sweep_of(kind, params)? == Sweep::InPlace {
        return Ok(Reach::Global);
    }
    let colours = || Ok::<_, Error>(colours(Neighbourhood::from_name(params.text("neighbourhood")?)?));
    let per_iteration = match kind {
        Erosion::Thermal | Erosion::Hydraulic => 2,
        Erosion::ThermalOlsen | Erosion::OlsenErosion | Erosion::HydraulicOlsen => 3 * colours()?,
        Erosion::Droplets => {
            let lifetime = params.usize("max-lifetime")?;
            let p =
                DropletParams { radius: params.f64("radius")?, max_lifetime: lifetime, ..Default::default() };
            WorldDropletEroder::reach(&p)
        }
        Erosion::StreamPower => return Ok(Reach::Global),
    };
    Ok(Reach::Cells(per_iteration.saturating_mul(iterations)))
}

/// A validated erosion step: the kind picks the eroder, `iterations` the loop length. The
/// eroder itself is built when the step runs, since its talus and sea level depend on the
/// terrain it gets.
#[derive(Debug)]
struct ErodeStep {
    kind: Erosion,
    params: Params,
}

impl ErodeStep {
    /// The registry's builder: keeps the validated parameters of step `kind`.
    fn build(kind: Erosion, params: &Params) -> Result<Box<dyn Step>> {
        Ok(Box::new(ErodeStep { kind, params: params.clone() }))
    }
}

impl Step for ErodeStep {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        run_erosion(self.kind, &self.params, terrain, ctx, &mut |_, _, _| {})
    }

    fn run_iterations(
        &self,
        terrain: &mut Terrain,
        ctx: &StepContext,
        each: &mut IterationHook<'_>,
    ) -> Result<bool> {
        run_erosion(self.kind, &self.params, terrain, ctx, each).map(|()| true)
    }

    /// See [`reach_of`]; stream power is global.
    fn reach(&self, _world: &WorldFrame) -> Reach {
        reach_of(self.kind, &self.params).unwrap_or(Reach::Global)
    }

    /// The talus of the cellular erosions and the droplet density have world forms that
    /// [`build_in`] requires: checked here, before the run.
    fn check_world(&self, _world: &WorldFrame) -> Result<()> {
        match self.kind {
            Erosion::Thermal | Erosion::ThermalOlsen | Erosion::OlsenErosion => {
                required_in_world(&self.params, "talus-slope", "talus-k").map(drop)
            }
            Erosion::Droplets => {
                coarse_is_map_only(&self.params)?;
                required_in_world(&self.params, "droplets-per-cell", "droplets").map(drop)
            }
            Erosion::Hydraulic | Erosion::HydraulicOlsen | Erosion::StreamPower => Ok(()),
        }
    }
}

/// Runs the erosion step `kind` with validated `params` on `terrain`: builds the eroder (on a
/// map, or on a world window when `ctx.frame` is one: [`build_in`]), runs `iterations` steps
/// with [`run_iterations`] (calling `each` on the surface before the first and after every
/// iteration), finishes it (final deposit), writes the surface into the heights and keeps the
/// water map in `terrain.water` when the process has one. Plain runs and watched runs (a
/// pipeline observer recording `--trace`) both go through here, so they give the same heights.
pub fn run_erosion(
    kind: Erosion,
    params: &Params,
    terrain: &mut Terrain,
    ctx: &StepContext,
    each: &mut IterationHook<'_>,
) -> Result<()> {
    let iterations = iteration_count(kind, params)?;
    let mut eroder = build_in(kind, params, terrain, ctx.seed, &ctx.frame)?;
    run_iterations(&mut *eroder, iterations, &ctx.progress, each)?;
    eroder.finish();
    write_surface(eroder.surface(), &mut terrain.height)?;
    if let Some(water) = eroder.water() {
        let h = &terrain.height;
        let map = Heightmap::from_vec(
            h.width(),
            h.height(),
            h.cell_size(),
            water.iter().map(|&w| w as f32).collect(),
        )?;
        terrain.water = Some(map);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `coarse > 1` runs `iterations` coarse steps then `fine-iterations` fine ones: the
    /// step's loop length is their sum and its eroder gives the library's [`CoarseToFine`]
    /// bytes; `coarse = 1` is the plain eroder whatever `fine-iterations` says.
    #[test]
    fn stream_power_coarse_key_builds_coarse_to_fine() {
        let map =
            Heightmap::from_fn(40, 33, 1.0, |x, y| ((x * 7 + y * 13) % 11) as f32 * 0.05 + 0.5).unwrap();
        let terrain = Terrain { height: map.clone(), ..Terrain::new(40, 33, 1.0).unwrap() };
        let n = |v: f64| crate::step::ParamValue::Number(v);
        let params =
            Params::defaults(STREAM_POWER).with("iterations", n(3.0)).with("fine-iterations", n(2.0));
        assert_eq!(iteration_count(Erosion::StreamPower, &params).unwrap(), 3);
        let coarse = params.clone().with("coarse", n(2.0));
        assert_eq!(iteration_count(Erosion::StreamPower, &coarse).unwrap(), 5);
        let mut built = build_eroder(Erosion::StreamPower, &coarse, &terrain, 9).unwrap();
        let p =
            StreamPowerParams { sea_level: Some(terrain.sea_level as f64), seed: 9, ..Default::default() };
        let mut direct = CoarseToFine::new(&map, p, 2, 3).unwrap();
        for _ in 0..5 {
            built.run_one_step().unwrap();
            direct.run_one_step().unwrap();
        }
        assert_eq!(built.surface().as_slice(), direct.surface().as_slice());
        assert_ne!(built.surface().as_slice(), to_f64_slice(&map).as_slice());
        // `coarse-dt` reaches the coarse steps (and only them), as the library's.
        let long = coarse.clone().with("coarse-dt", n(2.5));
        let mut built = build_eroder(Erosion::StreamPower, &long, &terrain, 9).unwrap();
        let mut direct = CoarseToFine::with_coarse_dt(&map, p, 2, 3, 2.5).unwrap();
        for _ in 0..5 {
            built.run_one_step().unwrap();
            direct.run_one_step().unwrap();
        }
        assert_eq!(built.surface().as_slice(), direct.surface().as_slice());
        let mut plain = CoarseToFine::new(&map, p, 2, 3).unwrap();
        for _ in 0..5 {
            plain.run_one_step().unwrap();
        }
        assert_ne!(built.surface().as_slice(), plain.surface().as_slice());
    }

    fn to_f64_slice(map: &Heightmap) -> Vec<f64> {
        map.as_slice().iter().map(|&v| v as f64).collect()
    }

    /// Every float and int key of `droplets` and `stream-power`: the eroder's constructor takes
    /// both ends of the spec's range and refuses one step past either, naming the key (the
    /// range lives only in the spec). `inertia` was [0, 1) in the eroder and [0, 0.999] here.
    #[test]
    fn eroder_constructors_refuse_exactly_outside_the_specs() {
        let map = Heightmap::new(9, 9, 1.0).unwrap();
        type SetD = fn(&mut DropletParams, f64);
        let droplets: &[(&str, SetD)] = &[
            ("droplets", |p, v| p.droplets = v as usize),
            ("radius", |p, v| p.radius = v),
            ("inertia", |p, v| p.inertia = v),
            ("capacity", |p, v| p.capacity = v),
            ("min-capacity", |p, v| p.min_capacity = v),
            ("erode", |p, v| p.erode = v),
            ("deposit", |p, v| p.deposit = v),
            ("evaporate", |p, v| p.evaporate = v),
            ("gravity", |p, v| p.gravity = v),
            ("max-lifetime", |p, v| p.max_lifetime = v as usize),
            ("batch-size", |p, v| p.batch_size = v as usize),
        ];
        let build = |name: &str, set: SetD, v: f64| {
            let mut p = DropletParams::default();
            set(&mut p, v);
            DropletEroder::new(&map, p).map(|_| ()).map_err(|e| (name.to_string(), e))
        };
        check_all(DROPLETS, droplets, build);
        type SetS = fn(&mut StreamPowerParams, f64);
        let stream: &[(&str, SetS)] = &[
            ("k", |p, v| p.k = v),
            ("m", |p, v| p.m = v),
            ("n", |p, v| p.n = v),
            ("uplift", |p, v| p.uplift = v),
            ("dt", |p, v| p.dt = v),
        ];
        let build = |name: &str, set: SetS, v: f64| {
            // kd = 0 keeps the diffusion-stability rule out of the way at large dt.
            let mut p = StreamPowerParams { kd: 0.0, ..StreamPowerParams::default() };
            set(&mut p, v);
            StreamPowerEroder::new(&map, p).map(|_| ()).map_err(|e| (name.to_string(), e))
        };
        check_all(STREAM_POWER, stream, build);
        let thermal =
            |c| ThermalEroder::new(&map, ThermalParams { c, ..ThermalParams::default() }).map(|_| ());
        let ParamKind::Float { min, max } = THERMAL.iter().find(|s| s.name == "c").unwrap().kind else {
            panic!("c is a float")
        };
        assert!(thermal(min).is_ok() && thermal(max).is_ok());
        assert!(thermal(min * 0.5).is_err() && thermal(max * 1.001).is_err());
    }

    /// `sweep = "in-place"` is global in a world: its reach is `Global` (so a world recipe is
    /// refused at validation) and building it on a world window is refused with an error that
    /// names the sweep; the coloured default keeps its finite reach.
    #[test]
    fn in_place_sweep_is_refused_in_worlds() {
        let map = Heightmap::new(9, 9, 1.0).unwrap();
        let terrain = Terrain { height: map, ..Terrain::new(9, 9, 1.0).unwrap() };
        let world = Frame::World(WorldFrame { x0: 0, y0: 0, cell_size: 1.0, height_range: [0.0, 1.0] });
        for (kind, specs) in [
            (Erosion::ThermalOlsen, THERMAL_OLSEN),
            (Erosion::OlsenErosion, OLSEN),
            (Erosion::HydraulicOlsen, HYDRAULIC_OLSEN),
        ] {
            let coloured = Params::defaults(specs).with("talus-slope", crate::step::ParamValue::Number(1.0));
            assert!(matches!(reach_of(kind, &coloured).unwrap(), Reach::Cells(_)));
            let in_place = coloured.clone().with("sweep", crate::step::ParamValue::Text("in-place".into()));
            assert_eq!(reach_of(kind, &in_place).unwrap(), Reach::Global);
            assert!(build_in(kind, &in_place, &terrain, 0, &Frame::Map).is_ok());
            match build_in(kind, &in_place, &terrain, 0, &world) {
                Err(Error::NotInWorld { what }) => assert!(what.contains("sweep = \"in-place\""), "{what}"),
                other => panic!("{kind:?}: {:?}", other.map(|_| ())),
            }
            let bad = coloured.with("sweep", crate::step::ParamValue::Text("diagonal".into()));
            assert!(
                matches!(reach_of(kind, &bad), Err(Error::InvalidParameter { name, .. }) if name == "sweep")
            );
        }
    }

    fn check_all<S: Copy>(
        specs: &[ParamSpec],
        keys: &[(&str, S)],
        build: impl Fn(&str, S, f64) -> std::result::Result<(), (String, Error)>,
    ) {
        for &(name, set) in keys {
            let spec = specs.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no spec {name}"));
            let (min, max, below, above) = match spec.kind {
                ParamKind::Float { min, max } => {
                    let eps = |v: f64| v.abs().max(1e-6) * 1e-3;
                    (min, max, min - eps(min), max + eps(max))
                }
                ParamKind::Int { min, max } => (min as f64, max as f64, min as f64 - 1.0, max as f64 + 1.0),
                _ => panic!("{name} is not a number"),
            };
            for v in [min, max] {
                assert!(build(name, set, v).is_ok(), "{name} = {v} is in the spec but refused");
            }
            // Unsigned fields cannot hold a value below 0.
            let below_fits = !(matches!(spec.kind, ParamKind::Int { .. }) && below < 0.0);
            for v in [Some(above), below_fits.then_some(below)].into_iter().flatten() {
                match build(name, set, v) {
                    Err((_, Error::InvalidParameter { name: n, .. })) => assert_eq!(n, name, "{name} = {v}"),
                    other => panic!("{name} = {v} is outside the spec but gave {other:?}"),
                }
            }
        }
    }
}
