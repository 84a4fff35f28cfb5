//! `terrasynth eval`: the evaluation of seed 000 (§10 of SPEC.md) for every generator in the
//! registry: median wall time of several runs at each size on one thread and on all threads,
//! peak heap memory, consistency (same seed twice, and 1 thread vs all threads, give the same
//! bits), and robustness (each numeric parameter at the ends of its range gives a finite map
//! or a clear error, never a panic or NaN). Writes `eval.md` and `time.png` (log-log time vs
//! size) into `--out`.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, RunOutput, StepEntry, registry};
use terrasynth::step::ParamKind;
use terrasynth::step::{Category, ParamValue, StepInfo};

use crate::plot::{Series, loglog};

/// Arguments of `terrasynth eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Map sides to time, comma-separated.
    #[arg(long, default_value = "257,513,1025,2049,4097")]
    pub sizes: String,
    /// Runs per measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Only these generators (comma-separated); default all.
    #[arg(long)]
    pub only: Option<String>,
    /// Output folder for eval.md and time.png.
    #[arg(long, default_value = "eval")]
    pub out: PathBuf,
}

/// Side of the maps used for the extreme-parameter checks.
const EXTREME_SIDE: usize = 65;
/// Seed of every eval run.
const EVAL_SEED: u64 = 2024;

/// One size's measurements for one generator.
struct Timing {
    side: usize,
    one_thread_s: f64,
    all_threads_s: f64,
    peak_bytes: Option<usize>,
    same_bits: bool,
}

/// Outcome of one extreme-parameter case.
enum Extreme {
    Finite,
    ClearError,
    Failure(String),
}

fn parse_sizes(text: &str) -> anyhow::Result<Vec<usize>> {
    let mut sizes = Vec::new();
    for part in text.split(',') {
        let n: usize = part.trim().parse().ok().filter(|n| (2..=16_385).contains(n)).with_context(|| {
            format!("invalid --sizes entry `{part}`: allowed integers in 2..=16385, comma-separated")
        })?;
        sizes.push(n);
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) }
}

