//! Exports: every file `terrasynth generate` writes, from a finished terrain and the recipe's
//! `[exports]` settings, and the run report ([`Report`], report.json). The CLI's `generate` and
//! the editor's Export both call [`write`], so they write the same bytes for the same terrain.
//!
//! Height files: `height.png` and `height.r16` map the map's own min..max to 0..65535;
//! `height.exr` and `height.tif` hold heights in metres (height units × `exports.height-scale`).
//! The Unity engine adds `height.raw` (south row first). report.json has the metres range.
//!
//! **World recipes** (a `[world]` table; heights are metres, `exports.height-scale` is not
//! used): the 16-bit files and the colours map the recipe's world `height-range`, never the
//! window's own extremes, so neighbouring windows (tiles) line up value for value. With
//! [`ExportOptions::window`] the run is the window grown by [`WINDOW_MARGIN`] cell a side
//! ([`run_window`]): the files hold the window itself, and the hillshade of its edge cells
//! (`hillshade.png`, `shaded.png`) is computed from their true neighbours, so it equals the
//! neighbouring window's on their shared edge. The mesh's vertex normals stay one-sided at the
//! window's edges. report.json records the window and the world range. [`tiles`] writes a
//! whole tile set.
//!
//! Images and the mesh are rendered from the heights in metres (hillshade z-factor 1, the
//! map's cell size), coloured by the recipe palette with the terrain's sea level; lakes and
//! rivers from the recipe's hydrology steps (and rivers placed by a project's sources,
//! [`crate::recipe::project`]) are painted over the colours (the layers computed
//! when the recipe has none, see [`crate::hydro::WaterLayers`], are not). `water.png`,
//! `flow.png`, `biomes.png`, `splat.png` (with the images) and `rivers.geojson` (always) come
//! from the same hydrology layers; biomes and splat weights from
//! [`crate::analyze::biomes`]. Every file is listed in docs/OUTPUTS.md.
//!
//! Each file is its own job, the jobs running in parallel on the caller's rayon pool, each
//! file streamed row band by row band (no whole RGBA image, no mesh held in memory) and
//! written atomically (temp file + fsync + rename, [`crate::io::atomic`]; the fsync and rename
//! on the [`crate::io::atomic::Committer`]'s thread, so the jobs do not wait for the disk,
//! all done before report.json). Every pixel, vertex and
//! value depends only on its own row's inputs, so the files are the same bytes on any thread
//! count and whatever order the jobs run in.
//!
//! ```
//! use terrasynth::export::{self, ExportOptions};
//! use terrasynth::recipe::{Pipeline, PipelineProgress, preset, registry};
//!
//! let mut recipe = preset("island")?.recipe()?;
//! (recipe.width, recipe.height) = (65, 65);
//! let pipeline = Pipeline::new(recipe, &registry())?;
//! let run = pipeline.run(&PipelineProgress::new())?;
//! let dir = std::env::temp_dir().join(format!("terrasynth-export-doc-{}", std::process::id()));
//! let report = export::write(&dir, &run, &pipeline, &ExportOptions::default())?;
//! assert!(report.files.iter().any(|f| f == "mesh.glb"));
//! assert!(dir.join("report.json").exists());
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), terrasynth::Error>(())
//! ```

mod report;
pub mod tiles;
mod window;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use rayon::prelude::*;
pub use report::{HeightRange, HydrologyReport, MapSize, OutputsReport, Report, RunReport};
pub use window::{MAX_WORLD_CELL, WINDOW_MARGIN, Window, run_window};

use crate::analyze::Metrics;
use crate::analyze::biomes::{Biome, BiomeMap, BiomeOptions, classify};
use crate::hydro::{FlowPart, HydroLayers, LakePart, WaterLayers, carve_rivers_scaled};
use crate::io::engine::{Engine, EngineImport};
use crate::io::geojson::{RiversGeojson, write_json, write_json_sorted};
use crate::io::png::{PngLayout, write_png_rows};
use crate::io::tiff::GeoTiffOptions;
use crate::memory;
use crate::recipe::{Pipeline, Recipe, RunOutput, StepScore, TracePoint};
use crate::render::hillshade::{Hillshader, hillshade_byte, shade_pixel};
use crate::render::palette::FractionMap;
use crate::render::water::{FlowImage, LAKE_RGBA, WaterImage, fresh_water_mask, stamp_rivers};
use crate::render::{GridMesh, HillshadeOptions, MeshOptions, Palette};
use crate::step::Terrain;
use crate::{Error, Heightmap, Progress, Result, io};

