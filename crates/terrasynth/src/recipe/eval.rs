//! The evaluation of seed 000 (SPEC.md §10) as plain data. For every generator in the
//! registry: median wall time of several runs (10 by default, as the seed) at each size on one
//! thread and on all threads, peak heap memory, consistency (same seed twice, and 1 thread vs
//! all threads, give the same bits) and the seed's realism criteria over `runs` seeds
//! (peaks and valleys per area, spectral slope, drainage figures: [`crate::analyze::realism`]).
//! For **every step** (generators, shaping, erosion, hydrology): robustness, each numeric
//! parameter at the ends of its range giving a finite map or a clear error, never a panic or
//! NaN; steps other than generators run on a default `noise` terrain. `terrasynth eval` prints
//! [`Evaluation::markdown`] and draws [`Evaluation::series`] with
//! [`crate::render::plot::loglog`].

use std::fmt::Write as _;

use serde::Serialize;

use crate::analyze::realism::{Realism, RealismOptions};
use crate::recipe::{Pipeline, PipelineProgress, Recipe, RunOutput, StepEntry, registry};
use crate::render::plot::Series;
use crate::step::{Category, ParamKind, ParamValue, StepInfo};
use crate::{Error, Result};

/// Side of the maps used for the extreme-parameter checks.
pub const EXTREME_SIDE: usize = 65;
/// Default runs per measurement: seed 000 repeats each measurement 10 times.
pub const DEFAULT_EVAL_RUNS: usize = 10;
/// Default side of the realism maps.
pub const DEFAULT_REALISM_SIDE: usize = 257;
/// Default wall-clock budget of one extreme case, seconds: a case still running then (e.g.
/// 10⁶ erosion iterations) is cancelled through the pipeline's cancel flag and listed as
/// stopped, not failed (it showed no panic and no error until then).
pub const DEFAULT_EXTREME_BUDGET_S: f64 = 20.0;
/// The generator the other steps' extreme cases run on (at its defaults).
pub const BASE_GENERATOR: &str = "noise";
/// Seed of every eval run.
pub const EVAL_SEED: u64 = 2024;
/// Largest map side [`evaluate`] accepts.
pub const MAX_EVAL_SIDE: usize = 16_385;
/// Most runs per measurement.
pub const MAX_EVAL_RUNS: usize = 100;

/// What to evaluate.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalOptions {
    /// Map sides to time (each in 2..=[`MAX_EVAL_SIDE`]), in increasing order.
    pub sizes: Vec<usize>,
    /// Runs per measurement, 1..=[`MAX_EVAL_RUNS`] (the median is reported).
    pub runs: usize,
    /// Only these steps (any category; timings and realism are for generators); `None`: every
    /// step of the registry.
    pub only: Option<Vec<String>>,
    /// Threads of the "all threads" measurements.
    pub threads: usize,
    /// Side of the realism maps (16..=[`MAX_EVAL_SIDE`]); each generator runs with seeds
    /// `EVAL_SEED + i`, `i < runs`, at its defaults, cell size and height scale of a new recipe.
    pub realism_side: usize,
    /// Wall-clock budget of one extreme case, seconds (≥ 0, finite).
    pub extreme_budget_s: f64,
}

/// One size's measurements for one generator.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizeTiming {
    /// Map side, cells.
    pub side: usize,
    /// Median seconds on one thread.
    pub one_thread_s: f64,
    /// Median seconds on [`EvalOptions::threads`] threads.
    pub all_threads_s: f64,
    /// Largest live heap while the step ran, bytes (`None` without the counting allocator).
    pub peak_bytes: Option<usize>,
    /// Every run, on 1 thread and on all, gave identical heights.
    pub same_bits: bool,
}

/// The extreme-parameter cases of one generator.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ExtremeCounts {
    /// Cases run ([`extreme_cases`]: two per number, list and flag, one per choice).
    pub cases: usize,
    /// Cases that gave a finite map.
    pub finite: usize,
    /// Cases that gave a clear error.
    pub clear_error: usize,
    /// Cases cancelled at the time budget (no failure until then), each `key = value`.
    pub stopped: Vec<String>,
    /// Failed cases: panic, non-finite heights or an empty message, each `key = value: why`.
    pub failures: Vec<String>,
}

