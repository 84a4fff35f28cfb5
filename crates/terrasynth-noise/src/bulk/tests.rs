//! Tests of the SIMD levels that integration tests cannot reach: the 16-lane kernels through
//! their AVX2 emulation ([`SimdLevel::Avx2x2`]), the self-check, and the `TERRASYNTH_SIMD`
//! override. On CPUs without AVX2 and FMA the AVX2 tests cannot run: each prints a `SKIPPED`
//! line on stderr (shown with `--nocapture`) and returns; the scalar path's bits are still
//! checked there by the scalar goldens of `tests/bulk_golden.rs`, and CI runs the noise tests
//! a second time with `TERRASYNTH_SIMD=scalar`.

use super::{SIMD_ENV, SimdLevel, choose_level, kernels_agree};
use crate::{Noise, NoiseError, NoiseFn, NoiseSpec, Region};

/// Every kind and fractal of the two SIMD paths (lattice, opensimplex2), plus periodic and
/// reference-seeded ones.
fn specs() -> Vec<String> {
    let mut v = Vec::new();
    for kind in ["white", "value", "perlin-angle", "perlin-table", "perlin", "opensimplex2"] {
        for fractal in ["none", "fbm", "ridged", "hybrid", "billow"] {
            v.push(format!(
                "kind = \"{kind}\", seed = 99, fractal = \"{fractal}\", octaves = 5, \
                 frequency = 0.37, offset = [3.25, -1.5]"
            ));
        }
    }
    v.push("kind = \"perlin\", seed = \"reference\", fractal = \"fbm\", octaves = 4, period = 4".into());
    v.push("kind = \"value\", fractal = \"ridged\", octaves = 3, period = 3, frequency = 2.5".into());
    v
}

/// Regions exercising the 16-lane logic: widths below, at and above 16 and not multiples of
/// it (padding and row tails), more than one lattice-path tile (`TILE` = 512), sample spacings
/// from 0.06 to 2.7 lattice cells (16-value windows with indices up to 15, and gathers), a
/// negative spacing, and an origin at 1e7.
fn regions() -> Vec<Region> {
    vec![
        Region { x0: -13.37, y0: 7.91, dx: 0.173, dy: 0.219, width: 67, height: 19 },
        Region { x0: 0.0, y0: 0.0, dx: 0.25, dy: 0.25, width: 1, height: 3 },
        Region { x0: 2.5, y0: -1.0, dx: 2.4, dy: 1.3, width: 17, height: 5 },
        Region { x0: 5.5, y0: -2.0, dx: 2.6, dy: 2.9, width: 16, height: 4 },
        Region { x0: 9.0, y0: 3.0, dx: 7.3, dy: 0.5, width: 33, height: 3 },
        Region { x0: 40.0, y0: 3.0, dx: -0.31, dy: -0.77, width: 39, height: 4 },
        Region { x0: -20.3, y0: 1.1, dx: 0.047, dy: 0.31, width: 1043, height: 2 },
        Region { x0: 2.7e7, y0: -2.7e7, dx: 0.173, dy: 0.219, width: 37, height: 5 },
    ]
}

fn fill(noise: &Noise, region: &Region, level: SimdLevel) -> (Vec<f32>, (f32, f32)) {
    let mut out = vec![f32::NAN; region.width * region.height];
    let range = noise.fill_with(region, &mut out, level).expect("fill");
    (out, range)
}

/// Whether AVX2 is present; if not, says on stderr that `test` is skipped.
fn avx2_present_or_skip(test: &str) -> bool {
    let present = SimdLevel::Avx2.available();
    if !present {
        eprintln!(
            "SKIPPED {test}: this CPU lacks AVX2 (the scalar bits are checked by tests/bulk_golden.rs)"
        );
    }
    present
}

