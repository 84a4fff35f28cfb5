//! The files `terrasynth generate` writes. [`prepare`] computes what several files share
//! (heights in metres, the hydrology layers, the biome map, metrics) without touching any file;
//! [`write`] then writes every file as its own job, the jobs running in parallel on the
//! command's thread pool, each file streamed row band by row band (no whole RGBA image, no
//! mesh held in memory) and written atomically (temp file + rename, `terrasynth::io::atomic`).
//!
//! Height files: `height.png` and `height.r16` map the map's own min..max to 0..65535;
//! `height.exr` and `height.tif` hold heights in metres (height units × `exports.height-scale`).
//! `--engine unity` adds `height.raw` (south row first). report.json has the metres range.
//! Images and the mesh are rendered from the heights in metres (hillshade z-factor 1, the
//! map's cell size), coloured by the recipe palette with the terrain's sea level; lakes and
//! rivers from the recipe's hydrology steps are painted over the colours (the layers computed
//! when the recipe has none, see [`crate::water`], are not). `water.png`, `flow.png`,
//! `biomes.png`, `splat.png` (with the images) and `rivers.geojson` (always) come from the
//! same hydrology layers; biomes and splat weights from `terrasynth::analyze::biomes`. Every
//! file is listed in docs/OUTPUTS.md, with the time and memory figures of large maps.
//!
//! Every pixel, vertex and value depends only on its own row's inputs, so the files are the
//! same bytes on any thread count and whatever order the jobs run in.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use rayon::prelude::*;
use serde_json::{Value, json};
use terrasynth::analyze::Metrics;
use terrasynth::analyze::biomes::{Biome, BiomeMap, BiomeOptions, classify};
use terrasynth::io::engine::{Engine, EngineImport};
use terrasynth::io::png::{PngLayout, write_png_rows};
use terrasynth::io::tiff::GeoTiffOptions;
use terrasynth::memory;
use terrasynth::recipe::{Recipe, RunOutput, registry};
use terrasynth::render::hillshade::{Hillshader, hillshade_byte, shade_pixel};
use terrasynth::render::palette::FractionMap;
use terrasynth::render::{GridMesh, HillshadeOptions, MeshOptions, Palette};
use terrasynth::{Heightmap, io};

use crate::generate::Plan;
use crate::water::{self, FlowImage, HydroView, WaterImage};
use terrasynth::recipe::ErosionLog;

/// Margin for the GLB header and JSON when checking the 4 GiB limit before writing.
const GLB_HEAD_MARGIN: u64 = 64 << 10;

/// Checks the output settings of a recipe that the library's validation does not cover: a
/// `mesh.glb` must stay under glTF's 4 GiB (checked here so that nothing is written when it
/// would not).
pub fn check_recipe_outputs(recipe: &Recipe) -> anyhow::Result<()> {
    let ex = &recipe.exports;
    if ex.glb && recipe.width >= 2 && recipe.height >= 2 {
        let (nx, ny) = GridMesh::grid_size(recipe.width, recipe.height, ex.lod);
        let (v, i) = ((nx * ny) as u64, (6 * (nx - 1) * (ny - 1)) as u64);
        let bytes = io::gltf::glb_bin_len(v, i, true) + GLB_HEAD_MARGIN;
        if bytes > io::gltf::GLB_MAX_BYTES {
            anyhow::bail!(
                "mesh.glb of a {}x{} map at lod {} would be {:.2} GiB, over the 4 GiB limit of GLB: \
                 use --lod {} or more (or exports.lod), or set exports.glb = false",
                recipe.width,
                recipe.height,
                ex.lod,
                bytes as f64 / (1u64 << 30) as f64,
                smallest_glb_lod(recipe.width, recipe.height)
            );
        }
    }
    Ok(())
}

