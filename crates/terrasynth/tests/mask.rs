//! Step masks (`[steps.mask]`, issue 10): a masked step equals the unmasked step where the mask
//! is 1 and its input where it is 0, the soft edge fades monotonically, bad tables get one
//! problem each naming the step, key and allowed range, world windows of masked steps are
//! crops of larger windows, and a recipe with masks survives TOML ↔ JSON.

use terrasynth::recipe::mask::{range_weight, slope_degrees};
use terrasynth::recipe::world::assert_window_is_crop;
use terrasynth::recipe::{MaskStroke, PaintedMask, Pipeline, PipelineProgress, Recipe, StepMask, registry};
use terrasynth::{Error, Heightmap};

/// A 65² noise map scaled to 0–1000 m (height-scale 1000), then `step` (TOML keys) with
/// `mask` (TOML keys of `[steps.mask]`, or none).
fn recipe(step: &str, mask: Option<&str>) -> Recipe {
    let mask = mask.map_or(String::new(), |m| format!("[steps.mask]\n{m}\n"));
    Recipe::from_toml_str(&format!(
        r#"
        name = "m"
        width = 65
        height = 65
        seed = 11
        [[steps]]
        type = "noise"
        [[steps]]
        type = "normalize"
        [[steps]]
        {step}
        {mask}
        "#
    ))
    .unwrap()
}

fn run(r: &Recipe) -> Heightmap {
    Pipeline::new(r.clone(), &registry()).unwrap().run(&PipelineProgress::new()).unwrap().terrain.height
}

/// The heights before the last step.
fn input_of(r: &Recipe) -> Heightmap {
    let mut r = r.clone();
    r.steps.pop();
    run(&r)
}

const THERMAL: &str = "type = \"thermal\"\niterations = 30\ntalus-k = 1.0";

#[test]
fn height_mask_is_the_step_inside_the_input_outside_and_fades_monotonically() {
    let (lo, hi, edge) = (300.0, 600.0, 80.0);
    let masked = recipe(THERMAL, Some(&format!("height = [{lo}, {hi}]\nsoft-edge = {edge}")));
    let input = input_of(&masked);
    let full = run(&recipe(THERMAL, None));
    let out = run(&masked);
    let (mut inside, mut outside, mut fading) = (0, 0, Vec::new());
    for i in 0..input.len() {
        let (a, b, o) = (input.as_slice()[i], full.as_slice()[i], out.as_slice()[i]);
        let m = a as f64 * 1000.0; // metres
        if (lo..=hi).contains(&m) {
            assert_eq!(o.to_bits(), b.to_bits(), "cell {i} at {m} m: inside the range");
            inside += 1;
        } else if m < lo - edge || m > hi + edge {
            assert_eq!(o.to_bits(), a.to_bits(), "cell {i} at {m} m: outside the edge");
            outside += 1;
        } else {
            let w = range_weight(m, [lo, hi], edge);
            assert!(w > 0.0 && w < 1.0, "{m}: {w}");
            let expected = a as f64 + w * (b as f64 - a as f64);
            assert!((o as f64 - expected).abs() < 1e-6, "cell {i}: {o} vs {expected}");
            // How far along the step's own change the masked cell went: w, to f32 rounding.
            if (b - a).abs() > 1e-4 {
                fading.push((if m < lo { lo - m } else { m - hi }, (o - a) as f64 / (b - a) as f64));
            }
        }
    }
    // The three kinds of cell are all there, and the step changed the cells inside.
    assert!(inside > 100 && outside > 100 && fading.len() > 10, "{inside} {outside} {}", fading.len());
    let changed = (0..input.len())
        .filter(|&i| {
            out.as_slice()[i] != input.as_slice()[i]
                && (lo..=hi).contains(&(input.as_slice()[i] as f64 * 1000.0))
        })
        .count();
    assert!(changed > 100, "{changed}");
    // Soft edge: the further outside the range, the less of the step (monotone, up to f32).
    fading.sort_by(|p, q| p.0.total_cmp(&q.0));
    for p in fading.windows(2) {
        assert!(p[1].1 <= p[0].1 + 1e-3, "not monotone: {:?} then {:?}", p[0], p[1]);
    }
}

