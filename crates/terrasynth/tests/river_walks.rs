//! The seed's river walks (seed 004 §9, issue 14 part 1): version 1 moves to the lowest
//! neighbour not yet in the river (uphill if it must) and stops only at the sea or enclosed by
//! its own cells; version 2 steps back around the lakes it makes and so always reaches the sea;
//! the `river-sources` step traces them (and the filled walk) from sources in cells or metres.

use terrasynth::hydro::{HydroLayers, RiverEnd, RiverMode, RiverTracer};
use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, registry};
use terrasynth::step::Terrain;
use terrasynth::{Error, Heightmap};

/// A 9×9 map at 100 + x (falling west), with a 3×3 trap in its middle: a ring of cells whose
/// heights fall 9, 8, …, 2 around it, starting at (3, 3), and the centre (4, 4) at 50. With
/// `sea`, columns 0 and 1 are sea (−5).
fn trap(sea: bool) -> Heightmap {
    let ring = [
        (3, 3, 9.0),
        (4, 3, 8.0),
        (5, 3, 7.0),
        (5, 4, 6.0),
        (5, 5, 5.0),
        (4, 5, 4.0),
        (3, 5, 3.0),
        (3, 4, 2.0),
    ];
    let mut dem = Heightmap::from_fn(9, 9, 1.0, |x, _| 100.0 + x as f32).unwrap();
    for (x, y, z) in ring {
        dem[(x, y)] = z;
    }
    dem[(4, 4)] = 50.0;
    if sea {
        for y in 0..9 {
            dem[(0, y)] = -5.0;
            dem[(1, y)] = -5.0;
        }
    }
    dem
}

fn is_neighbour(a: (usize, usize), b: (usize, usize)) -> bool {
    a != b && a.0.abs_diff(b.0) <= 1 && a.1.abs_diff(b.1) <= 1
}

/// Worked by hand from the seed's rule: from (3, 3) (9) the lowest free neighbour is (3, 4)
/// (2); then (3, 5) (3: uphill, the only lower-than-the-rest free cell), (4, 5), (5, 5), (5, 4),
/// (5, 3), (4, 3); there only the centre (50) and the plateau (≥ 103) are free, so the walk
/// climbs to the centre, whose eight neighbours are all river: it stops there, enclosed.
#[test]
fn walk_v1_stops_enclosed_by_its_own_cells() {
    let tracer = RiverTracer::new(&trap(false), -1.0).unwrap();
    let r = tracer.trace((3, 3), RiverMode::WalkV1).unwrap();
    assert_eq!(r.cells, [(3, 3), (3, 4), (3, 5), (4, 5), (5, 5), (5, 4), (5, 3), (4, 3), (4, 4)]);
    assert_eq!(r.end, RiverEnd::Enclosed);
    assert_eq!(r.heights, [9.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 50.0]);
    let last = *r.cells.last().unwrap();
    let around: Vec<_> = (3..6).flat_map(|y| (3..6).map(move |x| (x, y))).filter(|&c| c != last).collect();
    assert!(around.iter().all(|c| r.cells.contains(c)), "the head is enclosed by its own cells");
    assert!(r.lake_arms.is_empty());
    // The filled walk from the same source leaves the trap as a lake and reaches the edge.
    let f = tracer.trace((3, 3), RiverMode::Filled).unwrap();
    assert_eq!(f.end, RiverEnd::Edge);
}

/// Version 2 on the same trap with sea to the west: enclosed at the centre, it steps back to
/// (4, 3) (the centre stays water: one lake arm from the dead end back to where the walk goes
/// on), climbs out to the lowest free plateau cell (3, 2) and runs west into the sea.
#[test]
fn backtrack_v2_steps_back_around_its_lake_and_reaches_the_sea() {
    let dem = trap(true);
    let tracer = RiverTracer::new(&dem, 0.0).unwrap();
    let r = tracer.trace((3, 3), RiverMode::BacktrackV2).unwrap();
    assert_eq!(r.end, RiverEnd::Sea);
    assert_eq!(r.lake_arms, vec![vec![(4, 4), (4, 3)]]);
    assert_eq!(&r.cells[..8], &[(3, 3), (3, 4), (3, 5), (4, 5), (5, 5), (5, 4), (5, 3), (4, 3)]);
    assert_eq!(r.cells[8], (3, 2));
    let last = *r.cells.last().unwrap();
    assert!(dem[last] < 0.0, "ends in the sea at {last:?}");
    assert!(r.cells.windows(2).all(|p| is_neighbour(p[0], p[1])));
    let mut seen = std::collections::HashSet::new();
    assert!(r.cells.iter().all(|c| seen.insert(*c)), "the path repeats a cell");
    // Version 1 on the same map stops in the trap.
    assert_eq!(tracer.trace((3, 3), RiverMode::WalkV1).unwrap().end, RiverEnd::Enclosed);
}

