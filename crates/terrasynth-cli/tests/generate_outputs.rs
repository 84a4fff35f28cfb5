//! End-to-end tests of the hydrology, biome and erosion outputs of `terrasynth generate`:
//! water.png, flow.png, biomes.png, splat.png, rivers.geojson, report.json's
//! `erosion_scores` and `trace`, the new presets, and `exports.carve-mesh`.

mod common;

use std::path::Path;

use common::{generate, json, ok, temp_dir};
use serde_json::Value;
use terrasynth::hydro::DepressionFiller;

#[test]
fn water_flow_biomes_and_splat_are_written_at_the_map_size() {
    let dir = temp_dir("images");
    ok(&generate(&dir, &["--size", "65x33", "--seed", "3"]));
    for f in ["water.png", "flow.png", "biomes.png", "splat.png"] {
        assert_eq!(image::image_dimensions(dir.join(f)).unwrap(), (65, 33), "{f}");
    }
    let splat = image::open(dir.join("splat.png")).unwrap();
    assert_eq!(splat.color(), image::ColorType::Rgba8);
    for px in splat.to_rgba8().pixels() {
        assert_eq!(px.0.iter().map(|&v| v as u32).sum::<u32>(), 255, "{px:?}");
    }
    // The island preset has no hydrology steps: the outputs computed them, and drew something.
    let r = json(&dir.join("report.json"));
    let computed: Vec<&str> = r["hydrology"]["computed_by_outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(computed, ["flow", "rivers", "lakes"]);
    let water = image::open(dir.join("water.png")).unwrap().to_rgba8();
    assert!(water.pixels().any(|p| p.0[3] == 255) && water.pixels().any(|p| p.0[3] == 0));
    // flow.png: the brightest pixel is the largest drainage area, so some pixel is 255.
    let flow = image::open(dir.join("flow.png")).unwrap().to_luma8();
    assert_eq!(flow.pixels().map(|p| p.0[0]).max(), Some(255));
    let shares: f64 = r["biomes"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    assert!(r["files"].as_array().unwrap().iter().any(|f| f == "rivers.geojson"));
}

#[test]
fn rivers_geojson_is_in_bounds_and_never_climbs_on_the_filled_surface() {
    let dir = temp_dir("geojson");
    ok(&generate(&dir, &["--preset", "rivers", "--size", "65"]));
    let g = json(&dir.join("rivers.geojson"));
    assert_eq!(g["type"], "FeatureCollection");
    let r = json(&dir.join("report.json"));
    let cs = r["size"]["cell_size_m"].as_f64().unwrap();
    let scale = r["height_range"]["height_scale_m"].as_f64().unwrap();
    let sea_m = (r["sea_level"].as_f64().unwrap() * scale) as f32;
    let metres = terrasynth::io::exr::read(dir.join("height.exr")).unwrap();
    let filled = DepressionFiller::with_epsilon().fill(&metres, sea_m).unwrap();
    let features = g["features"].as_array().unwrap();
    assert!(features.len() >= 3, "only {} rivers", features.len());
    let mut reaches_sea = 0;
    for f in features {
        assert_eq!(f["type"], "Feature");
        assert_eq!(f["geometry"]["type"], "LineString");
        let coords = f["geometry"]["coordinates"].as_array().unwrap();
        let grid = f["properties"]["grid"].as_array().unwrap();
        assert!(coords.len() >= 2 && coords.len() == grid.len());
        assert!(f["properties"]["order"].as_u64().unwrap() >= 1);
        assert!(f["properties"]["discharge_cells"].as_f64().unwrap() >= 1.0);
        let mut last = f64::INFINITY;
        let mut last_filled = f32::INFINITY;
        for (c, g) in coords.iter().zip(grid) {
            let (x, y, z) = (c[0].as_f64().unwrap(), c[1].as_f64().unwrap(), c[2].as_f64().unwrap());
            let (gx, gy) = (g[0].as_f64().unwrap(), g[1].as_f64().unwrap());
            assert!((0.0..=64.0).contains(&gx) && (0.0..=64.0).contains(&gy), "{g}");
            assert!((x - gx * cs).abs() < 1e-9 && (y - gy * cs).abs() < 1e-9);
            assert!(z <= last, "river climbs: {z} after {last}");
            last = z;
            let h = filled[(gx as usize, gy as usize)];
            assert!(h <= last_filled + 1e-3, "filled surface climbs: {h} after {last_filled}");
            last_filled = h;
        }
        let end = grid.last().unwrap();
        let (ex, ey) = (end[0].as_f64().unwrap() as usize, end[1].as_f64().unwrap() as usize);
        if metres[(ex, ey)] < sea_m || ex == 0 || ey == 0 || ex == 64 || ey == 64 {
            reaches_sea += 1;
        }
    }
    assert!(reaches_sea >= 1, "no river reaches the sea");
}

#[test]
fn erosion_presets_report_scores_and_trace_without_changing_the_terrain() {
    let plain = temp_dir("plain");
    let traced = temp_dir("traced");
    ok(&generate(&plain, &["--preset", "eroded-island", "--size", "65"]));
    ok(&generate(&traced, &["--preset", "eroded-island", "--size", "65", "--trace", "5"]));
    let (a, b) = (json(&plain.join("report.json")), json(&traced.join("report.json")));
    assert!(a.get("trace").is_none());
    let scores = a["erosion_scores"].as_array().unwrap();
    let kinds: Vec<&str> = scores.iter().map(|s| s["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["stream-power", "droplets", "stream-power"]);
    assert!(scores.iter().all(|s| s["erosion_score"].as_f64().unwrap() > 0.0));
    assert_eq!(a["erosion_scores"], b["erosion_scores"]);
    // stream power: 5 coarse steps, traced every 5 -> records at 0 and 5 (the end);
    // droplets: 1 iteration -> at 0 and 1; stream power again, 1 full-resolution step (2 until
    // session 39) -> at 0 and at the end (1).
    let at: Vec<(String, u64)> = b["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["type"].as_str().unwrap().to_string(), t["iteration"].as_u64().unwrap()))
        .collect();
    let want: Vec<(String, u64)> =
        [("stream-power", 0), ("stream-power", 5), ("droplets", 0), ("droplets", 1)]
            .into_iter()
            .chain([("stream-power", 0), ("stream-power", 1)])
            .map(|(k, i)| (k.to_string(), i))
            .collect();
    assert_eq!(at, want);
    for f in ["height.r16", "height.exr", "rivers.geojson"] {
        assert!(
            std::fs::read(plain.join(f)).unwrap() == std::fs::read(traced.join(f)).unwrap(),
            "{f} differs"
        );
    }
    let o = generate(&temp_dir("bad-trace"), &["--trace", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--trace"));
}

#[test]
fn new_presets_are_identical_on_1_and_2_threads() {
    for preset in ["eroded-island", "olsen-eroded", "rivers", "highlands"] {
        let (a, b) = (temp_dir(&format!("{preset}-1")), temp_dir(&format!("{preset}-2")));
        ok(&generate(&a, &["--preset", preset, "--size", "65", "--threads", "1"]));
        ok(&generate(&b, &["--preset", preset, "--size", "65", "--threads", "2"]));
        for e in std::fs::read_dir(&a).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name != "report.json" {
                assert!(
                    std::fs::read(a.join(&name)).unwrap() == std::fs::read(b.join(&name)).unwrap(),
                    "{preset}: {name}"
                );
            }
        }
        let stable = |d: &Path| {
            let mut r = json(&d.join("report.json"));
            let o = r.as_object_mut().unwrap();
            o.remove("timings");
            o.remove("run");
            r
        };
        assert_eq!(stable(&a), stable(&b), "{preset}");
        assert!(!json(&a.join("report.json"))["erosion_scores"].as_array().unwrap().is_empty());
    }
}

#[test]
fn carve_mesh_changes_the_mesh_only() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets/rivers.toml")).unwrap();
    let carved_text = text.replace("[exports]\n", "[exports]\ncarve-mesh = true\n");
    assert_ne!(text, carved_text);
    let dir = temp_dir("carve");
    let recipe = dir.join("carved.toml");
    std::fs::write(&recipe, carved_text).unwrap();
    let (plain, carved) = (temp_dir("carve-plain"), temp_dir("carve-on"));
    ok(&generate(&plain, &["--preset", "rivers", "--size", "65"]));
    ok(&generate(&carved, &["--recipe", recipe.to_str().unwrap(), "--size", "65"]));
    assert!(
        std::fs::read(plain.join("height.r16")).unwrap() == std::fs::read(carved.join("height.r16")).unwrap()
    );
    assert!(
        std::fs::read(plain.join("mesh.glb")).unwrap() != std::fs::read(carved.join("mesh.glb")).unwrap()
    );
}

#[test]
fn report_times_every_output_and_files_match_on_1_and_2_threads() {
    let (a, b) = (temp_dir("timed-1"), temp_dir("timed-2"));
    let args = ["--size", "65x33", "--seed", "9", "--obj", "--engine", "unity"];
    for (dir, threads) in [(&a, "1"), (&b, "2")] {
        let mut all = args.to_vec();
        all.extend(["--threads", threads]);
        ok(&generate(dir, &all));
    }
    let r = json(&a.join("report.json"));
    let files: Vec<&str> = r["files"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(files.contains(&"mesh.obj") && files.contains(&"height.raw"), "{files:?}");
    // Every file written is in `files`, with no temporary file left, and identical bytes on
    // 1 and 2 threads (the outputs run as parallel jobs, streamed row band by row band).
    let mut on_disk: Vec<String> = std::fs::read_dir(&a)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    // report.json lists the files written before it.
    let mut listed: Vec<String> = files.iter().map(|s| s.to_string()).chain(["report.json".into()]).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
    for f in &files {
        assert!(std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(), "{f} differs");
    }
    // run.outputs: seconds per file (every file but mesh.mtl, which is written by the mesh.obj
    // job), per preparation part, the total and the peak memory.
    let outputs = &r["run"]["outputs"];
    let timed = outputs["files"].as_object().unwrap();
    for f in files.iter().filter(|f| **f != "mesh.mtl") {
        assert!(timed[*f].as_f64().unwrap() >= 0.0, "no timing for {f}: {outputs}");
    }
    assert_eq!(timed.len(), files.len() - 1, "{outputs}");
    for part in ["heights_m", "hydrology", "biomes", "metrics"] {
        assert!(outputs["prepare"][part].as_f64().unwrap() >= 0.0, "{part}: {outputs}");
    }
    let (pipeline, out_s) = (r["run"]["seconds"].as_f64().unwrap(), outputs["seconds"].as_f64().unwrap());
    assert!((r["run"]["total_seconds"].as_f64().unwrap() - (pipeline + out_s)).abs() < 1e-9);
    // The biomes alone keep a map-sized class grid and three f32 fields: the peak is at least that.
    assert!(outputs["peak_bytes"].as_u64().unwrap() >= 65 * 33 * 13, "{outputs}");
}

#[test]
fn a_mesh_over_the_glb_limit_is_refused_before_anything_is_written() {
    let dir = temp_dir("glb-limit");
    let out = dir.join("out");
    // 8129² at lod 0 would be a 4.5 GB GLB: refused at once, naming the smallest lod that fits.
    let o = generate(&out, &["--size", "8129"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("4 GiB") && err.contains("--lod 1"), "{err}");
    assert!(!out.exists(), "--out was created");
    let o = generate(&out, &["--size", "65", "--lod", "17"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid --lod 17"));
    // --lod replaces exports.lod: lod 2 of 65² keeps 17 × 17 vertices.
    ok(&generate(&out, &["--size", "65", "--lod", "2"]));
    let r = json(&out.join("report.json"));
    assert_eq!(r["recipe"]["exports"]["lod"], 2, "{}", r["recipe"]["exports"]);
    let glb = std::fs::read(out.join("mesh.glb")).unwrap();
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let doc: Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    assert_eq!(doc["accessors"][0]["count"], 17 * 17);
}
