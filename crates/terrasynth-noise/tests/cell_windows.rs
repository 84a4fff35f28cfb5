//! `Noise::fill_cells`: a window of integer cells is bit-equal to the same cells cut from any
//! larger window (odd sizes, negative and far origins), for every kind and fractal, and it
//! samples the noise where `CellRegion` says.

use terrasynth_noise::{CellRegion, FractalKind, Noise, NoiseError, NoiseFn, NoiseKind, NoiseSpec, Seed};

const FRACTALS: [FractalKind; 5] =
    [FractalKind::None, FractalKind::Fbm, FractalKind::Ridged, FractalKind::Hybrid, FractalKind::Billow];

fn spec(kind: NoiseKind, fractal: FractalKind, warp: f64) -> NoiseSpec {
    NoiseSpec {
        kind,
        fractal,
        seed: Seed::Number(11),
        frequency: 1.0,
        offset: [0.5, -2.25],
        octaves: 4,
        warp,
        ..NoiseSpec::default()
    }
}

fn fill(noise: &Noise, cells: &CellRegion) -> Vec<f32> {
    let mut out = vec![f32::NAN; cells.width * cells.height];
    let (lo, hi) = noise.fill_cells(cells, &mut out).expect("fill_cells");
    assert!(out.iter().all(|v| (lo..=hi).contains(v)), "min/max cover the window");
    out
}

/// Fills `big` and every window of `windows` (given as (column, row, width, height) offsets
/// inside `big`), and asserts each equals its crop bit for bit.
fn assert_crops(noise: &Noise, big: CellRegion, windows: &[(usize, usize, usize, usize)], label: &str) {
    let whole = fill(noise, &big);
    for &(i0, j0, w, h) in windows {
        let small =
            CellRegion { col0: big.col0 + i0 as i64, row0: big.row0 + j0 as i64, width: w, height: h, ..big };
        let part = fill(noise, &small);
        for j in 0..h {
            for i in 0..w {
                let (a, b) = (part[j * w + i], whole[(j0 + j) * big.width + i0 + i]);
                assert!(
                    a.to_bits() == b.to_bits(),
                    "{label}: window {small:?} cell ({}, {}): {a} vs {b} in the larger window",
                    small.col0 + i as i64,
                    small.row0 + j as i64,
                );
            }
        }
    }
}

/// Odd windows inside a 601 × 37 window: widths across lane counts and the 512-column tile,
/// rows across the 16-row bands.
const WINDOWS: [(usize, usize, usize, usize); 6] =
    [(0, 0, 1, 1), (3, 1, 7, 5), (13, 17, 17, 19), (511, 15, 90, 3), (1, 2, 513, 33), (200, 30, 401, 7)];

#[test]
fn window_equals_crop_for_every_kind_and_fractal() {
    for (col0, row0) in [(-301, -18), (10_000_000, -10_000_000), (-10_000_000, 9_999_999)] {
        let big = CellRegion {
            col0,
            row0,
            width: 601,
            height: 37,
            scale_x: 0.043,
            scale_y: 0.051,
            offset_x: 0.3,
            offset_y: -7.0,
        };
        for kind in NoiseKind::ALL {
            for fractal in FRACTALS {
                let noise = spec(kind, fractal, 0.0).build().expect("valid spec");
                assert_crops(
                    &noise,
                    big,
                    &WINDOWS,
                    &format!("{} {} at {col0},{row0}", kind.name(), fractal.name()),
                );
            }
        }
    }
}

#[test]
fn window_equals_crop_with_warp() {
    let big = CellRegion {
        col0: -77,
        row0: -5,
        width: 45,
        height: 21,
        scale_x: 0.1,
        scale_y: 0.1,
        offset_x: 0.0,
        offset_y: 0.0,
    };
    for kind in [NoiseKind::Perlin, NoiseKind::OpenSimplex2, NoiseKind::Value] {
        let noise = spec(kind, FractalKind::Fbm, 1.5).build().expect("valid spec");
        assert_crops(&noise, big, &[(1, 2, 9, 7), (20, 0, 25, 21)], kind.name());
    }
}