/// The smallest mesh LOD whose GLB fits in 4 GiB.
fn smallest_glb_lod(w: usize, h: usize) -> u32 {
    (0..=terrasynth::render::mesh::MAX_LOD)
        .find(|&lod| {
            let (nx, ny) = GridMesh::grid_size(w, h, lod);
            let (v, i) = ((nx * ny) as u64, (6 * (nx - 1) * (ny - 1)) as u64);
            io::gltf::glb_bin_len(v, i, true) + GLB_HEAD_MARGIN <= io::gltf::GLB_MAX_BYTES
        })
        .unwrap_or(terrasynth::render::mesh::MAX_LOD)
}

/// What the output files share that is cheap to compute and can fail on a bad terrain:
/// computed before `--out` is touched.
pub struct Prepared {
    /// Lowest and highest height, height units.
    pub lo: f32,
    /// See `lo`.
    pub hi: f32,
    /// Heights in metres (EXR/TIFF, images, mesh, biomes).
    pub metres: Heightmap,
    /// Lowest and highest height in metres (the palette's range).
    pub metres_range: (f32, f32),
    /// Sea level in metres.
    pub sea_level_m: f32,
    /// Engine import settings.
    pub engine: Option<EngineImport>,
    /// The recipe palette.
    pub palette: Palette,
    /// Cells painted in fresh-water blue on `color.png`/`shaded.png` (the recipe's own lakes
    /// and rivers), if the images are on and the recipe has lakes or rivers.
    pub recipe_water: Option<Vec<bool>>,
    /// ε after each erosion step and the `--trace` records.
    pub erosion: ErosionLog,
    /// Seconds of each preparation part, in order.
    pub timings: Vec<(&'static str, f64)>,
}

/// The hydrology side of the outputs, computed while the height files are written.
struct Hydro<'t> {
    view: HydroView<'t>,
    biomes: BiomeMap,
    biome_opts: BiomeOptions,
    biome_shares: Vec<(&'static str, f64)>,
    /// The river-carved heights in metres for the mesh (`exports.carve-mesh`).
    carved: Option<Heightmap>,
}

/// Depth in metres the largest river is cut into the mesh with `exports.carve-mesh`.
pub const MESH_CARVE_DEPTH_M: f32 = 4.0;

/// Runs `f` and appends its duration to `timings` under `name`.
fn timed<T>(timings: &mut Vec<(&'static str, f64)>, name: &'static str, f: impl FnOnce() -> T) -> T {
    let t0 = Instant::now();
    let out = f();
    timings.push((name, t0.elapsed().as_secs_f64()));
    out
}

/// Checks the terrain and computes the cheap shared parts (no file touched; an error here
/// leaves `--out` untouched).
pub fn prepare(plan: &Plan, run: &RunOutput, erosion: ErosionLog) -> anyhow::Result<Prepared> {
    let recipe = plan.pipeline.recipe();
    let ex = &recipe.exports;
    let h = &run.terrain.height;
    let (lo, mut hi) = h.min_max().ok_or_else(|| anyhow::anyhow!("empty terrain"))?;
    if !(lo.is_finite() && hi.is_finite()) {
        anyhow::bail!("the terrain has non-finite heights (a step produced NaN or infinity)");
    }
    if hi <= lo {
        // A flat map still exports: give the 16-bit range a nonzero width.
        hi = lo + 1.0;
    }
    let mut timings = Vec::new();
    let scale = ex.height_scale;
    let metres = timed(&mut timings, "heights_m", || h.map(|&v| (v as f64 * scale) as f32));
    let metres_range = metres.min_max().unwrap_or((0.0, 1.0));
    let sea_level_m = (run.terrain.sea_level as f64 * scale) as f32;
    if !sea_level_m.is_finite() {
        anyhow::bail!("the sea level is not finite ({sea_level_m} m)");
    }
    let engine = plan
        .engine
        .map(|e| EngineImport::new(e, h.width(), h.cell_size(), lo as f64 * scale, hi as f64 * scale));
    let palette = recipe.palette.resolve()?;
    let hydro = &run.terrain.hydro;
    let has_water = hydro.lake_labels.is_some() || !hydro.rivers.is_empty();
    let recipe_water = (ex.images && has_water).then(|| recipe_water_mask(&run.terrain));
    Ok(Prepared {
        lo,
        hi,
        metres,
        metres_range,
        sea_level_m,
        engine,
        palette,
        recipe_water,
        erosion,
        timings,
    })
}

/// Biomes and the carved mesh heights from the hydrology layers.
fn hydro<'t>(
    view: HydroView<'t>,
    run: &RunOutput,
    p: &Prepared,
    carve: bool,
    scale: f64,
    timings: &mut Vec<(&'static str, f64)>,
) -> anyhow::Result<Hydro<'t>> {
    let h = &run.terrain.height;
    let biome_opts = BiomeOptions::default();
    let biomes = timed(timings, "biomes", || {
        let fresh = view.fresh_water_mask(h.width(), h.height());
        classify(&p.metres, p.sea_level_m, &fresh, Some(&view.flow), &biome_opts)
    })?;
    let biome_shares = Biome::ALL.iter().zip(biomes.shares()).map(|(b, s)| (b.name(), s)).collect();
    let carved = if carve {
        Some(timed(timings, "carve", || water::carved(&p.metres, &view, scale, MESH_CARVE_DEPTH_M))?)
    } else {
        None
    };
    Ok(Hydro { view, biomes, biome_opts, biome_shares, carved })
}

/// Colour of lakes and rivers drawn over `color.png` (the `classic` palette's shallow water).
const FRESH_WATER: [u8; 3] = [62, 128, 188];

/// Lake and river cells of the recipe's own hydrology steps (`rivers`, `lakes`,
/// `squig-rivers`), painted in [`FRESH_WATER`] over `color.png` and `shaded.png`. Layers the
/// outputs computed themselves are not painted there (they show in `water.png`, `flow.png`
/// and the biomes), so a recipe without hydrology keeps its plain colour map.
fn recipe_water_mask(terrain: &terrasynth::step::Terrain) -> Vec<bool> {
    let (w, h) = (terrain.height.width(), terrain.height.height());
    let mut mask = match &terrain.hydro.lake_labels {
        Some(l) => l.as_slice().iter().map(|&id| id != 0).collect(),
        None => vec![false; w * h],
    };
    water::stamp_rivers(w, h, &terrain.hydro.rivers, |i, _| mask[i] = true);
    mask
}

/// The palette colour of every cell of a row, with the recipe's water painted over.
#[derive(Clone, Copy)]
struct ColorRows<'a> {
    metres: &'a Heightmap,
    palette: &'a Palette,
    fm: FractionMap,
    water: Option<&'a [bool]>,
}

