//! The bulk fill (`Noise::fill`) against the point path (`NoiseFn::get2`), and its own
//! invariants: thread-count and tile independence, far-origin precision, min/max, errors.

use terrasynth_noise::{FractalKind, Noise, NoiseError, NoiseFn, NoiseKind, NoiseSpec, Region, Seed};

/// Which bulk path to run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SimdLevel {
    /// `Noise::fill`: the best SIMD level of this CPU.
    Best,
    /// `Noise::fill_scalar`: the portable fallback.
    Scalar,
}

/// Largest accepted |bulk − point| (outputs are in about [−1, 1]).
const TOLERANCE: f64 = 1e-6;

const FRACTALS: [FractalKind; 5] =
    [FractalKind::None, FractalKind::Fbm, FractalKind::Ridged, FractalKind::Hybrid, FractalKind::Billow];

fn spec(kind: NoiseKind, fractal: FractalKind) -> NoiseSpec {
    NoiseSpec {
        kind,
        fractal,
        seed: Seed::Number(20_261_122),
        frequency: 0.37,
        offset: [3.25, -1.5],
        octaves: 5,
        ..NoiseSpec::default()
    }
}

fn fill(noise: &Noise, region: &Region, level: SimdLevel) -> (Vec<f32>, (f32, f32)) {
    let mut out = vec![f32::NAN; region.width * region.height];
    let range = match level {
        SimdLevel::Best => noise.fill(region, &mut out),
        SimdLevel::Scalar => noise.fill_scalar(region, &mut out),
    }
    .expect("fill");
    (out, range)
}

/// Checks one spec on one region: every sample of the bulk fill (best SIMD level and the
/// scalar fallback) equals `get2` within [`TOLERANCE`], the returned min/max are the buffer's,
/// and the SIMD and scalar fills agree within the same tolerance.
fn check_against_points(spec: &NoiseSpec, region: &Region) {
    let noise = spec.build().expect("valid spec");
    let label = spec.to_inline_toml();
    for level in [SimdLevel::Best, SimdLevel::Scalar] {
        let (out, (min, max)) = fill(&noise, region, level);
        let mut worst = 0.0f64;
        for j in 0..region.height {
            let y = region.y0 + j as f64 * region.dy;
            for i in 0..region.width {
                let x = region.x0 + i as f64 * region.dx;
                let expect = noise.get2(x, y);
                let got = f64::from(out[j * region.width + i]);
                let err = (got - expect).abs();
                worst = worst.max(err);
                assert!(
                    err <= TOLERANCE,
                    "{label} {level:?} at ({i}, {j}) = ({x}, {y}): bulk {got}, point {expect}"
                );
            }
        }
        let lo = out.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = out.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert_eq!((min, max), (lo, hi), "{label} {level:?}: returned min/max");
        assert!(worst.is_finite());
    }
    let (simd, _) = fill(&noise, region, SimdLevel::Best);
    let (scalar, _) = fill(&noise, region, SimdLevel::Scalar);
    for (k, (a, b)) in simd.iter().zip(&scalar).enumerate() {
        assert!((a - b).abs() as f64 <= TOLERANCE, "{label}: SIMD {a} vs scalar {b} at {k}");
    }
}

#[test]
fn bulk_equals_point_for_every_kind_and_fractal() {
    let regions = [
        Region { x0: 0.0, y0: 0.0, dx: 0.25, dy: 0.25, width: 67, height: 45 },
        Region { x0: -13.37, y0: 7.91, dx: 0.173, dy: 0.219, width: 67, height: 45 },
        Region { x0: -250.5, y0: -999.75, dx: 0.61, dy: 0.043, width: 33, height: 35 },
    ];
    for kind in NoiseKind::ALL {
        for fractal in FRACTALS {
            for region in &regions {
                check_against_points(&spec(kind, fractal), region);
            }
        }
    }
}

#[test]
fn bulk_equals_point_with_coarse_sampling() {
    // Sample spacing above one lattice cell (the gather path) and a negative spacing.
    let regions = [
        Region { x0: 5.5, y0: -2.0, dx: 3.7, dy: 2.9, width: 41, height: 9 },
        Region { x0: 40.0, y0: 3.0, dx: -0.31, dy: -0.77, width: 39, height: 11 },
    ];
    for kind in NoiseKind::ALL {
        for fractal in [FractalKind::None, FractalKind::Fbm] {
            for region in &regions {
                check_against_points(&spec(kind, fractal), region);
            }
        }
    }
}