/// Depth in metres the largest river is cut into the mesh with `exports.carve-mesh`.
pub const MESH_CARVE_DEPTH_M: f32 = 4.0;

/// What an export needs besides the terrain and the recipe.
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// Target engine: adds its import files (Unity: `height.raw`) and `engine` in report.json.
    pub engine: Option<Engine>,
    /// Worker threads of the caller's pool, recorded in report.json (`run.threads`).
    pub threads: usize,
    /// report.json `erosion_scores`: ε after each erosion step, as the caller recorded it
    /// (with [`ErosionRecorder`](crate::recipe::ErosionRecorder); empty when it recorded none).
    pub erosion_scores: Vec<StepScore>,
    /// report.json `trace`: ε inside the erosion steps (written only when `Some`).
    pub trace: Option<Vec<TracePoint>>,
    /// Cancellation: checked before each file.
    pub progress: Progress,
    /// World recipes: the window the files hold. The run must then be that window grown by
    /// [`WINDOW_MARGIN`] (as [`run_window`] makes it); the margin is cut off.
    pub window: Option<Window>,
    /// Only the files that line up across tiles: no hydrology layers (`water.png`,
    /// `flow.png`, `biomes.png`, `splat.png`, `rivers.geojson`, the carved mesh), which depend
    /// on whole drainage basins and so differ on both sides of a tile edge.
    pub seamless_only: bool,
}

/// Metres per height unit in the outputs: `exports.height-scale`, or 1 for a world recipe
/// (whose heights are metres).
pub fn metres_per_unit(recipe: &Recipe) -> f64 {
    if recipe.world.is_some() { 1.0 } else { recipe.exports.height_scale }
}

/// The files [`write`] writes for `recipe` (report.json not included), in report order.
pub fn file_names(recipe: &Recipe, engine: Option<Engine>, seamless_only: bool) -> Vec<String> {
    let ex = &recipe.exports;
    let hydro = !seamless_only;
    FILE_ORDER
        .iter()
        .filter(|&&f| match f {
            "height.png" => ex.png,
            "height.r16" => ex.r16,
            "height.raw" => engine == Some(Engine::Unity),
            "height.exr" => ex.exr,
            "height.tif" => ex.tiff,
            "color.png" | "hillshade.png" | "shaded.png" => ex.images,
            "water.png" | "flow.png" | "biomes.png" | "splat.png" => ex.images && hydro,
            "rivers.geojson" => hydro,
            "mesh.glb" => ex.glb && (hydro || !ex.carve_mesh),
            "mesh.obj" => ex.obj && (hydro || !ex.carve_mesh),
            "mesh.mtl" => ex.obj && ex.images && (hydro || !ex.carve_mesh),
            _ => false,
        })
        .map(|f| f.to_string())
        .collect()
}

/// Checks the output settings of a recipe that the recipe's validation does not cover, before
/// anything runs: a `mesh.glb` must stay under glTF's 4 GiB ([`io::gltf::check_grid_glb_size`]).
pub fn check_recipe(recipe: &Recipe) -> Result<()> {
    if recipe.exports.glb {
        io::gltf::check_grid_glb_size(recipe.width, recipe.height, recipe.exports.lod)?;
    }
    Ok(())
}

/// Writes every output of `pipeline`'s recipe for the finished `run` into `out_dir` (created
/// if missing, and only after everything that can fail on the terrain was checked), then
/// report.json; returns the report. The jobs run on the caller's rayon pool.
pub fn write(out_dir: &Path, run: &RunOutput, pipeline: &Pipeline, opts: &ExportOptions) -> Result<Report> {
    let started = Instant::now();
    memory::reset_peak();
    let recipe = pipeline.recipe();
    check_recipe(recipe)?;
    let commits = io::atomic::Committer::start(out_dir);
    let ctx = Ctx {
        out: out_dir,
        recipe,
        engine: opts.engine,
        progress: &opts.progress,
        height_scale: metres_per_unit(recipe),
        seamless_only: opts.seamless_only,
        commits: &commits,
    };
    let cut = opts.window.as_ref().map(|w| cut_margin(&run.terrain, w)).transpose()?;
    let terrain = cut.as_ref().unwrap_or(&run.terrain);
    let grown = cut.is_some().then_some(&run.terrain);
    let prepared = prepare(&ctx, terrain, grown)?;
    std::fs::create_dir_all(out_dir).map_err(|source| Error::Io { path: out_dir.to_path_buf(), source })?;
    let written = write_files(&ctx, terrain, &prepared);
    // Every file is in place (fsynced and renamed) before report.json, even after an error.
    commits.finish()?;
    let written = written?;
    let report = Report::new(pipeline, run, terrain, opts, &prepared, written, started);
    write_json(&out_dir.join("report.json"), &report)?;
    Ok(report)
}