impl ColorRows<'_> {
    fn row(&self, y: usize, out: &mut [u8]) {
        let w = self.metres.width();
        let z = &self.metres.as_slice()[y * w..(y + 1) * w];
        for (x, (px, &v)) in out.chunks_exact_mut(3).zip(z).enumerate() {
            let wet = self.water.is_some_and(|m| m[y * w + x]);
            px.copy_from_slice(&if wet { FRESH_WATER } else { self.palette.color_at(self.fm.fraction(v)) });
        }
    }
}

/// One output job: the files it writes (the first names its timing) and how.
struct Job<'s> {
    files: Vec<&'static str>,
    run: Box<dyn Fn() -> anyhow::Result<()> + Send + Sync + 's>,
}

impl<'s> Job<'s> {
    fn new(file: &'static str, run: impl Fn() -> anyhow::Result<()> + Send + Sync + 's) -> Self {
        Self { files: vec![file], run: Box::new(run) }
    }
}

/// Runs the jobs as parallel rayon tasks (each job's rows are parallel too); returns each
/// job's first file name and wall seconds, in job order whatever the schedule.
fn run_jobs(jobs: &[Job]) -> anyhow::Result<Vec<(&'static str, f64)>> {
    jobs.par_iter()
        .with_max_len(1)
        .map(|job| {
            let t0 = Instant::now();
            (job.run)()?;
            Ok((job.files[0], t0.elapsed().as_secs_f64()))
        })
        .collect()
}

/// What [`write`] did.
pub struct Written {
    /// File names, in report order, report.json last.
    pub files: Vec<String>,
}