/// Mean and population standard deviation of one figure over the realism runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    /// Mean over the runs where the figure is defined.
    pub mean: f64,
    /// Population standard deviation.
    pub sd: f64,
    /// Runs where it is defined (e.g. a ratio without pits is not).
    pub n: usize,
}

impl Spread {
    fn of(values: impl Iterator<Item = Option<f64>>) -> Self {
        let v: Vec<f64> = values.flatten().filter(|v| v.is_finite()).collect();
        let n = v.len();
        if n == 0 {
            return Self::default();
        }
        let mean = v.iter().sum::<f64>() / n as f64;
        let sd = (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64).sqrt();
        Self { mean, sd, n }
    }
}

/// The seed's realism criteria for one generator, over `runs` seeds, no sea (the raw field).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RealismSummary {
    /// Map side.
    pub side: usize,
    /// Seeds measured.
    pub runs: usize,
    /// Peaks per km².
    pub peaks_per_km2: Spread,
    /// Pits (valley bottoms without outlet) per km².
    pub pits_per_km2: Spread,
    /// Spectral slope β (fractality).
    pub spectral_beta: Spread,
    /// Share of the land draining to an outlet without crossing a closed depression.
    pub drained_fraction: Spread,
    /// The same, ignoring depressions up to 1 m deep.
    pub drained_fraction_tolerant: Spread,
    /// Hack's exponent.
    pub hack_exponent: Spread,
    /// Drainage density, km/km².
    pub drainage_density_per_km: Spread,
    /// 8-fold slope-aspect harmonic (grid directions).
    pub isotropy_h8: Spread,
    /// Runs that failed, with the error.
    pub errors: Vec<String>,
}

/// Everything measured for one generator.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GeneratorEval {
    /// Step type.
    pub name: String,
    /// One entry per measured size, in increasing size (stops at the first size that fails).
    pub timings: Vec<SizeTiming>,
    /// Range-end cases.
    pub extremes: ExtremeCounts,
    /// Realism criteria over the runs.
    pub realism: RealismSummary,
}

/// The range-end cases of a step that is not a generator (run on a default `noise` terrain).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepExtremes {
    /// Step type.
    pub name: String,
    /// Its category (`Shape`, `Erode`, `Hydro`).
    pub category: String,
    /// Range-end cases.
    pub extremes: ExtremeCounts,
}

/// The whole evaluation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evaluation {
    /// The options it ran with.
    #[serde(skip)]
    pub options: EvalOptions,
    /// Measured generators, in registry order.
    pub generators: Vec<GeneratorEval>,
    /// The other steps' range-end cases, in registry order.
    pub processes: Vec<StepExtremes>,
    /// Generators (or sizes) not measured, with the reason.
    pub skipped: Vec<String>,
}

/// A recipe running `entry` alone (a generator) or after a default [`BASE_GENERATOR`] (any
/// other step).
fn recipe_for(info: &StepInfo, side: usize, entry: StepEntry) -> Recipe {
    let mut r = Recipe::new(format!("eval-{}", info.name));
    (r.width, r.height, r.seed) = (side, side, EVAL_SEED);
    r.steps = if info.category == Category::Generate {
        vec![entry]
    } else {
        vec![StepEntry::new(BASE_GENERATOR), entry]
    };
    r
}

/// The realism figures of `info` at its defaults over `runs` seeds.
fn realism_of(info: &StepInfo, side: usize, runs: usize) -> RealismSummary {
    let mut figures = Vec::new();
    let mut errors = Vec::new();
    for i in 0..runs {
        let mut recipe = recipe_for(info, side, StepEntry::new(info.name));
        recipe.seed = EVAL_SEED + i as u64;
        let scale = recipe.exports.height_scale;
        let r = Pipeline::new(recipe, &registry()).and_then(|p| p.run(&PipelineProgress::new())).and_then(
            |out| {
                let o = RealismOptions { height_scale_m: scale, ..Default::default() };
                Realism::compute(&out.terrain.height, &o)
            },
        );
        match r {
            Ok(r) => figures.push(r),
            Err(e) => errors.push(format!("seed {}: {e}", EVAL_SEED + i as u64)),
        }
    }
    let spread = |f: &dyn Fn(&Realism) -> Option<f64>| Spread::of(figures.iter().map(f));
    RealismSummary {
        side,
        runs,
        peaks_per_km2: spread(&|r| Some(r.peaks_per_km2)),
        pits_per_km2: spread(&|r| Some(r.pits_per_km2)),
        spectral_beta: spread(&|r| r.spectral_beta),
        drained_fraction: spread(&|r| Some(r.drained_fraction)),
        drained_fraction_tolerant: spread(&|r| Some(r.drained_fraction_tolerant)),
        hack_exponent: spread(&|r| r.hack_exponent),
        drainage_density_per_km: spread(&|r| Some(r.drainage_density_per_km)),
        isotropy_h8: spread(&|r| Some(r.isotropy_h8)),
        errors,
    }
}

