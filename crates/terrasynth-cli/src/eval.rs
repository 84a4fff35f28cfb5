//! `terrasynth eval`: parses the flags, runs `terrasynth::recipe::eval::evaluate` (timings at
//! each size on one and on all threads, peak memory, consistency, realism figures per
//! generator, extreme parameters of every step), writes
//! `eval.md` and `time.png` (log-log time vs size) into `--out` and prints the report.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use terrasynth::recipe::eval::{
    DEFAULT_EVAL_RUNS, DEFAULT_EXTREME_BUDGET_S, DEFAULT_REALISM_SIDE, EvalOptions, MAX_EVAL_SIDE, evaluate,
};
use terrasynth::render::plot::loglog;

/// Arguments of `terrasynth eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Map sides to time, comma-separated.
    #[arg(long, default_value = "257,513,1025,2049,4097")]
    pub sizes: String,
    /// Runs per measurement (the median is reported) and seeds of the realism figures;
    /// seed 000 repeats each measurement 10 times.
    #[arg(long, default_value_t = DEFAULT_EVAL_RUNS)]
    pub runs: usize,
    /// Only these steps (comma-separated, any category); default all.
    #[arg(long)]
    pub only: Option<String>,
    /// Side of the maps of the realism figures (16..=16385).
    #[arg(long, default_value_t = DEFAULT_REALISM_SIDE)]
    pub realism_side: usize,
    /// Seconds one extreme-parameter case may run before it is cancelled (listed as stopped).
    #[arg(long, default_value_t = DEFAULT_EXTREME_BUDGET_S)]
    pub extreme_budget: f64,
    /// Output folder for eval.md and time.png.
    #[arg(long, default_value = "eval")]
    pub out: PathBuf,
}

fn parse_sizes(text: &str) -> anyhow::Result<Vec<usize>> {
    let mut sizes = Vec::new();
    for part in text.split(',') {
        let n: usize =
            part.trim().parse().ok().filter(|n| (2..=MAX_EVAL_SIDE).contains(n)).with_context(|| {
                format!(
                    "invalid --sizes entry `{part}`: allowed integers in 2..={MAX_EVAL_SIDE}, comma-separated"
                )
            })?;
        sizes.push(n);
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
}

pub fn run(args: &EvalArgs) -> anyhow::Result<()> {
    let sizes = parse_sizes(&args.sizes)?;
    let options = EvalOptions {
        sizes,
        runs: args.runs,
        only: args.only.as_deref().map(|s| s.split(',').map(|n| n.trim().to_string()).collect()),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        realism_side: args.realism_side,
        extreme_budget_s: args.extreme_budget,
    };
    let eval = evaluate(&options, &mut |name, side| eprintln!("eval: {name} at {side}x{side}")).map_err(
        |e| match e {
            terrasynth::Error::InvalidParameter { name, value, allowed } => {
                anyhow::anyhow!("invalid --{name} {value}: allowed {allowed}")
            }
            other => other.into(),
        },
    )?;
    let md = eval.markdown(&format!(
        "terrasynth eval --sizes {} --runs {} --realism-side {}",
        args.sizes, args.runs, args.realism_side
    ));
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    terrasynth::io::atomic::write_bytes_atomic(args.out.join("eval.md"), md.as_bytes())?;
    let title = format!("SECONDS ({} THREADS), LOG-LOG", options.threads);
    let img = loglog(&eval.series(), "MAP SIDE (CELLS)", &title);
    terrasynth::io::png::write_rgb8(args.out.join("time.png"), img.width(), img.height(), img.as_rgb())?;
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
}
