//! End-to-end tests of world windows and tile sets: `generate --window` and `tiles`. A 4×4
//! tiling equals the whole window (heights bit for bit, hillshade and colours byte for byte),
//! neighbouring tiles share identical edges, the 16-bit files map the world's height range, a
//! rerun skips complete tiles and cleans partial ones, and bad input is refused with one line,
//! exit code 2 and no files.

mod common;

use std::path::{Path, PathBuf};

use common::{generate, json, ok, run, stderr, temp_dir};

/// A small world recipe of point steps (noise + normalize over a declared input range), so the
/// test does not depend on the `world` preset.
const WORLD: &str = r#"
name = "test-world"
cell-size = 30.0
width = 33
height = 33
seed = 11
sea-level = 0.0
[world]
height-range = [-1200.0, 2400.0]
[exports]
glb = false
[[steps]]
type = "noise"
feature-size-m = 2500.0
octaves = 5
[[steps]]
type = "normalize"
input-range = [-0.8, 0.8]
min = -1200.0
max = 2400.0
[[steps]]
type = "clamp"
min = -1200.0
max = 2400.0
"#;

fn world_recipe(dir: &Path) -> PathBuf {
    let path = dir.join("world.toml");
    std::fs::write(&path, WORLD).unwrap();
    path
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `terrasynth tiles --quiet --recipe RECIPE --out OUT EXTRA…`.
fn tiles(recipe: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["tiles", "--recipe", s(recipe), "--out", s(out)];
    args.extend_from_slice(extra);
    run(&args)
}

/// Heights of a height.tif (f32 metres) as bits, with its width.
fn tif_bits(path: &Path) -> (usize, Vec<u32>) {
    let m = terrasynth::io::tiff::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (m.width(), m.as_slice().iter().map(|v| v.to_bits()).collect())
}

/// Values of a square height.r16 (u16 little-endian).
fn r16(path: &Path) -> Vec<u16> {
    std::fs::read(path).unwrap().chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()
}

/// Pixels of an 8-bit PNG (any layout) as bytes, with width and bytes per pixel.
fn png(path: &Path) -> (usize, usize, Vec<u8>) {
    let img = image::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let bpp = img.color().bytes_per_pixel() as usize;
    (img.width() as usize, bpp, img.into_bytes())
}

/// The `w × h` block at `(x, y)` of a row-major buffer of `width` items of `k` values.
fn block<T: Copy>(
    data: &[T],
    width: usize,
    k: usize,
    (x, y): (usize, usize),
    (w, h): (usize, usize),
) -> Vec<T> {
    (y..y + h).flat_map(|r| data[(r * width + x) * k..(r * width + x + w) * k].iter().copied()).collect()
}

#[test]
fn a_4x4_tiling_equals_the_whole_window() {
    let dir = temp_dir("tiling");
    let recipe = world_recipe(&dir);
    let (whole, set) = (dir.join("whole"), dir.join("set"));
    // 4×4 tiles of 17 at a negative origin span 4·16 + 1 = 65 cells a side.
    ok(&generate(&whole, &["--recipe", s(&recipe), "--window", "-40,-23,65x65"]));
    ok(&tiles(&recipe, &set, &["--origin", "-40,-23", "--tiles", "4x4", "--tile", "17", "--quiet"]));
    let (ww, heights) = tif_bits(&whole.join("height.tif"));
    assert_eq!(ww, 65);
    let whole_r16 = r16(&whole.join("height.r16"));
    let images: Vec<_> =
        ["hillshade.png", "shaded.png", "color.png"].iter().map(|f| (*f, png(&whole.join(f)))).collect();
    for j in 0..4 {
        for i in 0..4 {
            let t = set.join(format!("x{i}_y{j}"));
            let at = (16 * i, 16 * j);
            let (tw, th) = tif_bits(&t.join("height.tif"));
            assert_eq!(tw, 17);
            assert!(
                th == block(&heights, 65, 1, at, (17, 17)),
                "tile ({i}, {j}) heights differ from the whole"
            );
            assert!(
                r16(&t.join("height.r16")) == block(&whole_r16, 65, 1, at, (17, 17)),
                "tile ({i}, {j}) r16"
            );
            // Edge cells are shaded from their true neighbours, so even the hillshade matches.
            for (name, (w, bpp, px)) in &images {
                let (_, _, tile_px) = png(&t.join(name));
                assert!(
                    tile_px == block(px, *w, *bpp, at, (17, 17)),
                    "tile ({i}, {j}) {name} differs from the whole"
                );
            }
        }
    }
}

#[test]
fn adjacent_tiles_share_identical_edges() {
    let dir = temp_dir("edges");
    let recipe = world_recipe(&dir);
    let set = dir.join("set");
    ok(&tiles(&recipe, &set, &["--origin", "7,-3", "--tiles", "3x2", "--tile", "33", "--quiet"]));
    let tif = |i: usize, j: usize| tif_bits(&set.join(format!("x{i}_y{j}/height.tif"))).1;
    let shade = |i: usize, j: usize| png(&set.join(format!("x{i}_y{j}/hillshade.png"))).2;
    let col = |d: &[u32], x: usize| (0..33).map(|y| d[y * 33 + x]).collect::<Vec<_>>();
    let row = |d: &[u32], y: usize| d[y * 33..(y + 1) * 33].to_vec();
    for j in 0..2 {
        for i in 0..2 {
            assert_eq!(col(&tif(i, j), 32), col(&tif(i + 1, j), 0), "east edge of ({i}, {j})");
            let (a, b) = (shade(i, j), shade(i + 1, j));
            let a: Vec<u8> = (0..33).map(|y| a[y * 33 + 32]).collect();
            let b: Vec<u8> = (0..33).map(|y| b[y * 33]).collect();
            assert_eq!(a, b, "hillshade east edge of ({i}, {j})");
        }
    }
    for i in 0..3 {
        assert_eq!(row(&tif(i, 0), 32), row(&tif(i, 1), 0), "south edge of ({i}, 0)");
    }
    // The edges are not trivially equal: the terrain varies along them.
    let edge = col(&tif(0, 0), 32);
    assert!(edge.iter().any(|&v| v != edge[0]), "flat edge: the test would not see a seam");
}

#[test]
fn world_json_lists_every_tile_and_its_files() {
    let dir = temp_dir("manifest");
    let recipe = world_recipe(&dir);
    let set = dir.join("set");
    ok(&tiles(
        &recipe,
        &set,
        &["--origin", "-5,2", "--tiles", "2x3", "--tile", "9", "--seed", "99", "--quiet"],
    ));
    let m = json(&set.join("world.json"));
    assert_eq!(m["seed"], 99);
    assert_eq!(m["recipe"]["seed"], 99);
    assert_eq!(m["height_range_m"], serde_json::json!([-1200.0, 2400.0]));
    assert_eq!(m["extent"], serde_json::json!([17, 25]));
    assert!(m["version"].is_string());
    let list = m["tile_list"].as_array().unwrap();
    assert_eq!(list.len(), 6);
    let files: Vec<&str> = m["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    for t in list {
        let (i, j) = (t["i"].as_i64().unwrap(), t["j"].as_i64().unwrap());
        assert_eq!(
            t["window"],
            serde_json::json!({"x0": -5 + 8 * i, "y0": 2 + 8 * j, "width": 9, "height": 9})
        );
        assert_eq!(
            t["position_m"],
            serde_json::json!([((-5 + 8 * i) * 30) as f64, ((2 + 8 * j) * 30) as f64])
        );
        let tile = set.join(t["dir"].as_str().unwrap());
        let mut on_disk: Vec<String> = std::fs::read_dir(&tile)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        listed.sort();
        assert_eq!(on_disk, listed, "{}", tile.display());
        let report = json(&tile.join("report.json"));
        assert_eq!(report["window"], t["window"]);
        assert_eq!(report["world_height_range_m"], m["height_range_m"]);
    }
}

#[test]
fn sixteen_bit_files_map_the_world_range_not_the_window() {
    let dir = temp_dir("range");
    let recipe = world_recipe(&dir);
    let out = dir.join("w");
    ok(&generate(&out, &["--recipe", s(&recipe), "--window", "100,-200,40x30"]));
    let h = terrasynth::io::tiff::read(out.join("height.tif")).unwrap();
    let q = r16(&out.join("height.r16"));
    let (lo, hi) = h.min_max().unwrap();
    assert!(lo > -1200.0 || hi < 2400.0, "the window spans the whole world range: the test would not tell");
    for (k, (&v, &got)) in h.as_slice().iter().zip(&q).enumerate() {
        let want = ((v as f64 + 1200.0) / 3600.0 * 65535.0).round() as u16;
        assert_eq!(got, want, "cell {k}: {v} m");
    }
    let r = json(&out.join("report.json"));
    assert_eq!(r["window"], serde_json::json!({"x0": 100, "y0": -200, "width": 40, "height": 30}));
    assert_eq!(r["height_range"]["min_m"], -1200.0);
    assert_eq!(r["height_range"]["max_m"], 2400.0);
    assert_eq!(r["world_height_range_m"], serde_json::json!([-1200.0, 2400.0]));
}

#[test]
fn a_rerun_skips_complete_tiles_and_redoes_partial_ones() {
    let dir = temp_dir("rerun");
    let recipe = world_recipe(&dir);
    let set = dir.join("set");
    let args = ["--origin", "0,0", "--tiles", "2x2", "--tile", "17"];
    ok(&tiles(&recipe, &set, &args));
    let kept = set.join("x0_y0/height.tif");
    let before = std::fs::read(&kept).unwrap();
    let redo = set.join("x1_y1");
    let redo_bytes = std::fs::read(redo.join("height.tif")).unwrap();
    // What a killed run leaves: a partial folder (never renamed) and a missing tile.
    std::fs::remove_dir_all(&redo).unwrap();
    std::fs::create_dir_all(set.join(".x1_y1.partial")).unwrap();
    std::fs::write(set.join(".x1_y1.partial/height.tif"), b"half").unwrap();
    // Mark a complete tile: a rerun must not rewrite it.
    std::fs::write(set.join("x0_y0/marker"), b"kept").unwrap();
    let o = tiles(&recipe, &set, &args);
    ok(&o);
    assert!(stderr(&o).contains("1 written, 3 already complete"), "{}", stderr(&o));
    assert!(set.join("x0_y0/marker").exists(), "a complete tile was rewritten");
    assert_eq!(std::fs::read(&kept).unwrap(), before);
    assert_eq!(std::fs::read(redo.join("height.tif")).unwrap(), redo_bytes, "the redone tile differs");
    let leftovers: Vec<String> = std::fs::read_dir(&set)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "partial folders left: {leftovers:?}");
    // Another tile set into the same folder is refused, naming what differs.
    let o = tiles(&recipe, &set, &["--origin", "0,0", "--tiles", "2x2", "--tile", "17", "--seed", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("differs in `recipe`") || stderr(&o).contains("differs in `seed`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn engine_tiles_get_engine_names() {
    let dir = temp_dir("engine");
    let recipe = world_recipe(&dir);
    let set = dir.join("set");
    ok(&tiles(&recipe, &set, &["--tiles", "2x2", "--tile", "127", "--engine", "unreal", "--quiet"]));
    for (i, j) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let named = std::fs::read(set.join(format!("unreal/test-world_x{i}_y{j}.png"))).unwrap();
        assert_eq!(named, std::fs::read(set.join(format!("x{i}_y{j}/height.png"))).unwrap());
    }
    let m = json(&set.join("world.json"));
    assert_eq!(m["engine"]["import"]["size"], 127);
    // Unreal's Z scale spans the world range: 3600 m × 100 / 512.
    assert_eq!(m["engine"]["import"]["settings"]["scale-z"], 3600.0 * 100.0 / 512.0);
    assert_eq!(m["tile_list"][1]["engine_file"], "unreal/test-world_x1_y0.png");

    let unity = dir.join("unity");
    ok(&tiles(&recipe, &unity, &["--tiles", "1x2", "--tile", "33", "--engine", "unity", "--quiet"]));
    // Unity's Z grows north: tile row j = 0 (north) is Z = 1.
    assert_eq!(
        std::fs::read(unity.join("unity/test-world_0_1.raw")).unwrap(),
        std::fs::read(unity.join("x0_y0/height.raw")).unwrap()
    );
}

/// Asserts a refused run: exit 2, one stderr line containing every `needle`, and no `out`.
fn refused(o: &std::process::Output, out: &Path, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` missing from: {e}");
    }
    assert!(!out.exists(), "{} was created", out.display());
}

#[test]
fn single_map_recipes_are_refused() {
    let dir = temp_dir("refuse");
    let out = dir.join("out");
    refused(
        &generate(&out, &["--preset", "island", "--window", "0,0,65x65"]),
        &out,
        &["world recipe", "island"],
    );
    let o = run(&["tiles", "--preset", "island", "--tiles", "2x2", "--tile", "33", "--out", s(&out)]);
    refused(&o, &out, &["world recipe", "island"]);
}

#[test]
fn bad_windows_and_layouts_are_refused_with_the_allowed_range() {
    let dir = temp_dir("bad");
    let recipe = world_recipe(&dir);
    let out = dir.join("out");
    for (window, allowed) in [
        ("0,0,1x5", "2..=32769"),
        ("a,0,5x5", "X,Y,WxH"),
        ("5,65x33", "X,Y,WxH"),
        ("1000000000000,0,5x5", "999999999999"),
    ] {
        refused(&generate(&out, &["--recipe", s(&recipe), "--window", window]), &out, &[allowed]);
    }
    for (extra, allowed) in [
        (&["--tiles", "0x2", "--tile", "17"][..], "1..=4096"),
        (&["--tiles", "2x2", "--tile", "1"][..], "2..=32769"),
        (&["--tiles", "2x2", "--tile", "17", "--origin", "x,1"][..], "X,Y"),
        (&["--tiles", "2x2", "--tile", "100", "--engine", "unity"][..], "1025"),
        (&["--tiles", "4096x1", "--tile", "32769", "--origin", "999999000000,0"][..], "world cells"),
    ] {
        refused(&tiles(&recipe, &out, extra), &out, &[allowed]);
    }
}
