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
    /// Where the terrain sits: a finite map, or a window of an endless world.
    pub frame: Frame,
}

impl StepContext {
    /// A context for a finite map ([`Frame::Map`]).
    pub fn new(seed: u64, progress: Progress) -> Self {
        Self { seed, progress, frame: Frame::Map }
    }
}

/// Where the terrain a step works on sits.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Frame {
    /// A finite map: lengths are fractions of the map, extents are the map's own.
    #[default]
    Map,
    /// A window of an endless world (seed 000's worlds generated on demand from a seed):
    /// lengths are metres, heights are metres, and every cell is computed from its world
    /// coordinates, so any window equals the same cells cut from a larger window.
    World(WorldFrame),
}

/// The window of an endless world a terrain holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldFrame {
    /// World cell column of the terrain's column 0 (negative allowed).
    pub x0: i64,
    /// World cell row of the terrain's row 0 (negative allowed).
    pub y0: i64,
    /// Metres per cell (the recipe's `cell-size`).
    pub cell_size: f64,
    /// The world's declared height range in metres (`[world] height-range`): 16-bit outputs
    /// map it, and `normalize` maps onto it.
    pub height_range: [f64; 2],
}

impl WorldFrame {
    /// World column of the terrain's column `i`.
    pub fn col(&self, i: usize) -> i64 {
        self.x0 + i as i64
    }

    /// World row of the terrain's row `j`.
    pub fn row(&self, j: usize) -> i64 {
        self.y0 + j as i64
    }

    /// World x in metres of column `i`: a heightmap sample is a point, world column `X` sits at
    /// `X · cell_size` (exact for the same `X` whatever window holds it).
    pub fn x_m(&self, i: usize) -> f64 {
        self.col(i) as f64 * self.cell_size
    }

    /// World y in metres of row `j`.
    pub fn y_m(&self, j: usize) -> f64 {
        self.row(j) as f64 * self.cell_size
    }

    /// A length in metres as a whole number of cells, rounded up (for reaches).
    pub fn cells(&self, metres: f64) -> usize {
        let c = (metres.abs() / self.cell_size).ceil();
        if c.is_finite() { c as usize } else { usize::MAX }
    }

    /// This frame moved by `(dx, dy)` cells (the window grown or cut by a margin).
    pub fn shifted(&self, dx: i64, dy: i64) -> Self {
        Self { x0: self.x0 + dx, y0: self.y0 + dy, ..*self }
    }
}

/// How far a step's output at a cell depends on its input, when run on a window of a world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// The output at a cell depends on input cells at most this many cells away (Chebyshev
    /// distance): 0 for point steps and generators, radius × iterations for stencil steps.
    Cells(usize),
    /// The output depends on the whole map (depression filling, stream power, a map's own
    /// min/max): the step cannot run on a window and world recipes refuse it.
    Global,
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

    /// How far this step reads beyond a cell when run on a window of `world` (see [`Reach`]).
    /// The default, [`Reach::Global`], makes a world recipe refuse the step: a step that
    /// computes every cell from world coordinates and a bounded neighbourhood says so here.
    fn reach(&self, world: &WorldFrame) -> Reach {
        let _ = world;
        Reach::Global
    }

    /// Checks, when the recipe is validated and before anything runs, that this step has the
    /// parameters a window of `world` needs (e.g. `talus-slope`, `radius-m`), with an error
    /// naming the missing key. The default has nothing to check.
    fn check_world(&self, world: &WorldFrame) -> Result<()> {
        let _ = world;
        Ok(())
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
