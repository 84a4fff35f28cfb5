//! Hydrology: depression filling, flow routing, accumulation, watersheds, lakes, rivers, and
//! squig-curve river generation (issue 4 §2; seed 004 §9, seed 001 §2.1).
//!
//! Main types:
//! - [`DepressionFiller`]: Priority-Flood (Barnes et al. 2014), exact or with ε.
//! - [`FlowRouter`] → [`FlowField`]: D8 receivers, topological order, accumulation,
//!   watersheds; [`DInfinity`]: Tarboton's D∞.
//! - [`find_lakes`] → [`LakeMap`] of [`Lake`]s; [`extract_rivers`] → [`River`]s,
//!   [`carve_rivers`]; [`river_from_source`] / [`RiverTracer`] for user-placed sources.
//!
//! The standard chain (fill with ε → D8 → accumulate):
//! ```
//! use terrasynth::{Heightmap, hydro::{DepressionFiller, FlowRouter}};
//! let dem = Heightmap::from_fn(9, 9, 1.0, |x, y| ((x * 7 + y * 3) % 5) as f32).unwrap();
//! let filled = DepressionFiller::with_epsilon().fill(&dem, f32::NEG_INFINITY).unwrap();
//! let flow = FlowRouter.d8(&filled, f32::NEG_INFINITY).unwrap();
//! let acc = flow.accumulate(None).unwrap();
//! // Every cell drains to an edge cell: the outlets' totals add up to the cell count.
//! let total: f64 = (0..81).filter(|&i| flow.is_root(i)).map(|i| acc.as_slice()[i]).sum();
//! assert_eq!(total, 81.0);
//! ```

mod fill;
mod flow;
mod lakes;
mod rivers;

pub use fill::{DepressionFiller, NEIGHBOURS};
pub use flow::{DInfinity, FlowField, FlowRouter};
pub use lakes::{Lake, LakeMap, find_lakes};
pub use rivers::{
    River, RiverEnd, RiverMode, RiverPoint, RiverTracer, SourceRiver, carve_rivers, extract_rivers,
    river_from_source,
};
