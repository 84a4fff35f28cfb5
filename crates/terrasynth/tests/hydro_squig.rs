//! Squig-curve rivers: heights never rise downstream, the river is a valley, the network is
//! connected and reaches the map edge, determinism.

use proptest::prelude::*;
use terrasynth::hydro::{D8Router, DepressionFiller, SquigRivers};

fn check_network(g: &SquigRivers, detail: u32, seed: u64) -> Result<(), TestCaseError> {
    let out = g.generate(detail, 1.0, seed).unwrap();
    let side = (1usize << detail) + 1;
    prop_assert_eq!(out.height.width(), side);
    prop_assert!(!out.rivers.is_empty());
    let river_cells: std::collections::HashSet<(usize, usize)> =
        out.rivers.iter().flat_map(|r| r.points.iter().map(|p| (p.x as usize, p.y as usize))).collect();
    for (k, r) in out.rivers.iter().enumerate() {
        prop_assert!(r.points.len() >= 2, "river {} has {} points", k, r.points.len());
        for w in r.points.windows(2) {
            let (a, b) = (w[0], w[1]);
            // 8-connected, and heights never increase from entry to exit.
            prop_assert!((a.x - b.x).abs() <= 1.0 && (a.y - b.y).abs() <= 1.0);
            prop_assert!(b.height <= a.height, "river {} rises {} -> {}", k, a.height, b.height);
            prop_assert_eq!(a.height, out.height[(a.x as usize, a.y as usize)]);
        }
        // Every river point is at most its non-river 8-neighbours (a valley floor).
        for p in &r.points {
            let (x, y) = (p.x as i64, p.y as i64);
            for dy in -1..=1i64 {
                for dx in -1..=1i64 {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= side as i64 || ny >= side as i64 {
                        continue;
                    }
                    let q = (nx as usize, ny as usize);
                    if !river_cells.contains(&q) {
                        prop_assert!(
                            out.height[q] >= p.height,
                            "river cell {:?} above neighbour {:?}",
                            (x, y),
                            q
                        );
                    }
                }
            }
        }
    }
    // The main river (first) runs from one map edge to another.
    let main = &out.rivers[0];
    let on_edge = |x: f32, y: f32| x == 0.0 || y == 0.0 || x as usize == side - 1 || y as usize == side - 1;
    let (s, e) = (main.points[0], *main.points.last().unwrap());
    prop_assert!(on_edge(s.x, s.y) && on_edge(e.x, e.y), "main river {:?} -> {:?}", (s.x, s.y), (e.x, e.y));
    // Tributaries end on a point of an earlier river (a confluence).
    for r in &out.rivers[1..] {
        let end = r.points.last().unwrap();
        let earlier = out.rivers.iter().take_while(|o| !std::ptr::eq(*o, r));
        prop_assert!(earlier.flat_map(|o| o.points.iter()).any(|p| (p.x, p.y) == (end.x, end.y)));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn heights_never_increase_along_squig_rivers(seed in any::<u64>(), detail in 2u32..8, tributaries in 0usize..5,
                                                  roughness in 0.0f32..2.0, branch_level in 1usize..4) {
        let g = SquigRivers { roughness, smoothness: 1.0, tributaries, branch_level };
        check_network(&g, detail, seed)?;
    }
}

#[test]
fn tributaries_appear_and_the_terrain_is_normalised() {
    let g = SquigRivers { tributaries: 3, ..SquigRivers::default() };
    let out = g.generate(7, 2.0, 42).unwrap();
    assert_eq!(out.rivers.len(), 4, "main river + 3 tributaries");
    assert_eq!(out.height.min_max(), Some((0.0, 1.0)));
    assert_eq!(out.height.cell_size(), 2.0);
}

#[test]
fn the_main_river_drains_like_real_water() {
    // On the generated terrain, D8 routing from the main river's source on the filled surface
    // follows the valley: most river cells carry a large share of the map's drainage.
    let g = SquigRivers { tributaries: 0, ..SquigRivers::default() };
    let out = g.generate(6, 1.0, 9).unwrap();
    let filled = DepressionFiller::with_epsilon().fill(&out.height, f32::NEG_INFINITY).unwrap();
    let acc = D8Router.d8(&filled, f32::NEG_INFINITY).unwrap().accumulate(None).unwrap();
    let mouth = out.rivers[0].points.last().unwrap();
    let near_mouth = out.rivers[0].points[out.rivers[0].points.len() - 3];
    let a = acc[(near_mouth.x as usize, near_mouth.y as usize)];
    assert!(a > 50.0, "drainage near the mouth {:?}: {a}", (mouth.x, mouth.y));
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
    assert!(odd.rivers[0].points.iter().all(|p| p.x <= 49.0 && p.y <= 36.0));
    let exact = g.generate_sized(65, 65, 1.0, 5).unwrap();
    assert_eq!(exact.height.as_slice(), a.height.as_slice());
}

#[test]
fn bad_parameters_are_refused() {
    let ok = SquigRivers::default();
    assert!(SquigRivers { roughness: f32::NAN, ..ok }.generate(4, 1.0, 0).is_err());
    assert!(SquigRivers { smoothness: 5.0, ..ok }.generate(4, 1.0, 0).is_err());
    assert!(SquigRivers { tributaries: 65, ..ok }.generate(4, 1.0, 0).is_err());
    assert!(SquigRivers { branch_level: 0, ..ok }.generate(4, 1.0, 0).is_err());
    assert!(ok.generate(0, 1.0, 0).is_err());
    assert!(ok.generate(15, 1.0, 0).is_err());
}
