//! Hydrology invariants: Priority-Flood against a brute-force oracle, drainage, accumulation
//! totals, rivers from sources, lakes, watersheds, determinism across thread counts.

use proptest::prelude::*;
use terrasynth::Heightmap;
use terrasynth::grid::D8;
use terrasynth::hydro::{
    D8Router, DInfinity, DepressionFiller, RiverEnd, RiverMode, RiverTracer, extract_rivers, find_lakes,
};

const NO_SEA: f32 = f32::NEG_INFINITY;

fn is_edge(dem: &Heightmap, x: usize, y: usize) -> bool {
    x == 0 || y == 0 || x + 1 == dem.width() || y + 1 == dem.height()
}

fn neighbours(dem: &Heightmap, x: usize, y: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    D8.iter().filter_map(move |&(dx, dy)| {
        let (nx, ny) = (x as i64 + dx as i64, y as i64 + dy as i64);
        (nx >= 0 && ny >= 0 && (nx as usize) < dem.width() && (ny as usize) < dem.height())
            .then_some((nx as usize, ny as usize))
    })
}

/// The minimal filled surface by definition: the lowest, over all 8-connected paths to an
/// outlet, of the highest cell on the path. Computed by relaxation until nothing changes.
fn fill_oracle(dem: &Heightmap, sea: f32) -> Heightmap {
    let mut w = Heightmap::from_fn(dem.width(), dem.height(), 1.0, |x, y| {
        if is_edge(dem, x, y) || dem[(x, y)] < sea { dem[(x, y)] } else { f32::INFINITY }
    })
    .unwrap();
    loop {
        let mut changed = false;
        for y in 0..dem.height() {
            for x in 0..dem.width() {
                let lowest = neighbours(dem, x, y).map(|n| w[n]).fold(f32::INFINITY, f32::min);
                let v = dem[(x, y)].max(lowest);
                if v < w[(x, y)] {
                    w[(x, y)] = v;
                    changed = true;
                }
            }
        }
        if !changed {
            return w;
        }
    }
}

/// Small DEMs with integer heights 0..6: many flats, pits and plateaus.
fn dem_strategy() -> impl Strategy<Value = Heightmap> {
    (2usize..14, 2usize..14).prop_flat_map(|(w, h)| {
        prop::collection::vec(0u8..6, w * h).prop_map(move |v| {
            Heightmap::from_vec(w, h, 1.0, v.into_iter().map(f32::from).collect()).unwrap()
        })
    })
}

