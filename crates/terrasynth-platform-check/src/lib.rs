//! The fixed outputs `scripts/check-platforms.sh` compares across platforms (issue 11 part 6):
//! every noise kind × fractal filled over a fixed [`Region`] and a far [`CellRegion`], the
//! deterministic math functions of [`terrasynth_noise::detmath`] over fixed sweeps, a world
//! window of a small world recipe ([`terrasynth::recipe::World`]), and single maps of the
//! presets that call elementary functions with the products their files are written from
//! (heights, hydrology, biomes, images), each reduced to the SHA-256 of its little-endian bytes.
//! The same report must come out of x86-64 (every SIMD level, `TERRASYNTH_SIMD`), aarch64 and
//! wasm32.
//!
//! On wasm32 the crate is a `cdylib` exporting `check_run() -> len` and `check_ptr() -> ptr`
//! (the report as UTF-8 in the module's memory), for the script's Node loader; elsewhere the
//! binary `terrasynth-platform-check` prints it.

pub mod sha256;

use sha256::Sha256;
use terrasynth_noise::{CellRegion, FractalKind, NoiseKind, NoiseSpec, Region, Seed, detmath};

/// The region of the noise fills: odd sizes, fractional spacing, negative origin.
const REGION: Region = Region { x0: -13.37, y0: 7.91, dx: 0.173, dy: 0.219, width: 67, height: 45 };

/// The cell window of the noise fills, at |cell| ≈ 1e7.
const CELLS: CellRegion = CellRegion {
    col0: -10_000_037,
    row0: 9_999_991,
    width: 53,
    height: 37,
    scale_x: 0.061,
    scale_y: 0.047,
    offset_x: 0.25,
    offset_y: -3.0,
};

/// A world recipe of the core's chunkable steps: noise in metres, normalize over a declared
/// input range.
const WORLD_RECIPE: &str = r#"
cell-size = 30.0
[world]
height-range = [-1000.0, 2000.0]
[[steps]]
type = "noise"
feature-size-m = 4000.0
[[steps]]
type = "normalize"
input-range = [-1.0, 1.0]
min = -1000.0
max = 2000.0
"#;

/// The noise specs: every kind under every fractal, and two with a domain warp.
fn noise_specs() -> Vec<NoiseSpec> {
    let mut specs = Vec::new();
    for kind in NoiseKind::ALL {
        for fractal in [
            FractalKind::None,
            FractalKind::Fbm,
            FractalKind::Ridged,
            FractalKind::Hybrid,
            FractalKind::Billow,
        ] {
            specs.push(NoiseSpec {
                kind,
                fractal,
                seed: Seed::Number(20_261_124),
                frequency: 0.37,
                offset: [3.25, -1.5],
                octaves: 5,
                ..NoiseSpec::default()
            });
        }
    }
    for kind in [NoiseKind::Perlin, NoiseKind::OpenSimplex2] {
        specs.push(NoiseSpec {
            kind,
            fractal: FractalKind::Fbm,
            warp: 1.5,
            octaves: 3,
            ..NoiseSpec::default()
        });
    }
    specs
}

fn f32_bytes(h: &mut Sha256, values: &[f32]) {
    for v in values {
        h.update(&v.to_le_bytes());
    }
}

/// One line per output: `<name> <sha256>`, then `all <sha256 of the lines above>`.
pub fn report() -> String {
    let mut lines = Vec::new();
    for spec in noise_specs() {
        let warp = if spec.warp > 0.0 { " warp" } else { "" };
        let label = format!("{} {}{warp}", spec.kind.name(), spec.fractal.name());
        let line = match spec.build() {
            Ok(noise) => {
                let mut h = Sha256::default();
                let mut out = vec![0.0f32; REGION.width * REGION.height];
                match noise.fill(&REGION, &mut out) {
                    Ok((lo, hi)) => f32_bytes(&mut h, &[lo, hi]),
                    Err(e) => h.update(e.to_string().as_bytes()),
                }
                f32_bytes(&mut h, &out);
                let mut cells = vec![0.0f32; CELLS.width * CELLS.height];
                match noise.fill_cells(&CELLS, &mut cells) {
                    Ok((lo, hi)) => f32_bytes(&mut h, &[lo, hi]),
                    Err(e) => h.update(e.to_string().as_bytes()),
                }
                f32_bytes(&mut h, &cells);
                h.hex()
            }
            Err(e) => format!("error: {e}"),
        };
        lines.push(format!("noise {label}: {line}"));
    }
    lines.extend(detmath_lines());
    let mut all = Sha256::default();
    for l in &lines {
        all.update(l.as_bytes());
        all.update(b"\n");
    }
    lines.push(format!("all {}", all.hex()));
    lines.push(format!("world-window {}", world_window()));
    lines.extend(single_maps());
    lines.join("\n") + "\n"
}