#[test]
fn cells_are_sampled_at_cell_times_scale_plus_offset() {
    let noise = spec(NoiseKind::Perlin, FractalKind::Fbm, 0.0).build().expect("valid spec");
    let cells = CellRegion {
        col0: -3,
        row0: 8,
        width: 5,
        height: 4,
        scale_x: 0.37,
        scale_y: 0.21,
        offset_x: 1.5,
        offset_y: -0.75,
    };
    let out = fill(&noise, &cells);
    for j in 0..4 {
        for i in 0..5 {
            let x = (-3 + i as i64) as f64 * 0.37 + 1.5;
            let y = (8 + j as i64) as f64 * 0.21 - 0.75;
            let err = (f64::from(out[j * 5 + i]) - noise.get2(x, y)).abs();
            assert!(err < 1e-6, "cell ({i}, {j}): {} vs {}", out[j * 5 + i], noise.get2(x, y));
        }
    }
}

#[test]
fn bad_windows_are_refused_with_the_field_named() {
    let noise = spec(NoiseKind::Value, FractalKind::None, 0.0).build().expect("valid spec");
    let ok = CellRegion {
        col0: 0,
        row0: 0,
        width: 4,
        height: 2,
        scale_x: 1.0,
        scale_y: 1.0,
        offset_x: 0.0,
        offset_y: 0.0,
    };
    let mut out = vec![0.0; 8];
    assert!(noise.fill_cells(&ok, &mut out).is_ok());
    let cases = [
        (CellRegion { width: 0, ..ok }, "cells.width"),
        (CellRegion { height: 0, ..ok }, "cells.height"),
        (CellRegion { scale_x: f64::NAN, ..ok }, "cells.scale_x"),
        (CellRegion { offset_y: f64::INFINITY, ..ok }, "cells.offset_y"),
        (CellRegion { col0: (1 << 53) - 2, ..ok }, "cells.col0"),
        (CellRegion { row0: i64::MIN, ..ok }, "cells.row0"),
    ];
    for (cells, field) in cases {
        let mut out = vec![0.0; cells.width * cells.height];
        match noise.fill_cells(&cells, &mut out) {
            Err(NoiseError::InvalidParameter { name, .. }) => assert_eq!(name, field),
            other => panic!("{cells:?}: expected an error naming {field}, got {other:?}"),
        }
    }
    let mut short = vec![0.0; 7];
    assert!(matches!(noise.fill_cells(&ok, &mut short), Err(NoiseError::BufferSize { expected: 8, got: 7 })));
}

/// A map filled strip by strip (the same columns every call: the column plans are reused)
/// equals the map filled whole, also when fills of other columns come in between.
#[test]
fn strips_equal_the_whole_map() {
    for kind in [NoiseKind::Perlin, NoiseKind::Value, NoiseKind::OpenSimplex2] {
        let noise = spec(kind, FractalKind::Fbm, 0.0).build().expect("valid spec");
        let whole = CellRegion {
            col0: -700,
            row0: 33,
            width: 1100,
            height: 48,
            scale_x: 0.02,
            scale_y: 0.02,
            offset_x: 0.0,
            offset_y: 0.0,
        };
        let all = fill(&noise, &whole);
        for (k, rows) in [(0usize, 16usize), (16, 16), (32, 5), (37, 11)] {
            let strip = CellRegion { row0: whole.row0 + k as i64, height: rows, ..whole };
            let got = fill(&noise, &strip);
            assert!(
                got.iter().zip(&all[k * whole.width..]).all(|(a, b)| a.to_bits() == b.to_bits()),
                "{} strip at row {k}",
                kind.name()
            );
            // Other columns in between replace the cached plans.
            fill(&noise, &CellRegion { col0: 5, width: 77, ..strip });
        }
    }
}
