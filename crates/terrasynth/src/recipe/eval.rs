//! The evaluation of seed 000 (SPEC.md §10) for every generator in the registry, as plain data:
//! median wall time of several runs at each size on one thread and on all threads, peak heap
//! memory, consistency (same seed twice, and 1 thread vs all threads, give the same bits), and
//! robustness (each numeric parameter at the ends of its range gives a finite map or a clear
//! error, never a panic or NaN). `terrasynth eval` prints [`Evaluation::markdown`] and draws
//! [`Evaluation::series`] with [`crate::render::plot::loglog`].

use std::fmt::Write as _;

use serde::Serialize;

use crate::recipe::{Pipeline, PipelineProgress, Recipe, RunOutput, StepEntry, registry};
use crate::render::plot::Series;
use crate::step::{Category, ParamKind, ParamValue, StepInfo};
use crate::{Error, Result};

/// Side of the maps used for the extreme-parameter checks.
pub const EXTREME_SIDE: usize = 65;
/// Seed of every eval run.
pub const EVAL_SEED: u64 = 2024;
/// Largest map side [`evaluate`] accepts.
pub const MAX_EVAL_SIDE: usize = 16_385;
/// Most runs per measurement.
pub const MAX_EVAL_RUNS: usize = 100;

/// What to evaluate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalOptions {
    /// Map sides to time (each in 2..=[`MAX_EVAL_SIDE`]), in increasing order.
    pub sizes: Vec<usize>,
    /// Runs per measurement, 1..=[`MAX_EVAL_RUNS`] (the median is reported).
    pub runs: usize,
    /// Only these generators; `None`: every generator of the registry.
    pub only: Option<Vec<String>>,
    /// Threads of the "all threads" measurements.
    pub threads: usize,
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
    /// Cases run (two per numeric parameter).
    pub cases: usize,
    /// Cases that gave a finite map.
    pub finite: usize,
    /// Cases that gave a clear error.
    pub clear_error: usize,
    /// Failed cases: panic, non-finite heights or an empty message, each `key = value: why`.
    pub failures: Vec<String>,
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
}

/// The whole evaluation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evaluation {
    /// The options it ran with.
    #[serde(skip)]
    pub options: EvalOptions,
    /// Measured generators, in registry order.
    pub generators: Vec<GeneratorEval>,
    /// Generators (or sizes) not measured, with the reason.
    pub skipped: Vec<String>,
}

