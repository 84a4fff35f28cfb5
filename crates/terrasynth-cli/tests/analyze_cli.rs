//! End-to-end tests of `terrasynth analyze`: a folder written by `generate` gives the same
//! figures as the same preset analysed in memory; text and JSON forms; bad input is one line.

mod common;

use common::{generate, ok, run, stderr, temp_dir};
use serde_json::Value;

fn analyze_json(args: &[&str]) -> Value {
    let mut all = vec!["analyze", "--json"];
    all.extend_from_slice(args);
    let o = run(&all);
    ok(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn folder_and_preset_give_the_same_figures() {
    let dir = temp_dir("rivers");
    ok(&generate(&dir, &["--preset", "rivers", "--size", "97", "--seed", "3"]));
    let folder = analyze_json(&[dir.to_str().unwrap()]);
    let preset = analyze_json(&["--preset", "rivers", "--size", "97", "--seed", "3"]);
    // The folder's height.exr holds metres (f32 of height × 250), the preset's heights are units
    // × the same scale: equal up to f32 rounding.
    for key in [
        "relief_m",
        "slope_mean_deg",
        "hypsometric_integral",
        "land_fraction",
        "spectral_beta",
        "isotropy_h8",
        "isotropy_c8",
        "isotropy_s8",
    ] {
        let (a, b) = (folder[key].as_f64().unwrap(), preset[key].as_f64().unwrap());
        assert!((a - b).abs() <= 1e-4 * b.abs().max(1.0), "{key}: {a} vs {b}");
    }
    assert_eq!(folder["cell_size_m"], 10.0);
    assert_eq!(folder["width"], 97);
    assert!(folder["map"].as_str().unwrap().ends_with("height.exr"));
    // The 16-bit PNG alone, with the units given by hand: [0, 1] of the report's height range
    // (0..250 m for `rivers`), the sea at 0.2 of it: same land, same slopes within the 16-bit
    // quantum.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let range =
        report["height_range"]["max_m"].as_f64().unwrap() - report["height_range"]["min_m"].as_f64().unwrap();
    let hr = &report["height_range"];
    let sea_m = report["recipe"]["sea-level"].as_f64().unwrap() * hr["height_scale_m"].as_f64().unwrap();
    let sea = (sea_m - hr["min_m"].as_f64().unwrap()) / range;
    let png = dir.join("height.png");
    let p = analyze_json(&[
        png.to_str().unwrap(),
        "--cell-size",
        "10",
        "--height-scale",
        &range.to_string(),
        "--sea-level",
        &sea.to_string(),
    ]);
    for key in ["slope_mean_deg", "land_fraction"] {
        let (a, b) = (p[key].as_f64().unwrap(), folder[key].as_f64().unwrap());
        assert!((a - b).abs() < 1e-3 * b.max(1.0), "{key}: {a} vs {b}");
    }
    // Text form: one line per figure.
    let o = run(&["analyze", dir.to_str().unwrap()]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    for label in
        ["spectral slope beta", "Hack exponent", "drained fraction", "isotropy H4 / H8", "real-DEM ranges"]
    {
        assert!(text.contains(label), "{text}");
    }
}

/// `analyze --json` judges the map against the ranges of real terrain: one entry per range,
/// whose verdict is its value against its bounds (`rivers` at 97², whose 1 km² is too small
/// for a basin of 1 km²: Hack's exponent is not measurable, so no verdict).
#[test]
fn json_judges_the_map_against_the_real_ranges() {
    let v = analyze_json(&["--preset", "rivers", "--size", "97", "--seed", "3"]);
    let ranges = v["real_ranges"].as_array().unwrap();
    assert_eq!(ranges.len(), 8);
    for r in ranges {
        let inside = r["value"].as_f64().map(|x| {
            r["low"].as_f64().is_none_or(|lo| x >= lo) && r["high"].as_f64().is_none_or(|hi| x <= hi)
        });
        assert_eq!(r["inside"].as_bool(), inside, "{r}");
    }
    let hack = ranges.iter().find(|r| r["figure"] == "Hack exponent h").unwrap();
    assert!(hack["value"].is_null() && hack["inside"].is_null(), "{hack}");
    let pits = v["pits_per_10k_cells"].as_f64().unwrap();
    let expected = v["pits_per_km2"].as_f64().unwrap() * v["cell_size_m"].as_f64().unwrap().powi(2) / 100.0;
    assert!((pits - expected).abs() < 1e-9, "{pits} vs {expected}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["analyze"], "give a MAP"),
        (&["analyze", "/no/such/file.png"], "cannot read /no/such/file.png"),
        (&["analyze", "--preset", "atlantis"], "atlantis"),
        (
            &["analyze", "x.png", "--height-scale", "-1"],
            "invalid --height-scale -1: allowed a number in (0, 1000000]",
        ),
        (&["analyze", "x.png", "--cell-size", "0"], "invalid --cell-size 0"),
        (&["analyze", "x.png", "--channel-area", "-5"], "invalid --channel-area -5"),
        (&["analyze", "--preset", "island", "--size", "1"], "invalid --size `1`"),
    ];
    for (args, expect) in cases {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: `{expect}` not in {err}");
    }
}
