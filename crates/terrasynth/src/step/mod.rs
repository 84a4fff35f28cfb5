//! The bottom layer every stage builds on: the [`Step`] trait every generator, shaping step,
//! erosion and hydrology pass implements, the [`Terrain`] they work on, [`StepInfo`] (a registry
//! entry) and the [`ParamSpec`]/[`Params`] description of every parameter ([`params`]).
//! Stages import this module, `grid` and earlier stages only; `recipe` (registry, presets,
//! pipeline) sits on top of every stage.

pub mod layers;
pub mod params;

use crate::{Heightmap, Progress, Result};
pub use layers::{Layer, Layers};
pub use params::{DefaultValue, ParamKind, ParamSpec, ParamValue, Params};

/// What a pipeline carries from step to step: the heightmap plus optional layers that later
/// steps and outputs use.
#[derive(Clone, Debug)]
pub struct Terrain {
    /// Heights (the terrain itself). Units are arbitrary until an export scales them.
    pub height: Heightmap,
    /// Sea level in height units; cells below it are sea for hydrology and colouring.
    pub sea_level: f32,
    /// Water depth per cell after a water-carrying step (hydraulic erosion, lakes), if any.
    pub water: Option<Heightmap>,
    /// Derived layers later steps and outputs read, one per type, stored by the stage that
    /// makes them (the hydrology steps store `hydro::HydroLayers`): see [`Layers`].
    pub layers: Layers,
}

impl Terrain {
    /// A flat terrain of the given size.
    pub fn new(width: usize, height: usize, cell_size: f64) -> Result<Self> {
        Ok(Self {
            height: Heightmap::new(width, height, cell_size)?,
            sea_level: 0.0,
            water: None,
            layers: Layers::default(),
        })
    }
}

/// Everything a step needs besides the terrain.
#[derive(Clone, Debug)]
pub struct StepContext {
    /// This step's seed, derived from the recipe seed and the step's index
    /// (`terrasynth_noise::rng::derive_seed(recipe_seed, index)`), so inserting a step does not
    /// change the others' randomness more than necessary.
    pub seed: u64,
    /// Progress and cancellation.
    pub progress: Progress,
}

/// The stage a step belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// Produces a terrain from nothing (overwrites the heights).
    Generate,
    /// Reshapes an existing terrain.
    Shape,
    /// Erosion.
    Erode,
    /// Hydrology (filling, rivers, lakes).
    Hydro,
}

/// One runnable, validated step.
pub trait Step: Send + Sync + std::fmt::Debug {
    /// Runs the step on `terrain`. Generators overwrite `terrain.height` (same size).
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()>;

    /// Like [`Step::run`], and for a step that iterates on a working surface (the erosion
    /// steps) calls `each(done, total, surface)` before its first iteration (`done = 0`) and
    /// after every iteration, so a caller can watch the run (the `--trace` of ε) without
    /// re-running it. Returns whether `each` was called; the default runs [`Step::run`] and
    /// returns `false`.
    fn run_iterations(
        &self,
        terrain: &mut Terrain,
        ctx: &StepContext,
        each: &mut IterationHook<'_>,
    ) -> Result<bool> {
        let _ = each;
        self.run(terrain, ctx).map(|()| false)
    }
}

/// A callback on an iterating step's working surface: `(iterations done, total iterations,
/// surface)`, see [`Step::run_iterations`].
pub type IterationHook<'a> = dyn FnMut(usize, usize, &crate::Grid<f64>) + 'a;

/// A registry entry: name, docs, parameters, and how to build the step from validated params.
#[derive(Clone, Copy)]
pub struct StepInfo {
    /// Name as written in a recipe's `type = "..."`.
    pub name: &'static str,
    /// Stage.
    pub category: Category,
    /// One-paragraph description.
    pub doc: &'static str,
    /// Where the algorithm comes from (paper, or seed file and section).
    pub source: &'static str,
    /// Every parameter.
    pub params: &'static [ParamSpec],
    /// Builds the step from validated parameters.
    pub build: fn(&Params) -> Result<Box<dyn Step>>,
}

impl std::fmt::Debug for StepInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepInfo").field("name", &self.name).field("category", &self.category).finish()
    }
}
