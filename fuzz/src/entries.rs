//! The fuzz entry functions: one per target, each taking untrusted bytes the way the program
//! takes them from a file. Shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`, nightly)
//! and the stable corpus replay (`crates/terrasynth/tests/fuzz_corpus.rs`, which includes this
//! file with `#[path]`), so CI checks the committed corpus without a nightly toolchain.
//!
//! Every function must return normally for every input: an `Err` is the expected answer to bad
//! input; a panic, an abort, a hang or an allocation past libFuzzer's limit is a bug. A few
//! invariants are asserted on the way (a decoded map has the size it claims, a recipe that
//! validates runs).

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use terrasynth::io::{FileFormat, ReadOptions, decode_heightmap};
use terrasynth::noise::{NoiseSpec, Region};
use terrasynth::recipe::project::parse_project;
use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, registry};
use terrasynth::{Error, Heightmap};

/// Largest side a fuzzed recipe runs at (its own size is validated first, then shrunk).
pub const RUN_SIDE: usize = 17;

/// Wall time a fuzzed run may take before it is cancelled through its progress handle (the
/// cancel path is then exercised too). A run that ignores the cancel hangs, and libFuzzer's
/// `-timeout` reports it.
pub const RUN_BUDGET: Duration = Duration::from_millis(300);

/// Names of the targets, as in `fuzz/fuzz_targets/<name>.rs` and `fuzz/corpus/<name>/`.
pub const TARGETS: &[&str] = &[
    "recipe_toml",
    "recipe_json",
    "project",
    "noise_spec",
    "import_png",
    "import_r16",
    "import_exr",
    "import_tiff",
    "world_json",
];

/// Runs the target called `name` on `data` (the corpus replay's dispatcher).
pub fn run_target(name: &str, data: &[u8]) {
    match name {
        "recipe_toml" => recipe_toml(data),
        "recipe_json" => recipe_json(data),
        "project" => project(data),
        "noise_spec" => noise_spec(data),
        "import_png" => import(data, FileFormat::Png),
        "import_r16" => import_r16(data),
        "import_exr" => import(data, FileFormat::Exr),
        "import_tiff" => import_tiff(data),
        "world_json" => world_json(data),
        other => panic!("unknown fuzz target {other}"),
    }
}

/// A recipe as TOML text: parse, validate, then a tiny run.
pub fn recipe_toml(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(recipe) = Recipe::from_toml_str(text)
    {
        tiny_run(recipe);
    }
}

/// A recipe as JSON text: parse, validate, then a tiny run.
pub fn recipe_json(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(recipe) = Recipe::from_json_str(text)
    {
        tiny_run(recipe);
    }
}

/// An editor project (`.tsproj`): parse (format, version, recipe validation, edits), then a
/// tiny run with the edits replayed.
pub fn project(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok((mut doc, _view)) = parse_project::<serde::de::IgnoredAny>(text) else { return };
    neutralise_imports(&mut doc.recipe);
    shrink(&mut doc.recipe);
    let Ok(pipeline) = Pipeline::new(doc.recipe.clone(), &registry()) else { return };
    with_budget(|progress| {
        let mut out = pipeline.run(progress)?;
        doc.apply_edits(&mut out.terrain, progress)
    });
}

/// An inline noise spec (the `noise` step's `noise` text, `terrasynth noise --spec`): parse,
/// build, sample a few points and fill an 8 × 8 region.
pub fn noise_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(spec) = NoiseSpec::from_inline_toml(text) else { return };
    let Ok(noise) = spec.build() else { return };
    // The round trip of a valid spec gives the same spec.
    let again = NoiseSpec::from_inline_toml(&spec.to_inline_toml()).expect("a built spec's text parses");
    assert_eq!(again, spec, "inline TOML round trip");
    for (x, y) in [(0.0, 0.0), (0.37, -12.5), (1.0e6, 3.0)] {
        let _ = noise.get3(x, y, 0.25);
    }
    let region = Region { x0: -1.5, y0: 2.25, dx: 0.37, dy: 0.41, width: 8, height: 8 };
    let mut out = vec![0.0f32; 64];
    let _ = noise.fill(&region, &mut out);
}

/// A heightmap file of `format` (PNG 8/16, EXR): decode; a decoded map is non-empty.
pub fn import(data: &[u8], format: FileFormat) {
    let r = decode_heightmap(data, Path::new("fuzz"), &ReadOptions { format, width: 0, height: 0 });
    check_decoded(r, data.len(), None);
}