fn bits(out: &RunOutput) -> Vec<u32> {
    out.terrain.height.as_slice().iter().map(|v| v.to_bits()).collect()
}

/// Median of `v` (mean of the two middle values for an even count; NaN when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) }
}

/// Median seconds of `runs` runs of `pipeline` on `pool`, the largest peak heap, the bits of
/// the first run and whether every run gave them.
fn time_on(
    pool: &rayon::ThreadPool,
    pipeline: &Pipeline,
    runs: usize,
) -> Result<(f64, Option<usize>, Vec<u32>, bool)> {
    let mut secs = Vec::with_capacity(runs);
    let mut peak = None;
    let mut first: Option<Vec<u32>> = None;
    let mut same = true;
    for _ in 0..runs {
        let out = pool.install(|| pipeline.run(&PipelineProgress::new()))?;
        secs.push(out.timings.iter().map(|t| t.seconds).sum());
        peak = peak.max(out.timings.iter().filter_map(|t| t.peak_bytes).max());
        let b = bits(&out);
        match &first {
            None => first = Some(b),
            Some(f) => same &= *f == b,
        }
    }
    Ok((median(secs), peak, first.unwrap_or_default(), same))
}

fn measure(
    info: &StepInfo,
    side: usize,
    runs: usize,
    one: &rayon::ThreadPool,
    all: &rayon::ThreadPool,
) -> Result<SizeTiming> {
    let pipeline = Pipeline::new(recipe_for(info, side, StepEntry::new(info.name)), &registry())?;
    let (one_s, peak1, bits1, same1) = time_on(one, &pipeline, runs)?;
    let (all_s, peak2, bits2, same2) = time_on(all, &pipeline, runs)?;
    Ok(SizeTiming {
        side,
        one_thread_s: one_s,
        all_threads_s: all_s,
        peak_bytes: peak1.max(peak2),
        same_bits: same1 && same2 && bits1 == bits2,
    })
}

/// The range-end cases of a step, as (key, value): each numeric parameter at its minimum and
/// at its maximum; each list at its longest allowed length, filled with its smallest and with
/// its largest element (for `river-sources` that is 256 sources on the first cell, then 256
/// far outside the map); each choice once per name (every mode and sweep runs); each flag
/// false and true.
fn extreme_cases(info: &StepInfo) -> Vec<(String, ParamValue)> {
    let mut cases = Vec::new();
    for p in info.params {
        let name = p.name.to_string();
        match p.kind {
            ParamKind::Float { min, max } => {
                cases.push((name.clone(), ParamValue::Number(min)));
                cases.push((name, ParamValue::Number(max)));
            }
            ParamKind::Int { min, max } => {
                cases.push((name.clone(), ParamValue::Number(min as f64)));
                cases.push((name, ParamValue::Number(max as f64)));
            }
            ParamKind::List { min, max, max_len, .. } if max_len > 0 => {
                cases.push((name.clone(), ParamValue::List(vec![min; max_len])));
                cases.push((name, ParamValue::List(vec![max; max_len])));
            }
            ParamKind::Choice(names) => {
                cases.extend(names.iter().map(|c| (name.clone(), ParamValue::Text((*c).to_string()))));
            }
            ParamKind::Bool => {
                cases.push((name.clone(), ParamValue::Bool(false)));
                cases.push((name, ParamValue::Bool(true)));
            }
            ParamKind::List { .. } | ParamKind::Text | ParamKind::LegacyText => {}
        }
    }
    cases
}

