//! The shaping and erosion steps on windows of an endless world (issue 11 part 2): every
//! chunkable step computes each cell from world coordinates and from input cells within its
//! declared reach, so **a window equals the same cells cut from a larger window, bit for bit**.
//!
//! Each step runs directly (no pipeline) on windows of a fixed world-anchored input relief:
//! a big window, and smaller windows of odd sizes at other origins (negative, and |x| = 10⁷
//! cells), each grown by the step's reach on every side and cut back. Their cells must equal the
//! big window's bit for bit. The steps must also change the input (a test of a step that does
//! nothing could not fail).

use terrasynth::recipe::{Pipeline, PipelineProgress, registry};
use terrasynth::step::{Frame, ParamValue, Params, Reach, Step, StepContext, Terrain, WorldFrame};
use terrasynth::{Error, Heightmap, Progress};

/// Metres per cell of the test world.
const CELL: f64 = 30.0;
/// The test world's declared height range, metres.
const RANGE: [f64; 2] = [-1500.0, 2500.0];

/// The input relief at world cell `(x, y)`, metres: smooth hills and valleys plus a hashed
/// roughness, a pure function of the world cell (so every window holds the same input).
fn relief(x: i64, y: i64) -> f32 {
    let (u, v) = ((x.rem_euclid(1 << 20)) as f64, (y.rem_euclid(1 << 20)) as f64);
    let smooth = 800.0 * ((u * 0.021).sin() * (v * 0.017).cos()) + 300.0 * ((u * 0.093 + v * 0.061).sin());
    let h = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    let h = (h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let rough = ((h >> 40) as f64 / (1u64 << 24) as f64 - 0.5) * 40.0;
    (smooth + rough + 200.0) as f32
}

fn frame(x0: i64, y0: i64) -> WorldFrame {
    WorldFrame { x0, y0, cell_size: CELL, height_range: RANGE }
}

/// The registry step `name` with `params` on top of its defaults.
fn step(name: &str, params: &[(&str, ParamValue)]) -> Box<dyn Step> {
    let info = registry().into_iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no step {name}"));
    let given = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let p = Params::validate(info.params, &given).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    (info.build)(&p).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn num(v: f64) -> ParamValue {
    ParamValue::Number(v)
}

/// Runs `step` on the world window `(x0, y0, w, h)` of [`relief`]; returns its heights.
fn run_window(step: &dyn Step, seed: u64, x0: i64, y0: i64, w: usize, h: usize) -> Result<Heightmap, Error> {
    let mut t = Terrain::new(w, h, CELL)?;
    t.sea_level = 0.0;
    for (j, row) in t.height.as_mut_slice().chunks_mut(w).enumerate() {
        for (i, v) in row.iter_mut().enumerate() {
            *v = relief(x0 + i as i64, y0 + j as i64);
        }
    }
    let ctx = StepContext { frame: Frame::World(frame(x0, y0)), ..StepContext::new(seed, Progress::new()) };
    step.run(&mut t, &ctx)?;
    Ok(t.height)
}

/// The window `(x0, y0, w, h)` computed as a world pipeline would: grown by the step's reach on
/// every side, run, cut back.
fn window(step: &dyn Step, seed: u64, x0: i64, y0: i64, w: usize, h: usize) -> Vec<f32> {
    let Reach::Cells(r) = step.reach(&frame(x0, y0)) else { panic!("{step:?} is global") };
    let grown = run_window(step, seed, x0 - r as i64, y0 - r as i64, w + 2 * r, h + 2 * r).unwrap();
    let mut out = Vec::with_capacity(w * h);
    for row in grown.as_slice().chunks(w + 2 * r).skip(r).take(h) {
        out.extend_from_slice(&row[r..r + w]);
    }
    out
}

/// The bit-exact rule for one step: a big window at a negative origin, and odd-size windows
/// inside it, must agree cell for cell; far windows (|x| = 10⁷) must agree with a larger far
/// window; and the step must change the input somewhere.
fn assert_window_is_crop(step: &dyn Step) {
    let seed = 77;
    let (bx, by, bw, bh) = (-41i64, -23i64, 67usize, 53usize);
    let big = window(step, seed, bx, by, bw, bh);
    let changed = big
        .iter()
        .enumerate()
        .filter(|&(k, v)| *v != relief(bx + (k % bw) as i64, by + (k / bw) as i64))
        .count();
    assert!(changed * 10 >= bw * bh, "{step:?} changed only {changed} of {} cells", bw * bh);
    let subs = [
        (-41i64, -23i64, 1usize, 1usize),
        (-30, -20, 17, 9),
        (-2, 5, 27, 25),
        (10, -23, 15, 53),
        (-41, 0, 67, 3),
    ];
    for (x, y, w, h) in subs {
        assert!(x >= bx && y >= by && x + w as i64 <= bx + bw as i64 && y + h as i64 <= by + bh as i64);
        let sub = window(step, seed, x, y, w, h);
        for j in 0..h {
            for i in 0..w {
                let (gi, gj) = ((x - bx) as usize + i, (y - by) as usize + j);
                let (a, b) = (sub[j * w + i], big[gj * bw + gi]);
                assert!(
                    a.to_bits() == b.to_bits(),
                    "{step:?}: window ({x}, {y}) {w}×{h} differs at world cell ({}, {}): {a} vs {b}",
                    x + i as i64,
                    y + j as i64
                );
            }
        }
    }
    for (fx, fy) in [(10_000_000i64, -3i64), (-10_000_017, 9_999_991)] {
        let far = window(step, seed, fx, fy, 29, 21);
        let part = window(step, seed, fx + 7, fy + 4, 13, 11);
        for j in 0..11 {
            for i in 0..13 {
                let (a, b) = (part[j * 13 + i], far[(j + 4) * 29 + i + 7]);
                assert!(
                    a.to_bits() == b.to_bits(),
                    "{step:?}: far window ({fx}, {fy}) differs at ({i}, {j})"
                );
            }
        }
    }
}

#[test]
fn thermal_is_chunkable() {
    let s = step("thermal", &[("iterations", num(6.0)), ("talus-slope", num(0.3))]);
    assert_eq!(s.reach(&frame(0, 0)), Reach::Cells(12));
    assert_window_is_crop(&*s);
}

#[test]
fn thermal_olsen_is_chunkable_with_world_colours() {
    for nb in ["rotated-von-neumann", "moore", "von-neumann"] {
        let s = step(
            "thermal-olsen",
            &[
                ("iterations", num(3.0)),
                ("talus-slope", num(0.2)),
                ("neighbourhood", ParamValue::Text(nb.into())),
            ],
        );
        let colours = if nb == "moore" { 4 } else { 2 };
        assert_eq!(s.reach(&frame(0, 0)), Reach::Cells(3 * 3 * colours));
        assert_window_is_crop(&*s);
    }
}

#[test]
fn olsen_erosion_is_chunkable() {
    let s = step("olsen-erosion", &[("iterations", num(4.0)), ("talus-slope", num(2.0))]);
    assert_window_is_crop(&*s);
}

#[test]
fn hydraulic_erosions_are_chunkable() {
    let s = step("hydraulic", &[("iterations", num(5.0)), ("kr", num(0.5))]);
    assert_eq!(s.reach(&frame(0, 0)), Reach::Cells(10));
    assert_window_is_crop(&*s);
    let s = step("hydraulic-olsen", &[("iterations", num(4.0)), ("kr", num(0.5))]);
    assert_eq!(s.reach(&frame(0, 0)), Reach::Cells(24));
    assert_window_is_crop(&*s);
}

#[test]
fn world_droplets_are_chunkable() {
    let s = step(
        "droplets",
        &[
            ("iterations", num(2.0)),
            ("droplets-per-cell", num(0.3)),
            ("max-lifetime", num(4.0)),
            ("radius", num(2.0)),
            ("capacity", num(40.0)),
            ("min-capacity", num(0.5)),
        ],
    );
    // M = 4 + 1 + 2 = 7 cells; 16·M per iteration.
    assert_eq!(s.reach(&frame(0, 0)), Reach::Cells(2 * 16 * 7));
    assert_window_is_crop(&*s);
}

/// `step` run on a window of a world fails with one error naming `key`, whose allowed values
/// say `allowed`.
fn assert_refused_in_a_world(step: &dyn Step, key: &str, allowed_says: &str) {
    match run_window(step, 1, 0, 0, 9, 9) {
        Err(Error::InvalidParameter { name, allowed, .. }) => {
            assert_eq!(name, key);
            assert!(allowed.contains(allowed_says), "{allowed}");
        }
        other => panic!("{other:?}"),
    }
}

/// World-only keys missing in a world, and map-only keys set in one: one error naming the key.
#[test]
fn world_keys_are_required_in_a_world() {
    assert_refused_in_a_world(&*step("thermal", &[("iterations", num(1.0))]), "talus-slope", "world");
    assert_refused_in_a_world(&*step("droplets", &[]), "droplets-per-cell", "world");
    // Coarse droplets are for maps: refused in a world, naming the key and what is allowed.
    let s = step("droplets", &[("droplets-per-cell", num(0.3)), ("coarse", num(2.0))]);
    assert_refused_in_a_world(&*s, "coarse", "maps only");
    // A world has no border: a fall-off's edge margin is refused, naming the key.
    assert_refused_in_a_world(&*step("falloff", &[("edge-margin", num(0.1))]), "edge-margin", "world recipe");
}

/// Stream power and the hydrology steps are global: their reach says so (world recipes refuse
/// them), and stream power run on a window anyway is refused with an error naming it.
#[test]
fn global_steps_say_so() {
    for name in ["stream-power", "fill", "rivers", "lakes", "squig-rivers", "river-sources"] {
        assert_eq!(step(name, &[]).reach(&frame(0, 0)), Reach::Global, "{name}");
    }
    match run_window(&*step("stream-power", &[]), 1, 0, 0, 9, 9) {
        Err(e @ Error::NotInWorld { .. }) => assert!(e.to_string().contains("stream-power"), "{e}"),
        other => panic!("{other:?}"),
    }
}

fn list(v: &[f64]) -> ParamValue {
    ParamValue::List(v.to_vec())
}

#[test]
fn falloff_is_chunkable_around_a_world_centre() {
    for shape in ["circle", "rectangle"] {
        let s = step(
            "falloff",
            &[
                ("shape", ParamValue::Text(shape.into())),
                ("centre-m", list(&[-300.0, 120.0])),
                ("radius-m", num(700.0)),
            ],
        );
        assert_eq!(s.reach(&frame(0, 0)), Reach::Cells(0));
        assert_window_is_crop(&*s);
        // With a coast warp (its noise sampled at world cells) windows still agree.
        let warped = step(
            "falloff",
            &[
                ("shape", ParamValue::Text(shape.into())),
                ("centre-m", list(&[-300.0, 120.0])),
                ("radius-m", num(700.0)),
                ("coast-warp", num(0.3)),
                ("coast-size", num(0.4)),
            ],
        );
        assert_eq!(warped.reach(&frame(0, 0)), Reach::Cells(0));
        assert_window_is_crop(&*warped);
        assert_ne!(
            run_window(&*warped, 5, -41, -23, 67, 53).unwrap(),
            run_window(&*s, 5, -41, -23, 67, 53).unwrap()
        );
    }
    // Far from the centre every cell keeps the border value curve(0) = 0: the world's floor.
    let s = step("falloff", &[("centre-m", list(&[0.0, 0.0])), ("radius-m", num(700.0))]);
    let far = run_window(&*s, 1, 1000, 1000, 3, 2).unwrap();
    assert!(far.as_slice().iter().all(|&v| v == RANGE[0] as f32), "{:?}", far.as_slice());
}

/// Without a centre, the world fall-off, island and archipelago leave the terrain unchanged (an
/// endless continent); a centre without a radius is one error naming `radius-m`.
#[test]
fn no_centre_is_an_endless_continent() {
    for name in ["falloff", "island", "archipelago"] {
        let got = run_window(&*step(name, &[]), 3, -5, 7, 6, 4).unwrap();
        let want: Vec<f32> = (0..24).map(|k| relief(-5 + k % 6, 7 + k / 6)).collect();
        assert_eq!(got.as_slice(), &want[..], "{name}");
    }
    for (name, key) in [("falloff", "centre-m"), ("island", "centre-m"), ("archipelago", "centres-m")] {
        let s = step(name, &[(key, list(&[0.0, 0.0]))]);
        assert!(
            matches!(run_window(&*s, 1, 0, 0, 4, 4), Err(Error::InvalidParameter { name, .. }) if name == "radius-m"),
            "{name}"
        );
    }
}

#[test]
fn island_is_chunkable_around_a_world_centre() {
    let s =
        step("island", &[("centre-m", list(&[-200.0, 90.0])), ("radius-m", num(1100.0)), ("h0", num(1.3))]);
    assert_window_is_crop(&*s);
}

#[test]
fn archipelago_is_chunkable_with_given_or_hashed_islands() {
    let given = step(
        "archipelago",
        &[("centres-m", list(&[-600.0, -300.0, 200.0, 400.0, 10.0, -50.0])), ("radius-m", num(450.0))],
    );
    assert_window_is_crop(&*given);
    let hashed = step("archipelago", &[("spacing-m", num(500.0)), ("radius-m", num(420.0))]);
    assert_window_is_crop(&*hashed);
    // Hashed islands are everywhere, also 10⁷ cells away: some cells raised, some sunk to the floor.
    let far = run_window(&*hashed, 9, 10_000_000, -10_000_000, 60, 60).unwrap();
    let floor = far.as_slice().iter().filter(|&&v| v == RANGE[0] as f32).count();
    assert!(floor > 0 && floor < 3600, "{floor} of 3600 cells at the floor");
}

/// Islands far larger than their squares made every cell look at (2·r/s + 1)² squares: a
/// fuzzed recipe (12 129 m islands every 30 m, fuzz/corpus/recipe_toml/regression-*) took
/// minutes for a 17² window. The radius is bounded by the spacing, the spacing by the cell.
#[test]
fn archipelago_refuses_islands_much_larger_than_their_squares() {
    let info = registry().into_iter().find(|s| s.name == "archipelago").unwrap();
    let given = [("spacing-m", num(30.0)), ("radius-m", num(12129.0))]
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let p = Params::validate(info.params, &given).unwrap();
    let Err(err) = (info.build)(&p) else { panic!("radius-m = 12129 with spacing-m = 30 was accepted") };
    let err = err.to_string();
    assert!(err.contains("radius-m") && err.contains("at most 8 × spacing-m = 240 m"), "{err}");
    // 8 × the spacing is accepted, and runs when the squares are no smaller than a cell (30 m).
    let fine = step("archipelago", &[("spacing-m", num(30.0)), ("radius-m", num(240.0))]);
    run_window(&*fine, 1, 0, 0, 17, 17).unwrap();
    // A spacing under the cell size is refused when the window runs.
    let small = step("archipelago", &[("spacing-m", num(20.0)), ("radius-m", num(160.0))]);
    let err = run_window(&*small, 1, 0, 0, 17, 17).map(drop).unwrap_err().to_string();
    assert!(err.contains("spacing-m") && err.contains("at least the cell size (30 m)"), "{err}");
}

/// A world recipe: noise in metres, then `extra` steps (TOML `[[steps]]` tables).
fn world_recipe(extra: &str) -> terrasynth::Recipe {
    let text = format!(
        r#"
        name = "w"
        cell-size = 30.0
        width = 40
        height = 30
        seed = 5
        sea-level = 0.0
        [world]
        height-range = [-1500.0, 2500.0]
        [[steps]]
        type = "noise"
        octaves = 5
        feature-size-m = 3000.0
        [[steps]]
        type = "normalize"
        input-range = [-1.0, 1.0]
        min = -1500.0
        max = 2500.0
        {extra}
        "#
    );
    terrasynth::Recipe::from_toml_str(&text).unwrap()
}

/// A map recipe (no `[world]` table) that sets world-only keys is refused before it runs, one
/// problem per key naming it, since a finite map would ignore them; keys left at their default
/// (as report.json's resolved recipe writes `spacing-m = 2000`) pass, and the same steps
/// without the world keys run.
#[test]
fn map_recipes_refuse_world_only_keys() {
    let steps = r#"
        [[steps]]
        type = "falloff"
        centre-m = [0.0, 0.0]
        radius-m = 900.0
        [[steps]]
        type = "perturb"
        magnitude-m = 60.0
        spacing-m = 2000.0
        [[steps]]
        type = "thermal"
        iterations = 1
        talus-slope = 0.4
        [[steps]]
        type = "droplets"
        droplets-per-cell = 0.2
        "#;
    let mut map = world_recipe(steps);
    map.world = None;
    let e = Pipeline::new(map.clone(), &registry()).unwrap_err().to_string();
    for (step, key) in [
        ("step 1 (noise)", "feature-size-m"),
        ("step 3 (falloff)", "centre-m"),
        ("step 3 (falloff)", "radius-m"),
        ("step 4 (perturb)", "magnitude-m"),
        ("step 5 (thermal)", "talus-slope"),
        ("step 6 (droplets)", "droplets-per-cell"),
    ] {
        let said = format!("{step}: invalid parameter `{key}`");
        assert!(e.contains(&said) && e.contains("only in a world recipe"), "{said}: {e}");
    }
    assert!(!e.contains("spacing-m"), "{e}");
    // The world recipe itself is accepted.
    let world = Pipeline::new(world_recipe(steps), &registry()).map(drop);
    assert!(world.is_ok(), "{world:?}");
    // Without the world keys the map recipe runs.
    for entry in &mut map.steps {
        for key in
            ["feature-size-m", "centre-m", "radius-m", "magnitude-m", "talus-slope", "droplets-per-cell"]
        {
            entry.params.remove(key);
        }
    }
    let run = Pipeline::new(map, &registry()).and_then(|p| p.run(&PipelineProgress::new()));
    assert!(run.is_ok(), "{run:?}");
}

/// The steps chained in a world recipe: the pipeline grows each window by the reaches of the
/// steps after each step, so windows are crops of larger ones (the core's helper: odd sizes,
/// negative origins, |x| = 10⁷).
#[test]
fn world_recipes_of_shaping_and_erosion_steps_give_crops() {
    let recipe = world_recipe(
        r#"
        [[steps]]
        type = "island"
        centre-m = [-400.0, 300.0]
        radius-m = 3000.0
        [[steps]]
        type = "archipelago"
        spacing-m = 900.0
        radius-m = 700.0
        h0 = 1.2
        [[steps]]
        type = "thermal"
        iterations = 4
        talus-slope = 0.4
        [[steps]]
        type = "hydraulic-olsen"
        iterations = 3
        kr = 0.3
        [[steps]]
        type = "droplets"
        iterations = 1
        droplets-per-cell = 0.2
        max-lifetime = 6
        radius = 2.0
        "#,
    );
    terrasynth::recipe::world::assert_window_is_crop(&recipe);
}

/// Stream power and the hydrology steps are refused by a world recipe, one problem naming each.
#[test]
fn world_recipes_refuse_global_steps_by_name() {
    let recipe = world_recipe(
        r#"
        [[steps]]
        type = "stream-power"
        [[steps]]
        type = "fill"
        [[steps]]
        type = "rivers"
        "#,
    );
    let e = terrasynth::recipe::World::new(recipe).unwrap_err().to_string();
    for (k, name) in [(3, "stream-power"), (4, "fill"), (5, "rivers")] {
        assert!(e.contains(&format!("step {k} ({name}): cannot run on a window of a world")), "{e}");
    }
}

/// A chunkable step missing its world parameter (`talus-slope`, `droplets-per-cell`,
/// `radius-m`) is refused when the recipe is validated, before any step runs, with one problem
/// per step naming the key.
#[test]
fn world_recipes_refuse_missing_world_keys_before_running() {
    let recipe = world_recipe(
        r#"
        [[steps]]
        type = "thermal"
        [[steps]]
        type = "olsen-erosion"
        [[steps]]
        type = "droplets"
        [[steps]]
        type = "falloff"
        centre-m = [0.0, 0.0]
        [[steps]]
        type = "archipelago"
        spacing-m = 9000.0
        [[steps]]
        type = "hydraulic"
        "#,
    );
    let e = terrasynth::recipe::World::new(recipe).unwrap_err().to_string();
    for (k, name, key) in [
        (3, "thermal", "talus-slope"),
        (4, "olsen-erosion", "talus-slope"),
        (5, "droplets", "droplets-per-cell"),
        (6, "falloff", "radius-m"),
        (7, "archipelago", "radius-m"),
    ] {
        assert!(e.contains(&format!("step {k} ({name}): invalid parameter `{key}` = (absent)")), "{e}");
    }
    assert!(!e.contains("step 8"), "hydraulic needs no world key: {e}");
}

#[test]
fn perturb_is_chunkable_with_a_reach_of_its_magnitude() {
    let s = step("perturb", &[("magnitude-m", num(200.0)), ("spacing-m", num(600.0))]);
    // 200 m over 30 m cells: 6.67 cells, rounded up, plus the bilinear neighbour.
    assert_eq!(s.reach(&frame(0, 0)), Reach::Cells(8));
    assert_window_is_crop(&*s);
    // Without its world magnitude the step is global (refused by world recipes).
    assert_eq!(step("perturb", &[]).reach(&frame(0, 0)), Reach::Global);
}

#[test]
fn blend_is_chunkable_with_a_world_source() {
    for (mode, mask) in [("lerp", "constant"), ("add", "height"), ("multiply", "constant"), ("max", "height")]
    {
        let s = step(
            "blend",
            &[
                ("source", ParamValue::Text("noise".into())),
                ("feature-size-m", num(900.0)),
                ("source-range", list(&[-1.0, 1.0])),
                ("mode", ParamValue::Text(mode.into())),
                ("mask", ParamValue::Text(mask.into())),
                ("weight", num(0.6)),
            ],
        );
        assert_eq!(s.reach(&frame(0, 0)), Reach::Cells(0));
        assert_window_is_crop(&*s);
    }
    // The radial mask (relative to the map's centre) and a source without a world length are
    // global; a missing source range is one error naming it.
    let radial = step(
        "blend",
        &[
            ("source", ParamValue::Text("noise".into())),
            ("feature-size-m", num(900.0)),
            ("mask", ParamValue::Text("radial".into())),
        ],
    );
    assert_eq!(radial.reach(&frame(0, 0)), Reach::Global);
    assert_eq!(
        step("blend", &[("source", ParamValue::Text("noise".into()))]).reach(&frame(0, 0)),
        Reach::Global
    );
    let no_range =
        step("blend", &[("source", ParamValue::Text("noise".into())), ("feature-size-m", num(900.0))]);
    assert!(
        matches!(run_window(&*no_range, 1, 0, 0, 5, 5), Err(Error::InvalidParameter { name, .. }) if name == "source-range")
    );
}

#[test]
fn spectral_overlay_is_chunkable_with_a_world_spacing() {
    let s = step("spectral-overlay", &[("feature-size-m", num(700.0)), ("amplitude", num(0.05))]);
    assert_eq!(s.reach(&frame(0, 0)), Reach::Cells(0));
    assert_window_is_crop(&*s);
    assert_eq!(step("spectral-overlay", &[]).reach(&frame(0, 0)), Reach::Global);
}

#[test]
fn voronoi_regions_are_chunkable_on_world_points() {
    for mode in ["binary", "heights"] {
        let s = step(
            "voronoi-regions",
            &[("feature-size-m", num(400.0)), ("mode", ParamValue::Text(mode.into())), ("floor", num(0.2))],
        );
        assert_eq!(s.reach(&frame(0, 0)), Reach::Cells(0));
        assert_window_is_crop(&*s);
    }
    assert_eq!(step("voronoi-regions", &[]).reach(&frame(0, 0)), Reach::Global);
}
