//! The files `terrasynth generate` writes, computed in memory first ([`render`]) and then
//! written one by one, each atomically ([`write`]).
//!
//! Height files: `height.png` and `height.r16` map the map's own min..max to 0..65535;
//! `height.exr` and `height.tif` hold heights in metres (height units × `exports.height-scale`).
//! `--engine unity` adds `height.raw` (south row first). report.json has the metres range.
//! Images and the mesh are rendered from the heights in metres (hillshade z-factor 1, the
//! map's cell size), coloured by the recipe palette with the terrain's sea level; lakes and
//! rivers from the recipe's hydrology steps are painted over the colours (the layers computed
//! when the recipe has none, see [`crate::water`], are not). `water.png`, `flow.png`, `biomes.png`, `splat.png` (with the images) and
//! `rivers.geojson` (always) come from the same hydrology layers; biomes and splat weights
//! from `terrasynth::render::biomes`. Every file is listed in docs/OUTPUTS.md.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use terrasynth::analyze::Metrics;
use terrasynth::io::tiff::GeoTiffOptions;
use terrasynth::recipe::RunOutput;
use terrasynth::recipe::engine::{Engine, EngineImport};
use terrasynth::recipe::{Recipe, registry};
use terrasynth::render::biomes::{Biome, BiomeOptions, classify};
use terrasynth::render::{HillshadeOptions, Mesh, MeshOptions, hillshade, shade};
use terrasynth::{Heightmap, io};

use crate::generate::Plan;
use crate::stepwise::ErosionLog;
use crate::water::{self, HydroView};

/// Checks the output settings of a recipe that the library's validation does not cover.
pub fn check_recipe_outputs(recipe: &Recipe) -> anyhow::Result<()> {
    // The palette is validated by `Pipeline::new`; the mesh needs at least 2 cells a side,
    // which the recipe's size rule already guarantees.
    let _ = recipe;
    Ok(())
}

