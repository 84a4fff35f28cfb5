//! Renders every base generator (default parameters) and a few shaping steps to grayscale
//! PNGs, height on the left and a simple hillshade on the right, for looking at.
//!
//! `cargo run -p terrasynth --example generators -- [out_dir] [size]` (defaults: /tmp/terrasynth-generators, 257).

use std::collections::BTreeMap;

use terrasynth::step::{ParamValue, Params, StepContext, StepInfo, Terrain};
use terrasynth::{Heightmap, Progress, generate, shape};

/// A chain of `(step name, parameter overrides)`.
type Chain<'a> = &'a [(&'a str, &'a [(&'a str, ParamValue)])];

fn find(name: &str) -> StepInfo {
    generate::steps().into_iter().chain(shape::steps()).find(|s| s.name == name).expect("known step")
}

/// Runs `(step name, overrides)` in order on a fresh terrain.
fn run(size: (usize, usize), chain: Chain<'_>) -> terrasynth::Result<Heightmap> {
    let mut t = Terrain::new(size.0, size.1, 1.0)?;
    for (i, (name, overrides)) in chain.iter().enumerate() {
        let info = find(name);
        let given: BTreeMap<String, ParamValue> =
            overrides.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let params = Params::validate(info.params, &given).map_err(terrasynth::Error::Recipe)?;
        let step = (info.build)(&params)?;
        step.run(&mut t, &StepContext::new(1234 + i as u64, Progress::new()))?;
    }
    Ok(t.height)
}

fn write(path: &std::path::Path, map: &Heightmap) {
    let (w, h) = (map.width(), map.height());
    let (lo, hi) = map.min_max().unwrap_or((0.0, 1.0));
    let range = if hi > lo { hi - lo } else { 1.0 };
    let at = |x: usize, y: usize| (map[(x.min(w - 1), y.min(h - 1))] - lo) / range;
    let mut img = image::GrayImage::new(2 * w as u32, h as u32);
    for y in 0..h {
        for x in 0..w {
            img.put_pixel(x as u32, y as u32, image::Luma([(at(x, y) * 255.0).round() as u8]));
            // Hillshade, light from the north-west; slopes exaggerated to the map size.
            let k = w.max(h) as f32 * 0.12;
            let dx = (at(x + 1, y) - at(x.saturating_sub(1), y)) * k;
            let dy = (at(x, y + 1) - at(x, y.saturating_sub(1))) * k;
            let shade = ((-dx - dy) / (2.0f32 + dx * dx + dy * dy).sqrt() * 0.7 + 0.5).clamp(0.0, 1.0);
            img.put_pixel((w + x) as u32, y as u32, image::Luma([(shade * 255.0) as u8]));
        }
    }
    img.save(path).expect("write png");
}

fn main() -> terrasynth::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let out =
        std::path::PathBuf::from(args.get(1).cloned().unwrap_or_else(|| "/tmp/terrasynth-generators".into()));
    let side: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(257);
    std::fs::create_dir_all(&out).expect("create output dir");
    let size = (side, side);
    for info in generate::steps() {
        let start = std::time::Instant::now();
        let map = run(size, &[(info.name, &[])])?;
        println!("{:>16}: {:>8.1} ms at {side}x{side}", info.name, start.elapsed().as_secs_f64() * 1e3);
        write(&out.join(format!("{}.png", info.name)), &map);
    }
    let list = |v: &[f64]| ParamValue::List(v.to_vec());
    let shaped: &[(&str, Chain<'_>)] = &[
        ("island", &[("spectral", &[]), ("island", &[("h0", ParamValue::Number(2.0))])]),
        ("falloff", &[("diamond-square", &[]), ("falloff", &[])]),
        ("archipelago", &[("spectral", &[]), ("archipelago", &[])]),
        ("perturb", &[("voronoi-ds", &[]), ("perturb", &[("magnitude", ParamValue::Number(0.1))])]),
        ("spectral-overlay", &[("voronoi-ds", &[]), ("spectral-overlay", &[])]),
        (
            "voronoi-regions",
            &[
                ("voronoi", &[("point-seed", ParamValue::Number(5.0))]),
                ("voronoi-regions", &[("point-seed", ParamValue::Number(5.0))]),
            ],
        ),
        ("terrace", &[("spectral", &[]), ("terrace", &[])]),
        ("blend", &[("diamond-square", &[]), ("blend", &[("weight", ParamValue::Number(1.0 / 3.0))])]),
        (
            "olsen",
            &[
                ("diamond-square", &[]),
                ("blend", &[("weight", ParamValue::Number(1.0 / 3.0))]),
                ("perturb", &[("magnitude", ParamValue::Number(0.25))]),
            ],
        ),
        ("voronoi-ds-squared", &[("voronoi-ds", &[("metric", ParamValue::Text("squared".into()))])]),
        ("voronoi-squared", &[("voronoi", &[("metric", ParamValue::Text("squared".into()))])]),
        ("voronoi-c1", &[("voronoi", &[("coefficients", list(&[1.0]))])]),
        ("noise-ridged", &[("noise", &[("fractal", ParamValue::Text("ridged".into()))])]),
        (
            "blend-worley",
            &[
                ("diamond-square", &[]),
                (
                    "blend",
                    &[
                        ("source", ParamValue::Text("noise".into())),
                        ("noise", ParamValue::Text("kind = \"worley\"".into())),
                    ],
                ),
            ],
        ),
        ("rect-1000x600-ds", &[]),
    ];
    for (name, chain) in shaped {
        let map = if *name == "rect-1000x600-ds" {
            run((1000, 600), &[("diamond-square", &[])])?
        } else {
            run(size, chain)?
        };
        write(&out.join(format!("{name}.png")), &map);
    }
    println!("wrote PNGs to {}", out.display());
    Ok(())
}
