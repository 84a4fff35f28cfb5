//! [`Report`]: report.json as a typed value.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Serialize;

use super::{ExportOptions, Prepared, Window, Written, metres_per_unit};
use crate::analyze::Metrics;
use crate::io::engine::EngineImport;
use crate::memory;
use crate::recipe::{Pipeline, Recipe, RunOutput, StepScore, StepTiming, TracePoint, registry};
use crate::step::Terrain;

/// report.json: resolved recipe, seed, version, height range, engine settings, files, metrics,
/// `erosion_scores` (ε after each erosion step), `hydrology` (river and lake counts, which
/// layers the outputs computed), `biomes` (share of the map per biome), `trace` (when the
/// caller traced), per-step `timings` and `run` (threads; pipeline time and peak memory;
/// `outputs`: time of each preparation part and of each file, the outputs' wall time and peak
/// memory; `total_seconds`). Only `timings` and `run` depend on the machine and thread count;
/// everything else is a pure function of the recipe. Written with its keys sorted (see
/// [`crate::io::geojson::write_json`]).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Version of the library that wrote it.
    pub version: String,
    /// The recipe seed (a string above 2^63 − 1, as in the recipe).
    #[serde(serialize_with = "crate::recipe::model::seed_form::serialize")]
    pub seed: u64,
    /// The resolved recipe (every default filled in).
    pub recipe: Recipe,
    /// Map size.
    pub size: MapSize,
    /// The world window the files hold (an export with [`ExportOptions::window`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// The world's height range in metres, which the 16-bit files and colours map (world
    /// recipes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub world_height_range_m: Option<[f64; 2]>,
    /// Sea level, height units.
    pub sea_level: f32,
    /// Height range of the height files.
    pub height_range: HeightRange,
    /// Engine import settings, if an engine was given.
    pub engine: Option<EngineImport>,
    /// Files written, in a fixed order (report.json not included).
    pub files: Vec<String>,
    /// Metrics of the final heights.
    pub metrics: Metrics,
    /// ε after each erosion step, as the caller recorded it.
    pub erosion_scores: Vec<StepScore>,
    /// River and lake counts, and which layers the outputs computed.
    pub hydrology: HydrologyReport,
    /// Share of the map per biome, by biome name.
    pub biomes: BTreeMap<String, f64>,
    /// Per-step timings of the pipeline run.
    pub timings: Vec<StepTiming>,
    /// Threads, times and peak memory.
    pub run: RunReport,
    /// ε traced inside erosion steps (only when the caller traced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<TracePoint>>,
}

/// Map size in report.json.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MapSize {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Cell size, metres.
    pub cell_size_m: f64,
}

/// Height range in report.json: what 0 and 65535 of `height.png`/`height.r16` stand for.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct HeightRange {
    /// Lowest height, height units.
    pub min: f32,
    /// Highest height, height units (lowest + 1 for a flat map).
    pub max: f32,
    /// `min` in metres.
    pub min_m: f64,
    /// `max` in metres.
    pub max_m: f64,
    /// Metres per height unit (`exports.height-scale`).
    pub height_scale_m: f64,
}

/// Hydrology counts in report.json.
#[derive(Clone, Debug, Serialize)]
pub struct HydrologyReport {
    /// Layers the outputs computed rather than took from the recipe's steps (`flow`,
    /// `rivers`, `lakes`).
    pub computed_by_outputs: Vec<String>,
    /// Number of rivers.
    pub rivers: usize,
    /// Number of lakes.
    pub lakes: usize,
}

/// Machine-dependent figures in report.json.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Worker threads.
    pub threads: usize,
    /// Pipeline wall seconds.
    pub seconds: f64,
    /// Pipeline peak heap bytes (None without the counting allocator).
    pub peak_bytes: Option<usize>,
    /// The outputs' times and memory.
    pub outputs: OutputsReport,
    /// Pipeline plus outputs, seconds.
    pub total_seconds: f64,
}

/// The outputs' times and memory in report.json.
#[derive(Clone, Debug, Serialize)]
pub struct OutputsReport {
    /// Seconds of each preparation part, by name.
    pub prepare: BTreeMap<String, f64>,
    /// Seconds of each file job, by its first file.
    pub files: BTreeMap<String, f64>,
    /// Wall seconds from the start of the export to the last file before report.json.
    pub seconds: f64,
    /// Peak heap bytes over the same span (None without the counting allocator).
    pub peak_bytes: Option<usize>,
}

impl Report {
    /// Puts the report together after the files were written; `terrain` is what the files hold
    /// (the run itself, or its window without the margin).
    pub(super) fn new(
        pipeline: &Pipeline,
        run: &RunOutput,
        terrain: &Terrain,
        opts: &ExportOptions,
        p: &Prepared,
        written: Written,
        started: Instant,
    ) -> Self {
        let recipe = pipeline.recipe();
        let scale = metres_per_unit(recipe);
        let h = &terrain.height;
        let seconds_map = |list: &[(&'static str, f64)]| {
            list.iter().map(|(n, s)| (n.to_string(), *s)).collect::<BTreeMap<_, _>>()
        };
        let seconds = started.elapsed().as_secs_f64();
        Self {
            version: env!("CARGO_PKG_VERSION").to_string(),
            seed: recipe.seed,
            recipe: pipeline.resolved_recipe(&registry()),
            size: MapSize { width: h.width(), height: h.height(), cell_size_m: h.cell_size() },
            window: opts.window,
            world_height_range_m: recipe.world.as_ref().map(|w| w.height_range),
            sea_level: terrain.sea_level,
            height_range: HeightRange {
                min: p.lo,
                max: p.hi,
                min_m: p.lo as f64 * scale,
                max_m: p.hi as f64 * scale,
                height_scale_m: scale,
            },
            engine: p.engine.clone(),
            files: written.files,
            metrics: written.metrics,
            erosion_scores: opts.erosion_scores.clone(),
            hydrology: written.hydrology,
            biomes: written.biome_shares.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
            timings: run.timings.clone(),
            run: RunReport {
                threads: opts.threads,
                seconds: run.seconds,
                peak_bytes: run.peak_bytes,
                outputs: OutputsReport {
                    prepare: seconds_map(&written.prepare_timings),
                    files: seconds_map(&written.file_timings),
                    seconds,
                    peak_bytes: memory::peak_bytes(),
                },
                total_seconds: run.seconds + seconds,
            },
            trace: opts.trace.clone(),
        }
    }
}