#[test]
fn bulk_equals_point_with_period_warp_and_reference_seed() {
    let region = Region { x0: -3.3, y0: 1.7, dx: 0.21, dy: 0.19, width: 45, height: 33 };
    for kind in [NoiseKind::Value, NoiseKind::PerlinAngle, NoiseKind::PerlinTable, NoiseKind::Perlin] {
        for fractal in [FractalKind::None, FractalKind::Fbm, FractalKind::Ridged] {
            let s = NoiseSpec { period: Some(4), seed: Seed::Reference, ..spec(kind, fractal) };
            check_against_points(&s, &region);
        }
    }
    for kind in NoiseKind::ALL {
        let s = NoiseSpec { warp: 0.8, octaves: 3, ..spec(kind, FractalKind::Fbm) };
        check_against_points(&s, &region);
    }
    let table = NoiseSpec { res: 7.5, ..spec(NoiseKind::PerlinTable, FractalKind::Billow) };
    check_against_points(&table, &region);
}

#[test]
fn bulk_equals_point_far_from_origin() {
    // |q| ≈ 1e7 lattice units: the lattice cell is still exact.
    let region = Region { x0: 2.7e7, y0: -2.7e7, dx: 0.173, dy: 0.219, width: 37, height: 33 };
    for kind in NoiseKind::ALL {
        check_against_points(&spec(kind, FractalKind::Fbm), &region);
    }
}