/// Regression (issue 11 part 6: island 257² had 25 cells one 16-bit step apart between
/// `TERRASYNTH_SIMD=scalar` and AVX2, because AVX2 fused multiply-adds and scalar did not, and
/// opensimplex2's scalar level ran the f64 point kernel): every level gives the scalar bits,
/// for every kind, fractal, region and for cell windows.
#[test]
fn every_level_gives_the_scalar_bits() {
    if !avx2_present_or_skip("every_level_gives_the_scalar_bits") {
        return;
    }
    let cells = crate::CellRegion {
        col0: -10_000_037,
        row0: 4_999_999,
        width: 75,
        height: 18,
        scale_x: 0.061,
        scale_y: 0.047,
        offset_x: 0.25,
        offset_y: -3.0,
    };
    for text in specs() {
        let noise = NoiseSpec::from_inline_toml(&text).unwrap().build().unwrap();
        for level in [SimdLevel::Avx2, SimdLevel::Avx2x2, SimdLevel::Avx512] {
            if !level.available() {
                eprintln!("SKIPPED {level:?} in every_level_gives_the_scalar_bits: not on this CPU");
                continue;
            }
            for region in regions() {
                let (a, ra) = fill(&noise, &region, SimdLevel::Scalar);
                let (b, rb) = fill(&noise, &region, level);
                assert_eq!(ra, rb, "{text} {region:?}: min/max");
                for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                    assert_eq!(
                        x.to_bits(),
                        y.to_bits(),
                        "{text} {region:?} sample {k}: scalar {x}, {level:?} {y}"
                    );
                }
            }
            let mut a = vec![0.0; cells.width * cells.height];
            let mut b = a.clone();
            noise.fill_cells_with(&cells, &mut a, SimdLevel::Scalar).unwrap();
            noise.fill_cells_with(&cells, &mut b, level).unwrap();
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert_eq!(x.to_bits(), y.to_bits(), "{text} cells sample {k}: scalar {x}, {level:?} {y}");
            }
        }
    }
}

#[test]
fn sixteen_lane_kernels_give_the_avx2_bits() {
    if !avx2_present_or_skip("sixteen_lane_kernels_give_the_avx2_bits") {
        return;
    }
    for text in specs() {
        let noise = NoiseSpec::from_inline_toml(&text).unwrap().build().unwrap();
        for region in regions() {
            let (a, ra) = fill(&noise, &region, SimdLevel::Avx2);
            let (b, rb) = fill(&noise, &region, SimdLevel::Avx2x2);
            assert_eq!(ra, rb, "{text} {region:?}: min/max");
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert_eq!(x.to_bits(), y.to_bits(), "{text} {region:?} sample {k}: avx2 {x}, 16 lanes {y}");
            }
        }
    }
}

#[test]
fn sixteen_lane_kernels_equal_the_point_path() {
    if !avx2_present_or_skip("sixteen_lane_kernels_equal_the_point_path") {
        return;
    }
    for text in specs() {
        let noise = NoiseSpec::from_inline_toml(&text).unwrap().build().unwrap();
        for region in regions() {
            let (out, (lo, hi)) = fill(&noise, &region, SimdLevel::Avx2x2);
            for j in 0..region.height {
                let y = region.y0 + j as f64 * region.dy;
                for i in 0..region.width {
                    let x = region.x0 + i as f64 * region.dx;
                    let got = f64::from(out[j * region.width + i]);
                    let want = noise.get2(x, y);
                    assert!((got - want).abs() <= 1e-6, "{text} at ({x}, {y}): 16 lanes {got}, point {want}");
                }
            }
            let min = out.iter().copied().fold(f32::INFINITY, f32::min);
            let max = out.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!((lo, hi), (min, max), "{text} {region:?}: min/max");
        }
    }
}

#[test]
fn sixteen_lane_kernels_are_identical_for_any_thread_count() {
    if !avx2_present_or_skip("sixteen_lane_kernels_are_identical_for_any_thread_count") {
        return;
    }
    let region = Region { x0: -17.3, y0: 4.1, dx: 0.11, dy: 0.13, width: 131, height: 67 };
    for text in [&specs()[21], &specs()[26], &specs()[22]] {
        let noise = NoiseSpec::from_inline_toml(text).unwrap().build().unwrap();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| fill(&noise, &region, SimdLevel::Avx2x2))
        };
        let (one, r1) = run(1);
        let (four, r4) = run(4);
        assert_eq!(r1, r4, "{text}");
        assert!(one.iter().zip(&four).all(|(a, b)| a.to_bits() == b.to_bits()), "{text}");
    }
}