fn noise_dem(w: usize, h: usize, seed: u64) -> Heightmap {
    let mut rng = terrasynth::noise::rng::SplitMix64::new(seed);
    let raw: Vec<f32> = (0..w * h).map(|_| rng.next_f64() as f32).collect();
    // A little smoothing so there are real basins and lakes, not only one-cell pits.
    Heightmap::from_fn(w, h, 2.0, |x, y| {
        let mut s = 0.0;
        let mut n = 0.0;
        for yy in y.saturating_sub(2)..(y + 3).min(h) {
            for xx in x.saturating_sub(2)..(x + 3).min(w) {
                s += raw[yy * w + xx];
                n += 1.0;
            }
        }
        s / n + 0.02 * ((x as f32 * 0.3).sin() + (y as f32 * 0.2).cos())
    })
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn exact_fill_equals_minimax_oracle(dem in dem_strategy(), sea in prop_oneof![Just(NO_SEA), Just(1.0f32)]) {
        let filled = DepressionFiller::exact().fill(&dem, sea).unwrap();
        let oracle = fill_oracle(&dem, sea);
        prop_assert_eq!(filled.as_slice(), oracle.as_slice());
    }

    #[test]
    fn filled_surfaces_are_above_input_idempotent_and_pit_free(dem in dem_strategy(), sea in prop_oneof![Just(NO_SEA), Just(2.0f32)]) {
        let exact = DepressionFiller::exact().fill(&dem, sea).unwrap();
        let eps = DepressionFiller::with_epsilon().fill(&dem, sea).unwrap();
        for y in 0..dem.height() {
            for x in 0..dem.width() {
                prop_assert!(exact[(x, y)] >= dem[(x, y)]);
                prop_assert!(eps[(x, y)] >= exact[(x, y)]);
                let outlet = is_edge(&dem, x, y) || dem[(x, y)] < sea;
                if outlet {
                    prop_assert_eq!(eps[(x, y)], dem[(x, y)]);
                } else {
                    // No interior pit: exact has a neighbour not higher, ε a strictly lower one.
                    prop_assert!(neighbours(&dem, x, y).any(|n| exact[n] <= exact[(x, y)]));
                    prop_assert!(neighbours(&dem, x, y).any(|n| eps[n] < eps[(x, y)]));
                }
            }
        }
        // One flood for both surfaces: the same exact fill, and an ε surface that drains.
        let (exact2, eps2) = DepressionFiller::fill_both(&dem, sea).unwrap();
        prop_assert_eq!(exact2.as_slice(), exact.as_slice());
        for y in 0..dem.height() {
            for x in 0..dem.width() {
                prop_assert!(eps2[(x, y)] >= exact[(x, y)]);
                if !(is_edge(&dem, x, y) || dem[(x, y)] < sea) {
                    prop_assert!(neighbours(&dem, x, y).any(|n| eps2[n] < eps2[(x, y)]));
                } else {
                    prop_assert_eq!(eps2[(x, y)], dem[(x, y)]);
                }
            }
        }
        let again = DepressionFiller::exact().fill(&exact, sea).unwrap();
        prop_assert_eq!(again.as_slice(), exact.as_slice());
        let again = DepressionFiller::with_epsilon().fill(&eps, sea).unwrap();
        prop_assert_eq!(again.as_slice(), eps.as_slice());
    }

    #[test]
    fn water_never_flows_uphill_and_every_cell_drains(dem in dem_strategy(), sea in prop_oneof![Just(NO_SEA), Just(2.0f32)]) {
        let eps = DepressionFiller::with_epsilon().fill(&dem, sea).unwrap();
        let flow = D8Router.d8(&eps, sea).unwrap();
        let z = eps.as_slice();
        let w = dem.width();
        for (i, &r) in flow.receivers().iter().enumerate() {
            let outlet = is_edge(&dem, i % w, i / w) || dem.as_slice()[i] < sea;
            prop_assert_eq!(r as usize == i, outlet, "cell {} root status", i);
            if !outlet {
                prop_assert!(z[r as usize] < z[i]);
            }
        }
        let acc = flow.accumulate(None).unwrap();
        let total: f64 = (0..dem.len()).filter(|&i| flow.is_root(i)).map(|i| acc.as_slice()[i]).sum();
        prop_assert_eq!(total, dem.len() as f64);
        prop_assert!(acc.as_slice().iter().all(|&a| a >= 1.0));
        let sheds = flow.watersheds();
        for (i, &r) in flow.receivers().iter().enumerate() {
            prop_assert_eq!(sheds.as_slice()[i], sheds.as_slice()[r as usize]);
        }
    }

    #[test]
    fn river_from_any_source_reaches_an_outlet_downhill(dem in dem_strategy(), sx in 0usize..14, sy in 0usize..14) {
        let (sx, sy) = (sx % dem.width(), sy % dem.height());
        let tracer = RiverTracer::new(&dem, 1.0).unwrap();
        let r = tracer.trace((sx, sy), RiverMode::Filled).unwrap();
        prop_assert!(matches!(r.end, RiverEnd::Sea | RiverEnd::Edge));
        let mut seen = std::collections::HashSet::new();
        prop_assert!(r.cells.iter().all(|c| seen.insert(*c)), "a cell is revisited");
        prop_assert!(r.heights.windows(2).all(|p| p[1] < p[0]), "heights rise: {:?}", r.heights);
        for pair in r.cells.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            prop_assert!(a.0.abs_diff(b.0) <= 1 && a.1.abs_diff(b.1) <= 1);
        }
        let last = *r.cells.last().unwrap();
        prop_assert!(is_edge(&dem, last.0, last.1) || dem[last] < 1.0);
        // The seed's backtracking walk (004 §9 v2) always reaches an outlet too.
        let rb = tracer.trace((sx, sy), RiverMode::BacktrackV2).unwrap();
        prop_assert!(matches!(rb.end, RiverEnd::Sea | RiverEnd::Edge), "{:?}", rb.end);
    }

    #[test]
    fn d_infinity_conserves_water(dem in dem_strategy()) {
        let eps = DepressionFiller::with_epsilon().fill(&dem, NO_SEA).unwrap();
        let dinf = DInfinity::new(&eps, NO_SEA).unwrap();
        let acc = dinf.accumulate(&eps).unwrap();
        let flow = D8Router.d8(&eps, NO_SEA).unwrap();
        let total: f64 = (0..dem.len()).filter(|&i| flow.is_root(i)).map(|i| acc.as_slice()[i]).sum();
        prop_assert!((total - dem.len() as f64).abs() < 1e-9 * dem.len() as f64, "{} vs {}", total, dem.len());
    }
}