/// Everything derived from the final terrain, ready to write.
pub struct Rendered {
    /// Lowest and highest height, height units.
    pub lo: f32,
    /// See `lo`.
    pub hi: f32,
    /// Heights in metres (for EXR/TIFF and the hillshade).
    pub metres: Heightmap,
    /// Engine import settings.
    pub engine: Option<EngineImport>,
    /// `color.png`, `hillshade.png`, `shaded.png` pixels (RGB, grey, RGB), if images are on.
    pub images: Option<(Vec<u8>, Vec<u8>, Vec<u8>)>,
    /// The mesh, if glb or obj is on.
    pub mesh: Option<Mesh>,
    /// Metrics of the final heights.
    pub metrics: Metrics,
    /// ε after each erosion step and the `--trace` records.
    pub erosion: ErosionLog,
    /// Which hydrology layers were computed by the outputs (empty: all from the recipe).
    pub hydro_computed: Vec<&'static str>,
    /// Number of rivers and lakes drawn.
    pub river_count: usize,
    /// See `river_count`.
    pub lake_count: usize,
    /// `rivers.geojson`.
    pub rivers_geojson: Value,
    /// `water.png` (RGBA), `flow.png` (grey), `biomes.png` (RGB), `splat.png` (RGBA), if images are on.
    pub hydro_images: Option<HydroImages>,
    /// Share of the map in each biome, by name.
    pub biome_shares: Vec<(&'static str, f64)>,
}

/// Pixels of the hydrology and biome images.
pub struct HydroImages {
    /// `water.png`, RGBA.
    pub water: Vec<u8>,
    /// `flow.png`, grey.
    pub flow: Vec<u8>,
    /// `biomes.png`, RGB.
    pub biomes: Vec<u8>,
    /// `splat.png`, RGBA = sand, grass, rock, snow weights summing to 255.
    pub splat: Vec<u8>,
}

/// Depth in metres the largest river is cut into the mesh with `exports.carve-mesh`.
pub const MESH_CARVE_DEPTH_M: f32 = 4.0;

/// Computes the in-memory outputs (no file touched).
pub fn render(plan: &Plan, run: &RunOutput, erosion: ErosionLog) -> anyhow::Result<Rendered> {
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
    let scale = ex.height_scale;
    let metres = h.map(|&v| (v as f64 * scale) as f32);
    let sea_level_m = (run.terrain.sea_level as f64 * scale) as f32;
    let sea_m = Some(sea_level_m);
    let engine = plan
        .engine
        .map(|e| EngineImport::new(e, h.width(), h.cell_size(), lo as f64 * scale, hi as f64 * scale));
    let palette = recipe.palette.resolve()?;
    let view = HydroView::new(&run.terrain)?;
    let (w, hgt) = (h.width(), h.height());
    let fresh = view.fresh_water_mask(w, hgt);
    let biome_opts = BiomeOptions::default();
    let biomes = classify(&metres, sea_level_m, &fresh, Some(&view.flow), &biome_opts)?;
    let shares = biomes.shares();
    let biome_shares = Biome::ALL.iter().zip(shares).map(|(b, s)| (b.name(), s)).collect();
    let hydro_images = ex.images.then(|| HydroImages {
        water: water::water_rgba(&view, h, run.terrain.sea_level),
        flow: water::flow_gray(&view),
        biomes: biomes.rgb(),
        splat: biomes.splat_rgba(&biome_opts),
    });
    let rivers_geojson = water::rivers_geojson(&view, h.cell_size(), scale);
    let images = if ex.images {
        let shade_opts = HillshadeOptions::default();
        let mut color = palette.colorize(&metres, sea_m);
        for (px, &wet) in color.chunks_exact_mut(3).zip(&recipe_water_mask(&run.terrain)) {
            if wet {
                px.copy_from_slice(&FRESH_WATER);
            }
        }
        let hs = hillshade(&metres, &shade_opts, sea_m)?;
        let grey: Vec<u8> = hs.iter().map(|&v| (v.clamp(0.0, 1.0) * 255.0).round() as u8).collect();
        let shaded = shade(&color, &hs, &shade_opts)?;
        Some((color, grey, shaded))
    } else {
        None
    };
    let mesh = if ex.glb || ex.obj {
        let opts = MeshOptions { height_scale: 1.0, lod: ex.lod, colors: Some(palette), sea_level: sea_m };
        if ex.carve_mesh {
            let carved = water::carved(&metres, &view, scale, MESH_CARVE_DEPTH_M)?;
            Some(Mesh::from_heightmap(&carved, opts)?)
        } else {
            Some(Mesh::from_heightmap(&metres, opts)?)
        }
    } else {
        None
    };
    Ok(Rendered {
        lo,
        hi,
        metres,
        engine,
        images,
        mesh,
        metrics: Metrics::compute(h),
        erosion,
        hydro_computed: view.computed.clone(),
        river_count: view.rivers.len(),
        lake_count: view.lake_count,
        rivers_geojson,
        hydro_images,
        biome_shares,
    })
}

/// Colour of lakes and rivers drawn over `color.png` (the `classic` palette's shallow water).
const FRESH_WATER: [u8; 3] = [62, 128, 188];

/// Lake and river cells of the recipe's own hydrology steps (`rivers`, `lakes`,
/// `squig-rivers`), painted in [`FRESH_WATER`] over `color.png` and `shaded.png`. Layers the
/// outputs computed themselves are not painted there (they show in `water.png`, `flow.png`
/// and the biomes), so a recipe without hydrology keeps its plain colour map.
fn recipe_water_mask(terrain: &terrasynth::recipe::Terrain) -> Vec<bool> {
    let (w, h) = (terrain.height.width(), terrain.height.height());
    let mut mask = match &terrain.hydro.lake_labels {
        Some(l) => l.as_slice().iter().map(|&id| id != 0).collect(),
        None => vec![false; w * h],
    };
    water::stamp_rivers(w, h, &terrain.hydro.rivers, |i, _| mask[i] = true);
    mask
}

/// The map with its rows in reverse order (south row first).
fn flipped(map: &Heightmap) -> anyhow::Result<Heightmap> {
    let h = map.height();
    Ok(Heightmap::from_fn(map.width(), h, map.cell_size(), |x, y| map[(x, h - 1 - y)])?)
}

/// Writes every output; returns the file names written (report.json last).
pub fn write(plan: &Plan, run: &RunOutput, r: &Rendered) -> anyhow::Result<Vec<String>> {
    let recipe = plan.pipeline.recipe();
    let ex = &recipe.exports;
    let h = &run.terrain.height;
    let out = |name: &str| -> PathBuf { plan.out.join(name) };
    let mut files: Vec<String> = Vec::new();
    let mut done = |name: &str| files.push(name.to_string());
    if ex.png {
        io::png::write_png16(out("height.png"), h, r.lo, r.hi)?;
        done("height.png");
    }
    if ex.r16 {
        io::raw::write_r16(out("height.r16"), h, r.lo, r.hi)?;
        done("height.r16");
    }
    if plan.engine == Some(Engine::Unity) {
        io::raw::write_r16(out("height.raw"), &flipped(h)?, r.lo, r.hi)?;
        done("height.raw");
    }
    if ex.exr {
        io::exr::write(out("height.exr"), &r.metres)?;
        done("height.exr");
    }
    if ex.tiff {
        io::tiff::write_geotiff(out("height.tif"), &r.metres, &GeoTiffOptions::default())?;
        done("height.tif");
    }
    if let Some((color, grey, shaded)) = &r.images {
        let (w, hgt) = (h.width(), h.height());
        io::png::write_rgb8(out("color.png"), w, hgt, color)?;
        done("color.png");
        io::png::write_gray8(out("hillshade.png"), w, hgt, grey)?;
        done("hillshade.png");
        io::png::write_rgb8(out("shaded.png"), w, hgt, shaded)?;
        done("shaded.png");
    }
    if let Some(img) = &r.hydro_images {
        let (w, hgt) = (h.width(), h.height());
        io::png::write_rgba8(out("water.png"), w, hgt, &img.water)?;
        done("water.png");
        io::png::write_gray8(out("flow.png"), w, hgt, &img.flow)?;
        done("flow.png");
        io::png::write_rgb8(out("biomes.png"), w, hgt, &img.biomes)?;
        done("biomes.png");
        io::png::write_rgba8(out("splat.png"), w, hgt, &img.splat)?;
        done("splat.png");
    }
    write_json(&out("rivers.geojson"), &r.rivers_geojson)?;
    done("rivers.geojson");
    if let Some(mesh) = &r.mesh {
        if ex.glb {
            io::gltf::write_glb(out("mesh.glb"), mesh)?;
            done("mesh.glb");
        }
        if ex.obj {
            let texture = ex.images.then_some("color.png");
            io::obj::write_obj(out("mesh.obj"), mesh, texture)?;
            done("mesh.obj");
            if texture.is_some() {
                done("mesh.mtl");
            }
        }
    }
    let report = report_json(plan, run, r, &files);
    write_json(&out("report.json"), &report)?;
    files.push("report.json".into());
    Ok(files)
}

fn write_json(path: &Path, value: &Value) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    io::atomic::write_bytes_atomic(path, text.as_bytes())?;
    Ok(())
}