/// Times `pipeline` `runs` times on `pool`; returns the median seconds, the largest peak heap,
/// and the bits of the first run.
fn time_on(
    pool: &rayon::ThreadPool,
    pipeline: &Pipeline,
    runs: usize,
) -> anyhow::Result<(f64, Option<usize>, Vec<u32>, bool)> {
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
) -> anyhow::Result<Timing> {
    let reg = registry();
    let pipeline = Pipeline::new(recipe_for(info, side, StepEntry::new(info.name)), &reg)?;
    let (one_s, peak1, bits1, same1) = time_on(one, &pipeline, runs)?;
    let (all_s, peak2, bits2, same2) = time_on(all, &pipeline, runs)?;
    Ok(Timing {
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

fn run_extreme(info: &StepInfo, key: &str, value: &ParamValue) -> Extreme {
    let reg = registry();
    let entry = StepEntry::new(info.name).with(key, value.clone());
    let recipe = recipe_for(info, EXTREME_SIDE, entry);
    let outcome = std::panic::catch_unwind(|| -> terrasynth::Result<RunOutput> {
        Pipeline::new(recipe, &reg)?.run(&PipelineProgress::new())
    });
    match outcome {
        Ok(Ok(out)) if out.terrain.height.as_slice().iter().all(|v| v.is_finite()) => Extreme::Finite,
        Ok(Ok(_)) => Extreme::Failure(format!("{key} = {value}: non-finite heights")),
        Ok(Err(e)) if !e.to_string().is_empty() => Extreme::ClearError,
        Ok(Err(_)) => Extreme::Failure(format!("{key} = {value}: empty error message")),
        Err(_) => Extreme::Failure(format!("{key} = {value}: panicked")),
    }
}

pub fn run(args: &EvalArgs) -> anyhow::Result<()> {
    let sizes = parse_sizes(&args.sizes)?;
    if !(1..=100).contains(&args.runs) {
        bail!("invalid --runs {}: allowed an integer in 1..=100", args.runs);
    }
    let reg = registry();
    let only: Option<Vec<&str>> = args.only.as_deref().map(|s| s.split(',').map(str::trim).collect());
    if let Some(names) = &only {
        for n in names {
            if !reg.iter().any(|s| s.name == *n && s.category == Category::Generate) {
                bail!("--only: `{n}` is not a generator in the registry");
            }
        }
    }
    // Generators that cannot run on their defaults (e.g. `import` needs a file) are listed,
    // not measured.
    let mut skipped = Vec::new();
    let generators: Vec<&StepInfo> = reg
        .iter()
        .filter(|s| s.category == Category::Generate)
        .filter(|s| only.as_ref().is_none_or(|o| o.contains(&s.name)))
        .filter(|s| match Pipeline::new(recipe_for(s, EXTREME_SIDE, StepEntry::new(s.name)), &reg) {
            Ok(_) => true,
            Err(e) => {
                skipped.push(format!("{}: {e}", s.name));
                false
            }
        })
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let all = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;

    let mut md = String::new();
    writeln!(md, "# terrasynth eval\n")?;
    writeln!(
        md,
        "`terrasynth eval --sizes {} --runs {}` (terrasynth {}, {} threads available, seed {EVAL_SEED}, \
         default parameters). Times are medians of {} runs of the generator step alone; peak heap is the \
         largest live heap while the step ran (counting allocator), including the map itself \
         (4 bytes per cell). \"same bits\": every run, on 1 thread and on {threads}, gave identical \
         heights.\n",
        args.sizes,
        args.runs,
        env!("CARGO_PKG_VERSION"),
        threads,
        args.runs
    )?;
    writeln!(
        md,
        "| generator | side | 1 thread (ms) | {threads} threads (ms) | speed-up | peak heap (MiB) | same bits |"
    )?;
    writeln!(md, "|---|---:|---:|---:|---:|---:|:---:|")?;
    let mut series = Vec::new();
    for info in &generators {
        let mut points = Vec::new();
        for &side in &sizes {
            eprintln!("eval: {} at {side}x{side}", info.name);
            let t = match measure(info, side, args.runs, &one, &all) {
                Ok(t) => t,
                Err(e) => {
                    skipped.push(format!("{} at {side}: {e}", info.name));
                    break;
                }
            };
            let mib = t.peak_bytes.map_or("n/a".to_string(), |b| format!("{:.1}", b as f64 / 1048576.0));
            writeln!(
                md,
                "| {} | {} | {:.2} | {:.2} | {:.2} | {mib} | {} |",
                info.name,
                t.side,
                t.one_thread_s * 1e3,
                t.all_threads_s * 1e3,
                t.one_thread_s / t.all_threads_s.max(1e-12),
                if t.same_bits { "yes" } else { "**NO**" }
            )?;
            points.push((side as f64, t.all_threads_s.max(1e-6)));
        }
        series.push(Series { name: info.name.to_string(), points });
    }
    if !skipped.is_empty() {
        writeln!(md, "\nNot measured (cannot run with default parameters):\n")?;
        for s in &skipped {
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
    let mut failures = Vec::new();
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // panics are counted, not printed
    for info in &generators {
        let cases = extreme_cases(info);
        let (mut finite, mut clear, mut failed) = (0, 0, 0);
        for (key, value) in &cases {
            match run_extreme(info, key, value) {
                Extreme::Finite => finite += 1,
                Extreme::ClearError => clear += 1,
                Extreme::Failure(why) => {
                    failed += 1;
                    failures.push(format!("{}: {why}", info.name));
                }
            }
        }
        writeln!(md, "| {} | {} | {finite} | {clear} | {failed} |", info.name, cases.len())?;
    }
    std::panic::set_hook(previous_hook);
    if !failures.is_empty() {
        writeln!(md, "\nFailures:\n")?;
        for f in &failures {
            writeln!(md, "- {f}")?;
        }
    }
    writeln!(md, "\n![time vs size](time.png)")?;

    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    terrasynth::io::atomic::write_bytes_atomic(args.out.join("eval.md"), md.as_bytes())?;
    let img = loglog(&series, "MAP SIDE (CELLS)", &format!("SECONDS ({threads} THREADS), LOG-LOG"));
    terrasynth::io::png::write_rgb8(
        args.out.join("time.png"),
        img.width() as usize,
        img.height() as usize,
        img.as_raw(),
    )?;
    print!("{md}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_sorted_and_checked() {
        assert_eq!(parse_sizes("513, 257,257").unwrap(), vec![257, 513]);
        assert!(parse_sizes("1").is_err());
        assert!(parse_sizes("65,x").is_err());
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
