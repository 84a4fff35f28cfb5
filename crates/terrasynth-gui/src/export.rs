//! Export: the same files as `terrasynth generate`, written from the editor's current terrain
//! (recipe output plus edits) with the recipe's `[exports]` settings.
//!
//! Height files: `height.png` and `height.r16` map the map's own min..max to 0..65535;
//! `height.exr` and `height.tif` hold heights in metres (height units × `exports.height-scale`).
//! Images (`color.png`, `hillshade.png`, `shaded.png`) and the mesh (`mesh.glb`, `mesh.obj`)
//! are made from the heights in metres, coloured by the recipe palette. `recipe.toml` and
//! `project.tsproj` (the document with its edits) are written too, so the export can be
//! regenerated. Every file is written atomically (temp file, then rename).

use std::path::Path;

use terrasynth::io::tiff::GeoTiffOptions;
use terrasynth::render::{HillshadeOptions, Mesh, MeshOptions, hillshade, shade};
use terrasynth::step::Terrain;
use terrasynth::{Error, Result, io};

use crate::document::{Document, save_project};

/// Writes every enabled output of `doc.recipe.exports` for `terrain` into `dir` (created if
/// missing); returns the file names written.
pub fn export(doc: &Document, terrain: &Terrain, dir: &Path) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    let ex = &doc.recipe.exports;
    let h = &terrain.height;
    let (lo, mut hi) = h.min_max().ok_or_else(|| Error::Recipe("empty terrain".into()))?;
    if !(lo.is_finite() && hi.is_finite()) {
        return Err(Error::Recipe("the terrain has non-finite heights".into()));
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let scale = ex.height_scale;
    let metres = h.map(|&v| (v as f64 * scale) as f32);
    let sea_m = Some((terrain.sea_level as f64 * scale) as f32);
    let palette = doc.recipe.palette.resolve()?;
    let out = |name: &str| dir.join(name);
    let mut files = Vec::new();
    if ex.png {
        io::png::write_png16(out("height.png"), h, lo, hi)?;
        files.push("height.png".to_string());
    }
    if ex.r16 {
        io::raw::write_r16(out("height.r16"), h, lo, hi)?;
        files.push("height.r16".to_string());
    }
    if ex.exr {
        io::exr::write(out("height.exr"), &metres)?;
        files.push("height.exr".to_string());
    }
    if ex.tiff {
        io::tiff::write_geotiff(out("height.tif"), &metres, &GeoTiffOptions::default())?;
        files.push("height.tif".to_string());
    }
    if ex.images {
        let opts = HillshadeOptions::default();
        let color = palette.colorize(&metres, sea_m);
        let hs = hillshade(&metres, &opts, sea_m)?;
        let grey: Vec<u8> = hs.iter().map(|&v| (v.clamp(0.0, 1.0) * 255.0).round() as u8).collect();
        let shaded = shade(&color, &hs, &opts)?;
        let (w, hh) = (h.width(), h.height());
        io::png::write_rgb8(out("color.png"), w, hh, &color)?;
        io::png::write_gray8(out("hillshade.png"), w, hh, &grey)?;
        io::png::write_rgb8(out("shaded.png"), w, hh, &shaded)?;
        files.extend(["color.png", "hillshade.png", "shaded.png"].map(String::from));
    }
    if ex.glb || ex.obj {
        let opts = MeshOptions { height_scale: 1.0, lod: ex.lod, colors: Some(palette), sea_level: sea_m };
        let mesh = Mesh::from_heightmap(&metres, opts)?;
        if ex.glb {
            io::gltf::write_glb(out("mesh.glb"), &mesh)?;
            files.push("mesh.glb".to_string());
        }
        if ex.obj {
            let texture = ex.images.then_some("color.png");
            io::obj::write_obj(out("mesh.obj"), &mesh, texture)?;
            files.push("mesh.obj".to_string());
        }
    }
    let toml = doc.recipe.to_toml_string()?;
    io::write_atomic(out("recipe.toml"), |w| {
        w.write_all(toml.as_bytes()).map_err(|source| Error::Io { path: out("recipe.toml"), source })
    })?;
    files.push("recipe.toml".to_string());
    save_project(&out("project.tsproj"), doc, &())?;
    files.push("project.tsproj".to_string());
    Ok(files)
}
