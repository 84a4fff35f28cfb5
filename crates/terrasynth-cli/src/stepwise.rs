//! Runs a validated pipeline one step at a time, so `generate` can record Olsen's erosion
//! score ε after every erosion step (`erosion_scores` in report.json) and, with `--trace K`,
//! every K iterations inside erosion steps (`trace`).
//!
//! Each step runs as a one-step [`Pipeline`] built from the same recipe with every other step
//! disabled: disabled steps keep their positions, so each step gets the same seed
//! (`derive_seed(recipe seed, position)`) and the result is bit-identical to `Pipeline::run`.
//! A traced erosion step runs through `terrasynth::erode::run_erosion` with a trace interval:
//! the same function the library's erosion step calls, so traced and plain runs give the same
//! heights.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use terrasynth::erode::{Boundary, erosion_score, run_erosion};
use terrasynth::recipe::{Pipeline, PipelineProgress, RunOutput, StepTiming, find_step, memory, registry};
use terrasynth::step::{Category, Params, Terrain};
use terrasynth::{Heightmap, Progress};
use terrasynth_noise::rng::derive_seed;

/// ε after one erosion step.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StepScore {
    /// 1-based position of the step in the recipe.
    pub step: usize,
    /// Step type.
    #[serde(rename = "type")]
    pub name: String,
    /// ε = σ_s / s̄ of the heights after the step (closed boundary, see `erode::erosion_score`).
    pub erosion_score: f64,
}

/// ε recorded inside an erosion step by `--trace K`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TracePoint {
    /// 1-based position of the step in the recipe.
    pub step: usize,
    /// Step type.
    #[serde(rename = "type")]
    pub name: String,
    /// Iterations completed (0 = before the first).
    pub iteration: usize,
    /// ε at that point.
    pub erosion_score: f64,
}

/// What the erosion steps left for report.json.
#[derive(Clone, Debug, Default)]
pub struct ErosionLog {
    /// One entry per enabled erosion step, in order.
    pub scores: Vec<StepScore>,
    /// `--trace` entries (empty without it).
    pub trace: Vec<TracePoint>,
}

/// The step running now, for the progress bar.
enum Current {
    Pipe(PipelineProgress),
    Step(Progress, String),
}

/// Progress of a stepwise run, readable from the progress-bar thread.
pub struct LiveProgress {
    done: AtomicUsize,
    total: AtomicUsize,
    current: Mutex<Option<Current>>,
}

impl LiveProgress {
    /// At 0 %.
    pub fn new() -> Self {
        Self { done: AtomicUsize::new(0), total: AtomicUsize::new(0), current: Mutex::new(None) }
    }

    /// Fraction of the whole run done, in [0, 1].
    pub fn fraction(&self) -> f64 {
        let total = self.total.load(Ordering::Relaxed).max(1);
        let done = self.done.load(Ordering::Relaxed);
        let part = match self.current.lock().ok().as_deref() {
            Some(Some(Current::Pipe(p))) => p.fraction(),
            Some(Some(Current::Step(p, _))) => p.fraction(),
            _ => 0.0,
        };
        ((done as f64 + part) / total as f64).clamp(0.0, 1.0)
    }

    /// Name of the step running now.
    pub fn current_step(&self) -> String {
        match self.current.lock().ok().as_deref() {
            Some(Some(Current::Pipe(p))) => p.current_step(),
            Some(Some(Current::Step(_, name))) => name.clone(),
            _ => String::new(),
        }
    }

    fn set(&self, c: Current) {
        if let Ok(mut cur) = self.current.lock() {
            *cur = Some(c);
        }
    }
}

fn score_of(map: &Heightmap) -> f64 {
    erosion_score(&map.map(|&v| v as f64), Boundary::Closed).epsilon
}

/// Runs `pipeline` step by step (see the module docs); `trace_every`: `--trace K`.
pub fn run(
    pipeline: &Pipeline,
    trace_every: Option<usize>,
    live: &LiveProgress,
) -> anyhow::Result<(RunOutput, ErosionLog)> {
    let reg = registry();
    let recipe = pipeline.recipe();
    let enabled: Vec<usize> = (0..recipe.steps.len()).filter(|&i| recipe.steps[i].enabled).collect();
    live.total.store(enabled.len(), Ordering::Relaxed);
    let mut terrain = Terrain::new(recipe.width, recipe.height, recipe.cell_size)?;
    terrain.sea_level = recipe.sea_level as f32;
    let mut log = ErosionLog::default();
    let mut timings = Vec::with_capacity(enabled.len());
    let start = Instant::now();
    let mut run_peak: Option<usize> = None;
    for (k, &index) in enabled.iter().enumerate() {
        live.done.store(k, Ordering::Relaxed);
        let entry = &recipe.steps[index];
        let info = find_step(&reg, &entry.kind)
            .ok_or_else(|| anyhow::anyhow!("step {} ({}): unknown step type", index + 1, entry.kind))?;
        let is_erosion = info.category == Category::Erode;
        if is_erosion && let Some(every) = trace_every {
            let progress = Progress::new();
            live.set(Current::Step(progress.clone(), info.name.to_string()));
            let params = Params::validate(info.params, &entry.params)
                .map_err(|list| anyhow::anyhow!("step {} ({}): {}", index + 1, info.name, list.join("; ")))?;
            memory::reset_peak();
            let t0 = Instant::now();
            let seed = derive_seed(recipe.seed, index as u64);
            let fail =
                |e: terrasynth::Error| anyhow::anyhow!("step {} ({}) failed: {e}", index + 1, info.name);
            let trace = run_erosion(info.name, &params, &mut terrain, seed, &progress, Some(every))
                .map_err(fail)?
                .unwrap_or_default();
            let peak = memory::peak_bytes();
            timings.push(StepTiming {
                step: index + 1,
                name: info.name.to_string(),
                seconds: t0.elapsed().as_secs_f64(),
                peak_bytes: peak,
            });
            run_peak = run_peak.max(peak);
            log.trace.extend(trace.records.iter().map(|r| TracePoint {
                step: index + 1,
                name: info.name.to_string(),
                iteration: r.iteration,
                erosion_score: r.score.epsilon,
            }));
        } else {
            let mut one = recipe.clone();
            for (i, s) in one.steps.iter_mut().enumerate() {
                s.enabled = i == index;
            }
            let single = Pipeline::new(one, &reg)?;
            let progress = PipelineProgress::new();
            live.set(Current::Pipe(progress.clone()));
            let out = single.run_on(terrain, &progress)?;
            terrain = out.terrain;
            run_peak = run_peak.max(out.peak_bytes);
            timings.extend(out.timings);
        }
        if is_erosion {
            log.scores.push(StepScore {
                step: index + 1,
                name: info.name.to_string(),
                erosion_score: score_of(&terrain.height),
            });
        }
    }
    live.done.store(enabled.len(), Ordering::Relaxed);
    let out = RunOutput { terrain, timings, seconds: start.elapsed().as_secs_f64(), peak_bytes: run_peak };
    Ok((out, log))
}
