//! End-to-end tests of `terrasynth generate`, `presets`, `recipe`, `steps`: files written,
//! PNG sizes, report.json keys, determinism across thread counts, bad input writing nothing.

mod common;

use std::path::{Path, PathBuf};

use common::{generate, json, run, stderr, temp_dir};
use serde_json::Value;

fn report(dir: &Path) -> Value {
    json(&dir.join("report.json"))
}

fn png_size(path: &Path) -> (u32, u32) {
    image::image_dimensions(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The files every default generate writes.
const ALWAYS: &[&str] = &[
    "height.png",
    "height.r16",
    "height.exr",
    "height.tif",
    "color.png",
    "hillshade.png",
    "shaded.png",
    "mesh.glb",
    "report.json",
];

#[test]
fn generate_writes_every_file_at_the_right_size() {
    let dir = temp_dir("all");
    let o = generate(&dir, &["--size", "65x33", "--seed", "5", "--obj"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ALWAYS.iter().chain(&["mesh.obj"]) {
        let meta = std::fs::metadata(dir.join(f)).unwrap_or_else(|_| panic!("{f} missing"));
        assert!(meta.len() > 0, "{f} is empty");
    }
    for f in ["height.png", "color.png", "hillshade.png", "shaded.png"] {
        assert_eq!(png_size(&dir.join(f)), (65, 33), "{f}");
    }
    assert_eq!(std::fs::metadata(dir.join("height.r16")).unwrap().len(), 65 * 33 * 2);
    // height.png is 16-bit grey.
    let img = image::open(dir.join("height.png")).unwrap();
    assert_eq!(img.color(), image::ColorType::L16);
    // No temporary files left behind.
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with('.'), "leftover {name}");
    }

    let r = report(&dir);
    for key in ["min", "max", "erosion_score", "hypsometric_integral", "peaks_per_10k", "pits_per_10k"] {
        assert!(r["metrics"][key].is_number(), "metrics.{key} missing: {}", r["metrics"]);
    }
    assert!(r["metrics"]["max"].as_f64().unwrap() > r["metrics"]["min"].as_f64().unwrap());
    assert_eq!(r["seed"], 5);
    assert_eq!(r["recipe"]["width"], 65);
    assert_eq!(r["recipe"]["name"], "island");
    assert!(r["version"].is_string());
    let timings = r["timings"].as_array().unwrap();
    assert_eq!(timings.len(), r["recipe"]["steps"].as_array().unwrap().len());
    for t in timings {
        assert!(t["seconds"].as_f64().unwrap() >= 0.0);
        assert!(t["peak_bytes"].as_u64().unwrap() >= 65 * 33 * 4, "{t}");
    }
    assert!(r["height_range"]["max_m"].as_f64().unwrap() > r["height_range"]["min_m"].as_f64().unwrap());
}

/// report.json without the machine-dependent parts (`timings`, `run`).
fn stable_report(dir: &Path) -> Value {
    let mut r = report(dir);
    let obj = r.as_object_mut().unwrap();
    assert!(obj.remove("timings").is_some());
    assert!(obj.remove("run").is_some());
    r
}

#[test]
fn same_seed_gives_identical_files_on_1_and_2_threads() {
    let a = temp_dir("t1");
    let b = temp_dir("t2");
    for (dir, threads) in [(&a, "1"), (&b, "2")] {
        let o = generate(dir, &["--size", "65", "--seed", "77", "--threads", threads]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for f in ALWAYS.iter().filter(|f| **f != "report.json") {
        let (x, y) = (std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap());
        assert!(x == y, "{f} differs between 1 and 2 threads");
    }
    assert_eq!(stable_report(&a), stable_report(&b));
    // A different seed changes the heights.
    let c = temp_dir("t3");
    assert!(generate(&c, &["--size", "65", "--seed", "78"]).status.success());
    assert_ne!(std::fs::read(a.join("height.r16")).unwrap(), std::fs::read(c.join("height.r16")).unwrap());
}

/// Any u64 is a seed: 2^64 − 1 runs, and report.json (its `seed` and its recipe's) writes it
/// as a string, as a recipe must above the largest TOML integer; 2^64 is refused (below).
#[test]
fn the_largest_u64_seed_runs_and_is_reported_exactly() {
    let dir = temp_dir("u64seed");
    let o = generate(&dir, &["--size", "33", "--seed", "18446744073709551615"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["seed"], "18446744073709551615");
    assert_eq!(report["recipe"]["seed"], "18446744073709551615");
    let other = temp_dir("u64seed2");
    assert!(generate(&other, &["--size", "33", "--seed", "18446744073709551614"]).status.success());
    assert_ne!(
        std::fs::read(dir.join("height.r16")).unwrap(),
        std::fs::read(other.join("height.r16")).unwrap()
    );
}

/// Runs a bad command and checks: exit 2, one stderr line, nothing in --out.
fn assert_rejected(extra: &[&str], expect: &str) {
    let dir = temp_dir("bad");
    let out = dir.join("out");
    let o = generate(&out, extra);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{extra:?}: not one line: {err}");
    assert!(err.contains(expect), "{extra:?}: `{expect}` not in {err}");
    assert!(!out.exists(), "{extra:?}: --out was created");
}

#[test]
fn bad_input_writes_nothing_and_exits_2_with_one_line() {
    assert_rejected(&["--preset", "atlantis"], "unknown preset `atlantis`");
    assert_rejected(&["--size", "0x65"], "invalid --size `0x65`");
    assert_rejected(&["--size", "100000"], "invalid --size `100000`");
    assert_rejected(&["--size", "nan"], "invalid --size `nan`");
    assert_rejected(&["--seed", "nan"], "--seed");
    assert_rejected(&["--seed", "18446744073709551616"], "--seed");
    assert_rejected(&["--threads", "0"], "invalid --threads 0");
    assert_rejected(&["--engine", "cryengine"], "cryengine");

    let dir = temp_dir("recipes");
    let malformed = dir.join("bad.toml");
    std::fs::write(&malformed, "width = 65\nheight = = 3\n").unwrap();
    assert_rejected(&["--recipe", malformed.to_str().unwrap()], "TOML line 2, column");

    let invalid = dir.join("invalid.toml");
    std::fs::write(
        &invalid,
        "width = 65\nheight = 65\ncell-size = nan\n[[steps]]\ntype = \"no-such-step\"\n",
    )
    .unwrap();
    assert_rejected(&["--recipe", invalid.to_str().unwrap()], "step 1 (no-such-step): unknown step type");

    let json = dir.join("bad.json");
    std::fs::write(&json, "{\n  \"width\": -3\n}").unwrap();
    assert_rejected(&["--recipe", json.to_str().unwrap()], "JSON line 2, column");

    // An empty file, or one with only comments, is not a flat map.
    for (name, text) in
        [("empty.toml", ""), ("comments.toml", "# my recipe\n\n  # todo\n"), ("empty.json", " \n")]
    {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        assert_rejected(&["--recipe", f.to_str().unwrap()], "the recipe file is empty");
    }
}

#[test]
fn every_problem_of_a_recipe_is_on_the_line() {
    let dir = temp_dir("problems");
    let path = dir.join("r.toml");
    std::fs::write(
        &path,
        "width = 65\nheight = 1\ncell-size = -2\n[[steps]]\ntype = \"diamond-square\"\nbogus = 1\n",
    )
    .unwrap();
    let o = generate(&dir.join("out"), &["--recipe", path.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("`height` = 1"), "{err}");
    assert!(err.contains("`cell-size` = -2"), "{err}");
    assert!(err.contains("step 1 (diamond-square): unknown parameter `bogus`"), "{err}");
}

#[test]
fn engine_unreal_picks_a_valid_landscape_size() {
    let dir = temp_dir("unreal");
    let o = generate(&dir, &["--size", "100", "--engine", "unreal", "--preset", "mdp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(png_size(&dir.join("height.png")), (127, 127));
    let r = report(&dir);
    assert_eq!(r["engine"]["engine"], "unreal");
    assert_eq!(r["engine"]["size"], 127);
    // Z scale = range in metres × 100 / 512.
    let range = r["engine"]["max_height_m"].as_f64().unwrap() - r["engine"]["min_height_m"].as_f64().unwrap();
    let z = r["engine"]["settings"]["scale-z"].as_f64().unwrap();
    assert!((z - range * 100.0 / 512.0).abs() < 1e-9 * range.max(1.0));
}

#[test]
fn engine_unity_writes_a_flipped_square_raw() {
    let dir = temp_dir("unity");
    let o = generate(&dir, &["--size", "60", "--engine", "unity"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r16 = std::fs::read(dir.join("height.r16")).unwrap();
    let raw = std::fs::read(dir.join("height.raw")).unwrap();
    assert_eq!(raw.len(), 65 * 65 * 2);
    // First row of the .raw is the last row of the .r16.
    let row = 65 * 2;
    assert_eq!(&raw[..row], &r16[r16.len() - row..]);
    assert_eq!(&raw[raw.len() - row..], &r16[..row]);
}

#[test]
fn presets_recipe_and_steps_list_things() {
    let o = run(&["presets"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    for name in ["island", "archipelago", "mountains", "mdp", "spectral", "voronoi-ds", "olsen"] {
        assert!(text.lines().any(|l| l.starts_with(name)), "{name} not listed:\n{text}");
    }

    let o = run(&["recipe", "olsen"]);
    assert!(o.status.success());
    let toml_text = String::from_utf8(o.stdout).unwrap();
    assert!(toml_text.contains("name = \"olsen\""), "{toml_text}");

    // The printed preset, fed back as a recipe, generates.
    let dir = temp_dir("roundtrip");
    let path = dir.join("olsen.toml");
    std::fs::write(&path, &toml_text).unwrap();
    let o = generate(&dir.join("out"), &["--recipe", path.to_str().unwrap(), "--size", "33"]);
    assert!(o.status.success(), "{}", stderr(&o));

    let o = run(&["steps", "diamond-square"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.starts_with("diamond-square"), "{text}");
    assert!(text.contains("allowed:"), "{text}");

    let o = run(&["steps", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown step type `nope`"));
}

/// Writes `text` as a recipe file in a fresh folder and generates from it.
fn generate_recipe(name: &str, file: &str, text: &str) -> PathBuf {
    let dir = temp_dir(name);
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    let out = dir.join("out");
    let o = generate(&out, &["--recipe", path.to_str().unwrap()]);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    out
}

const ISLAND_65: &str = "width = 65\nheight = 65\nseed = 9\nsea-level = 0.2\n\
    [[steps]]\ntype = \"noise\"\n[[steps]]\ntype = \"falloff\"\n[[steps]]\ntype = \"normalize\"\n";

#[test]
fn rivers_are_painted_on_the_colour_map_only_where_they_change_it() {
    let plain = generate_recipe("plain", "r.toml", ISLAND_65);
    let rivers = format!("{ISLAND_65}[[steps]]\ntype = \"rivers\"\nthreshold = 0.01\n");
    let wet = generate_recipe("wet", "r.toml", &rivers);
    // `rivers` without carving leaves the heights alone...
    assert_eq!(
        std::fs::read(plain.join("height.r16")).unwrap(),
        std::fs::read(wet.join("height.r16")).unwrap()
    );
    // ...and only adds river-blue pixels to color.png.
    let a = image::open(plain.join("color.png")).unwrap().to_rgb8();
    let b = image::open(wet.join("color.png")).unwrap().to_rgb8();
    let changed: Vec<_> = a.pixels().zip(b.pixels()).filter(|(p, q)| p != q).map(|(_, q)| q.0).collect();
    assert!(!changed.is_empty(), "no river drawn");
    assert!(changed.iter().all(|c| *c == [62, 128, 188]), "{:?}", &changed[..changed.len().min(5)]);
}

#[test]
fn json_recipe_gives_the_same_terrain_as_toml() {
    let toml_out = generate_recipe("toml", "r.toml", ISLAND_65);
    let recipe = terrasynth::recipe::Recipe::from_toml_str(ISLAND_65).unwrap();
    let json_out = generate_recipe("json", "r.json", &recipe.to_json_string().unwrap());
    assert_eq!(
        std::fs::read(toml_out.join("height.r16")).unwrap(),
        std::fs::read(json_out.join("height.r16")).unwrap()
    );
}