/// The window `w` cut from its run grown by [`WINDOW_MARGIN`] (heights and water; the
/// derived layers are left out: a world recipe has no hydrology steps, they are global).
fn cut_margin(grown: &Terrain, w: &Window) -> Result<Terrain> {
    let g = w.grown();
    let h = &grown.height;
    if (h.width(), h.height()) != (g.width, g.height) {
        return Err(Error::InvalidTerrain {
            reason: format!(
                "the run is {}x{} but window {}x{} needs its run grown by {WINDOW_MARGIN} cell a side ({}x{}): \
                 run it with export::run_window",
                h.width(),
                h.height(),
                w.width,
                w.height,
                g.width,
                g.height
            ),
        });
    }
    let m = WINDOW_MARGIN;
    let water = grown.water.as_ref().map(|wm| wm.crop(m, m, w.width, w.height)).transpose()?;
    Ok(Terrain {
        height: h.crop(m, m, w.width, w.height)?,
        sea_level: grown.sea_level,
        water,
        layers: Default::default(),
    })
}

/// The settings every job reads.
struct Ctx<'a> {
    out: &'a Path,
    recipe: &'a Recipe,
    engine: Option<Engine>,
    progress: &'a Progress,
    /// fsyncs and renames the files while the jobs go on ([`io::atomic::Committer`]).
    commits: &'a io::atomic::Committer,
    /// Metres per height unit ([`metres_per_unit`]).
    height_scale: f64,
    /// [`ExportOptions::seamless_only`].
    seamless_only: bool,
}

impl Ctx<'_> {
    fn path(&self, name: &str) -> PathBuf {
        self.out.join(name)
    }
}

