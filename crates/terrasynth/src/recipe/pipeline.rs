//! [`Pipeline`]: a [`Recipe`] validated once against the registry into runnable steps, and
//! its run with progress, cancellation, per-step time and peak memory, and a
//! [`RunObserver`] hook before and after every step.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use terrasynth_noise::rng::derive_seed;

use crate::memory;
use crate::progress::Stopwatch;
use crate::recipe::mask;
use crate::recipe::model::Recipe;
use crate::recipe::observe::{RunObserver, StepEvent};
use crate::step::{Category, Frame, Reach, Step, StepContext, StepInfo, Terrain, WorldFrame};
use crate::step::{ParamSpec, ParamValue, Params};
use crate::{Error, Problem, Progress, Result};

/// One validated, runnable step of a pipeline.
#[derive(Debug)]
struct PlannedStep {
    /// 0-based position in `recipe.steps` (disabled steps count).
    index: usize,
    name: &'static str,
    category: Category,
    seed: u64,
    step: Box<dyn Step>,
}

/// A recipe checked against the registry: every enabled step built from validated
/// parameters, each with its derived seed. Build it with [`Pipeline::new`]; run it with
/// [`Pipeline::run`].
#[derive(Debug)]
pub struct Pipeline {
    recipe: Recipe,
    steps: Vec<PlannedStep>,
}

/// Time and peak heap memory of one step's run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StepTiming {
    /// 1-based position of the step in the recipe (as in error messages).
    pub step: usize,
    /// Step type.
    #[serde(rename = "type")]
    pub name: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Largest live heap size while the step ran, bytes (`None` without
    /// [`memory::CountingAlloc`] installed).
    pub peak_bytes: Option<usize>,
}

/// What a run produces.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The terrain after the last step.
    pub terrain: Terrain,
    /// One entry per enabled step, in order.
    pub timings: Vec<StepTiming>,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// Largest live heap size during the run, bytes (`None` without the counting allocator).
    pub peak_bytes: Option<usize>,
}

/// Progress of a whole pipeline, shareable with a progress bar or GUI thread: the number of
/// finished steps, the current step's name, and the current step's own [`Progress`] (which
/// also carries the cancel flag).
#[derive(Clone, Debug, Default)]
pub struct PipelineProgress {
    step: Progress,
    done: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
    name: Arc<Mutex<String>>,
}

impl PipelineProgress {
    /// A fresh handle at 0 %.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fraction of the whole pipeline done, in [0, 1]: `(finished + current step's fraction)
    /// / enabled steps`.
    pub fn fraction(&self) -> f64 {
        let total = self.total.load(Ordering::Relaxed);
        if total == 0 {
            return 0.0;
        }
        let done = self.done.load(Ordering::Relaxed).min(total);
        let part = if done < total { self.step.fraction() } else { 0.0 };
        ((done as f64 + part) / total as f64).clamp(0.0, 1.0)
    }

    /// Fraction of the running step done, in [0, 1], as the step last reported it (erosion
    /// steps report after every iteration).
    pub fn step_fraction(&self) -> f64 {
        self.step.fraction()
    }

    /// The name of the step running now (empty before the first and after the last).
    pub fn current_step(&self) -> String {
        self.name.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// Asks the run to stop at the current step's next check; the run returns
    /// [`Error::Cancelled`].
    pub fn cancel(&self) {
        self.step.cancel();
    }

    /// Whether [`PipelineProgress::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.step.is_cancelled()
    }

    fn start(&self, done: usize, total: usize, name: &str) {
        self.step.set(0.0);
        self.total.store(total, Ordering::Relaxed);
        self.done.store(done, Ordering::Relaxed);
        if let Ok(mut n) = self.name.lock() {
            n.clear();
            n.push_str(name);
        }
    }
}

/// The world frame of a world recipe's window at world cell `(x0, y0)`; `None` for a map.
pub fn world_frame(recipe: &Recipe, x0: i64, y0: i64) -> Option<WorldFrame> {
    let spec = recipe.world.as_ref()?;
    Some(WorldFrame { x0, y0, cell_size: recipe.cell_size, height_range: spec.height_range })
}