/// Output timings for report.json.
struct OutputTimings {
    /// Seconds of each preparation part.
    prepare: Vec<(&'static str, f64)>,
    /// Seconds per job, by its first file name.
    files: Vec<(&'static str, f64)>,
    /// Wall time from the start of [`prepare`] to the last file before report.json.
    seconds: f64,
    /// Peak heap bytes over the same span (None without the counting allocator).
    peak_bytes: Option<usize>,
}

/// The jobs writing `mesh.glb` and `mesh.obj` (+ `mesh.mtl`) from `map` (heights in metres).
fn mesh_jobs<'s>(plan: &'s Plan, map: &'s Heightmap, p: &'s Prepared) -> Vec<Job<'s>> {
    let ex = &plan.pipeline.recipe().exports;
    let opts = move || MeshOptions {
        height_scale: 1.0,
        lod: ex.lod,
        colors: Some(p.palette.clone()),
        sea_level: Some(p.sea_level_m),
    };
    let mut jobs = Vec::new();
    if ex.glb {
        jobs.push(Job::new("mesh.glb", move || {
            let grid = GridMesh::new(map, opts())?;
            Ok(io::gltf::write_glb_grid(plan.out.join("mesh.glb"), &grid)?)
        }));
    }
    if ex.obj {
        let mut files = vec!["mesh.obj"];
        if ex.images {
            files.push("mesh.mtl");
        }
        let run = move || {
            let grid = GridMesh::new(map, opts())?;
            let texture = ex.images.then_some("color.png");
            Ok(io::obj::write_obj_grid(plan.out.join("mesh.obj"), &grid, texture)?)
        };
        jobs.push(Job { files, run: Box::new(run) });
    }
    jobs
}

/// The jobs that need only the heights: height files, `color.png`, `hillshade.png`,
/// `shaded.png`, and the mesh unless it is carved. Largest first, so that they start at once.
fn height_jobs<'s>(plan: &'s Plan, run: &'s RunOutput, p: &'s Prepared) -> anyhow::Result<Vec<Job<'s>>> {
    let ex = &plan.pipeline.recipe().exports;
    let h = &run.terrain.height;
    let (w, hgt) = (h.width(), h.height());
    let out = |name: &str| -> PathBuf { plan.out.join(name) };
    let (lo, hi) = (p.lo, p.hi);
    let sea_m = Some(p.sea_level_m);
    let shade_opts = HillshadeOptions::default();
    let colors = ColorRows {
        metres: &p.metres,
        palette: &p.palette,
        fm: p.palette.fraction_map(p.metres_range.0, p.metres_range.1, sea_m),
        water: p.recipe_water.as_deref(),
    };
    let shader = Hillshader::new(&p.metres, &shade_opts, sea_m)?;
    let (ambient, flat) = (shade_opts.ambient, shade_opts.altitude_deg.to_radians().sin());
    let mut jobs: Vec<Job> = if ex.carve_mesh { Vec::new() } else { mesh_jobs(plan, &p.metres, p) };
    if ex.exr {
        jobs.push(Job::new("height.exr", move || Ok(io::exr::write(out("height.exr"), &p.metres)?)));
    }
    if ex.images {
        jobs.push(Job::new("shaded.png", move || {
            Ok(write_png_rows(out("shaded.png"), w, hgt, PngLayout::Rgb8, |y, row| {
                let mut hs = vec![0f32; w];
                shader.row(y, &mut hs);
                colors.row(y, row);
                for (px, &v) in row.chunks_exact_mut(3).zip(&hs) {
                    px.copy_from_slice(&shade_pixel([px[0], px[1], px[2]], v, ambient, flat));
                }
            })?)
        }));
        jobs.push(Job::new("color.png", move || {
            Ok(write_png_rows(out("color.png"), w, hgt, PngLayout::Rgb8, |y, row| colors.row(y, row))?)
        }));
        jobs.push(Job::new("hillshade.png", move || {
            Ok(write_png_rows(out("hillshade.png"), w, hgt, PngLayout::Gray8, |y, row| {
                let mut hs = vec![0f32; w];
                shader.row(y, &mut hs);
                for (o, &v) in row.iter_mut().zip(&hs) {
                    *o = hillshade_byte(v);
                }
            })?)
        }));
    }
    if ex.png {
        jobs.push(Job::new("height.png", move || Ok(io::png::write_png16(out("height.png"), h, lo, hi)?)));
    }
    if ex.r16 {
        jobs.push(Job::new("height.r16", move || Ok(io::raw::write_r16(out("height.r16"), h, lo, hi)?)));
    }
    if plan.engine == Some(Engine::Unity) {
        jobs.push(Job::new("height.raw", move || {
            let flip = io::raw::R16Options { flip_y: true, big_endian: false };
            Ok(io::raw::write_r16_with(out("height.raw"), h, lo, hi, flip)?)
        }));
    }
    if ex.tiff {
        jobs.push(Job::new("height.tif", move || {
            Ok(io::tiff::write_geotiff(out("height.tif"), &p.metres, &GeoTiffOptions::default())?)
        }));
    }
    Ok(jobs)
}