/// A bumpy island (cosine hills and hashed white noise, sea all around) full of pits: from
/// every source on land, version 2 reaches the sea, each step to an 8-neighbour, never entering
/// a cell twice; version 1 either reaches the sea or stops with every neighbour of its head in
/// the river, and each step goes to the lowest free neighbour (checked against the raw
/// terrain), uphill out of pits (most walks here climb at least once). Enclosure is rare on
/// such terrain (the walk climbs out of a pit before it surrounds itself): the crafted trap
/// above shows it.
#[test]
fn walks_on_an_island_with_many_lakes() {
    let n = 65usize;
    let dem = Heightmap::from_fn(n, n, 1.0, |x, y| {
        let (u, v) = (x as f32 / 64.0 - 0.5, y as f32 / 64.0 - 0.5);
        let island = 1.0 - 4.0 * (u * u + v * v);
        let hash = ((x * 73_856_093) ^ (y * 19_349_663)) % 1000;
        island + 0.15 * (x as f32 * 0.9).cos() * (y as f32 * 0.7).sin() + 0.2 * hash as f32 / 1000.0
    })
    .unwrap();
    let sea = 0.15; // the seed's sea level (grille < 0.15)
    let tracer = RiverTracer::new(&dem, sea).unwrap();
    let (mut walks, mut climbing) = (0, 0);
    for sy in (8..n - 8).step_by(6) {
        for sx in (8..n - 8).step_by(6) {
            if dem[(sx, sy)] < sea {
                continue;
            }
            let v2 = tracer.trace((sx, sy), RiverMode::BacktrackV2).unwrap();
            assert_eq!(v2.end, RiverEnd::Sea, "v2 from ({sx}, {sy})");
            assert!(dem[*v2.cells.last().unwrap()] < sea);
            assert!(v2.cells.windows(2).all(|p| is_neighbour(p[0], p[1])));
            // Each cell is entered once: the path's cells and the arms' cells (all but the
            // last of each arm, the cell the walk went on from) are all different.
            let mut seen = std::collections::HashSet::new();
            let arms = v2.lake_arms.iter().flat_map(|a| &a[..a.len() - 1]);
            assert!(
                v2.cells.iter().chain(arms).all(|c| seen.insert(*c)),
                "v2 from ({sx}, {sy}) re-enters a cell"
            );
            let v1 = tracer.trace((sx, sy), RiverMode::WalkV1).unwrap();
            let head = *v1.cells.last().unwrap();
            match v1.end {
                RiverEnd::Sea => assert!(dem[head] < sea),
                RiverEnd::Enclosed => {
                    for dy in -1i64..=1 {
                        for dx in -1i64..=1 {
                            let c = ((head.0 as i64 + dx) as usize, (head.1 as i64 + dy) as usize);
                            assert!(v1.cells.contains(&c), "v1 from ({sx}, {sy}) stopped with {c:?} free");
                        }
                    }
                }
                RiverEnd::Edge => panic!("the island has sea all around"),
            }
            walks += 1;
            climbing += usize::from(v1.heights.windows(2).any(|p| p[1] > p[0]));
            // Each step goes to the lowest neighbour not yet in the river.
            for k in 1..v1.cells.len() {
                let (c, next) = (v1.cells[k - 1], v1.cells[k]);
                for dy in -1i64..=1 {
                    for dx in -1i64..=1 {
                        let m = ((c.0 as i64 + dx) as usize, (c.1 as i64 + dy) as usize);
                        if m != c && !v1.cells[..k].contains(&m) {
                            assert!(dem[next] <= dem[m], "step {k} from {c:?} to {next:?} skips lower {m:?}");
                        }
                    }
                }
            }
        }
    }
    // The map has pits: most walks climb out of one (62 of 75 sources).
    assert_eq!((walks, climbing), (75, 62));
}