#[test]
fn slope_mask_and_invert_split_the_map_between_step_and_input() {
    // The median slope of the input (degrees; heights in metres = height units × 1000), so
    // about half of the map is in the range.
    let (input, full) = (input_of(&recipe(THERMAL, None)), run(&recipe(THERMAL, None)));
    let mut slopes = slope_degrees(&input, 1000.0);
    slopes.sort_by(f64::total_cmp);
    let mask = format!("slope = [0.0, {}]", slopes[slopes.len() / 2]);
    let plain = run(&recipe(THERMAL, Some(&mask)));
    let inverted = run(&recipe(THERMAL, Some(&format!("{mask}\ninvert = true"))));
    // Hard edge: every cell is either the step's or the input's, and inverting swaps them.
    let (mut step_cells, mut input_cells) = (0, 0);
    for i in 0..input.len() {
        let (a, b) = (input.as_slice()[i].to_bits(), full.as_slice()[i].to_bits());
        let (p, q) = (plain.as_slice()[i].to_bits(), inverted.as_slice()[i].to_bits());
        if a == b {
            continue;
        }
        if p == b {
            assert_eq!(q, a, "cell {i}");
            step_cells += 1;
        } else {
            assert_eq!((p, q), (a, b), "cell {i}");
            input_cells += 1;
        }
    }
    assert!(step_cells > 50 && input_cells > 50, "{step_cells} / {input_cells}");
}

#[test]
fn painted_mask_limits_the_step_to_the_painted_disc() {
    let mut r = recipe(THERMAL, Some("painted = \"valley\""));
    r.masks.insert(
        "valley".into(),
        PaintedMask {
            strokes: vec![MaskStroke {
                erase: false,
                radius: 12.0,
                strength: 1.0,
                dabs: vec![[20.0, 30.0]],
                map: [65, 65],
            }],
        },
    );
    let (input, full, out) = (input_of(&r), run(&recipe(THERMAL, None)), run(&r));
    let painted = r.masks["valley"].rasterize(65, 65).unwrap();
    assert_eq!(out[(20, 30)], full[(20, 30)]);
    for i in 0..input.len() {
        if painted.as_slice()[i] == 0.0 {
            assert_eq!(out.as_slice()[i], input.as_slice()[i], "cell {i}");
        }
    }
    assert_ne!(out.as_slice(), input.as_slice());
    assert_ne!(out.as_slice(), full.as_slice());
}