/// The jobs that need the hydrology layers or the biomes: `water.png`, `flow.png`,
/// `biomes.png`, `splat.png`, `rivers.geojson`, and the carved mesh.
fn hydro_jobs<'s>(plan: &'s Plan, run: &'s RunOutput, p: &'s Prepared, hy: &'s Hydro) -> Vec<Job<'s>> {
    let ex = &plan.pipeline.recipe().exports;
    let h = &run.terrain.height;
    let (w, hgt) = (h.width(), h.height());
    let out = |name: &str| -> PathBuf { plan.out.join(name) };
    let mut jobs = match &hy.carved {
        Some(carved) => mesh_jobs(plan, carved, p),
        None => Vec::new(),
    };
    if ex.images {
        jobs.push(Job::new("splat.png", move || {
            Ok(write_png_rows(out("splat.png"), w, hgt, PngLayout::Rgba8, |y, row| {
                for (x, px) in row.chunks_exact_mut(4).enumerate() {
                    px.copy_from_slice(&hy.biomes.splat_at(y * w + x, &hy.biome_opts));
                }
            })?)
        }));
        jobs.push(Job::new("water.png", move || {
            let img = WaterImage::new(&hy.view, h, run.terrain.sea_level);
            Ok(write_png_rows(out("water.png"), w, hgt, PngLayout::Rgba8, |y, row| img.row(y, row))?)
        }));
        jobs.push(Job::new("flow.png", move || {
            let img = FlowImage::new(&hy.view);
            Ok(write_png_rows(out("flow.png"), w, hgt, PngLayout::Gray8, |y, row| img.row(y, row))?)
        }));
        jobs.push(Job::new("biomes.png", move || {
            Ok(write_png_rows(out("biomes.png"), w, hgt, PngLayout::Rgb8, |y, row| {
                for (px, b) in row.chunks_exact_mut(3).zip(&hy.biomes.classes[y * w..(y + 1) * w]) {
                    px.copy_from_slice(&b.color());
                }
            })?)
        }));
    }
    jobs.push(Job::new("rivers.geojson", move || {
        let value = water::rivers_geojson(&hy.view, h.cell_size(), ex.height_scale);
        write_json(&out("rivers.geojson"), &value)
    }));
    jobs
}

/// What the hydrology branch of [`write`] returns.
type HydroBranch<'t> = (Hydro<'t>, Vec<(&'static str, f64)>, Metrics, Vec<(&'static str, f64)>);

