//! Ranges, determinism, periodicity, precision far from the origin, and spec validation.

use proptest::prelude::*;
use terrasynth_noise::rng::SplitMix64;
use terrasynth_noise::{FIELDS, Noise, NoiseError, NoiseFn, NoiseKind, NoiseSpec};

fn build(text: &str) -> Noise {
    NoiseSpec::from_inline_toml(text).unwrap().build().unwrap()
}

/// One spec per kind × fractal × worley setting worth checking.
fn all_specs() -> Vec<String> {
    let mut out = Vec::new();
    for kind in NoiseKind::ALL {
        for fractal in ["none", "fbm", "ridged", "hybrid", "billow"] {
            out.push(format!(r#"kind = "{}", seed = 77, fractal = "{fractal}", octaves = 4"#, kind.name()));
        }
    }
    for distance in ["euclidean", "squared", "manhattan"] {
        for ret in ["f1", "f2", "f2-f1"] {
            out.push(format!(r#"kind = "worley", distance = "{distance}", return = "{ret}""#));
        }
    }
    out.push(r#"kind = "perlin-table", seed = "reference", res = 3.0"#.into());
    out.push(r#"kind = "perlin", fractal = "hybrid", mf-offset = 0.2, h = 0.1"#.into());
    out.push(r#"kind = "perlin", fractal = "ridged", mf-offset = 0.3, gain = 5.0"#.into());
    out.push(r#"kind = "value", warp = 2.0, fractal = "fbm""#.into());
    out.push(r#"kind = "worley", jitter = 0.0"#.into());
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_value_lies_in_the_documented_range(x in -1e4f64..1e4, y in -1e4f64..1e4) {
        for text in all_specs() {
            let n = build(&text);
            let (lo, hi) = n.range();
            let v = n.get2(x, y);
            prop_assert!(v >= lo && v <= hi, "{text}: {v} outside [{lo}, {hi}] at ({x}, {y})");
            if n.spec().kind.has_3d() && n.spec().warp == 0.0 {
                let (lo, hi) = n.range3();
                let v = n.get3(x, y, x - y).unwrap();
                prop_assert!(v >= lo && v <= hi, "{text} 3D: {v} outside [{lo}, {hi}]");
            }
        }
    }

    #[test]
    fn same_seed_same_value(seed in any::<u32>(), x in -1e3f64..1e3, y in -1e3f64..1e3) {
        for kind in NoiseKind::ALL {
            let text = format!(r#"kind = "{}", seed = {seed}, fractal = "fbm""#, kind.name());
            prop_assert_eq!(build(&text).get2(x, y).to_bits(), build(&text).get2(x, y).to_bits());
        }
    }
}

#[test]
fn ranges_are_nearly_reached_by_the_basic_noises() {
    // The bounds are not loose: a dense sample gets within a few % of them.
    for (text, frac) in [
        (r#"kind = "value""#, 0.97),
        (r#"kind = "perlin""#, 0.85),
        (r#"kind = "perlin-angle""#, 0.85),
        (r#"kind = "opensimplex2""#, 0.85),
    ] {
        let n = build(text);
        let (lo, hi) = n.range();
        let mut rng = SplitMix64::new(1);
        let (mut mn, mut mx) = (f64::INFINITY, f64::NEG_INFINITY);
        for _ in 0..200_000 {
            let v = n.get2(rng.range_f64(-500.0, 500.0), rng.range_f64(-500.0, 500.0));
            mn = mn.min(v);
            mx = mx.max(v);
        }
        assert!(mx > frac * hi && mn < frac * lo, "{text}: sampled [{mn}, {mx}] vs [{lo}, {hi}]");
    }
}

#[test]
fn different_seeds_give_different_noise() {
    for kind in NoiseKind::ALL {
        let a = build(&format!(r#"kind = "{}", seed = 1"#, kind.name()));
        let b = build(&format!(r#"kind = "{}", seed = 2"#, kind.name()));
        let differ = (0..50).filter(|&i| {
            let (x, y) = (i as f64 * 1.37 + 0.21, i as f64 * 0.61 + 0.43);
            a.get2(x, y) != b.get2(x, y)
        });
        assert!(differ.count() >= 45, "{}", kind.name());
    }
    let r = build(r#"kind = "perlin", seed = "reference""#);
    let s = build(r#"kind = "perlin", seed = 0"#);
    assert_ne!(r.get2(0.3, 0.4), s.get2(0.3, 0.4), "a numeric seed shuffles the permutation");
}

#[test]
fn tileable_variants_repeat_exactly() {
    for (kind, period) in
        [("white", 3), ("value", 7), ("perlin-angle", 5), ("perlin-table", 12), ("perlin", 300)]
    {
        for fractal in ["none", "fbm", "ridged"] {
            let text = format!(
                r#"kind = "{kind}", seed = 4, period = {period}, fractal = "{fractal}", octaves = 3"#
            );
            let n = build(&text);
            let p = f64::from(period);
            let mut rng = SplitMix64::new(3);
            for _ in 0..300 {
                // Dyadic coordinates: x + P is exact, so the repeat is bit-exact.
                let x = (rng.range_f64(-50.0, 50.0) * 64.0).round() / 64.0;
                let y = (rng.range_f64(-50.0, 50.0) * 64.0).round() / 64.0;
                let v = n.get2(x, y);
                assert_eq!(v, n.get2(x + p, y), "{text} at ({x}, {y})");
                assert_eq!(v, n.get2(x, y - p), "{text} at ({x}, {y})");
                assert_eq!(v, n.get2(x - 3.0 * p, y + 2.0 * p), "{text} at ({x}, {y})");
            }
        }
    }
    // With a warp (integer warp frequency) the repeat holds up to rounding of q + k·w.
    let n = build(r#"kind = "value", period = 8, fractal = "fbm", warp = 1.5, warp-frequency = 2.0"#);
    for i in 0..100 {
        let (x, y) = (i as f64 * 0.37, i as f64 * 0.11);
        assert!((n.get2(x, y) - n.get2(x + 8.0, y)).abs() < 1e-12);
    }
}

#[test]
fn absurd_coordinates_do_not_panic() {
    // Regression: lattice index + 1 overflowed i64 for |x| near f64::MAX (debug panic).
    for text in all_specs() {
        let n = build(&text);
        for v in [1e300, -1e300, f64::MAX, f64::MIN, 4.6e15, -9.3e18, f64::NAN, f64::INFINITY] {
            let _ = n.get2(v, 0.5);
            let _ = n.get2(0.5, v);
            let _ = n.get3(v, v, v);
        }
        let finite = n.get2(1e300, -1e300);
        assert!(finite.is_finite(), "{text}: {finite}");
    }
}

#[test]
fn untiled_noise_does_not_repeat_at_the_period() {
    let n = build(r#"kind = "value", seed = 4"#);
    assert_ne!(n.get2(0.5, 0.5), n.get2(7.5, 0.5));
}

/// Mean, standard deviation and largest neighbour difference over a 256×256 patch at
/// `origin` (lattice units), spacing 1/8.
fn patch_stats(n: &Noise, origin: f64) -> (f64, f64, f64) {
    let (mut sum, mut sum2, mut max_step) = (0.0, 0.0, 0.0f64);
    let side = 256;
    for j in 0..side {
        let mut prev = f64::NAN;
        for i in 0..side {
            let v = n.get2(origin + i as f64 / 8.0, origin + j as f64 / 8.0);
            sum += v;
            sum2 += v * v;
            if i > 0 {
                max_step = max_step.max((v - prev).abs());
            }
            prev = v;
        }
    }
    let count = (side * side) as f64;
    let mean = sum / count;
    (mean, (sum2 / count - mean * mean).sqrt(), max_step)
}

#[test]
fn far_from_the_origin_the_noise_keeps_its_statistics_and_smoothness() {
    for kind in ["value", "perlin", "perlin-angle", "opensimplex2", "worley"] {
        let n = build(&format!(r#"kind = "{kind}", seed = 12"#));
        let (m0, s0, step0) = patch_stats(&n, 0.0);
        let (m1, s1, step1) = patch_stats(&n, 1e7);
        assert!((m0 - m1).abs() < 0.1 && (s0 - s1).abs() < 0.1 * s0, "{kind}: ({m0}, {s0}) vs ({m1}, {s1})");
        // Smooth: neighbour steps of 1/8 cell stay small and alike (no f32 staircase).
        assert!(step1 < 1.25 * step0 + 1e-9, "{kind}: steps {step0} vs {step1}");
    }
    // No quantisation: tiny moves give tiny, proportional changes at 1e7.
    let n = build(r#"kind = "perlin""#);
    let (x, y) = (1e7 + 0.3, 1e7 + 0.6);
    let d1 = n.get2(x + 1e-6, y) - n.get2(x, y);
    let d2 = n.get2(x + 2e-6, y) - n.get2(x, y);
    assert!(d1 != 0.0 && ((d2 / d1) - 2.0).abs() < 0.01, "d1 {d1}, d2 {d2}");
}

fn error_of(text: &str) -> NoiseError {
    match NoiseSpec::from_inline_toml(text) {
        Ok(spec) => spec.build().unwrap_err(),
        Err(e) => e,
    }
}

fn param_name(text: &str) -> &'static str {
    match error_of(text) {
        NoiseError::InvalidParameter { name, .. } => name,
        other => panic!("{text}: expected InvalidParameter, got {other:?}"),
    }
}

#[test]
fn bad_parameters_are_rejected_naming_the_parameter() {
    assert_eq!(param_name("frequency = 0.0"), "frequency");
    assert_eq!(param_name("frequency = -2.0"), "frequency");
    assert_eq!(param_name("frequency = nan"), "frequency");
    assert_eq!(param_name("frequency = inf"), "frequency");
    assert_eq!(param_name("offset = [1.0, nan]"), "offset");
    assert_eq!(param_name("res = 0.0"), "res");
    assert_eq!(param_name("octaves = 0"), "octaves");
    assert_eq!(param_name("octaves = 33"), "octaves");
    assert_eq!(param_name("lacunarity = 0.5"), "lacunarity");
    assert_eq!(param_name("persistence = -0.1"), "persistence");
    assert_eq!(param_name("h = 3.0"), "h");
    assert_eq!(param_name("mf-offset = -1.0"), "mf-offset");
    assert_eq!(param_name("gain = inf"), "gain");
    assert_eq!(param_name("warp = -1.0"), "warp");
    assert_eq!(param_name("warp-frequency = 0.0"), "warp-frequency");
    assert_eq!(param_name("jitter = 1.5"), "jitter");
    assert_eq!(param_name("period = 0"), "period");
    assert_eq!(param_name(r#"kind = "worley", period = 8"#), "period");
    assert_eq!(param_name(r#"period = 8, fractal = "fbm", lacunarity = 1.5"#), "lacunarity");
    let msg = error_of("octaves = 40").to_string();
    assert!(msg.contains("octaves") && msg.contains("40") && msg.contains("1..=32"), "{msg}");
    let msg = error_of("frequency = -2.0").to_string();
    assert!(msg.contains("[0.000001, 1000000]"), "{msg}");
}

/// Every number field of [`FIELDS`] is checked by `validate` with exactly its declared range:
/// both ends accepted, one part in 10^6 past either refused, naming the key.
#[test]
fn validate_enforces_exactly_the_declared_ranges() {
    use terrasynth_noise::FieldKind;
    let mut checked = Vec::new();
    for f in FIELDS {
        let (min, max, int) = match f.kind {
            FieldKind::Float { min, max } | FieldKind::OptionalFloat { min, max } => (min, max, false),
            FieldKind::Int { min, max } | FieldKind::OptionalInt { min, max } => {
                (min as f64, max as f64, true)
            }
            FieldKind::Pair { max_abs } => (-max_abs, max_abs, false),
            FieldKind::Choice(_) | FieldKind::Seed => continue,
        };
        let spec_with = |v: f64| {
            let v = if int { format!("{}", v as i64) } else { format!("{v:e}") };
            let value = if matches!(f.kind, FieldKind::Pair { .. }) { format!("[{v}, 0.0]") } else { v };
            NoiseSpec::from_inline_toml(&format!("{} = {value}", f.key)).and_then(|s| s.validate())
        };
        let step = |v: f64| if int { 1.0 } else { 1e-6 * v.abs().max(1e-300) };
        for v in [min, max] {
            assert!(spec_with(v).is_ok(), "{} = {v}: {:?}", f.key, spec_with(v));
        }
        for v in [min - step(min), max + step(max)] {
            if int && v < 0.0 {
                continue; // not representable in the field's unsigned type: a parse error
            }
            match spec_with(v) {
                Err(NoiseError::InvalidParameter { name, .. }) => assert_eq!(name, f.key),
                other => panic!("{} = {v}: {other:?}", f.key),
            }
        }
        checked.push(f.key);
    }
    assert_eq!(checked.len(), 13, "{checked:?}");
}

/// [`FIELDS`] names exactly the fields of [`NoiseSpec`], in order (a spec with every optional
/// field set serialises one key per field), and its defaults are `NoiseSpec::default()`.
#[test]
fn fields_table_is_the_spec_struct() {
    let mut spec = NoiseSpec {
        h: Some(1.0),
        mf_offset: Some(1.0),
        gain: Some(1.0),
        period: Some(4),
        ..NoiseSpec::default()
    };
    spec.seed = terrasynth_noise::Seed::Number(3);
    let doc = toml::to_string(&spec).unwrap();
    let keys: Vec<&str> = doc.lines().filter_map(|l| l.split_once(" = ").map(|(k, _)| k.trim())).collect();
    let declared: Vec<&str> = FIELDS.iter().map(|f| f.key).collect();
    assert_eq!(keys, declared);
    assert_eq!(declared.len(), 18);
    // The defaults: a spec written from the table's defaults parses to NoiseSpec::default().
    let text: Vec<String> = FIELDS
        .iter()
        .filter(|f| f.default != terrasynth_noise::FieldDefault::Absent)
        .map(|f| format!("{} = {}", f.key, f.default_text()))
        .collect();
    assert_eq!(NoiseSpec::from_inline_toml(&text.join(", ")).unwrap(), NoiseSpec::default());
}

#[test]
fn spec_parse_errors_are_clear() {
    let msg = error_of("kind = \"perlin\", colour = 3").to_string();
    assert!(msg.contains("colour"), "{msg}");
    let msg = error_of("kind = \"fractal-sauce\"").to_string();
    assert!(msg.contains("fractal-sauce") && msg.contains("perlin-table"), "{msg}");
    let msg = error_of("seed = -4").to_string();
    assert!(msg.contains("seed"), "{msg}");
    let msg = error_of("frequency = ").to_string();
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn specs_parse_in_every_accepted_form_and_round_trip() {
    let a = NoiseSpec::from_inline_toml(r#"kind = "worley", seed = 5, return = "f2-f1""#).unwrap();
    let b = NoiseSpec::from_inline_toml(r#"{ kind = "worley", seed = 5, return = "f2-f1" }"#).unwrap();
    let c = NoiseSpec::from_inline_toml("kind = \"worley\"\nseed = 5\nreturn = \"f2-f1\"\n").unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(NoiseSpec::from_inline_toml("").unwrap(), NoiseSpec::default());
    let full = NoiseSpec::from_inline_toml(
        r#"kind = "perlin-table", seed = "reference", frequency = 0.5, offset = [1.0, 2.0], res = 3.0,
        fractal = "ridged", octaves = 5, lacunarity = 2.0, persistence = 0.4, h = 0.9,
        mf-offset = 1.1, gain = 2.5, warp = 1.0, warp-frequency = 2.0, period = 16,
        distance = "manhattan", return = "f2", jitter = 0.5"#,
    )
    .unwrap();
    assert_eq!(NoiseSpec::from_inline_toml(&full.to_inline_toml()).unwrap(), full);
    full.build().unwrap();
}

#[test]
fn get3_is_refused_for_2d_only_kinds() {
    for kind in ["white", "value", "perlin-angle", "perlin-table", "worley"] {
        let n = build(&format!(r#"kind = "{kind}""#));
        assert!(matches!(n.get3(0.5, 0.5, 0.5), Err(NoiseError::Unsupported { .. })), "{kind}");
    }
    let n = build(r#"kind = "perlin", warp = 1.0"#);
    assert!(n.get3(0.5, 0.5, 0.5).is_err());
    assert!(build(r#"kind = "opensimplex2""#).get3(0.5, 0.5, 0.5).is_ok());
}

#[test]
fn help_lists_every_kind_and_parameter() {
    let help = NoiseSpec::help();
    for kind in NoiseKind::ALL {
        let line = format!("  {:<13} {}", kind.name(), kind.about());
        assert!(help.lines().any(|l| l == line), "{line}");
    }
    assert_eq!(NoiseKind::ALL.len(), NoiseKind::NAMES.len());
    for f in FIELDS.iter().filter(|f| f.key != "kind") {
        let start = format!("  {:<15} = {:<12} {}: {}", f.key, f.default_text(), f.kind.allowed(), f.doc);
        assert!(help.lines().any(|l| l.starts_with(&start)), "{start}");
    }
}

#[test]
fn point_evaluation_is_identical_on_any_thread_count() {
    use rayon::prelude::*;
    let noise = build(r#"kind = "opensimplex2", seed = 8, fractal = "hybrid", warp = 1.0"#);
    let sample = |threads: usize| -> Vec<u64> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            (0..64 * 64)
                .into_par_iter()
                .map(|k| noise.get2((k % 64) as f64 * 0.37, (k / 64) as f64 * 0.29).to_bits())
                .collect()
        })
    };
    let one = sample(1);
    assert_eq!(one, sample(2));
    assert_eq!(one, sample(4));
}