/// A case as `key = value` for the report; a list of one repeated element (the list cases)
/// as `key = [v; n]`.
fn case_text(key: &str, value: &ParamValue) -> String {
    match value {
        ParamValue::List(l) if !l.is_empty() && l.iter().all(|v| v == &l[0]) => {
            format!("{key} = [{}; {}]", l[0], l.len())
        }
        other => format!("{key} = {other}"),
    }
}

/// What one range-end case gave.
enum Outcome {
    Finite,
    ClearError,
    /// Cancelled at the budget.
    Stopped,
}

/// Runs one range-end case with a wall-clock budget (a watchdog thread cancels the run through
/// its progress handle when the budget runs out); `Err(why)` is a failure.
fn run_extreme(
    info: &StepInfo,
    key: &str,
    value: &ParamValue,
    budget_s: f64,
) -> std::result::Result<Outcome, String> {
    let entry = StepEntry::new(info.name).with(key, value.clone());
    let recipe = recipe_for(info, EXTREME_SIDE, entry);
    let progress = PipelineProgress::new();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let outcome = std::thread::scope(|scope| {
        let watch = progress.clone();
        scope.spawn(move || {
            if done_rx.recv_timeout(std::time::Duration::from_secs_f64(budget_s)).is_err() {
                watch.cancel();
            }
        });
        let r = std::panic::catch_unwind(|| -> Result<RunOutput> {
            Pipeline::new(recipe, &registry())?.run(&progress)
        });
        let _ = done_tx.send(());
        r
    });
    match outcome {
        Ok(Ok(out)) if out.terrain.height.as_slice().iter().all(|v| v.is_finite()) => Ok(Outcome::Finite),
        Ok(Ok(_)) => Err(format!("{}: non-finite heights", case_text(key, value))),
        Ok(Err(Error::Cancelled)) if progress.is_cancelled() => Ok(Outcome::Stopped),
        Ok(Err(e)) if !e.to_string().is_empty() => Ok(Outcome::ClearError),
        Ok(Err(_)) => Err(format!("{}: empty error message", case_text(key, value))),
        Err(_) => Err(format!("{}: panicked", case_text(key, value))),
    }
}

