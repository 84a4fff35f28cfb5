//! `terrasynth analyze`: the realism figures of one map ([`terrasynth::analyze::realism`]),
//! printed as text or JSON. The map is an output folder of `generate` (its `height.exr`, or
//! `height.tif`/`height.png`/`height.r16`, with the cell size, height scale and sea level read
//! from its report.json), a height file (PNG, R16/RAW, EXR, TIFF; units from the flags), or a
//! preset run in memory (`--preset`, `--size`, `--seed`).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use terrasynth::Heightmap;
use terrasynth::analyze::realism::{DEFAULT_DEPRESSION_TOLERANCE_M, Realism, RealismOptions};
use terrasynth::io::{FileFormat, ReadOptions, read_heightmap};
use terrasynth::recipe::{Pipeline, PipelineProgress, preset, registry};

use crate::generate::parse_size;

/// Largest `--cell-size` and `--height-scale` accepted.
pub const MAX_UNIT_M: f64 = 1.0e6;

/// Arguments of `terrasynth analyze`.
#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// An output folder of `generate`, or a height file (.exr, .tif, .png, .r16/.raw).
    #[arg(conflicts_with = "preset")]
    pub map: Option<PathBuf>,
    /// Run this built-in preset in memory instead of reading a map.
    #[arg(long)]
    pub preset: Option<String>,
    /// With --preset: size in cells, `WxH` or `N`.
    #[arg(long, requires = "preset")]
    pub size: Option<String>,
    /// With --preset: the seed (any u64, 0..=18446744073709551615).
    #[arg(long, requires = "preset")]
    pub seed: Option<u64>,
    /// Cell size in metres (height files: default 1; folders and presets: from the recipe).
    #[arg(long, allow_hyphen_values = true)]
    pub cell_size: Option<f64>,
    /// Metres per height unit (height files: default 1; integer formats read as [0, 1]).
    #[arg(long, allow_hyphen_values = true)]
    pub height_scale: Option<f64>,
    /// Heights strictly below this (in the file's units before --height-scale) are sea.
    /// Default: none for height files, the recipe's for folders and presets.
    #[arg(long, allow_hyphen_values = true)]
    pub sea_level: Option<f32>,
    /// Drainage area in m² from which a cell counts as a channel (drainage density, Hack).
    /// Default: 100000 (0.1 km²), or 100 cells where that is less (cells under 31.6 m).
    #[arg(long, allow_hyphen_values = true)]
    pub channel_area: Option<f64>,
    /// Depressions at most this deep (m) are ignored by the tolerant drained fraction.
    #[arg(long, default_value_t = DEFAULT_DEPRESSION_TOLERANCE_M, allow_hyphen_values = true)]
    pub depression_tolerance: f64,
    /// Width of a headerless R16/RAW file (0: a square).
    #[arg(long, default_value_t = 0)]
    pub width: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A map and its units.
struct Loaded {
    map: Heightmap,
    options: RealismOptions,
    what: String,
}

fn check_unit(flag: &str, v: f64) -> anyhow::Result<f64> {
    if !(v.is_finite() && v > 0.0 && v <= MAX_UNIT_M) {
        bail!("invalid --{flag} {v}: allowed a number in (0, {MAX_UNIT_M}] (metres)");
    }
    Ok(v)
}

/// Reads an output folder: the first height file present, and report.json's units.
fn load_folder(dir: &Path) -> anyhow::Result<Loaded> {
    let report_path = dir.join("report.json");
    let text = std::fs::read_to_string(&report_path).with_context(|| {
        format!("{}: not an output folder of `terrasynth generate` (no report.json)", dir.display())
    })?;
    let report: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not valid JSON", report_path.display()))?;
    let num = |v: &serde_json::Value| v.as_f64();
    let scale = num(&report["height_range"]["height_scale_m"]).unwrap_or(1.0);
    let cell = num(&report["recipe"]["cell-size"]).unwrap_or(1.0);
    let sea = num(&report["recipe"]["sea-level"]);
    // EXR and TIFF hold metres; PNG and R16 hold [0, 1] of the height range.
    for name in ["height.exr", "height.tif", "height.png", "height.r16"] {
        let path = dir.join(name);
        if !path.is_file() {
            continue;
        }
        let mut map = read_heightmap(&path, &ReadOptions { format: FileFormat::Auto, width: 0, height: 0 })
            .with_context(|| format!("cannot read {}", path.display()))?;
        map.set_cell_size(cell)?;
        let metres = name == "height.exr" || name == "height.tif";
        let (height_scale_m, sea_level) = if metres {
            (1.0, sea.map(|s| (s * scale) as f32))
        } else {
            let lo = num(&report["height_range"]["min_m"]).unwrap_or(0.0);
            let hi = num(&report["height_range"]["max_m"]).unwrap_or(scale);
            let range = (hi - lo).max(f64::MIN_POSITIVE);
            // value = (metres − lo) / range
            (range, sea.map(|s| ((s * scale - lo) / range) as f32))
        };
        let options = RealismOptions {
            height_scale_m,
            sea_level: sea_level.unwrap_or(f32::NEG_INFINITY),
            ..Default::default()
        };
        return Ok(Loaded { map, options, what: path.display().to_string() });
    }
    bail!("{}: no height.exr, height.tif, height.png or height.r16 in the folder", dir.display())
}