fn mean_and_std(v: &[f32]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let var = v.iter().map(|&x| (f64::from(x) - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[test]
fn bulk_statistics_at_origin_1e7_match_origin_0() {
    for kind in [NoiseKind::Value, NoiseKind::Perlin, NoiseKind::PerlinTable, NoiseKind::OpenSimplex2] {
        let noise =
            NoiseSpec { frequency: 1.0, offset: [0.0, 0.0], ..spec(kind, FractalKind::Fbm) }.build().unwrap();
        let at = |x0: f64| {
            let region = Region { x0, y0: x0, dx: 0.25, dy: 0.25, width: 256, height: 256 };
            let (out, _) = fill(&noise, &region, SimdLevel::Best);
            mean_and_std(&out)
        };
        let (m0, s0) = at(0.0);
        let (m1, s1) = at(1e7);
        assert!(s0 > 0.05 && s1 > 0.05, "{kind:?}: flat output ({s0}, {s1})");
        assert!((s1 / s0 - 1.0).abs() < 0.25, "{kind:?}: std {s0} at 0 vs {s1} at 1e7");
        assert!((m1 - m0).abs() < 0.5 * s0, "{kind:?}: mean {m0} at 0 vs {m1} at 1e7");
    }
}

#[test]
fn bulk_bit_identical_for_any_thread_count() {
    let region = Region { x0: -17.3, y0: 4.1, dx: 0.11, dy: 0.13, width: 131, height: 97 };
    for kind in NoiseKind::ALL {
        for fractal in [FractalKind::Fbm, FractalKind::Ridged] {
            let noise = spec(kind, fractal).build().unwrap();
            let run = |threads: usize| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| fill(&noise, &region, SimdLevel::Best))
            };
            let (one, r1) = run(1);
            for threads in [2, 4] {
                let (many, rn) = run(threads);
                assert_eq!(r1, rn, "{kind:?} {fractal:?}: min/max with {threads} threads");
                assert!(
                    one.iter().zip(&many).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{kind:?} {fractal:?}: 1 vs {threads} threads differ"
                );
            }
        }
    }
}

#[test]
fn bulk_four_tiles_equal_the_whole_region() {
    // Dyadic origin and spacing, so tile origins are exact in f64.
    let (w, h, dx, dy) = (70usize, 50usize, 0.125, 0.0625);
    let whole = Region { x0: -6.5, y0: 2.25, dx, dy, width: w, height: h };
    for kind in NoiseKind::ALL {
        for fractal in [FractalKind::None, FractalKind::Fbm, FractalKind::Billow] {
            let noise = spec(kind, fractal).build().unwrap();
            let (full, _) = fill(&noise, &whole, SimdLevel::Best);
            let (w0, h0) = (29, 21);
            for (tx, ty, tw, th) in
                [(0, 0, w0, h0), (w0, 0, w - w0, h0), (0, h0, w0, h - h0), (w0, h0, w - w0, h - h0)]
            {
                let tile = Region {
                    x0: whole.x0 + tx as f64 * dx,
                    y0: whole.y0 + ty as f64 * dy,
                    width: tw,
                    height: th,
                    ..whole
                };
                let (part, _) = fill(&noise, &tile, SimdLevel::Best);
                for j in 0..th {
                    for i in 0..tw {
                        let a = part[j * tw + i];
                        let b = full[(ty + j) * w + tx + i];
                        assert_eq!(
                            a.to_bits(),
                            b.to_bits(),
                            "{kind:?} {fractal:?} tile ({tx},{ty}) at ({i},{j})"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bulk_wrong_buffer_length_is_an_error() {
    let noise = NoiseSpec::default().build().unwrap();
    let region = Region { x0: 0.0, y0: 0.0, dx: 1.0, dy: 1.0, width: 7, height: 5 };
    let mut out = vec![0.0; 34];
    assert_eq!(noise.fill(&region, &mut out), Err(NoiseError::BufferSize { expected: 35, got: 34 }));
}

#[test]
fn bulk_empty_or_non_finite_region_is_an_error() {
    let noise = NoiseSpec::default().build().unwrap();
    let good = Region { x0: 0.0, y0: 0.0, dx: 1.0, dy: 1.0, width: 7, height: 5 };
    let mut out = [0.0; 35];
    for bad in
        [Region { x0: f64::NAN, ..good }, Region { dy: f64::INFINITY, ..good }, Region { width: 0, ..good }]
    {
        let n = bad.width * bad.height;
        match noise.fill(&bad, &mut out[..n]) {
            Err(NoiseError::InvalidParameter { name, .. }) => assert!(name.starts_with("region.")),
            other => panic!("{bad:?}: expected InvalidParameter, got {other:?}"),
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Any split of any region (dyadic origin and spacing, so tile origins are exact) gives
    /// the same bits as the whole, for every kind.
    #[test]
    fn bulk_any_tile_split_equals_the_whole(
        kind in 0usize..7,
        fractal in 0usize..5,
        ox in -4096i32..4096,
        oy in -4096i32..4096,
        w in 1usize..70,
        h in 1usize..40,
        cut_x in 0usize..70,
        cut_y in 0usize..40,
        step in 0u32..6,
    ) {
        let d = 1.0 / f64::from(1u32 << step);
        let whole = Region { x0: f64::from(ox) / 8.0, y0: f64::from(oy) / 8.0, dx: d, dy: d, width: w, height: h };
        let noise = spec(NoiseKind::ALL[kind], FRACTALS[fractal]).build().unwrap();
        let (full, _) = fill(&noise, &whole, SimdLevel::Best);
        let (cx, cy) = (cut_x.min(w - 1), cut_y.min(h - 1));
        let tile = Region {
            x0: whole.x0 + cx as f64 * d,
            y0: whole.y0 + cy as f64 * d,
            width: w - cx,
            height: h - cy,
            ..whole
        };
        let (part, _) = fill(&noise, &tile, SimdLevel::Best);
        for j in 0..tile.height {
            for i in 0..tile.width {
                let a = part[j * tile.width + i].to_bits();
                let b = full[(cy + j) * w + cx + i].to_bits();
                proptest::prop_assert_eq!(a, b, "at ({}, {})", i, j);
            }
        }
    }
}

#[test]
fn bulk_dispatch_uses_the_best_level_of_the_cpu() {
    if std::env::var_os("TERRASYNTH_SIMD").is_some() {
        return; // a forced level
    }
    #[cfg(target_arch = "x86_64")]
    {
        let has = |f: &str| match f {
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            "fma" => std::arch::is_x86_feature_detected!("fma"),
            _ => std::arch::is_x86_feature_detected!("avx512f"),
        };
        // On an AVX-512 CPU this also fails when the AVX-512 kernels fail their self-check
        // against AVX2 (the fill then falls back to AVX2).
        let expected = match (has("avx2"), has("avx512f")) {
            (true, true) => "avx512",
            (true, false) => "avx2",
            _ => "scalar",
        };
        assert_eq!(Noise::bulk_simd_level(), expected);
    }
    #[cfg(not(target_arch = "x86_64"))]
    assert_eq!(Noise::bulk_simd_level(), "scalar");
}

/// The level forced in each child process of [`bulk_fill_obeys_a_forced_simd_level`], and what
/// the child must report: `Some(level)` for a fill that works at that level, `None` for the
/// `TERRASYNTH_SIMD` error.
fn forced_levels() -> Vec<(&'static str, Vec<Option<&'static str>>)> {
    #[cfg(target_arch = "x86_64")]
    let (avx2, avx512) =
        (std::arch::is_x86_feature_detected!("avx2"), std::arch::is_x86_feature_detected!("avx512f"));
    #[cfg(not(target_arch = "x86_64"))]
    let (avx2, avx512) = (false, false);
    let best = if avx512 {
        // AVX-512 unless its self-check against AVX2 fails (never seen; not run on hardware yet).
        vec![Some("avx512"), Some("avx2")]
    } else if avx2 {
        vec![Some("avx2")]
    } else {
        vec![Some("scalar")]
    };
    vec![
        ("scalar", vec![Some("scalar")]),
        ("avx2", vec![if avx2 { Some("avx2") } else { None }]),
        // A CPU with AVX-512F whose kernels failed the self-check refuses a forced `avx512`.
        ("avx512", if avx512 { vec![Some("avx512"), None] } else { vec![None] }),
        ("auto", best.clone()),
        ("", best),
        ("sse9", vec![None]),
    ]
}

#[test]
fn bulk_fill_obeys_a_forced_simd_level() {
    // The variable is read once per process, so every value runs in a child process: this test
    // binary again, running only `forced_simd_level_child` with `TERRASYNTH_SIMD` set.
    let exe = std::env::current_exe().expect("test binary");
    for (value, allowed) in forced_levels() {
        let out = std::process::Command::new(&exe)
            .args([
                "forced_simd_level_child",
                "--exact",
                "--include-ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("TERRASYNTH_SIMD", value)
            .output()
            .expect("run the test binary");
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "TERRASYNTH_SIMD={value:?}: child failed\n{stdout}\n{stderr}");
        assert!(stdout.contains("1 passed"), "TERRASYNTH_SIMD={value:?}: child test did not run\n{stdout}");
        let report = stdout
            .lines()
            .find_map(|l| l.split_once("forced level: ").map(|(_, level)| level.trim()))
            .unwrap_or_else(|| panic!("TERRASYNTH_SIMD={value:?}: no report\n{stdout}"));
        let got = (report != "error").then_some(report);
        assert!(allowed.contains(&got), "TERRASYNTH_SIMD={value:?}: got {report}, allowed {allowed:?}");
    }
}

/// One forced level, in a child process of [`bulk_fill_obeys_a_forced_simd_level`]: a fill at
/// that level equals the point path (or fails naming `TERRASYNTH_SIMD`), and the reported
/// level is printed for the parent to check.
#[test]
#[ignore = "run by bulk_fill_obeys_a_forced_simd_level with TERRASYNTH_SIMD set"]
fn forced_simd_level_child() {
    assert!(std::env::var_os("TERRASYNTH_SIMD").is_some(), "run by bulk_fill_obeys_a_forced_simd_level");
    let spec = spec(NoiseKind::Perlin, FractalKind::Fbm);
    let region = Region { x0: 0.3, y0: 0.2, dx: 0.1, dy: 0.1, width: 37, height: 5 };
    let mut out = vec![0.0; region.width * region.height];
    match spec.build().unwrap().fill(&region, &mut out) {
        Ok(_) => {
            check_against_points(&spec, &region);
            println!("forced level: {}", Noise::bulk_simd_level());
        }
        Err(e) => {
            assert!(e.to_string().contains("TERRASYNTH_SIMD"), "{e}");
            assert_eq!(Noise::bulk_simd_level(), "invalid TERRASYNTH_SIMD");
            println!("forced level: error");
        }
    }
}