/// Runs the evaluation. `on_measure(generator, side)` is called before each timing (a
/// progress line). Panics of the extreme cases are caught and counted; the process's panic
/// hook is silenced while they run and restored afterwards.
///
/// Errors: a side outside 2..=[`MAX_EVAL_SIDE`], `runs` outside 1..=[`MAX_EVAL_RUNS`], a name
/// in `only` that is not a generator, or a thread pool that cannot start.
pub fn evaluate(options: &EvalOptions, on_measure: &mut dyn FnMut(&str, usize)) -> Result<Evaluation> {
    if let Some(&side) = options.sizes.iter().find(|s| !(2..=MAX_EVAL_SIDE).contains(s)) {
        return Err(Error::param("sizes", side, format!("integers in 2..={MAX_EVAL_SIDE}")));
    }
    if !(1..=MAX_EVAL_RUNS).contains(&options.runs) {
        return Err(Error::param("runs", options.runs, format!("an integer in 1..={MAX_EVAL_RUNS}")));
    }
    if !(options.extreme_budget_s.is_finite() && (0.0..=1.0e6).contains(&options.extreme_budget_s)) {
        return Err(Error::param("extreme-budget", options.extreme_budget_s, "seconds in [0, 1000000]"));
    }
    if !(16..=MAX_EVAL_SIDE).contains(&options.realism_side) {
        return Err(Error::param(
            "realism-side",
            options.realism_side,
            format!("an integer in 16..={MAX_EVAL_SIDE}"),
        ));
    }
    let reg = registry();
    if let Some(names) = &options.only {
        for n in names {
            if !reg.iter().any(|s| s.name == n) {
                return Err(Error::param("only", n, "step types in the registry (see `terrasynth steps`)"));
            }
        }
    }
    // Steps that cannot run on their defaults (e.g. `import` needs a file) are listed, not
    // measured.
    let mut skipped = Vec::new();
    let steps: Vec<&StepInfo> = reg
        .iter()
        .filter(|s| options.only.as_ref().is_none_or(|o| o.iter().any(|n| n == s.name)))
        .filter(|s| match Pipeline::new(recipe_for(s, EXTREME_SIDE, StepEntry::new(s.name)), &reg) {
            Ok(_) => true,
            Err(e) => {
                skipped.push(format!("{}: {e}", s.name));
                false
            }
        })
        .collect();
    let generators: Vec<&StepInfo> =
        steps.iter().copied().filter(|s| s.category == Category::Generate).collect();
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| Error::Threads { threads: n, message: e.to_string() })
    };
    let (one, all) = (pool(1)?, pool(options.threads)?);
    let mut out = Vec::new();
    for info in &generators {
        let mut timings = Vec::new();
        for &side in &options.sizes {
            on_measure(info.name, side);
            match measure(info, side, options.runs, &one, &all) {
                Ok(t) => timings.push(t),
                Err(e) => {
                    skipped.push(format!("{} at {side}: {e}", info.name));
                    break;
                }
            }
        }
        on_measure(info.name, options.realism_side);
        let realism = all.install(|| realism_of(info, options.realism_side, options.runs));
        out.push(GeneratorEval {
            name: info.name.to_string(),
            timings,
            extremes: ExtremeCounts::default(),
            realism,
        });
    }
    let mut processes: Vec<StepExtremes> = steps
        .iter()
        .filter(|s| s.category != Category::Generate)
        .map(|s| StepExtremes {
            name: s.name.to_string(),
            category: format!("{:?}", s.category),
            extremes: ExtremeCounts::default(),
        })
        .collect();
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // panics are counted, not printed
    let targets = generators.iter().zip(out.iter_mut().map(|g| &mut g.extremes)).chain(
        steps
            .iter()
            .filter(|s| s.category != Category::Generate)
            .zip(processes.iter_mut().map(|p| &mut p.extremes)),
    );
    for (info, counts) in targets {
        let cases = extreme_cases(info);
        counts.cases = cases.len();
        for (key, value) in &cases {
            match all.install(|| run_extreme(info, key, value, options.extreme_budget_s)) {
                Ok(Outcome::Finite) => counts.finite += 1,
                Ok(Outcome::ClearError) => counts.clear_error += 1,
                Ok(Outcome::Stopped) => counts.stopped.push(case_text(key, value)),
                Err(why) => counts.failures.push(why),
            }
        }
    }
    std::panic::set_hook(previous_hook);
    Ok(Evaluation { options: options.clone(), generators: out, processes, skipped })
}

impl Evaluation {
    /// One series per generator for the time plot: (side, seconds on all threads, at least
    /// 1 µs).
    pub fn series(&self) -> Vec<Series> {
        self.generators
            .iter()
            .map(|g| Series {
                name: g.name.clone(),
                points: g.timings.iter().map(|t| (t.side as f64, t.all_threads_s.max(1e-6))).collect(),
            })
            .collect()
    }

    /// The report `eval.md`: the timing table, the generators not measured, the extreme
    /// parameter table, its failures and a link to `time.png`. `command` is the invocation
    /// shown in its first paragraph.
    pub fn markdown(&self, command: &str) -> String {
        let o = &self.options;
        let threads = o.threads;
        let mut md = String::new();
        // Writing into a String cannot fail.
        let _ = self.write_markdown(&mut md, command, threads, o.runs);
        md
    }