/// What the output files share that is cheap to compute and can fail on a bad terrain:
/// computed before the output folder is touched.
struct Prepared {
    /// Lowest and highest height, height units (a flat map gets `hi = lo + 1`).
    lo: f32,
    hi: f32,
    /// Heights in metres (EXR/TIFF, images, mesh, biomes).
    metres: Heightmap,
    /// Sea level in metres.
    sea_level_m: f32,
    /// Engine import settings.
    engine: Option<EngineImport>,
    /// The recipe palette.
    palette: Palette,
    /// Heights in metres to palette fractions (the metres range and the sea level).
    fm: FractionMap,
    /// The palette colour of every cell (3 sRGB bytes, row-major) under `fm`, computed once for
    /// `color.png`, `shaded.png`, `triangle.png` and the uncarved mesh; empty when none of them
    /// is written.
    colors: Vec<u8>,
    /// Cells painted in fresh-water blue on `color.png`/`shaded.png` (the recipe's own lakes
    /// and rivers), if the images are on and the recipe has lakes or rivers.
    recipe_water: Option<Vec<bool>>,
    /// The hillshade of every cell ([`Hillshader`], row-major), computed once for
    /// `shaded.png` and `hillshade.png`; empty when the images are off.
    shade: Vec<f32>,
    /// Seconds of each preparation part, in order.
    timings: Vec<(&'static str, f64)>,
}

/// The hydrology side of the outputs, computed while the height files are written.
struct Hydro<'t> {
    layers: WaterLayers<'t>,
    biomes: BiomeMap,
    biome_opts: BiomeOptions,
    biome_shares: Vec<(&'static str, f64)>,
    /// The river-carved heights in metres for the mesh (`exports.carve-mesh`).
    carved: Option<Heightmap>,
}

/// What the files part of an export hands to the report.
struct Written {
    /// File names in report order (report.json not included).
    files: Vec<String>,
    /// Which hydrology layers were computed, and the river and lake counts.
    hydrology: HydrologyReport,
    /// Share of the map per biome.
    biome_shares: Vec<(&'static str, f64)>,
    /// Metrics of the heights.
    metrics: Metrics,
    /// Seconds of each preparation part (including the hydrology branch's).
    prepare_timings: Vec<(&'static str, f64)>,
    /// Seconds per job, by its first file name, in file order.
    file_timings: Vec<(&'static str, f64)>,
}

/// Runs `f` and appends its duration to `timings` under `name`.
fn timed<T>(timings: &mut Vec<(&'static str, f64)>, name: &'static str, f: impl FnOnce() -> T) -> T {
    let t0 = Instant::now();
    let out = f();
    timings.push((name, t0.elapsed().as_secs_f64()));
    out
}

/// Checks the terrain and computes the cheap shared parts (no file touched). `grown`: the
/// run grown by the window margin, when the export has a window.
fn prepare(ctx: &Ctx, terrain: &Terrain, grown: Option<&Terrain>) -> Result<Prepared> {
    let ex = &ctx.recipe.exports;
    let h = &terrain.height;
    let bad = |reason: &str| Error::InvalidTerrain { reason: reason.into() };
    let (lo, mut hi) = h.min_max().ok_or_else(|| bad("empty terrain"))?;
    if !(lo.is_finite() && hi.is_finite()) {
        return Err(bad("the terrain has non-finite heights (a step produced NaN or infinity)"));
    }
    if hi <= lo {
        // A flat map still exports: give the 16-bit range a nonzero width.
        hi = lo + 1.0;
    }
    let mut timings = Vec::new();
    let scale = ctx.height_scale;
    let metres = timed(&mut timings, "heights_m", || h.par_map(|&v| (v as f64 * scale) as f32));
    let mut metres_range = metres.min_max().unwrap_or((0.0, 1.0)); // the palette's range
    let mut lo = lo;
    if let Some(world) = &ctx.recipe.world {
        // World: the declared range (metres = height units), never the window's own.
        let [a, b] = world.height_range;
        (lo, hi) = (a as f32, b as f32);
        metres_range = (lo, hi);
    }
    let grown_metres = grown.map(|g| g.height.par_map(|&v| (v as f64 * scale) as f32));
    let sea_level_m = (terrain.sea_level as f64 * scale) as f32;
    if !sea_level_m.is_finite() {
        return Err(bad(&format!("the sea level is not finite ({sea_level_m} m)")));
    }
    let engine = ctx
        .engine
        .map(|e| EngineImport::new(e, h.width(), h.cell_size(), lo as f64 * scale, hi as f64 * scale));
    let palette = ctx.recipe.palette.resolve()?;
    let fm = palette.fraction_map(metres_range.0, metres_range.1, Some(sea_level_m));
    // Its readers: the images, an uncarved mesh, and `triangle.png`, which is written whatever
    // the export switches.
    let triangle = terrain.layers.get::<crate::generate::TriangleMask>().is_some();
    let colors = if ex.images || ((ex.glb || ex.obj) && !ex.carve_mesh) || triangle {
        memory::check_cells(metres.width(), metres.height(), 3, "the colour map")?;
        timed(&mut timings, "colors", || palette.colorize_mapped(&metres, fm))
    } else {
        Vec::new()
    };
    let steps = terrain.layers.get::<HydroLayers>();
    let has_water =
        steps.is_some_and(|l| l.lake_labels.is_some() || !l.rivers.is_empty() || !l.placed.is_empty());
    let recipe_water = (ex.images && has_water).then(|| recipe_water_mask(terrain));
    let shade = if ex.images {
        let (w, rows) = (metres.width(), metres.height());
        memory::check_cells(w, rows, 4, "the hillshade")?;
        // With a window, shade the map grown by [`WINDOW_MARGIN`] (so edge cells see their
        // true neighbours) and keep its inner cells (`off` cells in).
        let (shade_map, off) = match &grown_metres {
            Some(g) => (g, WINDOW_MARGIN),
            None => (&metres, 0),
        };
        let shader = Hillshader::new(shade_map, &HillshadeOptions::default(), Some(sea_level_m))?;
        timed(&mut timings, "hillshade", || {
            let mut shade = vec![0f32; w * rows];
            shade.par_chunks_mut(w.max(1)).enumerate().for_each(|(y, row)| shader.span(y + off, off, row));
            shade
        })
    } else {
        Vec::new()
    };
    Ok(Prepared { lo, hi, metres, sea_level_m, engine, palette, fm, colors, recipe_water, shade, timings })
}

/// Biomes and the carved mesh heights from the hydrology layers.
fn hydro<'t>(
    layers: WaterLayers<'t>,
    p: &Prepared,
    carve: bool,
    scale: f64,
    timings: &mut Vec<(&'static str, f64)>,
) -> Result<Hydro<'t>> {
    let flow = &layers.flow;
    let biome_opts = BiomeOptions::default();
    let biomes = timed(timings, "biomes", || {
        let fresh = fresh_water_mask(&layers);
        classify(&p.metres, p.sea_level_m, &fresh, Some(flow), &biome_opts)
    })?;
    let biome_shares = Biome::ALL.iter().zip(biomes.shares()).map(|(b, s)| (b.name(), s)).collect();
    let carved = if carve {
        Some(timed(timings, "carve", || {
            carve_rivers_scaled(&p.metres, &layers.rivers, scale, MESH_CARVE_DEPTH_M)
        })?)
    } else {
        None
    };
    Ok(Hydro { layers, biomes, biome_opts, biome_shares, carved })
}

/// Lake and river cells of the recipe's own hydrology steps (`rivers`, `lakes`,
/// `squig-rivers`) and the rivers placed by a project's sources, painted in fresh water over `color.png` and `shaded.png`. Layers the
/// outputs computed themselves are not painted there (they show in `water.png`, `flow.png`
/// and the biomes), so a recipe without hydrology keeps its plain colour map.
pub fn recipe_water_mask(terrain: &Terrain) -> Vec<bool> {
    let (w, h) = (terrain.height.width(), terrain.height.height());
    let steps = terrain.layers.get::<HydroLayers>();
    let mut mask = match steps.and_then(|l| l.lake_labels.as_ref()) {
        Some(l) => l.as_slice().iter().map(|&id| id != 0).collect(),
        None => vec![false; w * h],
    };
    if let Some(l) = steps {
        stamp_rivers(w, h, &l.rivers, |i, _| mask[i] = true);
        stamp_rivers(w, h, &l.placed, |i, _| mask[i] = true);
    }
    mask
}

/// The palette colour of every cell of a row ([`Prepared`]'s colours), with the recipe's water
/// painted over.
#[derive(Clone, Copy)]
struct ColorRows<'a> {
    width: usize,
    colors: &'a [u8],
    water: Option<&'a [bool]>,
}

impl ColorRows<'_> {
    fn row(&self, y: usize, out: &mut [u8]) {
        let w = self.width;
        out.copy_from_slice(&self.colors[3 * y * w..3 * (y + 1) * w]);
        if let Some(water) = self.water {
            let fresh = [LAKE_RGBA[0], LAKE_RGBA[1], LAKE_RGBA[2]];
            for (px, _) in out.chunks_exact_mut(3).zip(&water[y * w..(y + 1) * w]).filter(|(_, wet)| **wet) {
                px.copy_from_slice(&fresh);
            }
        }
    }
}

/// One output job: the files it writes (the first names its timing) and how.
struct Job<'s> {
    files: Vec<&'static str>,
    run: Box<dyn Fn() -> Result<()> + Send + Sync + 's>,
}

impl<'s> Job<'s> {
    fn new(file: &'static str, run: impl Fn() -> Result<()> + Send + Sync + 's) -> Self {
        Self { files: vec![file], run: Box::new(run) }
    }