/// Found by CI (proptest, shrunk): Barnes et al.'s ε rule sent a cell already one ulp above
/// its closer to the pit queue, and flooding from it out of height order raised an equal
/// neighbour by one more ulp on the second pass, so ε fill was not idempotent.
#[test]
fn epsilon_fill_is_idempotent_on_the_ci_counterexample() {
    #[rustfmt::skip]
    let data: [u8; 91] = [
        0, 0, 1, 1, 1, 0, 0,  0, 0, 1, 0, 1, 0, 0,  0, 1, 1, 0, 1, 1, 0,
        0, 3, 0, 1, 0, 3, 4,  5, 2, 0, 1, 4, 2, 2,  0, 3, 0, 0, 0, 5, 1,
        1, 2, 1, 2, 5, 2, 3,  0, 1, 1, 1, 5, 2, 2,  5, 4, 0, 5, 1, 5, 1,
        3, 4, 0, 1, 5, 0, 5,  1, 2, 5, 4, 3, 5, 5,  3, 5, 3, 3, 5, 4, 3,
        2, 5, 2, 1, 5, 5, 4,
    ];
    let dem = Heightmap::from_vec(7, 13, 1.0, data.iter().map(|&v| f32::from(v)).collect()).unwrap();
    let eps = DepressionFiller::with_epsilon().fill(&dem, NO_SEA).unwrap();
    let again = DepressionFiller::with_epsilon().fill(&eps, NO_SEA).unwrap();
    let differing: Vec<usize> =
        (0..dem.len()).filter(|&i| eps.as_slice()[i] != again.as_slice()[i]).collect();
    assert!(differing.is_empty(), "second ε fill changed cells {differing:?}");
    // The surface really has ε steps to keep: a lake raised by up to 8 ulps above 1.0.
    assert_eq!(eps[(2, 9)], 1.0f32 + 8.0 * f32::EPSILON);
}

#[test]
fn flats_drain_toward_the_outlet() {
    // A flat plateau walled in by high edge cells, with a single low exit on the east edge:
    // every interior cell must drain, all of them through the exit.
    let mut dem =
        Heightmap::from_fn(
            33,
            17,
            1.0,
            |x, y| if x == 0 || y == 0 || x == 32 || y == 16 { 9.0 } else { 5.0 },
        )
        .unwrap();
    dem[(32, 8)] = 0.0;
    let eps = DepressionFiller::with_epsilon().fill(&dem, NO_SEA).unwrap();
    let flow = D8Router.d8(&eps, NO_SEA).unwrap();
    let acc = flow.accumulate(None).unwrap();
    assert_eq!(acc[(32, 8)], 31.0 * 15.0 + 1.0);
    for y in 1..16 {
        for x in 1..32 {
            assert!(!flow.is_root(y * 33 + x), "interior flat cell ({x}, {y}) does not drain");
        }
    }
}

#[test]
fn sea_cells_are_outlets_and_keep_their_height() {
    let mut dem = Heightmap::filled(9, 9, 1.0, 3.0).unwrap();
    dem[(4, 4)] = -1.0; // an inland sea cell: an outlet, not a pit to fill
    let eps = DepressionFiller::with_epsilon().fill(&dem, 0.0).unwrap();
    assert_eq!(eps[(4, 4)], -1.0);
    let tracer = RiverTracer::new(&dem, 0.0).unwrap();
    let r = tracer.trace((3, 3), RiverMode::Filled).unwrap();
    assert_eq!(r.end, RiverEnd::Sea);
    assert_eq!(r.cells, vec![(3, 3), (4, 4)]);
}