fn load_preset(name: &str, args: &AnalyzeArgs) -> anyhow::Result<Loaded> {
    let mut recipe = preset(name)?.recipe()?;
    if let Some(size) = &args.size {
        (recipe.width, recipe.height) = parse_size(size)?;
    }
    if let Some(seed) = args.seed {
        recipe.seed = seed;
    }
    if recipe.is_world() {
        bail!("--preset {name}: a world preset; analyze a window written by `generate --window` instead");
    }
    let scale = terrasynth::export::metres_per_unit(&recipe);
    let what = format!("preset {name} at {}x{}, seed {}", recipe.width, recipe.height, recipe.seed);
    let out = Pipeline::new(recipe, &registry())?.run(&PipelineProgress::new())?;
    let options =
        RealismOptions { height_scale_m: scale, sea_level: out.terrain.sea_level, ..Default::default() };
    Ok(Loaded { map: out.terrain.height, options, what })
}

fn load(args: &AnalyzeArgs) -> anyhow::Result<Loaded> {
    match (&args.preset, &args.map) {
        (Some(name), _) => load_preset(name, args),
        (None, Some(path)) if path.is_dir() => load_folder(path),
        (None, Some(path)) => {
            let read = ReadOptions { format: FileFormat::Auto, width: args.width, height: 0 };
            let map =
                read_heightmap(path, &read).with_context(|| format!("cannot read {}", path.display()))?;
            Ok(Loaded {
                map,
                options: RealismOptions { sea_level: f32::NEG_INFINITY, ..Default::default() },
                what: path.display().to_string(),
            })
        }
        (None, None) => {
            bail!("nothing to analyze: give a MAP (an output folder or a height file) or --preset NAME")
        }
    }
}

pub fn run(args: &AnalyzeArgs) -> anyhow::Result<()> {
    let cell = args.cell_size.map(|v| check_unit("cell-size", v)).transpose()?;
    let scale = args.height_scale.map(|v| check_unit("height-scale", v)).transpose()?;
    if let Some(s) = args.sea_level
        && !s.is_finite()
    {
        bail!("invalid --sea-level {s}: allowed a finite number (height units of the map)");
    }
    if let Some(a) = args.channel_area
        && !(a.is_finite() && (0.0..=1.0e12).contains(&a))
    {
        bail!("invalid --channel-area {a}: allowed a number in [0, 1e12] (m²)");
    }
    let mut loaded = load(args)?;
    if let Some(c) = cell {
        loaded.map.set_cell_size(c)?;
    }
    if let Some(s) = scale {
        loaded.options.height_scale_m = s;
    }
    if let Some(s) = args.sea_level {
        loaded.options.sea_level = s;
    }
    if !(args.depression_tolerance.is_finite() && (0.0..=1.0e6).contains(&args.depression_tolerance)) {
        bail!(
            "invalid --depression-tolerance {}: allowed a number in [0, 1e6] (m)",
            args.depression_tolerance
        );
    }
    loaded.options.channel_area_m2 = args.channel_area;
    loaded.options.depression_tolerance_m = args.depression_tolerance;
    let r = Realism::compute(&loaded.map, &loaded.options)?;
    if args.json {
        // The library's JSON (figures and verdicts against the real ranges) and the map's name.
        let mut v = r.to_json();
        v["map"] = serde_json::Value::String(loaded.what);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("terrasynth analyze: {}\n{}", loaded.what, r.text());
    }
    Ok(())
}