    /// Runs the job unless the export was cancelled; returns its first file and seconds.
    fn run(&self, ctx: &Ctx) -> Result<(&'static str, f64)> {
        ctx.progress.check_cancelled()?;
        let t0 = Instant::now();
        ctx.commits.scope(|| (self.run)())?;
        Ok((self.files[0], t0.elapsed().as_secs_f64()))
    }
}

/// Runs the jobs as parallel rayon tasks (each job's rows are parallel too); returns each
/// job's first file name and wall seconds, in job order whatever the schedule.
fn run_jobs(jobs: &[Job], ctx: &Ctx) -> Result<Vec<(&'static str, f64)>> {
    jobs.par_iter().with_max_len(1).map(|job| job.run(ctx)).collect()
}

/// The jobs writing `mesh.glb` and `mesh.obj` (+ `mesh.mtl`) from `map` (heights in metres).
fn mesh_jobs<'s>(ctx: &'s Ctx, map: &'s Heightmap, p: &'s Prepared) -> Vec<Job<'s>> {
    let ex = &ctx.recipe.exports;
    let opts = move || MeshOptions {
        height_scale: 1.0,
        lod: ex.lod,
        colors: Some(p.palette.clone()),
        sea_level: Some(p.sea_level_m),
    };
    // The prepared colours are those of `p.metres`, not of a carved map (the mesh checks the
    // palette and mapping; the heights are checked here).
    let colored = move |grid: GridMesh<'s>| {
        if std::ptr::eq(map, &p.metres) { grid.with_color_cache(&p.colors, &p.palette, p.fm) } else { grid }
    };
    let mut jobs = Vec::new();
    if ex.glb {
        jobs.push(Job::new("mesh.glb", move || {
            let grid = colored(GridMesh::new(map, opts())?);
            io::gltf::write_glb_grid(ctx.path("mesh.glb"), &grid)
        }));
    }
    if ex.obj {
        let mut files = vec!["mesh.obj"];
        if ex.images {
            files.push("mesh.mtl");
        }
        let run = move || {
            let grid = colored(GridMesh::new(map, opts())?);
            let texture = ex.images.then_some("color.png");
            io::obj::write_obj_grid(ctx.path("mesh.obj"), &grid, texture)
        };
        jobs.push(Job { files, run: Box::new(run) });
    }
    jobs
}

