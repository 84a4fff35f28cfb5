//! Single-flow (D8) routing with a receivers-first stack, for stream power: the hydrology
//! module's implementation ([`crate::hydro::FlowRouting`]: the shared Priority-Flood, D8
//! kernel and topological order), re-exported here so `erode::FlowRouting` keeps working.

pub use crate::hydro::FlowRouting;