/// R16/RAW with sizes: the first 4 bytes give the width and height asked for (two u16, 0 =
/// infer), the rest is the file.
pub fn import_r16(data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    let width = u16::from_le_bytes([data[0], data[1]]) as usize;
    let height = u16::from_le_bytes([data[2], data[3]]) as usize;
    let file = &data[4..];
    let r = decode_heightmap(
        file,
        Path::new("fuzz.r16"),
        &ReadOptions { format: FileFormat::R16, width, height },
    );
    if let Ok(m) = &r {
        assert_eq!(m.len() * 2, file.len(), "R16 cells = bytes / 2");
    }
    check_decoded(r, file.len(), Some(file.len() / 2));
}

/// TIFF/GeoTIFF: decode the image and read the GeoTIFF tags.
pub fn import_tiff(data: &[u8]) {
    let r = decode_heightmap(
        data,
        Path::new("fuzz.tif"),
        &ReadOptions { format: FileFormat::Tiff, width: 0, height: 0 },
    );
    check_decoded(r, data.len(), None);
    let _ = terrasynth::io::tiff::decode_geo_tags(data, Path::new("fuzz.tif"));
}

/// A tile set's `world.json`, as a rerun of `terrasynth tiles` finds it in its folder: it is
/// read and compared with the tile set asked for; anything but the same tile set is refused.
pub fn world_json(data: &[u8]) {
    use terrasynth::export::tiles::{TileLayout, write_manifest};
    static WORLD: std::sync::OnceLock<terrasynth::World> = std::sync::OnceLock::new();
    let world = WORLD.get_or_init(|| {
        let recipe = Recipe::from_toml_str(WORLD_RECIPE).expect("the fuzz world recipe parses");
        terrasynth::World::new(recipe).expect("the fuzz world recipe validates")
    });
    let layout = TileLayout::new((0, 0), (2, 1), 9, None).expect("the fuzz tile layout is valid");
    let dir = std::env::temp_dir().join(format!("terrasynth-fuzz-world-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp folder");
    std::fs::write(dir.join("world.json"), data).expect("write world.json");
    let expected = std::fs::read(dir.join("world.json")).ok();
    if write_manifest(&dir, world, &layout).is_err() {
        // Refused: the folder's world.json is left as it was.
        assert_eq!(std::fs::read(dir.join("world.json")).ok(), expected, "a refused world.json was changed");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The world recipe of the `world_json` target (tiny: 9² tiles of one noise step).
pub const WORLD_RECIPE: &str = r#"
name = "fuzz"
cell-size = 30.0
[world]
height-range = [-100.0, 200.0]
[exports]
glb = false
images = false
[[steps]]
type = "noise"
feature-size-m = 300.0
"#;

/// A decode result: `Ok` maps are non-empty and within `max_cells` when given; errors are the
/// clean kinds (format, size), never anything else.
fn check_decoded(r: terrasynth::Result<Heightmap>, bytes: usize, max_cells: Option<usize>) {
    match r {
        Ok(m) => {
            assert!(!m.is_empty(), "empty map from {bytes} bytes");
            if let Some(n) = max_cells {
                assert!(m.len() <= n);
            }
        }
        Err(Error::Format { .. } | Error::InvalidSize { .. }) => {}
        Err(e) => panic!("unexpected error kind from a decoder: {e:?}"),
    }
}

/// Validates `recipe` as given, then runs it at most [`RUN_SIDE`]² with imports pointed at a
/// missing file (the fuzzer must not read the machine's files), within [`RUN_BUDGET`].
fn tiny_run(mut recipe: Recipe) {
    if Pipeline::new(recipe.clone(), &registry()).is_err() {
        return;
    }
    neutralise_imports(&mut recipe);
    shrink(&mut recipe);
    // A recipe valid at its own size may be refused at the small one (a step's size
    // parameter larger than the map): that is an error, not a bug.
    let Ok(pipeline) = Pipeline::new(recipe, &registry()) else { return };
    with_budget(|progress| pipeline.run(progress).map(drop));
}

/// Shrinks a recipe to at most [`RUN_SIDE`] a side.
fn shrink(recipe: &mut Recipe) {
    recipe.width = recipe.width.clamp(2, RUN_SIDE);
    recipe.height = recipe.height.clamp(2, RUN_SIDE);
}

/// Points every `import` step at a file that does not exist.
fn neutralise_imports(recipe: &mut Recipe) {
    for s in &mut recipe.steps {
        if s.kind == "import" {
            s.params
                .insert("path".into(), terrasynth::step::ParamValue::Text("/nonexistent/fuzz.png".into()));
        }
    }
}

/// Runs `job` with a progress handle that is cancelled after [`RUN_BUDGET`]; any `Err` is
/// accepted (bad input, cancelled).
fn with_budget(job: impl FnOnce(&PipelineProgress) -> terrasynth::Result<()>) {
    let progress = PipelineProgress::new();
    let (done, wait) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        let p = progress.clone();
        s.spawn(move || {
            if wait.recv_timeout(RUN_BUDGET).is_err() {
                p.cancel();
            }
        });
        let _ = job(&progress);
        let _ = done.send(());
    });
}