/// The jobs that need only the heights: height files, `color.png`, `hillshade.png`,
/// `shaded.png`, and the mesh unless it is carved. Largest first, so that they start at once.
fn height_jobs<'s>(ctx: &'s Ctx, terrain: &'s Terrain, p: &'s Prepared) -> Result<Vec<Job<'s>>> {
    let ex = &ctx.recipe.exports;
    let h = &terrain.height;
    let (w, hgt) = (h.width(), h.height());
    let (lo, hi) = (p.lo, p.hi);
    let shade_opts = HillshadeOptions::default();
    let colors = ColorRows { width: w, colors: &p.colors, water: p.recipe_water.as_deref() };
    let (ambient, flat) =
        (shade_opts.ambient, terrasynth_noise::detmath::sin(shade_opts.altitude_deg.to_radians()));
    let shade_row = move |y: usize| &p.shade[y * w..(y + 1) * w];
    let mut jobs: Vec<Job> = if ex.carve_mesh { Vec::new() } else { mesh_jobs(ctx, &p.metres, p) };
    if ex.exr {
        jobs.push(Job::new("height.exr", move || io::exr::write(ctx.path("height.exr"), &p.metres)));
    }
    if ex.images {
        jobs.push(Job::new("shaded.png", move || {
            write_png_rows(ctx.path("shaded.png"), w, hgt, PngLayout::Rgb8, |y, row| {
                colors.row(y, row);
                for (px, &v) in row.chunks_exact_mut(3).zip(shade_row(y)) {
                    px.copy_from_slice(&shade_pixel([px[0], px[1], px[2]], v, ambient, flat));
                }
            })
        }));
        jobs.push(Job::new("color.png", move || {
            write_png_rows(ctx.path("color.png"), w, hgt, PngLayout::Rgb8, |y, row| colors.row(y, row))
        }));
        jobs.push(Job::new("hillshade.png", move || {
            write_png_rows(ctx.path("hillshade.png"), w, hgt, PngLayout::Gray8, |y, row| {
                for (o, &v) in row.iter_mut().zip(shade_row(y)) {
                    *o = hillshade_byte(v);
                }
            })
        }));
    }
    if terrain.layers.get::<crate::generate::TriangleMask>().is_some() {
        triangle_jobs(ctx, &mut jobs, p, colors);
    }
    if ex.png {
        jobs.push(Job::new("height.png", move || io::png::write_png16(ctx.path("height.png"), h, lo, hi)));
    }
    if ex.r16 {
        jobs.push(Job::new("height.r16", move || io::raw::write_r16(ctx.path("height.r16"), h, lo, hi)));
    }
    if ctx.engine == Some(Engine::Unity) {
        jobs.push(Job::new("height.raw", move || {
            let flip = io::raw::R16Options { flip_y: true, big_endian: false };
            io::raw::write_r16_with(ctx.path("height.raw"), h, lo, hi, flip)
        }));
    }
    if ex.tiff {
        jobs.push(Job::new("height.tif", move || {
            io::tiff::write_geotiff(ctx.path("height.tif"), &p.metres, &GeoTiffOptions::default())
        }));
    }
    Ok(jobs)
}