#[test]
fn self_check_compares_levels_bit_for_bit() {
    if !avx2_present_or_skip("self_check_compares_levels_bit_for_bit") {
        return;
    }
    // The 16-lane emulation passes the check that guards AVX-512 ...
    assert!(kernels_agree(SimdLevel::Avx2x2, SimdLevel::Avx2));
    // ... so does the portable level (no level fuses multiply-adds: the same bits) ...
    assert!(kernels_agree(SimdLevel::Scalar, SimdLevel::Avx2));
    // ... and a level the CPU lacks fails it.
    if !SimdLevel::Avx512.available() {
        assert!(!kernels_agree(SimdLevel::Avx512, SimdLevel::Avx2));
    }
}

/// The name in a `TERRASYNTH_SIMD` error, and its message.
fn env_error(r: Result<SimdLevel, NoiseError>) -> String {
    match r {
        Err(e @ NoiseError::InvalidParameter { name, .. }) => {
            assert_eq!(name, SIMD_ENV);
            e.to_string()
        }
        other => panic!("expected an InvalidParameter error, got {other:?}"),
    }
}

#[test]
fn simd_override_forces_detects_and_rejects_levels() {
    let all = |_: SimdLevel| true;
    let avx2_only = |l: SimdLevel| l != SimdLevel::Avx512;
    let none = |l: SimdLevel| l == SimdLevel::Scalar;
    let passes = || true;
    let fails = || false;
    // Unset, empty or `auto`: the best level; AVX-512 only when its self-check passes.
    for value in [None, Some(""), Some("auto"), Some(" auto ")] {
        assert_eq!(choose_level(value, all, passes), Ok(SimdLevel::Avx512));
        assert_eq!(choose_level(value, all, fails), Ok(SimdLevel::Avx2));
        assert_eq!(choose_level(value, avx2_only, passes), Ok(SimdLevel::Avx2));
        assert_eq!(choose_level(value, none, passes), Ok(SimdLevel::Scalar));
    }
    // The self-check is not run when AVX-512 is absent or not asked for.
    let panics = || -> bool { panic!("self-check run needlessly") };
    assert_eq!(choose_level(None, avx2_only, panics), Ok(SimdLevel::Avx2));
    assert_eq!(choose_level(Some("avx2"), all, panics), Ok(SimdLevel::Avx2));
    // Forced levels.
    assert_eq!(choose_level(Some("scalar"), all, passes), Ok(SimdLevel::Scalar));
    assert_eq!(choose_level(Some("avx512"), all, passes), Ok(SimdLevel::Avx512));
    assert_eq!(choose_level(Some("avx2"), avx2_only, passes), Ok(SimdLevel::Avx2));
    // Unsupported, failing or unknown levels are errors that say why.
    assert!(env_error(choose_level(Some("avx512"), avx2_only, passes)).contains("lacks AVX-512F"));
    assert!(env_error(choose_level(Some("avx2"), none, passes)).contains("lacks AVX2"));
    assert!(env_error(choose_level(Some("avx512"), all, fails)).contains("disagree"));
    for bad in ["sse4", "AVX2", "avx2+fma", "avx-512"] {
        let message = env_error(choose_level(Some(bad), all, passes));
        assert!(message.contains(bad) && message.contains("`scalar`, `avx2`, `avx512`"), "{message}");
    }
}

#[test]
fn reported_level_is_the_level_in_use() {
    // This process's level (no override is set by the test runner), as `bulk_simd_level`
    // reports it.
    if std::env::var_os(SIMD_ENV).is_some() {
        return;
    }
    let expected = if SimdLevel::Avx512.available() && kernels_agree(SimdLevel::Avx512, SimdLevel::Avx2) {
        "avx512"
    } else if SimdLevel::Avx2.available() {
        "avx2"
    } else {
        "scalar"
    };
    assert_eq!(Noise::bulk_simd_level(), expected);
}