#[test]
fn lakes_have_one_level_and_positive_depth() {
    let dem = noise_dem(65, 65, 7);
    let lakes = find_lakes(&dem, NO_SEA, 0.0, 1).unwrap();
    assert!(lakes.lakes.len() >= 3, "expected several lakes, got {}", lakes.lakes.len());
    let exact = DepressionFiller::exact().fill(&dem, NO_SEA).unwrap();
    for (i, &l) in lakes.labels.as_slice().iter().enumerate() {
        if l == 0 {
            assert_eq!(lakes.depth.as_slice()[i], 0.0);
            continue;
        }
        let lake = &lakes.lakes[l as usize - 1];
        assert_eq!(lake.id, l);
        assert_eq!(exact.as_slice()[i], lake.level);
        assert!(lakes.depth.as_slice()[i] > 0.0);
    }
    let area: usize = lakes.lakes.iter().map(|l| l.area_cells).sum();
    assert_eq!(area, lakes.labels.as_slice().iter().filter(|&&l| l != 0).count());
    // Filters drop small lakes and relabel consistently.
    let big = find_lakes(&dem, NO_SEA, 0.0, 10).unwrap();
    assert!(big.lakes.iter().all(|l| l.area_cells >= 10));
    assert!(big.lakes.len() < lakes.lakes.len());
    assert!(big.lakes.iter().enumerate().all(|(k, l)| l.id as usize == k + 1));
}

#[test]
fn river_network_follows_receivers_and_widens_downstream() {
    let dem = noise_dem(97, 97, 3);
    let eps = DepressionFiller::with_epsilon().fill(&dem, NO_SEA).unwrap();
    let flow = D8Router.d8(&eps, NO_SEA).unwrap();
    let acc = flow.accumulate(None).unwrap();
    let rivers = extract_rivers(&eps, &flow, &acc, 50.0, 6.0).unwrap();
    assert!(!rivers.is_empty());
    for r in &rivers {
        for p in r.points.windows(2) {
            let (a, b) = (p[0], p[1]);
            assert!(b.height < a.height);
            assert!(b.discharge > a.discharge && b.width > a.width);
            let ia = a.y as usize * 97 + a.x as usize;
            assert_eq!(flow.receivers()[ia] as usize, b.y as usize * 97 + b.x as usize);
        }
        assert!(r.points[0].discharge >= 50.0);
    }
    assert!(extract_rivers(&eps, &flow, &acc, f64::NAN, 6.0).is_err());
}

#[test]
fn routing_is_identical_on_any_thread_count() {
    let dem = noise_dem(129, 97, 11);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| {
            let eps = DepressionFiller::with_epsilon().fill(&dem, 0.3).unwrap();
            let flow = D8Router.d8(&eps, 0.3).unwrap();
            let acc = flow.accumulate(None).unwrap();
            let dinf = DInfinity::new(&eps, 0.3).unwrap().accumulate(&eps).unwrap();
            (eps, flow, acc, dinf)
        })
    };
    let one = run(1);
    for t in [2, 4] {
        let other = run(t);
        assert_eq!(one.0.as_slice(), other.0.as_slice());
        assert_eq!(one.1, other.1);
        assert_eq!(one.2.as_slice(), other.2.as_slice());
        assert_eq!(one.3.as_slice(), other.3.as_slice());
    }
}

#[test]
fn non_finite_input_is_refused() {
    let mut dem = Heightmap::filled(5, 5, 1.0, 1.0).unwrap();
    assert!(DepressionFiller::default().fill(&dem, f32::NAN).is_err());
    dem[(2, 2)] = f32::INFINITY;
    assert!(DepressionFiller::default().fill(&dem, 0.0).is_err());
    assert!(D8Router.d8(&dem, 0.0).is_err());
    assert!(RiverTracer::new(&dem, 0.0).is_err());
    let ok = Heightmap::filled(5, 5, 1.0, 1.0).unwrap();
    assert!(RiverTracer::new(&ok, 0.0).unwrap().trace((5, 0), RiverMode::Filled).is_err());
}