/// The triangle outputs of a `triangular` step with `shape = "triangle"` (the terrain carries
/// a [`crate::generate::TriangleMask`]): `triangle.png`, the colours of `color.png` as RGBA
/// with alpha 0 outside the triangle (cells `x > y`), and `triangle.glb`, the mesh of the
/// triangle only ([`crate::render::triangle_mesh`]).
fn triangle_jobs<'s>(ctx: &'s Ctx, jobs: &mut Vec<Job<'s>>, p: &'s Prepared, colors: ColorRows<'s>) {
    let w = p.metres.width();
    jobs.push(Job::new("triangle.png", move || {
        write_png_rows(ctx.path("triangle.png"), w, p.metres.height(), PngLayout::Rgba8, |y, row| {
            let mut rgb = vec![0u8; 3 * w];
            colors.row(y, &mut rgb);
            for (x, (px, c)) in row.chunks_exact_mut(4).zip(rgb.chunks_exact(3)).enumerate() {
                let alpha = if crate::generate::TriangleMask::inside(x, y) { 255 } else { 0 };
                px.copy_from_slice(&[c[0], c[1], c[2], alpha]);
            }
        })
    }));
    jobs.push(Job::new("triangle.glb", move || {
        let opts = MeshOptions {
            height_scale: 1.0,
            lod: 0,
            colors: Some(p.palette.clone()),
            sea_level: Some(p.sea_level_m),
        };
        io::gltf::write_glb(
            ctx.path("triangle.glb"),
            &crate::render::triangle_mesh::triangle_mesh(&p.metres, opts)?,
        )
    }));
}

/// The jobs that need the hydrology layers or the biomes: `water.png`, `flow.png`,
/// `biomes.png`, `splat.png`, `rivers.geojson`, and the carved mesh.
fn hydro_jobs<'s>(ctx: &'s Ctx, terrain: &'s Terrain, p: &'s Prepared, hy: &'s Hydro) -> Vec<Job<'s>> {
    let ex = &ctx.recipe.exports;
    let h = &terrain.height;
    let (w, hgt) = (h.width(), h.height());
    let mut jobs = match &hy.carved {
        Some(carved) => mesh_jobs(ctx, carved, p),
        None => Vec::new(),
    };
    if ex.images {
        jobs.push(Job::new("splat.png", move || {
            write_png_rows(ctx.path("splat.png"), w, hgt, PngLayout::Rgba8, |y, row| {
                hy.biomes.splat_row(y, &hy.biome_opts, row)
            })
        }));
        jobs.push(Job::new("water.png", move || {
            let img = WaterImage::new(&hy.layers, h, terrain.sea_level);
            write_png_rows(ctx.path("water.png"), w, hgt, PngLayout::Rgba8, |y, row| img.row(y, row))
        }));
        jobs.push(Job::new("flow.png", move || {
            let img = FlowImage::new(&hy.layers);
            write_png_rows(ctx.path("flow.png"), w, hgt, PngLayout::Gray8, |y, row| img.row(y, row))
        }));
        jobs.push(Job::new("biomes.png", move || {
            write_png_rows(ctx.path("biomes.png"), w, hgt, PngLayout::Rgb8, |y, row| {
                for (px, b) in row.chunks_exact_mut(3).zip(&hy.biomes.classes[y * w..(y + 1) * w]) {
                    px.copy_from_slice(&b.color());
                }
            })
        }));
    }
    jobs.push(Job::new("rivers.geojson", move || {
        let doc = RiversGeojson::new(&hy.layers.rivers, h.cell_size(), ctx.height_scale);
        write_json_sorted(&ctx.path("rivers.geojson"), &doc)
    }));
    jobs
}