/// report.json: resolved recipe, seed, version, height range, engine settings, files, metrics,
/// `erosion_scores` (ε after each erosion step), `hydrology` (river and lake counts, which
/// layers the outputs computed), `biomes` (share of the map per biome), `trace` (with
/// `--trace K`), per-step `timings` and `run` (threads, total time, peak memory). Only `timings` and `run`
/// depend on the machine and thread count; everything else is a pure function of the recipe.
pub fn report_json(plan: &Plan, run: &RunOutput, r: &Rendered, files: &[String]) -> Value {
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
    let mut report = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "seed": recipe.seed,
        "recipe": serde_json::to_value(&resolved).unwrap_or(Value::Null),
        "size": {"width": h.width(), "height": h.height(), "cell_size_m": h.cell_size()},
        "sea_level": run.terrain.sea_level,
        "height_range": {
            "min": r.lo, "max": r.hi,
            "min_m": r.lo as f64 * scale, "max_m": r.hi as f64 * scale,
            "height_scale_m": scale,
        },
        "engine": r.engine.as_ref().map(|e| serde_json::to_value(e).unwrap_or(Value::Null)),
        "files": files,
        "metrics": serde_json::to_value(r.metrics).unwrap_or(Value::Null),
        "erosion_scores": serde_json::to_value(&r.erosion.scores).unwrap_or(Value::Null),
        "hydrology": {
            "computed_by_outputs": r.hydro_computed,
            "rivers": r.river_count,
            "lakes": r.lake_count,
        },
        "biomes": r.biome_shares.iter().map(|(n, s)| (n.to_string(), json!(s))).collect::<serde_json::Map<_, _>>(),
        "timings": timings,
        "run": {
            "threads": plan.threads,
            "seconds": run.seconds,
            "peak_bytes": run.peak_bytes,
        },
    });
    if plan.trace.is_some()
        && let Some(obj) = report.as_object_mut()
    {
        obj.insert("trace".into(), serde_json::to_value(&r.erosion.trace).unwrap_or(Value::Null));
    }
    report
}
