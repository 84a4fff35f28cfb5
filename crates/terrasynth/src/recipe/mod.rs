//! Recipes: plain serde data describing a whole pipeline, validated once into a runtime
//! pipeline; the registry of every step with its [`ParamSpec`]s; built-in presets.

pub mod params;
pub mod step;

pub use params::{ParamKind, ParamSpec, ParamValue, Params};
pub use step::{Category, Step, StepContext, StepInfo, Terrain};