/// The world-only parameters ([`ParamSpec::world_only`]: lengths in world metres, world
/// centres, droplets per world cell, talus as a slope) that a finite map's step is given: one
/// problem each, since the map would ignore them. A key left at its default passes (absent,
/// an empty list, or the default a resolved recipe such as report.json's writes out).
fn world_only_on_map(specs: &[ParamSpec], given: &BTreeMap<String, ParamValue>) -> Vec<Problem> {
    let ignored = |s: &ParamSpec| {
        let v = given.get(s.name)?;
        let unset = matches!(v, ParamValue::Absent) || matches!(v, ParamValue::List(l) if l.is_empty());
        (!unset && *v != s.default.to_value()).then(|| {
            let allowed = "only in a world recipe (one with a [world] table); a finite map would \
                           ignore it (its map-relative keys apply: see docs/WORLDS.md)";
            Problem::from_error(Error::param(s.name, v, allowed))
        })
    };
    specs.iter().filter(|s| s.world_only()).filter_map(ignored).collect()
}

/// Cuts `m` cells off every side of a terrain (heights and water; derived layers, which no
/// chunkable step makes, are dropped).
fn crop_margin(terrain: &mut Terrain, m: usize) -> Result<()> {
    let (w, h) = (terrain.height.width() - 2 * m, terrain.height.height() - 2 * m);
    terrain.height = terrain.height.crop(m, m, w, h)?;
    if let Some(water) = &terrain.water {
        terrain.water = Some(water.crop(m, m, w, h)?);
    }
    terrain.layers = Default::default();
    Ok(())
}

/// The registry entry named `name`.
pub fn find_step<'a>(registry: &'a [StepInfo], name: &str) -> Option<&'a StepInfo> {
    registry.iter().find(|s| s.name == name)
}

impl Pipeline {
    /// Validates `recipe` against `registry` (normally [`crate::recipe::registry()`]) and
    /// builds every enabled step. All problems are collected and returned together as one
    /// [`Error::Recipe`] of [`Problem`]s, each naming the step (1-based) and its type, the
    /// key, the value given and the allowed range, e.g. ``step 2 (diamond-square): invalid
    /// parameter `roughness` = -1: allowed a number in [0, 4]``. Disabled steps are validated
    /// too, so a recipe never hides a broken step.
    pub fn new(recipe: Recipe, registry: &[StepInfo]) -> Result<Self> {
        let mut problems = recipe.check_fields();
        let mut steps = Vec::new();
        for (index, entry) in recipe.steps.iter().enumerate() {
            let at = |p: Problem| p.in_step(index + 1, &entry.kind);
            let Some(info) = find_step(registry, &entry.kind) else {
                let known = registry.iter().map(|s| s.name.to_string()).collect();
                problems
                    .push(at(Problem::from_error(Error::UnknownStep { name: entry.kind.clone(), known })));
                continue;
            };
            problems.extend(mask::problems(entry, info.category, &recipe).into_iter().map(at));
            let params = match Params::validate(info.params, &entry.params) {
                Ok(p) => p,
                Err(list) => {
                    problems.extend(list.into_iter().map(at));
                    continue;
                }
            };
            if recipe.world.is_none() {
                problems.extend(world_only_on_map(info.params, &entry.params).into_iter().map(at));
            }
            match (info.build)(&params) {
                Ok(step) if entry.enabled => steps.push(PlannedStep {
                    index,
                    name: info.name,
                    category: info.category,
                    seed: derive_seed(recipe.seed, index as u64),
                    step: mask::wrap(step, entry, &recipe),
                }),
                Ok(_) => {}
                Err(e) => problems.push(at(Problem::from_error(e))),
            }
        }
        if let Some(frame) = world_frame(&recipe, 0, 0) {
            for planned in &steps {
                if planned.step.reach(&frame) != Reach::Global {
                    if let Err(e) = planned.step.check_world(&frame) {
                        problems.push(Problem::from_error(e).in_step(planned.index + 1, planned.name));
                    }
                } else {
                    problems.push(
                        Problem::message(
                            "cannot run on a window of a world: its result depends on the whole \
                             map (a global step), or it lacks its world parameters (lengths in \
                             metres, e.g. `feature-size-m`); see docs/WORLDS.md for the steps a \
                             world recipe may use"
                                .to_string(),
                        )
                        .in_step(planned.index + 1, planned.name),
                    );
                }
            }
        }
        if !problems.is_empty() {
            return Err(Error::Recipe(problems));
        }
        Ok(Self { recipe, steps })
    }