/// What the hydrology branch of [`write_files`] returns.
type HydroBranch =
    (HydrologyReport, Vec<(&'static str, f64)>, Vec<(&'static str, f64)>, Metrics, Vec<(&'static str, f64)>);

/// A task of the schedule that did not report: only a panic in it (propagated by the scope)
/// leaves a slot empty, so this is a bug.
fn unfinished(what: &str) -> ! {
    unreachable!("export: {what} did not finish")
}

/// Writes every file (see the module docs) into the existing output folder.
///
/// Schedule (a FIFO rayon scope, so the first tasks start first on any thread count): the
/// hydrology ([`WaterLayers::parts`]: the flow chain, ε fill → D8 → accumulation → rivers, and
/// the lake search, from one ε fill when the recipe made neither) starts first; the
/// height-only files (mesh, EXR, images, PNG/R16/TIFF) follow in order. The hydrology task goes
/// straight on with the biomes and the files that need them (splat, water, flow, biomes,
/// rivers.geojson, a carved mesh), beside the metrics. That chain is the longest, so it never
/// waits behind the other files.
fn write_files(ctx: &Ctx, terrain: &Terrain, p: &Prepared) -> Result<Written> {
    let ex = &ctx.recipe.exports;
    let a_jobs = height_jobs(ctx, terrain, p)?;
    let a_done: Vec<OnceLock<Result<(&'static str, f64)>>> = a_jobs.iter().map(|_| OnceLock::new()).collect();
    let branch: OnceLock<Result<HydroBranch>> = OnceLock::new();
    let hydro_start = Instant::now();
    // The hydrology branch, from both parts of the water layers.
    let run_branch = |parts: Result<(FlowPart, LakePart)>| {
        let mut timings = vec![("hydrology", hydro_start.elapsed().as_secs_f64())];
        let result = (|| -> Result<HydroBranch> {
            let (flow, lakes) = parts?;
            let layers = WaterLayers::from_parts(terrain, flow, lakes);
            let carve = (ex.glb || ex.obj) && ex.carve_mesh;
            let hy = hydro(layers, p, carve, ctx.height_scale, &mut timings)?;
            let b_jobs = hydro_jobs(ctx, terrain, p, &hy);
            let mut metric_time = Vec::new();
            let (files, metrics) = rayon::join(
                || run_jobs(&b_jobs, ctx),
                || timed(&mut metric_time, "metrics", || Metrics::compute(&terrain.height)),
            );
            let files = files?;
            drop(b_jobs);
            timings.extend(metric_time);
            let hydrology = HydrologyReport {
                computed_by_outputs: hy.layers.computed.iter().map(|s| s.to_string()).collect(),
                rivers: hy.layers.rivers.len(),
                lakes: hy.layers.lake_count,
            };
            Ok((hydrology, hy.biome_shares, files, metrics, timings))
        })();
        let _ = branch.set(result);
    };
    rayon::scope_fifo(|s| {
        if ctx.seamless_only {
            // No hydrology: only the metrics beside the height files.
            s.spawn_fifo(|_| {
                let mut timings = Vec::new();
                let metrics = timed(&mut timings, "metrics", || Metrics::compute(&terrain.height));
                let none = HydrologyReport { computed_by_outputs: Vec::new(), rivers: 0, lakes: 0 };
                let _ = branch.set(Ok((none, Vec::new(), Vec::new(), metrics, timings)));
            });
        } else {
            // Both parts from one task (`WaterLayers::parts`: one ε fill for both when the
            // recipe made neither, else the two in parallel), then the rest of the branch.
            s.spawn_fifo(|_| run_branch(WaterLayers::parts(terrain)));
        }
        for (job, cell) in a_jobs.iter().zip(&a_done) {
            s.spawn_fifo(move |_| {
                let _ = cell.set(job.run(ctx));
            });
        }
    });
    let mut a = Vec::with_capacity(a_done.len());
    for cell in a_done {
        a.push(cell.into_inner().unwrap_or_else(|| unfinished("an output task"))?);
    }
    let (hydrology, biome_shares, b, metrics, hydro_timings) =
        branch.into_inner().unwrap_or_else(|| unfinished("the hydrology outputs"))?;
    let names: Vec<&str> = a.iter().chain(&b).map(|(n, _)| *n).collect();
    let files: Vec<String> = FILE_ORDER
        .iter()
        .filter(|name| {
            names.contains(name) || (**name == "mesh.mtl" && names.contains(&"mesh.obj") && ex.images)
        })
        .map(|name| name.to_string())
        .collect();
    let mut file_timings: Vec<(&'static str, f64)> = a.into_iter().chain(b).collect();
    file_timings.sort_by_key(|(n, _)| FILE_ORDER.iter().position(|f| f == n));
    Ok(Written {
        files,
        hydrology,
        biome_shares,
        metrics,
        prepare_timings: p.timings.iter().copied().chain(hydro_timings).collect(),
        file_timings,
    })
}

/// Order of the files in report.json's `files` (the order they were written in before the
/// outputs ran in parallel).
pub const FILE_ORDER: &[&str] = &[
    "height.png",
    "height.r16",
    "height.raw",
    "height.exr",
    "height.tif",
    "color.png",
    "hillshade.png",
    "shaded.png",
    "water.png",
    "flow.png",
    "biomes.png",
    "splat.png",
    "rivers.geojson",
    "mesh.glb",
    "mesh.obj",
    "mesh.mtl",
    "triangle.png",
    "triangle.glb",
];
