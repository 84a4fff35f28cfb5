//! Before/after pictures of every erosion, for looking at:
//!
//! ```text
//! cargo run --release -p terrasynth --example erode_montage -- [out-dir]
//! ```
//!
//! writes `<out-dir>/erode_montage.png` (hillshaded tiles: base, thermal, thermal-olsen,
//! olsen-erosion, hydraulic, hydraulic-olsen, droplets, droplets-sequential, stream-power) and
//! one grayscale PNG per tile, `erode_<name>.png` (default out-dir: `target/erode-montage`).

use std::path::PathBuf;

use terrasynth::erode::{
    DropletEroder, DropletParams, Eroder, HydraulicEroder, HydraulicOlsenEroder, HydraulicOlsenParams,
    HydraulicParams, OlsenEroder, StreamPowerEroder, StreamPowerParams, ThermalEroder, ThermalOlsenEroder,
    ThermalOlsenParams, ThermalParams,
};
use terrasynth::generate::{DiamondSquare, Generator};
use terrasynth::grid::{Boundary, Neighbourhood};
use terrasynth::{Grid, Progress};

const N: usize = 256;

/// Lambert hillshade (light from the north-west, 45° up), heights exaggerated by `z`.
fn hillshade(h: &Grid<f64>, z: f64) -> Vec<u8> {
    let (w, hh) = (h.width(), h.height());
    let at = |x: usize, y: usize| h.as_slice()[y.min(hh - 1) * w + x.min(w - 1)];
    let l = {
        let v: [f64; 3] = [-1.0, -1.0, 1.4];
        let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        [v[0] / n, v[1] / n, v[2] / n]
    };
    let mut out = Vec::with_capacity(w * hh);
    for y in 0..hh {
        for x in 0..w {
            let dx = (at(x + 1, y) - at(x.saturating_sub(1), y)) * 0.5 * z;
            let dy = (at(x, y + 1) - at(x, y.saturating_sub(1))) * 0.5 * z;
            let n = (dx * dx + dy * dy + 1.0).sqrt();
            let shade = (-dx * l[0] - dy * l[1] + l[2]) / n;
            out.push((shade.clamp(0.0, 1.0) * 255.0) as u8);
        }
    }
    out
}

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "target/erode-montage".into()));
    std::fs::create_dir_all(&out).expect("create the output folder");
    let mut map = DiamondSquare::new(1.0, 1.0, 0).unwrap().generate(N, N, 42, &Progress::new()).unwrap();
    map.normalize();
    let talus = 4.0 / N as f64;
    let mut tiles: Vec<(&str, Grid<f64>)> = vec![("base", map.map(|&v| v as f64))];
    let mut go = |name: &'static str, mut e: Box<dyn Eroder>, n: usize| {
        for _ in 0..n {
            e.run_one_step().unwrap();
        }
        e.finish();
        tiles.push((name, e.surface().clone()));
    };
    go(
        "thermal",
        Box::new(ThermalEroder::new(&map, ThermalParams { talus, ..Default::default() }).unwrap()),
        50,
    );
    let p = ThermalOlsenParams { talus, ..Default::default() };
    go("thermal-olsen", Box::new(ThermalOlsenEroder::new(&map, p).unwrap()), 50);
    let p = ThermalOlsenParams {
        talus: 16.0 / N as f64,
        neighbourhood: Neighbourhood::VonNeumann,
        boundary: Boundary::Closed,
    };
    go("olsen-erosion", Box::new(OlsenEroder::new(&map, p).unwrap()), 50);
    go("hydraulic", Box::new(HydraulicEroder::new(&map, HydraulicParams::default()).unwrap()), 100);
    go(
        "hydraulic-olsen",
        Box::new(HydraulicOlsenEroder::new(&map, HydraulicOlsenParams::default()).unwrap()),
        100,
    );
    let p = DropletParams { droplets: 20_000, seed: 1, ..Default::default() };
    go("droplets", Box::new(DropletEroder::new(&map, p).unwrap()), 1);
    let p = DropletParams { droplets: 20_000, seed: 1, batch_size: 1, ..Default::default() };
    go("droplets-sequential", Box::new(DropletEroder::new(&map, p).unwrap()), 1);
    go("stream-power", Box::new(StreamPowerEroder::new(&map, StreamPowerParams::default()).unwrap()), 100);

    let cols = 4;
    let rows = tiles.len().div_ceil(cols);
    let mut montage = image::GrayImage::new((cols * N) as u32, (rows * N) as u32);
    for (k, (name, surface)) in tiles.iter().enumerate() {
        let (lo, hi) =
            surface.as_slice().iter().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        let shade = hillshade(surface, N as f64 * 0.12 / (hi - lo).max(1e-12));
        let gray: Vec<u8> =
            surface.as_slice().iter().map(|&v| ((v - lo) / (hi - lo).max(1e-12) * 255.0) as u8).collect();
        image::GrayImage::from_raw(N as u32, N as u32, gray)
            .unwrap()
            .save(out.join(format!("erode_{name}.png")))
            .unwrap();
        for y in 0..N {
            for x in 0..N {
                let px = image::Luma([shade[y * N + x]]);
                montage.put_pixel(((k % cols) * N + x) as u32, ((k / cols) * N + y) as u32, px);
            }
        }
        println!("{name}: range {lo:.4}..{hi:.4}");
    }
    montage.save(out.join("erode_montage.png")).unwrap();
    println!("wrote {}", out.join("erode_montage.png").display());
}