    /// The validated recipe.
    pub fn recipe(&self) -> &Recipe {
        &self.recipe
    }

    /// The recipe with every step's parameters completed with their defaults: what actually
    /// runs, for reports and `terrasynth recipe`.
    pub fn resolved_recipe(&self, registry: &[StepInfo]) -> Recipe {
        let mut r = self.recipe.clone();
        for entry in &mut r.steps {
            if let Some(info) = find_step(registry, &entry.kind)
                && let Ok(p) = Params::validate(info.params, &entry.params)
            {
                entry.params = p.values().clone();
            }
        }
        r
    }

    /// Number of enabled steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether no step is enabled (the run gives a flat terrain).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Names and categories of the enabled steps, in order.
    pub fn step_names(&self) -> Vec<(&'static str, Category)> {
        self.steps.iter().map(|s| (s.name, s.category)).collect()
    }

    /// Runs every enabled step in order on a flat terrain of the recipe's size, cell size and
    /// sea level. Step `i` (0-based position in the recipe) gets seed
    /// `derive_seed(recipe.seed, i)`. Progress goes to `progress`; a cancel stops the run
    /// with [`Error::Cancelled`]. An error names the failing step.
    pub fn run(&self, progress: &PipelineProgress) -> Result<RunOutput> {
        self.run_with(progress, &mut ())
    }

    /// Like [`Pipeline::run`], calling `observer` before and after every step (and on every
    /// iteration of the steps it watches), see [`RunObserver`].
    /// A world recipe runs its default window, `width × height` at world cell (0, 0)
    /// ([`Pipeline::run_window`]).
    pub fn run_with(&self, progress: &PipelineProgress, observer: &mut dyn RunObserver) -> Result<RunOutput> {
        let r = &self.recipe;
        if r.is_world() {
            return self.run_window(0, 0, r.width, r.height, progress, observer);
        }
        let mut terrain = Terrain::new(r.width, r.height, r.cell_size)?;
        terrain.sea_level = r.sea_level as f32;
        self.run_on_with(terrain, progress, observer)
    }

    /// Runs a world recipe on the `width × height` window whose cell (0, 0) is world cell
    /// `(x0, y0)` (negative allowed).
    ///
    /// Each step `k` reaches `r_k` cells (see [`Step::reach`]): before it runs, the window is
    /// the requested one grown on every side by `r_k + r_{k+1} + …` (the reaches of itself and
    /// every later step), so each step's output is exact wherever a later step reads it; the
    /// border is cut off step by step and the result is exactly the requested window. Every
    /// step computes a cell from world coordinates, so the result equals the same cells cut
    /// from any larger window, bit for bit.
    pub fn run_window(
        &self,
        x0: i64,
        y0: i64,
        width: usize,
        height: usize,
        progress: &PipelineProgress,
        observer: &mut dyn RunObserver,
    ) -> Result<RunOutput> {
        let r = &self.recipe;
        let Some(frame) = world_frame(r, x0, y0) else {
            return Err(Error::NotInWorld {
                what: format!(
                    "recipe `{}` is not a world recipe (it has no [world] table), so it has no windows",
                    r.name
                ),
            });
        };
        crate::grid::check_size::<f32>(width, height)?;
        // need[k]: the margin step k's input needs (its reach plus every later step's).
        let mut need = vec![0usize; self.steps.len() + 1];
        for (k, planned) in self.steps.iter().enumerate().rev() {
            let Reach::Cells(reach) = planned.step.reach(&frame) else {
                return Err(Error::NotInWorld {
                    what: format!(
                        "step {} ({}) cannot run on a window of a world",
                        planned.index + 1,
                        planned.name
                    ),
                });
            };
            need[k] = need[k + 1].saturating_add(reach);
        }
        let grown = |side: usize| need[0].checked_mul(2).and_then(|m| m.checked_add(side));
        let (Some(gw), Some(gh)) = (grown(width), grown(height)) else {
            return Err(Error::InvalidSize {
                width,
                height,
                reason: "the window grown by the steps' reach does not fit in memory".into(),
            });
        };
        let mut terrain = Terrain::new(gw, gh, r.cell_size)?;
        terrain.sea_level = r.sea_level as f32;
        let mut margin = need[0];
        let mut frames = |k: usize, terrain: &mut Terrain| -> Result<Frame> {
            let target = need[k];
            if margin > target {
                crop_margin(terrain, margin - target)?;
                margin = target;
            }
            let m = margin as i64;
            Ok(Frame::World(frame.shifted(-m, -m)))
        };
        let mut out = self.run_steps(terrain, progress, observer, &mut frames)?;
        // need[len] = 0: cut what is left of the margin.
        frames(self.steps.len(), &mut out.terrain)?;
        Ok(out)
    }

