//! `terrasynth sample` and `terrasynth noise`, run through the built binary.

mod common;

use std::process::Output;

use common::run_with_stdin as terrasynth;

fn stdout_lines(out: &Output) -> Vec<String> {
    String::from_utf8(out.stdout.clone()).unwrap().lines().map(str::to_owned).collect()
}

#[test]
fn sample_prints_the_perlin_reference_values_with_17_digits() {
    let spec = r#"kind = "perlin", seed = "reference", frequency = 1.0"#;
    let out = terrasynth(&["sample", "--noise", spec], "3.14 42 7\n0.5 0.5 0.5\n\n1.5 2.5 3.5\n0 0\n");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = stdout_lines(&out);
    assert_eq!(
        lines,
        ["1.3691995878400012e-1", "-2.5000000000000000e-1", "1.2500000000000000e-1", "0.0000000000000000e0"]
    );
    assert_eq!(lines[0].parse::<f64>().unwrap(), 0.13691995878400012);
}

#[test]
fn sample_output_round_trips_the_library_value() {
    use terrasynth::noise::{NoiseFn, NoiseSpec};
    let spec = r#"kind = "worley", seed = 9, fractal = "fbm", frequency = 0.7"#;
    let noise = NoiseSpec::from_inline_toml(spec).unwrap().build().unwrap();
    let out = terrasynth(&["sample", "--noise", spec], "0.125 -7.5\n1e3 2e-3\n");
    let lines = stdout_lines(&out);
    assert_eq!(lines[0].parse::<f64>().unwrap(), noise.get2(0.125, -7.5));
    assert_eq!(lines[1].parse::<f64>().unwrap(), noise.get2(1e3, 2e-3));
}

fn assert_one_line_error(out: &Output, needles: &[&str]) {
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} lacks {n:?}");
    }
}

#[test]
fn bad_specs_and_lines_give_one_error_line_and_exit_2() {
    assert_one_line_error(
        &terrasynth(&["sample", "--noise", r#"kind = "perln""#], ""),
        &["perln", "perlin-table"],
    );
    assert_one_line_error(&terrasynth(&["sample", "--noise", "octaves = 0"], ""), &["octaves", "1..=32"]);
    assert_one_line_error(&terrasynth(&["sample", "--noise", "frequency = -1.0"], ""), &["frequency"]);
    assert_one_line_error(&terrasynth(&["sample", "--noise", "tint = 3"], ""), &["tint"]);
    let out = terrasynth(&["sample", "--noise", r#"kind = "value""#], "1 2\n3 oops\n");
    assert_one_line_error(&out, &["line 2", "oops"]);
    let out = terrasynth(&["sample", "--noise", r#"kind = "value""#], "1 2 3\n");
    assert_one_line_error(&out, &["line 1", "3D"]);
    let out = terrasynth(&["sample", "--noise", r#"kind = "value""#], "nan 2\n");
    assert_one_line_error(&out, &["line 1"]);
}

#[test]
fn help_lists_kinds() {
    let out = terrasynth(&["sample", "--noise", "help"], "");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("perlin-table") && text.contains("opensimplex2") && text.contains("jitter"));
}

#[test]
fn noise_writes_a_16_bit_png_of_the_right_size() {
    let dir = common::temp_dir("png");
    let path = dir.join("fbm.png");
    let p = path.to_str().unwrap();
    let spec = r#"kind = "perlin", fractal = "fbm", octaves = 5"#;
    let out = terrasynth(
        &["noise", "--noise", spec, "--size", "67x41", "--origin", "-2.5,3", "--spacing", "0.1", "--out", p],
        "",
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let img = image::open(&path).unwrap();
    assert_eq!((img.width(), img.height()), (67, 41));
    let gray = img.as_luma16().expect("16-bit grayscale");
    let (lo, hi) = gray.pixels().fold((u16::MAX, 0), |(lo, hi), p| (lo.min(p[0]), hi.max(p[0])));
    assert_eq!((lo, hi), (0, 65535), "normalised over the map's min/max");
    // The printed min/max are the map's.
    let text = String::from_utf8(out.stdout).unwrap();
    let nums: Vec<f64> = text.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert_eq!(nums.len(), 2, "{text}");
    assert!(nums[0] < nums[1] && nums[0] >= -1.0 && nums[1] <= 1.0);
    // Pixel (0, 0) is the noise at the origin: the darkest/brightest pixel is where min/max are.
    use terrasynth::noise::{NoiseFn, NoiseSpec};
    let noise = NoiseSpec::from_inline_toml(spec).unwrap().build().unwrap();
    let v = noise.get2(-2.5, 3.0);
    let expected = ((v - nums[0]) / (nums[1] - nums[0]) * 65535.0).round();
    assert!((f64::from(gray.get_pixel(0, 0)[0]) - expected).abs() <= 2.0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn noise_refuses_absurd_sizes_and_bad_flags() {
    let out = terrasynth(
        &["noise", "--noise", "{}", "--size", "5000000x5000000", "--out", "/nonexistent/x.png"],
        "",
    );
    assert_one_line_error(&out, &["5000000x5000000"]);
    let out = terrasynth(&["noise", "--noise", "{}", "--size", "64x", "--out", "x.png"], "");
    assert_one_line_error(&out, &["--size", "64x", "2..=32769"]);
    let out = terrasynth(&["noise", "--noise", "{}", "--spacing", "0", "--out", "x.png"], "");
    assert_one_line_error(&out, &["--spacing"]);
}
