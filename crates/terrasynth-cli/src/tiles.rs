//! `terrasynth tiles`: a tile set of a world recipe for game engines — flags → a checked
//! [`TileLayout`] → [`terrasynth::export::tiles::write_tiles`], which does the work (tile
//! windows, world.json, atomic tile folders, resuming, engine naming).
//!
//! Every flag and the recipe are checked before the output folder is created or touched.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use terrasynth::World;
use terrasynth::export::tiles::{MAX_TILES_PER_SIDE, TileLayout, TileOptions, write_tiles};
use terrasynth::io::engine::Engine;
use terrasynth::recipe::{Recipe, preset};

use crate::generate::{MAX_THREADS, parse_xy};

/// Arguments of `terrasynth tiles`.
#[derive(Args, Debug)]
pub struct TilesArgs {
    /// Built-in world preset (see `terrasynth presets`); default `world`.
    #[arg(long, conflicts_with = "recipe")]
    pub preset: Option<String>,
    /// World recipe file, TOML (or JSON with a `.json` extension).
    #[arg(long)]
    pub recipe: Option<PathBuf>,
    /// Seed, replacing the recipe's (any u64, 0..=18446744073709551615).
    #[arg(long)]
    pub seed: Option<u64>,
    /// World cell of tile (0, 0)'s first cell, `X,Y` (X east, Y south, negative allowed).
    #[arg(long, value_name = "X,Y", default_value = "0,0", allow_hyphen_values = true)]
    pub origin: String,
    /// Columns and rows of tiles, `CxR`.
    #[arg(long, value_name = "CxR")]
    pub tiles: String,
    /// Cells per tile side; tile (i, j) starts at origin + (i·(N−1), j·(N−1)), so neighbours
    /// share their edge row and column.
    #[arg(long, value_name = "N")]
    pub tile: usize,
    /// Target engine: checks the tile size, adds its height files and engine-named copies in
    /// OUT/<engine>/ and its import figures in world.json.
    #[arg(long, value_parser = Engine::NAMES.to_vec())]
    pub engine: Option<String>,
    /// Worker threads (default: all cores). The output does not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
    /// Output folder (created if missing); a rerun into it skips complete tiles.
    #[arg(long)]
    pub out: PathBuf,
}

/// Parses `--tiles CxR`, each in 1..=[`MAX_TILES_PER_SIDE`].
fn parse_tiles(text: &str) -> anyhow::Result<(usize, usize)> {
    let bad = || {
        anyhow::anyhow!(
            "invalid --tiles `{text}`: allowed `CxR` with each an integer in 1..={MAX_TILES_PER_SIDE}"
        )
    };
    let (c, r) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (c, r): (usize, usize) = (c.trim().parse().map_err(|_| bad())?, r.trim().parse().map_err(|_| bad())?);
    if !(1..=MAX_TILES_PER_SIDE).contains(&c) || !(1..=MAX_TILES_PER_SIDE).contains(&r) {
        return Err(bad());
    }
    Ok((c, r))
}

/// The checked world, layout, threads and folder.
struct Plan {
    world: World,
    layout: TileLayout,
    threads: usize,
}

fn plan(args: &TilesArgs) -> anyhow::Result<Plan> {
    let mut recipe: Recipe = match (&args.recipe, &args.preset) {
        (Some(path), _) => Recipe::from_path(path)?,
        (None, Some(name)) => preset(name)?.recipe()?,
        (None, None) => preset("world")?.recipe()?,
    };
    if let Some(seed) = args.seed {
        recipe.seed = seed;
    }
    if !recipe.is_world() {
        bail!(
            "tiles needs a world recipe (one with a [world] table), and `{}` is a single map: use a world \
             preset (see `terrasynth presets`)",
            recipe.name
        );
    }
    let origin = parse_xy("--origin", &args.origin, "X,Y")?;
    let tiles = parse_tiles(&args.tiles)?;
    let engine = args.engine.as_deref().map(Engine::from_name).transpose()?;
    let layout = TileLayout::new(origin, tiles, args.tile, engine)?;
    let threads = match args.threads {
        Some(n) if !(1..=MAX_THREADS).contains(&n) => {
            bail!("invalid --threads {n}: allowed an integer in 1..={MAX_THREADS}")
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if args.out.exists() && !args.out.is_dir() {
        bail!("--out {}: exists and is not a folder", args.out.display());
    }
    terrasynth::export::check_recipe(&recipe)?;
    Ok(Plan { world: World::new(recipe)?, layout, threads })
}

pub fn run(args: &TilesArgs) -> anyhow::Result<()> {
    let plan = plan(args)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.threads)
        .build()
        .context("cannot start the worker threads")?;
    let t0 = Instant::now();
    // Ctrl-C: tiles in flight stop (their `.partial` folders are removed by the next run),
    // complete tiles stay, and a rerun completes the set.
    let opts = pool.install(TileOptions::default);
    let cancel = opts.progress.clone();
    crate::cancel_on_ctrl_c(move || cancel.cancel())?;
    let summary = pool.install(|| write_tiles(&args.out, &plan.world, &plan.layout, &opts))?;
    if !args.quiet {
        let (w, h) = plan.layout.extent();
        eprintln!(
            "terrasynth: {} tiles of {n}x{n} ({w}x{h} cells) in {}: {} written, {} already complete, {:.2} s",
            plan.layout.count(),
            args.out.display(),
            summary.written,
            summary.skipped,
            t0.elapsed().as_secs_f64(),
            n = plan.layout.tile
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_forms() {
        assert_eq!(parse_tiles("8x4").unwrap(), (8, 4));
        for bad in ["8", "0x3", "3x5000", "ax2"] {
            let e = parse_tiles(bad).unwrap_err().to_string();
            assert!(e.contains("1..=4096"), "{bad}: {e}");
        }
    }
}
