//! Timings of the render, analyze and io paths on one 2049² map (plain harness, one run each):
//! `cargo bench -p terrasynth --bench io`. Files go to a temporary folder under `target/`.

use std::path::PathBuf;
use std::time::Instant;

use terrasynth::Heightmap;
use terrasynth::analyze::Metrics;
use terrasynth::io;
use terrasynth::render::hillshade::{HillshadeOptions, shaded_relief};
use terrasynth::render::{Mesh, MeshOptions, Palette};

fn bumps(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 2.0, |x, y| ((x as f32 * 0.21).sin() + (y as f32 * 0.13).cos()) * 10.0).unwrap()
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("io-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let n = 2049;
    let map = bumps(n);
    let palette = Palette::named("classic").unwrap();
    let time = |what: &str, f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        eprintln!("{what:<28} {n}x{n}: {:>8.1} ms", t.elapsed().as_secs_f64() * 1e3);
    };
    time("colorize", &mut || drop(palette.colorize(&map, Some(0.0))));
    time("shaded relief", &mut || {
        drop(shaded_relief(&map, &palette, &HillshadeOptions::default(), None).unwrap())
    });
    time("mesh lod 0", &mut || drop(Mesh::from_heightmap(&map, MeshOptions::default()).unwrap()));
    time("metrics", &mut || {
        let _ = Metrics::compute(&map);
    });
    time("write png16", &mut || io::png::write_png16(dir.join("t.png"), &map, -20.0, 20.0).unwrap());
    time("write r16", &mut || io::raw::write_r16(dir.join("t.r16"), &map, -20.0, 20.0).unwrap());
    time("write exr", &mut || io::exr::write(dir.join("t.exr"), &map).unwrap());
    time("write geotiff", &mut || {
        io::tiff::write_geotiff(dir.join("t.tif"), &map, &Default::default()).unwrap()
    });
    let mesh = Mesh::from_heightmap(&map, MeshOptions { lod: 1, ..Default::default() }).unwrap();
    time("write glb (lod 1)", &mut || io::gltf::write_glb(dir.join("t.glb"), &mesh).unwrap());
    time("read png16", &mut || drop(io::read_heightmap(dir.join("t.png"), &Default::default()).unwrap()));
    time("read exr", &mut || drop(io::read_heightmap(dir.join("t.exr"), &Default::default()).unwrap()));
    time("read tiff", &mut || drop(io::read_heightmap(dir.join("t.tif"), &Default::default()).unwrap()));
}
