//! Squig-curve rivers on the triangular step's triangle: heights never rise downstream, the
//! rivers are valleys, several rivers with tributaries reach the coast, the terrain is the
//! `triangular` step's (shape = triangle) when there are no rivers, determinism.

use std::collections::HashSet;

use proptest::prelude::*;
use terrasynth::generate::{Generator, TriangleShape, Triangular};
use terrasynth::hydro::{River, SquigRivers};
use terrasynth::{Heightmap, Progress};

/// Whether `(x, y)` lies on the coast of the triangle of leg `n`: `x = 0`, `y = n` or `x = y`.
fn on_coast(x: f32, y: f32, n: f32) -> bool {
    x == 0.0 || y == n || x == y
}

/// Every river ends on the coast or on a point of an earlier river (a confluence).
fn ends(rivers: &[River], n: f32) -> (usize, usize) {
    let (mut mouths, mut junctions) = (0, 0);
    for (k, r) in rivers.iter().enumerate() {
        let e = r.points.last().unwrap();
        if rivers[..k].iter().flat_map(|o| o.points.iter()).any(|p| (p.x, p.y) == (e.x, e.y)) {
            junctions += 1;
        } else {
            assert!(on_coast(e.x, e.y, n), "river {k} ends inland at {:?} and joins nothing", (e.x, e.y));
            mouths += 1;
        }
    }
    (mouths, junctions)
}

fn check_network(g: &SquigRivers, detail: u32, seed: u64) -> Result<(), TestCaseError> {
    let out = g.generate(detail, 1.0, seed).unwrap();
    let side = (1usize << detail) + 1;
    prop_assert_eq!(out.height.width(), side);
    prop_assert!(!out.rivers.is_empty());
    let map: &Heightmap = &out.height;
    let river_cells: HashSet<(usize, usize)> =
        out.rivers.iter().flat_map(|r| r.points.iter().map(|p| (p.x as usize, p.y as usize))).collect();
    for (k, r) in out.rivers.iter().enumerate() {
        prop_assert!(r.points.len() >= 2, "river {} has {} points", k, r.points.len());
        for w in r.points.windows(2) {
            let (a, b) = (w[0], w[1]);
            // 8-connected, and heights never increase from spring to mouth.
            prop_assert!((a.x - b.x).abs() <= 1.0 && (a.y - b.y).abs() <= 1.0);
            prop_assert!(b.height <= a.height, "river {} rises {} -> {}", k, a.height, b.height);
            prop_assert_eq!(a.height, map[(a.x as usize, a.y as usize)]);
        }
        // Every river point is inside the triangle and at most its non-river 8-neighbours
        // inside the triangle (a valley floor).
        for p in &r.points {
            let (x, y) = (p.x as i64, p.y as i64);
            prop_assert!(x <= y, "river point {:?} outside the triangle", (x, y));
            for dy in -1..=1i64 {
                for dx in -1..=1i64 {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny >= side as i64 || nx > ny {
                        continue;
                    }
                    let q = (nx as usize, ny as usize);
                    if !river_cells.contains(&q) {
                        prop_assert!(map[q] >= p.height, "river cell {:?} above neighbour {:?}", (x, y), q);
                    }
                }
            }
        }
    }
    let (mouths, _) = ends(&out.rivers, (side - 1) as f32);
    prop_assert!(mouths >= 1);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn heights_never_increase_along_squig_rivers(seed in any::<u64>(), detail in 3u32..8, rivers in 1usize..5,
                                                  tributaries in 0usize..6, roughness in 0.0f64..2.0,
                                                  river_level in 1usize..3, branch_level in 1usize..5) {
        let g = SquigRivers { roughness, rivers, tributaries, river_level, branch_level, ..SquigRivers::default() };
        check_network(&g, detail, seed)?;
    }
}

/// The defaults make several rivers (≥ 2 mouths on the coast) and tributaries (rivers ending at
/// a confluence), on several seeds.
#[test]
fn several_rivers_with_tributaries_reach_the_coast() {
    let g = SquigRivers::default();
    for seed in [1, 2, 3, 42] {
        let out = g.generate(7, 2.0, seed).unwrap();
        let (mouths, junctions) = ends(&out.rivers, 128.0);
        assert!(mouths >= 2, "seed {seed}: {mouths} rivers reach the coast");
        assert!(junctions >= 1, "seed {seed}: {junctions} tributaries");
        assert_eq!(out.height.cell_size(), 2.0);
    }
}

/// With `rivers = 0` the terrain is the `triangular` step's triangle, bit for bit (same
/// parameters, same seed): squig-rivers is built on it. With rivers, the points away from the
/// rivers' triangles still follow the same subdivision (most cells unchanged is not promised;
/// the first river level's coarse points are).
#[test]
fn without_rivers_it_is_the_triangular_triangle() {
    let g = SquigRivers { rivers: 0, roughness: 0.7, smoothness: 1.3, ..SquigRivers::default() };
    let tri = Triangular::new(0.7, 1.3, 0).unwrap().with_shape(TriangleShape::Triangle);
    for (w, h) in [(65, 65), (50, 37)] {
        let a = g.generate_sized(w, h, 1.0, 9).unwrap();
        let b = tri.generate(w, h, 9, &Progress::new()).unwrap();
        assert_eq!(a.height.as_slice(), b.as_slice(), "{w}×{h}");
        assert!(a.rivers.is_empty());
    }
    // With rivers, the corners (set before any river) are the triangular step's.
    let a = SquigRivers::default().generate(6, 1.0, 9).unwrap();
    let b = Triangular::default()
        .with_shape(TriangleShape::Triangle)
        .generate(65, 65, 9, &Progress::new())
        .unwrap();
    for c in [(0, 0), (0, 64), (64, 64)] {
        assert_eq!(a.height[c], b[c]);
    }
    assert_ne!(a.height.as_slice(), b.as_slice());
}

#[test]
fn same_seed_same_terrain_and_sizes_are_honoured() {
    let g = SquigRivers::default();
    let a = g.generate(6, 1.0, 5).unwrap();
    let b = g.generate(6, 1.0, 5).unwrap();
    assert_eq!(a.height.as_slice(), b.height.as_slice());
    assert_eq!(a.rivers, b.rivers);
    let c = g.generate(6, 1.0, 6).unwrap();
    assert_ne!(a.height.as_slice(), c.height.as_slice());
    let odd = g.generate_sized(50, 37, 1.0, 5).unwrap();
    assert_eq!((odd.height.width(), odd.height.height()), (50, 37));
    assert!(odd.rivers.iter().flat_map(|r| &r.points).all(|p| p.x <= 49.0 && p.y <= 36.0));
    let exact = g.generate_sized(65, 65, 1.0, 5).unwrap();
    assert_eq!(exact.height.as_slice(), a.height.as_slice());
}

#[test]
fn bad_parameters_are_refused() {
    let ok = SquigRivers::default();
    assert!(SquigRivers { roughness: f64::NAN, ..ok }.generate(4, 1.0, 0).is_err());
    assert!(SquigRivers { smoothness: 5.0, ..ok }.generate(4, 1.0, 0).is_err());
    assert!(SquigRivers { tributaries: 65, ..ok }.generate(4, 1.0, 0).is_err());
    assert!(SquigRivers { rivers: 65, ..ok }.generate(4, 1.0, 0).is_err());
    assert!(SquigRivers { branch_level: 0, ..ok }.generate(4, 1.0, 0).is_err());
    assert!(ok.generate(0, 1.0, 0).is_err());
    assert!(ok.generate(15, 1.0, 0).is_err());
}
