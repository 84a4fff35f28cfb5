//! Hydrology: depression filling, flow routing, accumulation, watersheds, lakes, rivers, and
//! squig-curve river generation (issue 4 §2; seed 004 §9, seed 001 §2.1).
//!
//! Main types:
//! - [`DepressionFiller`]: Priority-Flood (Barnes et al. 2014), exact or with ε.
//! - [`D8Router`] → [`FlowField`]: D8 receivers, topological order, accumulation,
//!   watersheds; [`DInfinity`]: Tarboton's D∞.
//! - [`StreamPowerRouter`]: the same D8 routing over `f64` heights with an outlet mask, on a
//!   reusable workspace (receivers, stack, drainage area), for stream power erosion.
//! - [`find_lakes`] → [`LakeMap`] of [`Lake`]s; [`extract_rivers`] → [`River`]s,
//!   [`carve_rivers`], [`strahler_orders`]; [`river_from_source`] / [`RiverTracer`] for
//!   user-placed sources.
//! - [`FlowGraph`] (fill + D8 + accumulation, computed once per terrain state) and
//!   [`WaterLayers`]: the one builder of the lakes, rivers and flow that the outputs and the
//!   editor draw.
//!
//! The standard chain (fill with ε → D8 → accumulate):
//! ```
//! use terrasynth::{Heightmap, hydro::{DepressionFiller, D8Router}};
//! let dem = Heightmap::from_fn(9, 9, 1.0, |x, y| ((x * 7 + y * 3) % 5) as f32).unwrap();
//! let filled = DepressionFiller::with_epsilon().fill(&dem, f32::NEG_INFINITY).unwrap();
//! let flow = D8Router.d8(&filled, f32::NEG_INFINITY).unwrap();
//! let acc = flow.accumulate(None).unwrap();
//! // Every cell drains to an edge cell: the outlets' totals add up to the cell count.
//! let total: f64 = (0..81).filter(|&i| flow.is_root(i)).map(|i| acc.as_slice()[i]).sum();
//! assert_eq!(total, 81.0);
//! ```

mod fill;
mod flood;
mod flow;
mod lakes;
mod layers;
mod rivers;
mod routing;
mod squig;
mod steps;

pub use fill::DepressionFiller;
pub use flow::{D8Router, DInfinity, FlowField};
pub use lakes::{Lake, LakeMap, find_lakes, lakes_from_fill};
pub use layers::{
    FlowGraph, FlowPart, LakePart, WaterLayers, computed_lake_min_area, default_max_width,
    default_river_threshold,
};
pub use rivers::{
    River, RiverEnd, RiverMode, RiverPoint, RiverTracer, SourceRiver, carve_rivers, carve_rivers_below,
    carve_rivers_scaled, extract_rivers, river_from_source, strahler_orders,
};
pub(crate) use routing::TreeCells;
pub use routing::{Routing, StreamPowerRouter};
pub use squig::{MAX_DETAIL as SQUIG_MAX_DETAIL, SquigOutput, SquigRivers};
pub use steps::{LakesStep, RiverSourcesStep, RiversStep, source_rivers, steps};

/// Hydrology layers the `rivers`, `lakes` and `squig-rivers` steps leave on the
/// [`Terrain`](crate::step::Terrain), in its layer store:
/// `terrain.layers.get::<HydroLayers>()` ([`crate::step::Layers`]). The outputs read them
/// through [`WaterLayers`], which computes what a recipe's steps did not make.
#[derive(Clone, Debug, Default)]
pub struct HydroLayers {
    /// River polylines (grid coordinates, upstream first), from `rivers` or `squig-rivers`.
    pub rivers: Vec<River>,
    /// Lakes found by the `lakes` step.
    pub lakes: Vec<Lake>,
    /// Lake id per cell (0 = none), from the `lakes` step.
    pub lake_labels: Option<crate::Grid<u32>>,
    /// D8 flow accumulation (drainage area in cells) from the `rivers` step.
    pub flow: Option<crate::Heightmap>,
    /// Rivers traced from user-placed sources (a project's river sources,
    /// `recipe::project::place_rivers`); [`WaterLayers`] adds them after the network.
    pub placed: Vec<River>,
    /// Rivers traced from the sources of the recipe's `river-sources` steps
    /// ([`RiverSourcesStep`]); [`WaterLayers`] adds them after the network, before `placed`.
    pub sourced: Vec<River>,
}
