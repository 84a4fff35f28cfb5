//! Terraforming brushes: fall-off values, flatten/smooth behaviour, exact undo/redo of random
//! strokes, validation.

use proptest::prelude::*;
use terrasynth::Heightmap;
use terrasynth::noise::rng::SplitMix64;
use terrasynth::shape::brush::{Brush, BrushMode, History, Stroke};

fn bumpy(w: usize, h: usize, seed: u64) -> Heightmap {
    let mut rng = SplitMix64::new(seed);
    Heightmap::from_fn(w, h, 1.0, |_, _| rng.range_f64(-1.0, 1.0) as f32).unwrap()
}

fn bits(map: &Heightmap) -> Vec<u32> {
    map.as_slice().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn raise_follows_smoothstep_falloff() {
    let mut map = Heightmap::new(65, 65, 1.0).unwrap();
    Brush { x: 32.0, y: 32.0, radius: 10.0, strength: 1.0, mode: BrushMode::Raise }.apply(&mut map).unwrap();
    // d = 5 → t = 0.5 → smoothstep = 0.5; d = 2 → t = 0.8 → 0.896.
    assert_eq!(map[(37, 32)], 0.5);
    assert!((map[(32, 34)] - 0.896).abs() < 1e-6);
    assert_eq!(map[(42, 32)], 0.0);
    assert_eq!(map[(32, 32)], 1.0);
    // Lower is the mirror (up to the f32 rounding of the raised heights).
    Brush { x: 32.0, y: 32.0, radius: 10.0, strength: 1.0, mode: BrushMode::Lower }.apply(&mut map).unwrap();
    assert!(map.as_slice().iter().all(|&v| v.abs() < 1e-7));
}

#[test]
fn flatten_moves_toward_the_mean_without_overshoot() {
    let mut map = bumpy(33, 33, 1);
    let brush = Brush { x: 16.0, y: 16.0, radius: 6.0, strength: 10.0, mode: BrushMode::Flatten };
    let before = map.clone();
    let spread = |m: &Heightmap| {
        let v: Vec<f32> = (10..=22)
            .flat_map(|y| (10..=22).map(move |x| (x, y)))
            .filter(|&(x, y)| brush.weight(x, y) > 0.0)
            .map(|c| m[c])
            .collect();
        v.iter().cloned().fold(f32::MIN, f32::max) - v.iter().cloned().fold(f32::MAX, f32::min)
    };
    brush.apply(&mut map).unwrap();
    assert!(spread(&map) < spread(&before));
    // The centre has full weight and a huge strength: it lands on the mean exactly (f32).
    let cells: Vec<f32> = (0..33 * 33)
        .map(|i| (i % 33, i / 33))
        .filter(|&(x, y)| brush.weight(x, y) > 0.0)
        .map(|c| before[c])
        .collect();
    let mean = cells.iter().map(|&v| v as f64).sum::<f64>() / cells.len() as f64;
    assert_eq!(map[(16, 16)], mean as f32);
    // Outside the disc nothing moves.
    assert_eq!(map[(16, 9)], before[(16, 9)]);
}

#[test]
fn smooth_reduces_roughness_and_keeps_flat_maps_flat() {
    let mut map = bumpy(33, 33, 2);
    let rough = |m: &Heightmap| (14..19).map(|x| (m[(x + 1, 16)] - m[(x, 16)]).abs()).sum::<f32>();
    let r0 = rough(&map);
    Brush { x: 16.0, y: 16.0, radius: 8.0, strength: 1.0, mode: BrushMode::Smooth }.apply(&mut map).unwrap();
    assert!(rough(&map) < 0.7 * r0);
    let mut flat = Heightmap::filled(17, 17, 1.0, 3.5).unwrap();
    Brush { x: 0.0, y: 0.0, radius: 5.0, strength: 1.0, mode: BrushMode::Smooth }.apply(&mut flat).unwrap();
    assert!(flat.as_slice().iter().all(|&v| v == 3.5));
}

#[test]
fn dab_touches_only_its_bounding_box() {
    let mut map = bumpy(129, 129, 3);
    let before = map.clone();
    let brush = Brush { x: 100.3, y: 7.6, radius: 12.5, strength: 0.3, mode: BrushMode::Raise };
    let edit = brush.apply(&mut map).unwrap();
    let r = edit.rect;
    assert_eq!((r.x, r.y), (88, 0));
    assert_eq!((r.x + r.w - 1, r.y + r.h - 1), (112, 20));
    for y in 0..129 {
        for x in 0..129 {
            let inside = x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
            if !inside {
                assert_eq!(map[(x, y)].to_bits(), before[(x, y)].to_bits());
            }
        }
    }
    // A disc entirely off the map is a no-op.
    let off = Brush { x: -50.0, y: 10.0, radius: 5.0, strength: 1.0, mode: BrushMode::Raise };
    assert!(off.apply(&mut map).unwrap().is_empty());
}

#[test]
fn invalid_brushes_are_refused() {
    let mut map = Heightmap::new(9, 9, 1.0).unwrap();
    let ok = Brush { x: 4.0, y: 4.0, radius: 2.0, strength: 1.0, mode: BrushMode::Raise };
    for bad in [
        Brush { radius: 0.0, ..ok },
        Brush { radius: f64::NAN, ..ok },
        Brush { x: f64::INFINITY, ..ok },
        Brush { strength: -1.0, ..ok },
        Brush { strength: f32::NAN, ..ok },
        Brush { strength: 1.5, mode: BrushMode::Smooth, ..ok },
    ] {
        let err = bad.apply(&mut map).unwrap_err();
        assert!(matches!(err, terrasynth::Error::InvalidParameter { .. }), "{err}");
    }
    assert!(map.as_slice().iter().all(|&v| v == 0.0));
}

fn mode_of(k: u8) -> BrushMode {
    [BrushMode::Raise, BrushMode::Lower, BrushMode::Flatten, BrushMode::Smooth][k as usize % 4]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn random_strokes_undo_and_redo_bit_exactly(
        seed in any::<u64>(),
        strokes in prop::collection::vec(
            (0u8..4, 1.0f64..15.0, 0.0f32..1.0, prop::collection::vec((-5.0f64..70.0, -5.0f64..70.0), 1..5)),
            1..6,
        ),
    ) {
        let mut map = bumpy(65, 49, seed);
        let start = bits(&map);
        let mut history = History::default();
        for (mode, radius, strength, path) in &strokes {
            let brush = Brush { x: 0.0, y: 0.0, radius: *radius, strength: *strength, mode: mode_of(*mode) };
            let mut stroke = Stroke::new();
            stroke.drag(&mut map, &brush, path, radius / 4.0).unwrap();
            history.push(stroke.finish(&map));
        }
        let end = bits(&map);
        // Undo every stroke in reverse, then redo them all: bit-identical to start and end.
        while history.undo(&mut map).unwrap() {}
        prop_assert_eq!(bits(&map), start);
        while history.redo(&mut map).unwrap() {}
        prop_assert_eq!(bits(&map), end);
    }
}