    fn write_markdown(
        &self,
        md: &mut String,
        command: &str,
        threads: usize,
        runs: usize,
    ) -> std::fmt::Result {
        writeln!(md, "# terrasynth eval\n")?;
        writeln!(
            md,
            "`{command}` (terrasynth {}, {} threads available, seed {EVAL_SEED}, \
             default parameters). Times are medians of {} runs of the generator step alone; peak heap is the \
             largest live heap while the step ran (counting allocator), including the map itself \
             (4 bytes per cell). \"same bits\": every run, on 1 thread and on {threads}, gave identical \
             heights.\n",
            env!("CARGO_PKG_VERSION"),
            threads,
            runs
        )?;
        writeln!(
            md,
            "| generator | side | 1 thread (ms) | {threads} threads (ms) | speed-up | peak heap (MiB) | same bits |"
        )?;
        writeln!(md, "|---|---:|---:|---:|---:|---:|:---:|")?;
        for g in &self.generators {
            for t in &g.timings {
                let mib = t.peak_bytes.map_or("n/a".to_string(), |b| format!("{:.1}", b as f64 / 1048576.0));
                writeln!(
                    md,
                    "| {} | {} | {:.2} | {:.2} | {:.2} | {mib} | {} |",
                    g.name,
                    t.side,
                    t.one_thread_s * 1e3,
                    t.all_threads_s * 1e3,
                    t.one_thread_s / t.all_threads_s.max(1e-12),
                    if t.same_bits { "yes" } else { "**NO**" }
                )?;
            }
        }
        if !self.skipped.is_empty() {
            writeln!(md, "\nNot measured (cannot run with default parameters):\n")?;
            for s in &self.skipped {
                writeln!(md, "- {s}")?;
            }
        }
        let side = self.options.realism_side;
        writeln!(md, "\n## Realism ({side}x{side}, {runs} seeds from {EVAL_SEED}, default parameters)\n")?;
        writeln!(
            md,
            "Seed 000's realism criteria (terrasynth::analyze::realism; docs/ANALYZE.md has the real-DEM \
             ranges): peaks and pits (valley bottoms without outlet) per km², spectral slope β, the share of \
             land draining freely, Hack's exponent, drainage density and the 8-fold aspect harmonic H8. \
             Raw generator fields, no sea, recipe cell size and height scale; mean ± sd over the seeds.\n"
        )?;
        writeln!(
            md,
            "| generator | peaks/km² | pits/km² | β | drained | drained (1 m tol.) | Hack h | DD (km/km²) | H8 |"
        )?;
        writeln!(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")?;
        let f = |s: &Spread, d: usize| {
            if s.n == 0 { "n/a".to_string() } else { format!("{:.d$} ± {:.d$}", s.mean, s.sd) }
        };
        for g in &self.generators {
            let r = &g.realism;
            writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                g.name,
                f(&r.peaks_per_km2, 1),
                f(&r.pits_per_km2, 1),
                f(&r.spectral_beta, 2),
                f(&r.drained_fraction, 3),
                f(&r.drained_fraction_tolerant, 3),
                f(&r.hack_exponent, 2),
                f(&r.drainage_density_per_km, 2),
                f(&r.isotropy_h8, 3)
            )?;
        }
        for g in &self.generators {
            for e in &g.realism.errors {
                writeln!(md, "- {}: {e}", g.name)?;
            }
        }
        writeln!(md, "\n## Extreme parameters ({EXTREME_SIDE}x{EXTREME_SIDE})\n")?;
        writeln!(
            md,
            "Each numeric parameter set to its minimum and to its maximum; each list at its longest \
             allowed length filled with its smallest and with its largest element; each choice (mode, \
             sweep, kind…) once per name; each flag false and true; the others at their defaults. \
             Steps other than generators run after a default `{BASE_GENERATOR}`. A case passes with a finite \
             map or a clear error; it fails on a panic, NaN/inf heights or an empty message. A case still \
             running after {} s is cancelled (pipeline cancel flag) and counted as stopped: no failure until \
             then, but not run to its end.\n",
            self.options.extreme_budget_s
        )?;
        writeln!(
            md,
            "| step | category | cases | finite map | clear error | stopped at budget | failures |"
        )?;
        writeln!(md, "|---|---|---:|---:|---:|---:|---:|")?;
        let all: Vec<(&str, &str, &ExtremeCounts)> = self
            .generators
            .iter()
            .map(|g| (g.name.as_str(), "Generate", &g.extremes))
            .chain(self.processes.iter().map(|p| (p.name.as_str(), p.category.as_str(), &p.extremes)))
            .collect();
        for (name, category, e) in &all {
            writeln!(
                md,
                "| {name} | {category} | {} | {} | {} | {} | {} |",
                e.cases,
                e.finite,
                e.clear_error,
                e.stopped.len(),
                e.failures.len()
            )?;
        }
        let failures: Vec<String> = all
            .iter()
            .flat_map(|(name, _, e)| e.failures.iter().map(move |f| format!("{name}: {f}")))
            .collect();
        if !failures.is_empty() {
            writeln!(md, "\nFailures:\n")?;
            for f in &failures {
                writeln!(md, "- {f}")?;
            }
        }
        let stopped: Vec<String> = all
            .iter()
            .flat_map(|(name, _, e)| e.stopped.iter().map(move |c| format!("{name}: {c}")))
            .collect();
        if !stopped.is_empty() {
            writeln!(
                md,
                "\nStopped at the {} s budget (no failure until then):\n",
                self.options.extreme_budget_s
            )?;
            for c in &stopped {
                writeln!(md, "- {c}")?;
            }
        }
        writeln!(md, "\n![time vs size](time.png)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn bad_options_are_one_clear_error() {
        let ok = EvalOptions {
            sizes: vec![17],
            runs: 1,
            only: Some(vec!["circles".into()]),
            threads: 1,
            realism_side: 17,
            extreme_budget_s: 5.0,
        };
        let bad_side = EvalOptions { sizes: vec![1], ..ok.clone() };
        assert!(evaluate(&bad_side, &mut |_, _| {}).unwrap_err().to_string().contains("2..=16385"));
        let bad_runs = EvalOptions { runs: 0, ..ok.clone() };
        assert!(evaluate(&bad_runs, &mut |_, _| {}).unwrap_err().to_string().contains("1..=100"));
        let bad_realism = EvalOptions { realism_side: 15, ..ok.clone() };
        assert!(evaluate(&bad_realism, &mut |_, _| {}).unwrap_err().to_string().contains("16..=16385"));
        let bad_budget = EvalOptions { extreme_budget_s: f64::NAN, ..ok.clone() };
        assert!(evaluate(&bad_budget, &mut |_, _| {}).unwrap_err().to_string().contains("extreme-budget"));
        let bad_name = EvalOptions { only: Some(vec!["no-such-step".into()]), ..ok };
        assert!(evaluate(&bad_name, &mut |_, _| {}).unwrap_err().to_string().contains("no-such-step"));
    }

    #[test]
    fn a_generator_and_a_process_are_measured_and_reported() {
        let options = EvalOptions {
            sizes: vec![9, 17],
            runs: 2,
            only: Some(vec!["circles".into(), "terrace".into()]),
            threads: 2,
            realism_side: 33,
            extreme_budget_s: 600.0,
        };
        let mut seen = Vec::new();
        let e = evaluate(&options, &mut |name, side| seen.push((name.to_string(), side))).unwrap();
        assert_eq!(
            seen,
            [("circles".to_string(), 9), ("circles".to_string(), 17), ("circles".to_string(), 33)]
        );
        assert_eq!(e.generators.len(), 1);
        let g = &e.generators[0];
        assert_eq!(g.timings.iter().map(|t| t.side).collect::<Vec<_>>(), [9, 17]);
        assert!(g.timings.iter().all(|t| t.same_bits));
        assert_eq!(g.extremes.cases, g.extremes.finite + g.extremes.clear_error + g.extremes.failures.len());
        assert!(g.extremes.failures.is_empty() && g.extremes.stopped.is_empty(), "{:?}", g.extremes);
        // Realism over the 2 seeds: the same figures as computed directly on each seed's map.
        let r = &g.realism;
        assert_eq!((r.side, r.runs, r.errors.len()), (33, 2, 0));
        let direct: Vec<Realism> = (0..2)
            .map(|i| {
                let mut recipe = recipe_for(
                    &registry().into_iter().find(|s| s.name == "circles").unwrap(),
                    33,
                    StepEntry::new("circles"),
                );
                recipe.seed = EVAL_SEED + i;
                let o = RealismOptions { height_scale_m: recipe.exports.height_scale, ..Default::default() };
                let out = Pipeline::new(recipe, &registry()).unwrap().run(&PipelineProgress::new()).unwrap();
                Realism::compute(&out.terrain.height, &o).unwrap()
            })
            .collect();
        let mean = (direct[0].peaks_per_km2 + direct[1].peaks_per_km2) / 2.0;
        assert!((r.peaks_per_km2.mean - mean).abs() < 1e-9 && r.peaks_per_km2.n == 2);
        assert!((r.peaks_per_km2.sd - (direct[0].peaks_per_km2 - mean).abs()).abs() < 1e-9);
        // The process: terrace's numeric parameters at both ends, on a noise terrain.
        assert_eq!(e.processes.len(), 1);
        let p = &e.processes[0];
        assert_eq!((p.name.as_str(), p.category.as_str()), ("terrace", "Shape"));
        let numeric = registry()
            .into_iter()
            .find(|s| s.name == "terrace")
            .unwrap()
            .params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Int { .. } | ParamKind::Float { .. }))
            .count();
        assert_eq!(p.extremes.cases, 2 * numeric);
        assert_eq!(p.extremes.cases, p.extremes.finite + p.extremes.clear_error + p.extremes.failures.len());
        let md = e.markdown("terrasynth eval");
        assert!(md.contains("| circles | 17 |"), "{md}");
        assert!(md.contains("| terrace | Shape | "), "{md}");
        assert!(md.contains("## Realism (33x33, 2 seeds"), "{md}");
        assert_eq!(e.series()[0].points.iter().map(|p| p.0).collect::<Vec<_>>(), [9.0, 17.0]);
    }

    /// Lists, choices and flags have cases too (river-sources had none while only numbers
    /// did): its two lists at their longest (512 numbers) filled with the smallest and the
    /// largest element, and each of its three modes; sources on the first cell give a map, the
    /// largest give one clear error naming the map's size.
    #[test]
    fn lists_and_choices_have_range_end_cases() {
        let info = registry().into_iter().find(|s| s.name == "river-sources").unwrap();
        let cases = extreme_cases(&info);
        let shown: Vec<String> = cases.iter().map(|(k, v)| case_text(k, v)).collect();
        assert_eq!(
            shown,
            [
                "sources = [0; 512]",
                "sources = [1000000000; 512]",
                "sources-m = [0; 512]",
                "sources-m = [1000000000000; 512]",
                "mode = \"walk-v1\"",
                "mode = \"backtrack-v2\"",
                "mode = \"filled\"",
            ]
        );
        let outcomes: Vec<&str> = cases
            .iter()
            .map(|(k, v)| match run_extreme(&info, k, v, 600.0) {
                Ok(Outcome::Finite) => "finite",
                Ok(Outcome::ClearError) => "error",
                Ok(Outcome::Stopped) => "stopped",
                Err(why) => panic!("{why}"),
            })
            .collect();
        assert_eq!(outcomes, ["finite", "error", "finite", "error", "finite", "finite", "finite"]);
        let far = StepEntry::new("river-sources").with("sources", ParamValue::List(vec![1.0e9; 512]));
        let err = Pipeline::new(recipe_for(&info, EXTREME_SIDE, far), &registry())
            .and_then(|p| p.run(&PipelineProgress::new()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("sources") && err.contains("inside the 65x65 map"), "{err}");
        // A flag has both values.
        let flag = registry()
            .into_iter()
            .find(|s| s.params.iter().any(|p| matches!(p.kind, ParamKind::Bool)))
            .expect("a step with a flag");
        let key = flag.params.iter().find(|p| matches!(p.kind, ParamKind::Bool)).unwrap().name;
        let values: Vec<ParamValue> =
            extreme_cases(&flag).into_iter().filter(|(k, _)| k == key).map(|(_, v)| v).collect();
        assert_eq!(values, [ParamValue::Bool(false), ParamValue::Bool(true)]);
    }

    #[test]
    fn a_case_over_the_budget_is_stopped_not_failed() {
        // 10⁶ thermal sweeps take minutes; a zero budget cancels at once (the first check of
        // the cancel flag), so the case is stopped.
        let info = registry().into_iter().find(|s| s.name == "thermal").unwrap();
        let r = run_extreme(&info, "iterations", &ParamValue::Number(1.0e6), 0.0);
        assert!(matches!(r, Ok(Outcome::Stopped)), "{:?}", r.err());
        // A generous budget lets a quick case finish.
        let r = run_extreme(&info, "iterations", &ParamValue::Number(0.0), 600.0);
        assert!(matches!(r, Ok(Outcome::Finite)), "{:?}", r.err());
    }

    #[test]
    fn spread_is_mean_and_population_sd_of_defined_values() {
        let s = Spread::of([Some(1.0), None, Some(3.0), Some(f64::INFINITY)].into_iter());
        assert_eq!((s.mean, s.sd, s.n), (2.0, 1.0, 2));
        assert_eq!(Spread::of(std::iter::empty()), Spread::default());
    }
}