/// Each function of `detmath` over a fixed sweep.
fn detmath_lines() -> Vec<String> {
    type F = fn(f64) -> f64;
    let sweep = |lo: f64, hi: f64| (0..4001).map(move |k| lo + (hi - lo) * f64::from(k) / 4000.0 + 1e-3);
    let unary: [(&str, F, f64, f64); 7] = [
        ("exp", detmath::exp, -700.0, 700.0),
        ("expm1", detmath::expm1, -2.0, 2.0),
        ("ln", detmath::ln, 1e-9, 1e9),
        ("sin", detmath::sin, -1e4, 1e4),
        ("cos", detmath::cos, -1e4, 1e4),
        ("atan", detmath::atan, -50.0, 50.0),
        ("tanh", detmath::tanh, -25.0, 25.0),
    ];
    let mut lines: Vec<String> = unary
        .iter()
        .map(|&(name, f, lo, hi)| {
            let mut h = Sha256::default();
            sweep(lo, hi).for_each(|x| h.update(&f(x).to_le_bytes()));
            format!("detmath-{name} {}", h.hex())
        })
        .collect();
    let mut h = Sha256::default();
    for x in sweep(0.01, 100.0) {
        h.update(&detmath::pow(x, 0.37 * x - 3.0).to_le_bytes());
        h.update(&detmath::atan2(x - 50.0, 30.0 - x).to_le_bytes());
        h.update(&detmath::powi(x, (x as i32 % 9) - 4).to_le_bytes());
    }
    lines.push(format!("detmath-pow-atan2-powi {}", h.hex()));
    // The f32 kernels the per-cell outputs use (slopes, moisture, water and flow images).
    let mut h = Sha256::default();
    for x in sweep(-90.0, 90.0) {
        let x = x as f32;
        h.update(&detmath::atan_fast(x).to_le_bytes());
        h.update(&detmath::atan2_fast(x - 7.0, 30.0 - x).to_le_bytes());
        h.update(&detmath::exp_fast(x).to_le_bytes());
        h.update(&detmath::hypotf(x, 3.0 - x * 0.5).to_le_bytes());
        h.update(&detmath::ln_1pf(x.abs() * 1e3).to_le_bytes());
    }
    lines.push(format!("detmath-f32-kernels {}", h.hex()));
    lines
}

/// A single-map recipe with what the presets leave out: erodibility from a rock field (`ln`,
/// `exp` per cell), stream power with n ≠ 1 (Newton's powers) and carved rivers (`pow`).
const MAP_RECIPE: &str = r#"
name = "platform-check"
width = 61
height = 47
cell-size = 25.0
seed = 77
sea-level = 0.15
[[steps]]
type = "noise"
octaves = 5
feature-size = 0.5
[[steps]]
type = "falloff"
coast-warp = 0.3
[[steps]]
type = "normalize"
[[steps]]
type = "stream-power"
iterations = 6
n = 1.3
rock-contrast = 4.0
rock-size = 0.3
uplift-variation = 0.5
[[steps]]
type = "normalize"
[[steps]]
type = "rivers"
threshold = 0.01
carve-depth = 0.02
[[steps]]
type = "lakes"
min-area = 4
"#;

/// Single maps: the presets whose outputs call elementary functions (stream power's powers, the
/// coarse droplets' per-step rates, Olsen's erosion) at 97², and [`MAP_RECIPE`]. For each, one
/// line with the SHA-256 of the heights and of every product `generate` writes its files from:
/// the hydrology layers (flow, lakes, river polylines and `rivers.geojson`), the biome classes
/// and splat weights (slopes, moisture), the realism figures of `terrasynth analyze --json`,
/// `water.png` and `flow.png` rows, the hillshade and the shaded colours (the sun's
/// direction), and the mesh's sRGB table.
fn single_maps() -> Vec<String> {
    let mut lines = Vec::new();
    for name in ["rivers", "highlands", "eroded-island", "olsen-eroded", "island"] {
        let recipe = terrasynth::recipe::preset(name).and_then(|p| p.recipe()).map(|mut r| {
            (r.width, r.height) = (97, 97);
            r
        });
        lines.push(format!(
            "map {name}: {}",
            recipe.and_then(map_products).unwrap_or_else(|e| format!("error: {e}"))
        ));
    }
    let custom = terrasynth::Recipe::from_toml_str(MAP_RECIPE).and_then(map_products);
    lines.push(format!("map custom: {}", custom.unwrap_or_else(|e| format!("error: {e}"))));
    let mut h = Sha256::default();
    for c in 0..=255u8 {
        h.update(&terrasynth::io::gltf::srgb_to_linear(c).to_le_bytes());
    }
    lines.push(format!("mesh-srgb {}", h.hex()));
    lines
}