    /// Like [`Pipeline::run`], but starting from a given terrain (the GUI re-runs from a
    /// cached intermediate; tests start from known maps).
    pub fn run_on(&self, terrain: Terrain, progress: &PipelineProgress) -> Result<RunOutput> {
        self.run_on_with(terrain, progress, &mut ())
    }

    /// [`Pipeline::run_on`] with an observer (see [`Pipeline::run_with`]).
    pub fn run_on_with(
        &self,
        terrain: Terrain,
        progress: &PipelineProgress,
        observer: &mut dyn RunObserver,
    ) -> Result<RunOutput> {
        self.run_steps(terrain, progress, observer, &mut |_, _| Ok(Frame::Map))
    }

    /// Runs every step on `terrain`; `frame(k, terrain)` prepares the terrain for the `k`-th
    /// enabled step (a world window cuts its margin there) and says where it sits.
    fn run_steps(
        &self,
        mut terrain: Terrain,
        progress: &PipelineProgress,
        observer: &mut dyn RunObserver,
        frame: &mut dyn FnMut(usize, &mut Terrain) -> Result<Frame>,
    ) -> Result<RunOutput> {
        let total = self.steps.len();
        let run_start = Stopwatch::start();
        memory::reset_peak();
        let mut run_peak = memory::peak_bytes();
        let mut timings = Vec::with_capacity(total);
        for (k, planned) in self.steps.iter().enumerate() {
            progress.start(k, total, planned.name);
            progress.step.check_cancelled()?;
            let event = StepEvent {
                position: k,
                step: planned.index + 1,
                name: planned.name,
                category: planned.category,
            };
            let frame = frame(k, &mut terrain)?;
            observer.before_step(&event, &terrain)?;
            let ctx = StepContext { seed: planned.seed, progress: progress.step.clone(), frame };
            memory::reset_peak();
            let t0 = Stopwatch::start();
            let ran = if observer.watches_iterations(&event) {
                let mut each = |done: usize, of: usize, surface: &crate::Grid<f64>| {
                    observer.on_iteration(&event, done, of, surface);
                };
                planned.step.run_iterations(&mut terrain, &ctx, &mut each).map(|_| ())
            } else {
                planned.step.run(&mut terrain, &ctx)
            };
            ran.map_err(|e| match e {
                Error::Cancelled => Error::Cancelled,
                other => Error::Step {
                    step: planned.index + 1,
                    name: planned.name.to_string(),
                    source: Box::new(other),
                },
            })?;
            let seconds = t0.seconds();
            let peak = memory::peak_bytes();
            run_peak = run_peak.max(peak);
            let timing = StepTiming {
                step: planned.index + 1,
                name: planned.name.to_string(),
                seconds,
                peak_bytes: peak,
            };
            observer.after_step(&event, &terrain, &timing)?;
            timings.push(timing);
        }
        progress.start(total, total, "");
        Ok(RunOutput { terrain, timings, seconds: run_start.seconds(), peak_bytes: run_peak })
    }
}
