//! `terrasynth generate`: load a preset, recipe or editor project (`--project`: its edits are
//! replayed after the pipeline), apply the flags, validate everything, run the pipeline on a
//! thread pool of the requested size, then write every output atomically.
//!
//! Order matters for "bad input writes nothing": all flags and the whole recipe are checked,
//! and the pipeline is run, before the output folder is created or touched.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use terrasynth::export::{self, ExportOptions, Window};
use terrasynth::io::engine::Engine;
use terrasynth::recipe::model::{MAX_LOD, MAX_RECIPE_SIDE};
use terrasynth::recipe::project::{Document, load_project};
use terrasynth::recipe::{
    ErosionLog, ErosionRecorder, Pipeline, PipelineProgress, Recipe, RunOutput, preset, registry,
};

/// Most worker threads `--threads` accepts.
pub const MAX_THREADS: usize = 1024;

/// Arguments of `terrasynth generate`.
#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Built-in preset (see `terrasynth presets`); default `island`.
    #[arg(long, conflicts_with_all = ["recipe", "project"])]
    pub preset: Option<String>,
    /// Editor project (`.tsproj`): its recipe, then its edits (strokes, erosion runs, river
    /// sources) replayed, as the editor's Export writes it.
    #[arg(long, conflicts_with = "recipe")]
    pub project: Option<PathBuf>,
    /// Recipe file, TOML (or JSON with a `.json` extension).
    #[arg(long)]
    pub recipe: Option<PathBuf>,
    /// Seed, replacing the recipe's (any u64, 0..=18446744073709551615).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Size in cells, `WxH` or `N` for a square, replacing the recipe's.
    #[arg(long)]
    pub size: Option<String>,
    /// World recipes: the window `X,Y,WxH` of the endless world (world cells; X east, Y south,
    /// negative allowed), instead of the recipe's default window `0,0,width×height`.
    #[arg(long, value_name = "X,Y,WxH", conflicts_with = "size", allow_hyphen_values = true)]
    pub window: Option<String>,
    /// Target engine: picks the nearest valid square size and writes its import files.
    #[arg(long, value_parser = Engine::NAMES.to_vec())]
    pub engine: Option<String>,
    /// Worker threads (default: all cores). The output does not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also write mesh.obj.
    #[arg(long)]
    pub obj: bool,
    /// Mesh level of detail (vertex step 2^N), replacing the recipe's `exports.lod`; 0..=16.
    #[arg(long, value_name = "N")]
    pub lod: Option<u32>,
    /// Record the erosion score ε every K iterations of each erosion step into report.json
    /// (`trace`); K in 1..=1000000.
    #[arg(long, value_name = "K")]
    pub trace: Option<usize>,
    /// Output folder (created if missing).
    #[arg(long)]
    pub out: PathBuf,
}