/// The SHA-256 of one map's heights and output products (see [`single_maps`]).
fn map_products(recipe: terrasynth::Recipe) -> terrasynth::Result<String> {
    use terrasynth::analyze::biomes::{BiomeOptions, classify};
    use terrasynth::analyze::realism::{Realism, RealismOptions};
    use terrasynth::hydro::WaterLayers;
    use terrasynth::recipe::{Pipeline, PipelineProgress, registry};
    use terrasynth::render::hillshade::{HillshadeOptions, Hillshader, shade_pixel};
    use terrasynth::render::water::{FlowImage, WaterImage, fresh_water_mask};
    let scale = terrasynth::export::metres_per_unit(&recipe);
    let palette = recipe.palette.resolve()?;
    let run = Pipeline::new(recipe, &registry())?.run(&PipelineProgress::new())?;
    let terrain = &run.terrain;
    let (w, hgt) = (terrain.height.width(), terrain.height.height());
    let mut h = Sha256::default();
    f32_bytes(&mut h, terrain.height.as_slice());
    let layers = WaterLayers::build(terrain)?;
    f32_bytes(&mut h, &layers.flow);
    layers.lake_labels.iter().for_each(|l| h.update(&l.to_le_bytes()));
    let geojson = terrasynth::io::geojson::rivers_geojson(&layers.rivers, terrain.height.cell_size(), scale);
    h.update(geojson.to_string().as_bytes());
    let metres = terrain.height.map(|&v| (v as f64 * scale) as f32);
    let sea_m = (terrain.sea_level as f64 * scale) as f32;
    let biomes =
        classify(&metres, sea_m, &fresh_water_mask(&layers), Some(&layers.flow), &BiomeOptions::default())?;
    h.update(&biomes.rgb());
    h.update(&biomes.splat_rgba(&BiomeOptions::default()));
    f32_bytes(&mut h, &biomes.slope_deg);
    f32_bytes(&mut h, &biomes.moisture);
    let (water, flow) =
        (WaterImage::new(&layers, &terrain.height, terrain.sea_level), FlowImage::new(&layers));
    let opts = HillshadeOptions::default();
    let shader = Hillshader::new(&metres, &opts, Some(sea_m))?;
    let colors = palette.colorize(&metres, Some(sea_m));
    let flat = detmath::sin(opts.altitude_deg.to_radians());
    // `terrasynth analyze --json` of the map (its figures use detmath too).
    let realism_opts =
        RealismOptions { height_scale_m: scale, sea_level: terrain.sea_level, ..Default::default() };
    h.update(Realism::compute(&terrain.height, &realism_opts)?.to_json().to_string().as_bytes());
    let (mut rgba, mut grey, mut hs) = (vec![0u8; 4 * w], vec![0u8; w], vec![0f32; w]);
    for y in 0..hgt {
        water.row(y, &mut rgba);
        flow.row(y, &mut grey);
        shader.span(y, 0, &mut hs);
        h.update(&rgba);
        h.update(&grey);
        f32_bytes(&mut h, &hs);
        for (x, &v) in hs.iter().enumerate() {
            let c = &colors[3 * (y * w + x)..3 * (y * w + x) + 3];
            h.update(&shade_pixel([c[0], c[1], c[2]], v, opts.ambient, flat));
        }
    }
    Ok(h.hex())
}

/// The height bytes (f32 metres) of one odd window of [`WORLD_RECIPE`] at a negative origin.
fn world_window() -> String {
    use terrasynth::recipe::{PipelineProgress, Recipe, World};
    let world = match Recipe::from_toml_str(WORLD_RECIPE)
        .map_err(|e| e.to_string())
        .and_then(|r| World::new(r).map_err(|e| e.to_string()))
    {
        Ok(w) => w,
        Err(e) => return format!("error: {e}"),
    };
    match world.window(-1234, 5678, 97, 61, &PipelineProgress::new()) {
        Ok(t) => {
            let mut h = Sha256::default();
            f32_bytes(&mut h, t.height.as_slice());
            h.hex()
        }
        Err(e) => format!("error: {e}"),
    }
}

/// The wasm32 entry points for the Node loader of `scripts/check-platforms.sh`.
#[cfg(target_arch = "wasm32")]
mod wasm {
    use std::sync::OnceLock;

    static REPORT: OnceLock<String> = OnceLock::new();

    /// Computes the report (once) and returns its length in bytes.
    #[unsafe(no_mangle)]
    pub extern "C" fn check_run() -> usize {
        REPORT.get_or_init(super::report).len()
    }

    /// The report's first byte in the module's memory (after [`check_run`]).
    #[unsafe(no_mangle)]
    pub extern "C" fn check_ptr() -> *const u8 {
        REPORT.get_or_init(super::report).as_ptr()
    }
}