/// Each bad table gives one problem naming the step (1-based, type), the key and the range.
#[test]
fn bad_masks_are_refused_with_the_step_key_and_range() {
    let problems = |r: Recipe| match Pipeline::new(r, &registry()) {
        Err(Error::Recipe(p)) => p.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
        other => panic!("expected problems, got {other:?}"),
    };
    for (mask, key, allowed) in [
        ("height = [600.0, 300.0]", "mask.height", "lowest <= highest"),
        ("slope = [10.0, 95.0]", "mask.slope", "[0, 90]"),
        ("slope = [0.0, 30.0]\nsoft-edge = -1.0", "mask.soft-edge", "[0, 1000000]"),
        ("painted = \"nowhere\"", "mask.painted", "it has: none"),
        ("image = \" \"", "mask.image", "path of a grayscale image"),
        ("invert = true", "mask", "at least one of `height`, `slope`, `painted`, `image`"),
    ] {
        let p = problems(recipe(THERMAL, Some(mask)));
        assert_eq!(p.len(), 1, "{mask}: {p:?}");
        assert!(p[0].starts_with("step 3 (thermal): "), "{p:?}");
        assert!(p[0].contains(&format!("`{key}`")) || p[0].contains(&format!("invalid `{key}`")), "{p:?}");
        assert!(p[0].contains("allowed") && p[0].contains(allowed), "{p:?}");
    }
    // A generator cannot be masked.
    let mut r = recipe(THERMAL, None);
    r.steps[0].mask = Some(StepMask { slope: Some([0.0, 10.0]), ..Default::default() });
    let p = problems(r);
    assert!(p.len() == 1 && p[0].starts_with("step 1 (noise): `noise` cannot be masked"), "{p:?}");
    // A painted mask's strokes are checked too, each bad value once.
    let mut r = recipe(THERMAL, Some("painted = \"p\""));
    let stroke =
        MaskStroke { erase: false, radius: 0.0, strength: 2.0, dabs: vec![[1.0, 1.0]], map: [65, 65] };
    r.masks.insert("p".into(), PaintedMask { strokes: vec![stroke] });
    let p = problems(r);
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(p[0].starts_with("step 3 (thermal): invalid `masks.p.strokes[0].radius` = 0: allowed"), "{p:?}");
    assert!(p[1].contains("`masks.p.strokes[0].strength` = 2: allowed a number in [0, 1]"), "{p:?}");
    // An unknown key in the table is a syntax error naming it.
    let err = Recipe::from_toml_str("[[steps]]\ntype = \"thermal\"\n[steps.mask]\nheigth = [0.0, 1.0]\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("heigth"), "{err}");
}

/// A world of noise (metres), then `step` (TOML keys) under `mask`.
fn masked_world(mask: &str) -> Recipe {
    masked_world_step("type = \"thermal\"\niterations = 3\ntalus-slope = 0.2", mask)
}

fn masked_world_step(step: &str, mask: &str) -> Recipe {
    Recipe::from_toml_str(&format!(
        r#"
        name = "w"
        cell-size = 30.0
        width = 64
        height = 48
        seed = 5
        [world]
        height-range = [-500.0, 1500.0]
        [[steps]]
        type = "noise"
        feature-size-m = 900.0
        [[steps]]
        type = "normalize"
        input-range = [-1.0, 1.0]
        min = -500.0
        max = 1500.0
        [[steps]]
        {step}
        [steps.mask]
        {mask}
        "#
    ))
    .unwrap()
}

/// Thermal erosion (reach 2 per iteration) and a point step, `terrace` (reach 0, so only the
/// mask's own +1 cell keeps the slope stencil inside the window), under slope and height masks.
#[test]
fn masked_world_windows_are_crops() {
    let terrace = "type = \"terrace\"\nlevels = 5\nsharpness = 0.8";
    for r in [
        masked_world("slope = [0.0, 25.0]\nsoft-edge = 5.0"),
        masked_world("height = [200.0, 900.0]\nsoft-edge = 100.0"),
        masked_world_step(terrace, "slope = [0.0, 30.0]\nsoft-edge = 10.0"),
        masked_world_step(terrace, "height = [0.0, 700.0]"),
    ] {
        let mask = format!("{:?}", r.steps[2]);
        // The mask does something in the test window (else the crop test could not fail).
        let mut plain = r.clone();
        plain.steps[2].mask = None;
        let p = PipelineProgress::new();
        let world = terrasynth::recipe::World::new(r.clone()).unwrap();
        let unmasked = terrasynth::recipe::World::new(plain).unwrap();
        let (a, b) =
            (world.window(-37, -23, 61, 47, &p).unwrap(), unmasked.window(-37, -23, 61, 47, &p).unwrap());
        assert_ne!(a.height.as_slice(), b.height.as_slice(), "{mask}");
        assert_window_is_crop(&r);
    }
    // A masked step still says which world key it lacks (the mask forwards the check).
    let err = Pipeline::new(
        masked_world_step("type = \"thermal\"\niterations = 3", "height = [0.0, 1.0]"),
        &registry(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("step 3 (thermal)") && err.contains("talus-slope"), "{err}");
    // Painted and image masks cover one map: a world refuses them, naming the step and key.
    let err = Pipeline::new(masked_world("image = \"mask.png\""), &registry()).unwrap_err().to_string();
    assert!(err.contains("step 3 (thermal)") && err.contains("mask.image") && err.contains("world"), "{err}");
}

#[test]
fn recipes_with_masks_round_trip_through_toml_and_json() {
    let mut r = recipe(THERMAL, Some("height = [100.5, 700.25]\nslope = [3.0, 40.0]\nsoft-edge = 12.5"));
    r.steps[1].mask = Some(StepMask { painted: Some("ridge".into()), invert: true, ..Default::default() });
    r.masks.insert(
        "ridge".into(),
        PaintedMask {
            strokes: vec![MaskStroke {
                erase: true,
                radius: 7.3,
                strength: 0.013,
                dabs: vec![[10.1, 20.7], [0.1 + 0.2, 33.333333333333336]],
                map: [65, 65],
            }],
        },
    );
    let toml = r.to_toml_string().unwrap();
    assert!(toml.contains("[steps.mask]") && toml.contains("[[masks.ridge.strokes]]"), "{toml}");
    let back = Recipe::from_toml_str(&toml).unwrap();
    assert_eq!(back, r);
    let json = back.to_json_string().unwrap();
    let again = Recipe::from_json_str(&json).unwrap();
    assert_eq!(again, r);
    assert_eq!(Recipe::from_toml_str(&again.to_toml_string().unwrap()).unwrap(), r);
    // A recipe without masks writes neither key.
    let plain = recipe(THERMAL, None).to_toml_string().unwrap();
    assert!(!plain.contains("mask"), "{plain}");
}