/// Writes every output (see the module docs) into the existing `--out` folder; `started`:
/// when [`prepare`] began (the peak-memory window was reset then).
///
/// Schedule (a FIFO rayon scope, so the first tasks start first on any thread count): the
/// flow chain (ε fill → D8 → accumulation → rivers) and the lake search start at once, one
/// per thread; the height-only files (mesh, EXR, images, PNG/R16/TIFF) follow in order.
/// Whichever hydrology part finishes last goes straight on with the biomes and the files that
/// need them (splat, water, flow, biomes, rivers.geojson, a carved mesh), beside the metrics.
/// That chain is the longest, so it never waits behind the other files. Returns the file
/// names written, report.json last.
pub fn write(plan: &Plan, run: &RunOutput, p: &Prepared, started: Instant) -> anyhow::Result<Written> {
    let ex = &plan.pipeline.recipe().exports;
    let terrain = &run.terrain;
    let a_jobs = height_jobs(plan, run, p)?;
    let a_done: Vec<OnceLock<anyhow::Result<(&'static str, f64)>>> =
        a_jobs.iter().map(|_| OnceLock::new()).collect();
    let flow_cell = Mutex::new(None);
    let lake_cell = Mutex::new(None);
    let pending = AtomicUsize::new(2);
    let branch: OnceLock<anyhow::Result<HydroBranch>> = OnceLock::new();
    let hydro_start = Instant::now();
    // Called by each hydrology part when done; the second one runs the rest of the branch.
    let part_done = || {
        if pending.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let mut timings = vec![("hydrology", hydro_start.elapsed().as_secs_f64())];
        let flow = flow_cell.lock().map(|mut c| c.take()).ok().flatten();
        let lakes = lake_cell.lock().map(|mut c| c.take()).ok().flatten();
        let result = (|| -> anyhow::Result<HydroBranch> {
            let (flow, lakes) = match (flow, lakes) {
                (Some(f), Some(l)) => (f?, l?),
                _ => anyhow::bail!("a hydrology task did not finish"),
            };
            let view = HydroView::from_parts(flow, lakes);
            let hy = hydro(view, run, p, (ex.glb || ex.obj) && ex.carve_mesh, ex.height_scale, &mut timings)?;
            let b_jobs = hydro_jobs(plan, run, p, &hy);
            let mut metric_time = Vec::new();
            let (files, metrics) = rayon::join(
                || run_jobs(&b_jobs),
                || timed(&mut metric_time, "metrics", || Metrics::compute(&terrain.height)),
            );
            let files = files?;
            drop(b_jobs);
            timings.extend(metric_time);
            Ok((hy, files, metrics, timings))
        })();
        let _ = branch.set(result);
    };
    rayon::scope_fifo(|s| {
        s.spawn_fifo(|_| {
            let r = HydroView::flow_part(terrain);
            if let Ok(mut c) = flow_cell.lock() {
                *c = Some(r);
            }
            part_done();
        });
        s.spawn_fifo(|_| {
            let r = HydroView::lake_part(terrain);
            if let Ok(mut c) = lake_cell.lock() {
                *c = Some(r);
            }
            part_done();
        });
        for (job, cell) in a_jobs.iter().zip(&a_done) {
            s.spawn_fifo(move |_| {
                let t0 = Instant::now();
                let r = (job.run)().map(|()| (job.files[0], t0.elapsed().as_secs_f64()));
                let _ = cell.set(r);
            });
        }
    });
    let mut a = Vec::with_capacity(a_done.len());
    for cell in a_done {
        a.push(cell.into_inner().ok_or_else(|| anyhow::anyhow!("an output task did not finish"))??);
    }
    let (hy, b, metrics, hydro_timings) =
        branch.into_inner().ok_or_else(|| anyhow::anyhow!("the hydrology outputs did not finish"))??;
    let names: Vec<&str> = a.iter().chain(&b).map(|(n, _)| *n).collect();
    let mut files: Vec<String> = FILE_ORDER
        .iter()
        .filter(|name| {
            names.contains(name) || (**name == "mesh.mtl" && names.contains(&"mesh.obj") && ex.images)
        })
        .map(|name| name.to_string())
        .collect();
    let mut file_times: Vec<(&'static str, f64)> = a.into_iter().chain(b).collect();
    file_times.sort_by_key(|(n, _)| FILE_ORDER.iter().position(|f| f == n));
    let timings = OutputTimings {
        prepare: p.timings.iter().copied().chain(hydro_timings).collect(),
        files: file_times,
        seconds: started.elapsed().as_secs_f64(),
        peak_bytes: memory::peak_bytes(),
    };
    let report = report_json(plan, run, p, &hy, metrics, &files, &timings);
    write_json(&plan.out.join("report.json"), &report)?;
    files.push("report.json".into());
    Ok(Written { files })
}

/// Order of the files in report.json's `files` (the order they were written in before the
/// outputs ran in parallel).
const FILE_ORDER: &[&str] = &[
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
];

/// Writes pretty JSON and a final newline, atomically, streamed (no text copy in memory).
fn write_json(path: &Path, value: &Value) -> anyhow::Result<()> {
    io::atomic::write_atomic(path, |w| {
        serde_json::to_writer_pretty(&mut *w, value)
            .map_err(|e| terrasynth::Error::Io { path: path.to_path_buf(), source: e.into() })?;
        w.write_all(b"\n").map_err(|e| terrasynth::Error::Io { path: path.to_path_buf(), source: e })
    })?;
    Ok(())
}

/// report.json: resolved recipe, seed, version, height range, engine settings, files, metrics,
/// `erosion_scores` (ε after each erosion step), `hydrology` (river and lake counts, which
/// layers the outputs computed), `biomes` (share of the map per biome), `trace` (with
/// `--trace K`), per-step `timings` and `run` (threads; pipeline time and peak memory;
/// `outputs`: time of each preparation part and of each file, the outputs' wall time and peak
/// memory; `total_seconds`). Only `timings` and `run` depend on the machine and thread count;
/// everything else is a pure function of the recipe.
fn report_json(
    plan: &Plan,
    run: &RunOutput,
    p: &Prepared,
    hy: &Hydro,
    metrics: Metrics,
    files: &[String],
    t: &OutputTimings,
) -> Value {
    let reg = registry();
    let resolved = plan.pipeline.resolved_recipe(&reg);
    let recipe = plan.pipeline.recipe();
    let scale = recipe.exports.height_scale;
    let h = &run.terrain.height;
    let timings: Vec<Value> = run
        .timings
        .iter()
        .map(|t| json!({"step": t.step, "type": t.name, "seconds": t.seconds, "peak_bytes": t.peak_bytes}))
        .collect();
    let seconds_map = |list: &[(&'static str, f64)]| -> serde_json::Map<String, Value> {
        list.iter().map(|(n, s)| (n.to_string(), json!(s))).collect()
    };
    let mut report = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "seed": recipe.seed,
        "recipe": serde_json::to_value(&resolved).unwrap_or(Value::Null),
        "size": {"width": h.width(), "height": h.height(), "cell_size_m": h.cell_size()},
        "sea_level": run.terrain.sea_level,
        "height_range": {
            "min": p.lo, "max": p.hi,
            "min_m": p.lo as f64 * scale, "max_m": p.hi as f64 * scale,
            "height_scale_m": scale,
        },
        "engine": p.engine.as_ref().map(|e| serde_json::to_value(e).unwrap_or(Value::Null)),
        "files": files,
        "metrics": serde_json::to_value(metrics).unwrap_or(Value::Null),
        "erosion_scores": serde_json::to_value(&p.erosion.scores).unwrap_or(Value::Null),
        "hydrology": {
            "computed_by_outputs": hy.view.computed,
            "rivers": hy.view.rivers.len(),
            "lakes": hy.view.lake_count,
        },
        "biomes": hy.biome_shares.iter().map(|(n, s)| (n.to_string(), json!(s))).collect::<serde_json::Map<_, _>>(),
        "timings": timings,
        "run": {
            "threads": plan.threads,
            "seconds": run.seconds,
            "peak_bytes": run.peak_bytes,
            "outputs": {
                "prepare": seconds_map(&t.prepare),
                "files": seconds_map(&t.files),
                "seconds": t.seconds,
                "peak_bytes": t.peak_bytes,
            },
            "total_seconds": run.seconds + t.seconds,
        },
    });
    if plan.trace.is_some()
        && let Some(obj) = report.as_object_mut()
    {
        obj.insert("trace".into(), serde_json::to_value(&p.erosion.trace).unwrap_or(Value::Null));
    }
    report
}