fn recipe_for(info: &StepInfo, side: usize, entry: StepEntry) -> Recipe {
    let mut r = Recipe::new(format!("eval-{}", info.name));
    (r.width, r.height, r.seed) = (side, side, EVAL_SEED);
    r.steps = vec![entry];
    r
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

/// The numeric parameters' range ends, as (key, value) cases.
fn extreme_cases(info: &StepInfo) -> Vec<(String, ParamValue)> {
    let mut cases = Vec::new();
    for p in info.params {
        let (lo, hi) = match p.kind {
            ParamKind::Float { min, max } => (min, max),
            ParamKind::Int { min, max } => (min as f64, max as f64),
            _ => continue,
        };
        cases.push((p.name.to_string(), ParamValue::Number(lo)));
        cases.push((p.name.to_string(), ParamValue::Number(hi)));
    }
    cases
}

/// Runs one range-end case: `Ok(true)` a finite map, `Ok(false)` a clear error, `Err(why)` a
/// failure.
fn run_extreme(info: &StepInfo, key: &str, value: &ParamValue) -> std::result::Result<bool, String> {
    let entry = StepEntry::new(info.name).with(key, value.clone());
    let recipe = recipe_for(info, EXTREME_SIDE, entry);
    let outcome = std::panic::catch_unwind(|| -> Result<RunOutput> {
        Pipeline::new(recipe, &registry())?.run(&PipelineProgress::new())
    });
    match outcome {
        Ok(Ok(out)) if out.terrain.height.as_slice().iter().all(|v| v.is_finite()) => Ok(true),
        Ok(Ok(_)) => Err(format!("{key} = {value}: non-finite heights")),
        Ok(Err(e)) if !e.to_string().is_empty() => Ok(false),
        Ok(Err(_)) => Err(format!("{key} = {value}: empty error message")),
        Err(_) => Err(format!("{key} = {value}: panicked")),
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
    let reg = registry();
    if let Some(names) = &options.only {
        for n in names {
            if !reg.iter().any(|s| s.name == n && s.category == Category::Generate) {
                return Err(Error::param("only", n, "generators in the registry"));
            }
        }
    }
    // Generators that cannot run on their defaults (e.g. `import` needs a file) are listed,
    // not measured.
    let mut skipped = Vec::new();
    let generators: Vec<&StepInfo> = reg
        .iter()
        .filter(|s| s.category == Category::Generate)
        .filter(|s| options.only.as_ref().is_none_or(|o| o.iter().any(|n| n == s.name)))
        .filter(|s| match Pipeline::new(recipe_for(s, EXTREME_SIDE, StepEntry::new(s.name)), &reg) {
            Ok(_) => true,
            Err(e) => {
                skipped.push(format!("{}: {e}", s.name));
                false
            }
        })
        .collect();
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
        out.push(GeneratorEval { name: info.name.to_string(), timings, extremes: ExtremeCounts::default() });
    }
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // panics are counted, not printed
    for (info, g) in generators.iter().zip(&mut out) {
        let cases = extreme_cases(info);
        g.extremes.cases = cases.len();
        for (key, value) in &cases {
            match run_extreme(info, key, value) {
                Ok(true) => g.extremes.finite += 1,
                Ok(false) => g.extremes.clear_error += 1,
                Err(why) => g.extremes.failures.push(why),
            }
        }
    }
    std::panic::set_hook(previous_hook);
    Ok(Evaluation { options: options.clone(), generators: out, skipped })
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
        writeln!(md, "\n## Extreme parameters ({EXTREME_SIDE}x{EXTREME_SIDE})\n")?;
        writeln!(
            md,
            "Each numeric parameter set to its minimum and to its maximum, the others at their defaults. \
             A case passes with a finite map or a clear error; it fails on a panic, NaN/inf heights or an \
             empty message.\n"
        )?;
        writeln!(md, "| generator | cases | finite map | clear error | failures |")?;
        writeln!(md, "|---|---:|---:|---:|---:|")?;
        for g in &self.generators {
            let e = &g.extremes;
            writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                g.name,
                e.cases,
                e.finite,
                e.clear_error,
                e.failures.len()
            )?;
        }
        let failures: Vec<String> = self
            .generators
            .iter()
            .flat_map(|g| g.extremes.failures.iter().map(move |f| format!("{}: {f}", g.name)))
            .collect();
        if !failures.is_empty() {
            writeln!(md, "\nFailures:\n")?;
            for f in &failures {
                writeln!(md, "- {f}")?;
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
        let ok = EvalOptions { sizes: vec![17], runs: 1, only: Some(vec!["circles".into()]), threads: 1 };
        let bad_side = EvalOptions { sizes: vec![1], ..ok.clone() };
        assert!(evaluate(&bad_side, &mut |_, _| {}).unwrap_err().to_string().contains("2..=16385"));
        let bad_runs = EvalOptions { runs: 0, ..ok.clone() };
        assert!(evaluate(&bad_runs, &mut |_, _| {}).unwrap_err().to_string().contains("1..=100"));
        let bad_name = EvalOptions { only: Some(vec!["thermal".into()]), ..ok };
        assert!(evaluate(&bad_name, &mut |_, _| {}).unwrap_err().to_string().contains("thermal"));
    }

    #[test]
    fn one_generator_is_measured_and_reported() {
        let options =
            EvalOptions { sizes: vec![9, 17], runs: 1, only: Some(vec!["circles".into()]), threads: 2 };
        let mut seen = Vec::new();
        let e = evaluate(&options, &mut |name, side| seen.push((name.to_string(), side))).unwrap();
        assert_eq!(seen, [("circles".to_string(), 9), ("circles".to_string(), 17)]);
        assert_eq!(e.generators.len(), 1);
        let g = &e.generators[0];
        assert_eq!(g.timings.iter().map(|t| t.side).collect::<Vec<_>>(), [9, 17]);
        assert!(g.timings.iter().all(|t| t.same_bits));
        assert_eq!(g.extremes.cases, g.extremes.finite + g.extremes.clear_error + g.extremes.failures.len());
        let md = e.markdown("terrasynth eval");
        assert!(md.contains("| circles | 17 |"), "{md}");
        assert_eq!(e.series()[0].points.iter().map(|p| p.0).collect::<Vec<_>>(), [9.0, 17.0]);
    }
}
