//! The files `terrasynth generate` writes, computed in memory first ([`render`]) and then
//! written one by one, each atomically ([`write`]).
//!
//! Height files: `height.png` and `height.r16` map the map's own min..max to 0..65535;
//! `height.exr` and `height.tif` hold heights in metres (height units × `exports.height-scale`).
//! `--engine unity` adds `height.raw` (south row first). report.json has the metres range.
//! Images and the mesh are rendered from the heights in metres (hillshade z-factor 1, the
//! map's cell size), coloured by the recipe palette with the terrain's sea level; lakes and
//! rivers from the hydrology steps are painted over the colours.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use terrasynth::analyze::Metrics;
use terrasynth::io::tiff::GeoTiffOptions;
use terrasynth::recipe::RunOutput;
use terrasynth::recipe::engine::{Engine, EngineImport};
use terrasynth::recipe::{Recipe, registry};
use terrasynth::render::{HillshadeOptions, Mesh, MeshOptions, hillshade, shade};
use terrasynth::{Heightmap, io};

use crate::generate::Plan;

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
}

/// Computes the in-memory outputs (no file touched).
pub fn render(plan: &Plan, run: &RunOutput) -> anyhow::Result<Rendered> {
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
    let sea_m = Some((run.terrain.sea_level as f64 * scale) as f32);
    let engine = plan
        .engine
        .map(|e| EngineImport::new(e, h.width(), h.cell_size(), lo as f64 * scale, hi as f64 * scale));
    let palette = recipe.palette.resolve()?;
    let images = if ex.images {
        let shade_opts = HillshadeOptions::default();
        let mut color = palette.colorize(&metres, sea_m);
        draw_water(&mut color, &run.terrain);
        let hs = hillshade(&metres, &shade_opts, sea_m)?;
        let grey: Vec<u8> = hs.iter().map(|&v| (v.clamp(0.0, 1.0) * 255.0).round() as u8).collect();
        let shaded = shade(&color, &hs, &shade_opts)?;
        Some((color, grey, shaded))
    } else {
        None
    };
    let mesh = if ex.glb || ex.obj {
        let opts = MeshOptions { height_scale: 1.0, lod: ex.lod, colors: Some(palette), sea_level: sea_m };
        Some(Mesh::from_heightmap(&metres, opts)?)
    } else {
        None
    };
    Ok(Rendered { lo, hi, metres, engine, images, mesh, metrics: Metrics::compute(h) })
}

/// Colour of lakes and rivers drawn over `color.png` (the `classic` palette's shallow water).
const FRESH_WATER: [u8; 3] = [62, 128, 188];

/// Paints the hydrology layers onto `rgb` (W × H × 3): every lake cell, and every river as
/// discs of its channel width (at least one cell) stamped every half cell along its polyline.
/// Rivers and lakes come from the `rivers`, `lakes` and `squig-rivers` steps; without them
/// nothing changes.
fn draw_water(rgb: &mut [u8], terrain: &terrasynth::recipe::Terrain) {
    let (w, h) = (terrain.height.width(), terrain.height.height());
    let mut paint = |x: i64, y: i64| {
        if x >= 0 && y >= 0 && (x as usize) < w && (y as usize) < h {
            let i = 3 * (y as usize * w + x as usize);
            rgb[i..i + 3].copy_from_slice(&FRESH_WATER);
        }
    };
    if let Some(labels) = &terrain.hydro.lake_labels {
        for (i, &id) in labels.as_slice().iter().enumerate() {
            if id != 0 {
                paint((i % w) as i64, (i / w) as i64);
            }
        }
    }
    for river in &terrain.hydro.rivers {
        for seg in river.points.windows(2) {
            let (a, b) = (&seg[0], &seg[1]);
            let len = ((b.x - a.x).hypot(b.y - a.y) * 2.0).ceil().max(1.0) as usize;
            for k in 0..=len {
                let t = k as f32 / len as f32;
                let (cx, cy) = (a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t);
                let r = (0.5 * (a.width + (b.width - a.width) * t)).max(0.5);
                let ri = r.ceil() as i64;
                for dy in -ri..=ri {
                    for dx in -ri..=ri {
                        let (px, py) = (cx.round() as i64 + dx, cy.round() as i64 + dy);
                        if (px as f32 - cx).hypot(py as f32 - cy) <= r {
                            paint(px, py);
                        }
                    }
                }
            }
        }
    }
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
/// per-step `timings` and `run` (threads, total time, peak memory). Only `timings` and `run`
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
    json!({
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
        "timings": timings,
        "run": {
            "threads": plan.threads,
            "seconds": run.seconds,
            "peak_bytes": run.peak_bytes,
        },
    })
}