/// Runs a one-step recipe `step` on `dem` (9×9, 10 m cells, sea level 0) with `run_on` and
/// returns the rivers the `river-sources` step stored.
fn run(step: &str, dem: Heightmap) -> terrasynth::Result<Vec<terrasynth::hydro::River>> {
    let recipe = Recipe::from_toml_str(&format!(
        "name = \"r\"\nwidth = 9\nheight = 9\ncell-size = 10.0\nsea-level = 0.0\nseed = 1\n[[steps]]\n{step}"
    ))?;
    let pipeline = Pipeline::new(recipe, &registry())?;
    let mut terrain = Terrain::new(9, 9, 10.0)?;
    terrain.height = dem;
    terrain.sea_level = 0.0;
    let out = pipeline.run_on(terrain, &PipelineProgress::new())?;
    Ok(out.terrain.layers.get::<HydroLayers>().map(|l| l.sourced.clone()).unwrap_or_default())
}

#[test]
fn the_river_sources_step_traces_each_mode_from_cells_and_metres() {
    let mut dem = trap(true);
    dem.set_cell_size(10.0).unwrap();
    let cells = |r: &terrasynth::hydro::River| -> Vec<(usize, usize)> {
        r.points.iter().map(|p| (p.x as usize, p.y as usize)).collect()
    };
    // v1 from a cell source: the hand-worked path of `walk_v1_stops_enclosed_by_its_own_cells`.
    let v1 = run("type = \"river-sources\"\nsources = [3, 3]\nmode = \"walk-v1\"", dem.clone()).unwrap();
    assert_eq!(v1.len(), 1);
    assert_eq!(cells(&v1[0])[..9], [(3, 3), (3, 4), (3, 5), (4, 5), (5, 5), (5, 4), (5, 3), (4, 3), (4, 4)]);
    // v2 from the same source given in metres (cell size 10 m; 31 m rounds to cell 3): the
    // river, then its lake arm.
    let v2 = run("type = \"river-sources\"\nsources-m = [31.0, 29.0]\nmode = \"backtrack-v2\"", dem.clone())
        .unwrap();
    assert_eq!(v2.len(), 2);
    assert_eq!(cells(&v2[1]), [(4, 4), (4, 3)]);
    assert!(dem[*cells(&v2[0]).last().unwrap()] < 0.0);
    // The default mode is the filled walk, as the editor's sources.
    let filled = run("type = \"river-sources\"\nsources = [3, 3, 6, 6]", dem.clone()).unwrap();
    let tracer = RiverTracer::new(&dem, 0.0).unwrap();
    assert_eq!(filled.len(), 2);
    assert_eq!(cells(&filled[0]), tracer.trace((3, 3), RiverMode::Filled).unwrap().cells);
    // Bad input: one clear error naming the key and what is allowed.
    let outside = run("type = \"river-sources\"\nsources = [3, 9]", dem.clone()).unwrap_err().to_string();
    assert!(outside.contains("sources") && outside.contains("inside the 9x9 map"), "{outside}");
    let metres =
        run("type = \"river-sources\"\nsources-m = [95.0, 0.0]", dem.clone()).unwrap_err().to_string();
    assert!(metres.contains("sources-m") && metres.contains("85 m") || metres.contains("x < 85"), "{metres}");
    let odd = run("type = \"river-sources\"\nsources = [3, 3, 4]", dem.clone()).unwrap_err().to_string();
    assert!(odd.contains("x, y pairs"), "{odd}");
    let mode = run("type = \"river-sources\"\nmode = \"walk-v3\"", dem).unwrap_err();
    assert!(matches!(&mode, Error::Recipe(p) if p[0].to_string().contains("walk-v1")), "{mode}");
}