/// Parses `--size` of `generate` and `noise`: `WxH` or `N` (a square), each side in
/// 2..=[`MAX_RECIPE_SIDE`].
pub fn parse_size(text: &str) -> anyhow::Result<(usize, usize)> {
    let bad = || {
        anyhow::anyhow!(
            "invalid --size `{text}`: allowed `WxH` or `N` with each side an integer in 2..={MAX_RECIPE_SIDE}"
        )
    };
    let (w, h) = match text.split_once(['x', 'X']) {
        Some((w, h)) => (w.trim().parse::<usize>(), h.trim().parse::<usize>()),
        None => (text.trim().parse::<usize>(), text.trim().parse::<usize>()),
    };
    let (w, h) = (w.map_err(|_| bad())?, h.map_err(|_| bad())?);
    if !(2..=MAX_RECIPE_SIDE).contains(&w) || !(2..=MAX_RECIPE_SIDE).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

/// Parses `X,Y` (world cells, integers, negative allowed) of `--window` and `--origin`.
pub fn parse_xy(flag: &str, text: &str, form: &str) -> anyhow::Result<(i64, i64)> {
    let bad =
        || anyhow::anyhow!("invalid {flag} `{text}`: allowed `{form}` with X and Y integers (world cells)");
    let (x, y) = text.split_once(',').ok_or_else(bad)?;
    Ok((x.trim().parse().map_err(|_| bad())?, y.trim().parse().map_err(|_| bad())?))
}

/// Parses `--window X,Y,WxH`: the origin in world cells, the size as [`parse_size`]; the
/// library checks the coordinate range ([`Window::new`]).
pub fn parse_window(text: &str) -> anyhow::Result<Window> {
    let form = "X,Y,WxH";
    let bad = || {
        anyhow::anyhow!(
            "invalid --window `{text}`: allowed `{form}` with X, Y integers (world cells) and each side an \
             integer in 2..={MAX_RECIPE_SIDE}"
        )
    };
    let (xy, size) = text.rsplit_once(',').ok_or_else(bad)?;
    let (x, y) = parse_xy("--window", xy, form).map_err(|_| bad())?;
    let (w, h) = parse_size(size).map_err(|_| bad())?;
    Window::new(x, y, w, h).map_err(|e| anyhow::anyhow!("invalid --window `{text}`: {e}"))
}

/// Everything `generate` will do, fully validated.
pub struct Plan {
    /// The validated pipeline.
    pub pipeline: Pipeline,
    /// Target engine, if any.
    pub engine: Option<Engine>,
    /// Worker threads.
    pub threads: usize,
    /// Output folder.
    pub out: PathBuf,
    /// `--trace K`.
    pub trace: Option<usize>,
    /// World recipes: the window to write (`--window`, or the recipe's default window).
    pub window: Option<Window>,
    /// `--project`: the edits replayed after the recipe (its recipe is the pipeline's).
    pub project: Option<Document>,
}

/// Largest `--trace` interval.
pub const MAX_TRACE: usize = 1_000_000;

/// Loads the recipe, applies the flags and validates everything; touches no file.
pub fn plan(args: &GenerateArgs) -> anyhow::Result<Plan> {
    let mut project = match &args.project {
        Some(path) => Some(load_project::<serde::de::IgnoredAny>(path)?.0),
        None => None,
    };
    let mut recipe: Recipe = match (&project, &args.recipe, &args.preset) {
        (Some(p), _, _) => p.recipe.clone(),
        (None, Some(path), _) => Recipe::from_path(path)?,
        (None, None, Some(name)) => preset(name)?.recipe()?,
        (None, None, None) => preset(terrasynth::recipe::presets::DEFAULT_PRESET)?.recipe()?,
    };
    if let Some(seed) = args.seed {
        recipe.seed = seed;
    }
    if let Some(size) = &args.size {
        (recipe.width, recipe.height) = parse_size(size)?;
    }
    let mut window = match &args.window {
        Some(_) if !recipe.is_world() => bail!(
            "--window needs a world recipe (one with a [world] table), and `{}` is a single map: use --size, \
             or a world preset (see `terrasynth presets`)",
            recipe.name
        ),
        Some(text) => {
            let w = parse_window(text)?;
            (recipe.width, recipe.height) = (w.width, w.height);
            Some(w)
        }
        None if recipe.is_world() => Some(Window::new(0, 0, recipe.width, recipe.height)?),
        None => None,
    };
    let engine = args.engine.as_deref().map(Engine::from_name).transpose()?;
    if let Some(e) = engine {
        let side = e.pick_side(recipe.width.max(recipe.height));
        (recipe.width, recipe.height) = (side, side);
        if let Some(w) = &mut window {
            *w = Window::new(w.x0, w.y0, side, side)?;
        }
    }
    if args.obj {
        recipe.exports.obj = true;
    }
    if let Some(lod) = args.lod {
        if lod > MAX_LOD {
            bail!("invalid --lod {lod}: allowed an integer in 0..={MAX_LOD}");
        }
        recipe.exports.lod = lod;
    }
    let threads = match args.threads {
        Some(n) if !(1..=MAX_THREADS).contains(&n) => {
            bail!("invalid --threads {n}: allowed an integer in 1..={MAX_THREADS}")
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if let Some(k) = args.trace
        && !(1..=MAX_TRACE).contains(&k)
    {
        bail!("invalid --trace {k}: allowed an integer in 1..={MAX_TRACE}")
    }
    if args.out.exists() && !args.out.is_dir() {
        bail!("--out {}: exists and is not a folder", args.out.display());
    }
    export::check_recipe(&recipe)?;
    if let Some(p) = &mut project {
        p.recipe = recipe.clone();
    }
    let pipeline = Pipeline::new(recipe, &registry())?;
    if project.is_some() && window.is_some() {
        bail!("--project: a project's edits are made on a single map; a world window cannot replay them");
    }
    Ok(Plan { pipeline, engine, threads, out: args.out.clone(), trace: args.trace, window, project })
}

/// Runs the pipeline with an optional progress bar on stderr, recording ε after each erosion
/// step and, with `--trace K`, every K iterations inside them (report.json's `erosion_scores`
/// and `trace`).
fn run_pipeline(
    plan: &Plan,
    show_bar: bool,
    progress: &PipelineProgress,
) -> anyhow::Result<(RunOutput, ErosionLog)> {
    let run = || -> anyhow::Result<_> {
        let mut recorder = ErosionRecorder::new(plan.trace);
        let mut out = match &plan.window {
            Some(w) => export::run_window(&plan.pipeline, w, progress, &mut recorder)?,
            None => plan.pipeline.run_with(progress, &mut recorder)?,
        };
        if let Some(p) = &plan.project {
            p.apply_edits(&mut out.terrain, progress)?;
        }
        Ok((out, recorder.into_log()))
    };
    if !show_bar {
        return run();
    }
    let bar = indicatif::ProgressBar::new(1000);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {percent:>3}% (about {eta} left; Ctrl-C stops) {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let done = AtomicBool::new(false);
    let result = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                bar.set_position((progress.fraction() * 1000.0) as u64);
                bar.set_message(progress.current_step());
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let r = run();
        done.store(true, Ordering::Relaxed);
        r
    });
    bar.finish_and_clear();
    result
}

pub fn run(args: &GenerateArgs) -> anyhow::Result<()> {
    let plan = plan(args)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.threads)
        .build()
        .context("cannot start the worker threads")?;
    let show_bar = !args.quiet && std::io::stderr().is_terminal();
    // Ctrl-C cancels the pipeline (nothing is written yet) or the export (each file is
    // written to a temporary name and renamed when complete; cancelled ones are removed).
    let progress = PipelineProgress::new();
    let export_progress = terrasynth::Progress::new();
    let (p, e) = (progress.clone(), export_progress.clone());
    crate::cancel_on_ctrl_c(move || {
        p.cancel();
        e.cancel();
    })?;
    let (run, log) = pool.install(|| run_pipeline(&plan, show_bar, &progress))?;
    let opts = ExportOptions {
        engine: plan.engine,
        threads: plan.threads,
        erosion_scores: log.scores,
        trace: plan.trace.map(|_| log.trace),
        progress: export_progress,
        window: plan.window,
        seamless_only: false,
    };
    // Everything that can fail on the terrain is checked before --out is created or touched.
    let report = pool.install(|| export::write(&plan.out, &run, &plan.pipeline, &opts))?;
    if show_bar {
        eprintln!(
            "terrasynth: wrote {} files to {} in {:.2} s (pipeline {:.2} s, outputs {:.2} s)",
            report.files.len() + 1,
            plan.out.display(),
            report.run.total_seconds,
            run.seconds,
            report.run.outputs.seconds
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_forms() {
        assert_eq!(parse_size("65x33").unwrap(), (65, 33));
        assert_eq!(parse_size("129").unwrap(), (129, 129));
        assert!(parse_size("0x5").is_err());
        assert!(parse_size("nan").is_err());
        assert!(parse_size("99999999x2").is_err());
        assert!(parse_size("12x").is_err());
    }

    #[test]
    fn window_forms() {
        let w = parse_window("-5,7,65x33").unwrap();
        assert_eq!((w.x0, w.y0, w.width, w.height), (-5, 7, 65, 33));
        assert_eq!(parse_window("3,-4,17").unwrap().height, 17);
        for bad in ["5,65x33", "a,b,65x33", "0,0,1x5", "0,0,", "99999999999999999999,0,5x5"] {
            let e = parse_window(bad).unwrap_err().to_string();
            assert!(e.contains("X,Y,WxH") && e.contains("2..=32769"), "{bad}: {e}");
        }
        let e = parse_window("1000000000000,0,5x5").unwrap_err().to_string();
        assert!(e.contains("999999999999"), "{e}");
    }
}
