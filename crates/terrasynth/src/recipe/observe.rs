//! Watching a pipeline run: the [`RunObserver`] hook that [`Pipeline::run_with`] calls before
//! and after every step (and, if asked, after every iteration of an erosion step), and
//! [`ErosionRecorder`], the observer behind report.json's `erosion_scores` and `trace`.
//!
//! [`Pipeline::run_with`]: crate::recipe::Pipeline::run_with

use crate::analyze::{Trace, epsilon, erosion_score};
use crate::grid::Boundary;
use crate::step::{Category, Terrain};
use crate::{Grid, Result};

/// The step a [`RunObserver`] call is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepEvent {
    /// 0-based position among the enabled steps (the order of the run).
    pub position: usize,
    /// 1-based position of the step in the recipe, disabled steps counted (as in error
    /// messages and report.json).
    pub step: usize,
    /// Step type.
    pub name: &'static str,
    /// Its stage.
    pub category: Category,
}

/// Per-step work done during a run instead of re-running the pipeline: every method has a
/// default that does nothing, so an observer implements only what it needs. An `Err` from
/// [`RunObserver::before_step`] or [`RunObserver::after_step`] stops the run with that error
/// (return [`crate::Error::Cancelled`] to cancel).
pub trait RunObserver {
    /// Called before step `step` runs, with the terrain it will start from.
    fn before_step(&mut self, step: &StepEvent, terrain: &Terrain) -> Result<()> {
        let _ = (step, terrain);
        Ok(())
    }

    /// Called after step `step` ran, with its result and its time and peak memory.
    fn after_step(&mut self, step: &StepEvent, terrain: &Terrain, timing: &super::StepTiming) -> Result<()> {
        let _ = (step, terrain, timing);
        Ok(())
    }

    /// Whether to call [`RunObserver::on_iteration`] during step `step` (only iterating steps,
    /// the erosion steps, call it). Default `false`.
    fn watches_iterations(&self, step: &StepEvent) -> bool {
        let _ = step;
        false
    }

    /// Called before the first iteration (`done = 0`) and after every iteration of a watched
    /// step, with the step's working surface (`f64`, before the final rounding into the
    /// heightmap).
    fn on_iteration(&mut self, step: &StepEvent, done: usize, total: usize, surface: &Grid<f64>) {
        let _ = (step, done, total, surface);
    }
}

/// The observer that does nothing ([`crate::recipe::Pipeline::run`]).
impl RunObserver for () {}

/// ε after one erosion step (an entry of report.json's `erosion_scores`; fields in the
/// report's key order).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepScore {
    /// ε of the heights after the step ([`crate::analyze::epsilon`]).
    pub erosion_score: f64,
    /// 1-based position of the step in the recipe.
    pub step: usize,
    /// Step type.
    #[serde(rename = "type")]
    pub name: String,
}

/// ε recorded inside an erosion step (`--trace K`; an entry of report.json's `trace`, fields
/// in the report's key order).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TracePoint {
    /// ε of the working surface at that point (closed edges).
    pub erosion_score: f64,
    /// Iterations completed (0 = before the first).
    pub iteration: usize,
    /// 1-based position of the step in the recipe.
    pub step: usize,
    /// Step type.
    #[serde(rename = "type")]
    pub name: String,
}

/// What the erosion steps of a run left for report.json (`erosion_scores`, `trace`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErosionLog {
    /// One entry per enabled erosion step, in order.
    pub scores: Vec<StepScore>,
    /// Entries recorded every K iterations (empty without a trace interval).
    pub trace: Vec<TracePoint>,
}

/// Records ε after every erosion step and, with a trace interval K, inside every erosion step
/// before the first iteration, every K iterations and after the last (Olsen 2004's erosion
/// score, see [`crate::analyze::score`]).
///
/// ```
/// use terrasynth::recipe::{ErosionRecorder, Pipeline, PipelineProgress, Recipe, StepEntry, registry};
/// let mut recipe = Recipe::new("doc");
/// (recipe.width, recipe.height) = (33, 33);
/// recipe.steps = vec![StepEntry::new("noise"), StepEntry::new("thermal").with("iterations", 4.0)];
/// let pipeline = Pipeline::new(recipe, &registry()).unwrap();
/// let mut recorder = ErosionRecorder::new(Some(2));
/// let out = pipeline.run_with(&PipelineProgress::new(), &mut recorder).unwrap();
/// let log = recorder.into_log();
/// assert_eq!(log.scores.len(), 1);
/// assert_eq!(log.scores[0].erosion_score, terrasynth::analyze::epsilon(&out.terrain.height));
/// let at: Vec<usize> = log.trace.iter().map(|t| t.iteration).collect();
/// assert_eq!(at, [0, 2, 4]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ErosionRecorder {
    trace_every: Option<usize>,
    log: ErosionLog,
}

impl ErosionRecorder {
    /// A recorder; `trace_every = Some(K)` also records ε every K iterations (K ≥ 1).
    pub fn new(trace_every: Option<usize>) -> Self {
        Self { trace_every, log: ErosionLog::default() }
    }

    /// What was recorded.
    pub fn into_log(self) -> ErosionLog {
        self.log
    }
}

impl RunObserver for ErosionRecorder {
    fn after_step(&mut self, step: &StepEvent, terrain: &Terrain, _: &super::StepTiming) -> Result<()> {
        if step.category == Category::Erode {
            self.log.scores.push(StepScore {
                step: step.step,
                name: step.name.to_string(),
                erosion_score: epsilon(&terrain.height),
            });
        }
        Ok(())
    }

    fn watches_iterations(&self, step: &StepEvent) -> bool {
        self.trace_every.is_some() && step.category == Category::Erode
    }

    fn on_iteration(&mut self, step: &StepEvent, done: usize, total: usize, surface: &Grid<f64>) {
        if let Some(every) = self.trace_every
            && Trace::is_recorded(done, total, every)
        {
            self.log.trace.push(TracePoint {
                step: step.step,
                name: step.name.to_string(),
                iteration: done,
                erosion_score: erosion_score(surface, Boundary::Closed).epsilon,
            });
        }
    }
}
