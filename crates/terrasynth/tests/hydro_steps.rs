//! The hydrology recipe steps: every entry runs on small and odd sizes, fills the terrain's
//! hydro layers, rejects bad parameters and is deterministic.

use std::collections::BTreeMap;

use terrasynth::Heightmap;
use terrasynth::hydro::{DepressionFiller, HydroLayers, steps};
use terrasynth::step::{ParamValue, Params, StepContext, StepInfo, Terrain};

/// The hydrology layers a step left on `t`.
fn hy(t: &Terrain) -> &HydroLayers {
    t.layers.get::<HydroLayers>().expect("the step stored its hydrology layers")
}

fn info(name: &str) -> StepInfo {
    terrasynth::recipe::registry()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

fn run(name: &str, given: &[(&str, ParamValue)], terrain: &mut Terrain, seed: u64) -> terrasynth::Result<()> {
    let info = info(name);
    let given: BTreeMap<String, ParamValue> = given.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let params = Params::validate(info.params, &given).map_err(terrasynth::Error::Recipe)?;
    let step = (info.build)(&params)?;
    step.run(terrain, &StepContext::new(seed, Default::default()))
}

fn bumpy_terrain(w: usize, h: usize) -> Terrain {
    let mut t = Terrain::new(w, h, 1.0).unwrap();
    t.height = Heightmap::from_fn(w, h, 1.0, |x, y| {
        let (fx, fy) = (x as f32 / w as f32, y as f32 / h as f32);
        (fx * 9.0).sin() * (fy * 7.0).cos() + 0.5 * (fx * 23.0 + fy * 5.0).sin() + fx
    })
    .unwrap();
    t.sea_level = -0.5;
    t
}

#[test]
fn names_categories_and_defaults() {
    let names: Vec<_> = steps().iter().map(|s| s.name).collect();
    assert_eq!(names, ["fill", "rivers", "river-sources", "lakes"]);
    // `squig-rivers` is a generator: declared in hydro, registered with the generators.
    for s in steps().into_iter().chain([terrasynth::hydro::SquigRivers::info()]) {
        let defaults = Params::defaults(s.params);
        assert!((s.build)(&defaults).is_ok(), "{} defaults do not build", s.name);
        for p in s.params {
            assert!(p.check(&p.default.to_value()).is_ok(), "{}.{}", s.name, p.name);
        }
    }
}

#[test]
fn every_step_runs_on_small_and_odd_sizes_deterministically() {
    for (w, h) in [(33, 33), (47, 29), (3, 3), (64, 17)] {
        for name in ["fill", "rivers", "lakes", "squig-rivers"] {
            let mut a = bumpy_terrain(w, h);
            let mut b = bumpy_terrain(w, h);
            run(name, &[], &mut a, 7).unwrap();
            run(name, &[], &mut b, 7).unwrap();
            assert_eq!((a.height.width(), a.height.height()), (w, h), "{name} changed the size");
            assert_eq!(a.height.as_slice(), b.height.as_slice(), "{name} is not deterministic");
            let rivers = |t: &Terrain| t.layers.get::<HydroLayers>().map(|l| l.rivers.clone());
            assert_eq!(rivers(&a), rivers(&b));
            // Only `fill` leaves no hydrology layers.
            assert_eq!(rivers(&a).is_none(), name == "fill", "{name}");
            assert!(a.height.as_slice().iter().all(|v| v.is_finite()));
        }
    }
}

#[test]
fn fill_step_equals_the_filler_and_rivers_fill_the_layers() {
    let mut t = bumpy_terrain(65, 49);
    let expected = DepressionFiller::with_epsilon().fill(&t.height, t.sea_level).unwrap();
    run("fill", &[], &mut t, 0).unwrap();
    assert_eq!(t.height.as_slice(), expected.as_slice());

    let mut t = bumpy_terrain(65, 49);
    let before = t.height.clone();
    run("rivers", &[("threshold", ParamValue::Number(0.01))], &mut t, 0).unwrap();
    assert_eq!(t.height, before, "carve-depth 0 must leave the terrain alone");
    assert!(!hy(&t).rivers.is_empty());
    let flow = hy(&t).flow.as_ref().unwrap();
    assert_eq!((flow.width(), flow.height()), (65, 49));
    assert!(hy(&t).rivers.iter().all(|r| r.points[0].discharge >= 0.01 * 65.0 * 49.0));

    run(
        "rivers",
        &[("threshold", ParamValue::Number(0.01)), ("carve-depth", ParamValue::Number(0.2))],
        &mut t,
        0,
    )
    .unwrap();
    let lowered = t.height.as_slice().iter().zip(before.as_slice()).filter(|(a, b)| a < b).count();
    assert!(lowered > 10, "carving lowered only {lowered} cells");
    assert!(t.height.as_slice().iter().zip(before.as_slice()).all(|(a, b)| a <= b));
}

#[test]
fn lakes_step_sets_water_and_labels_and_can_deepen_beds() {
    let mut t = bumpy_terrain(65, 65);
    run("lakes", &[("min-area", ParamValue::Number(1.0))], &mut t, 0).unwrap();
    let water = t.water.clone().unwrap();
    let labels = hy(&t).lake_labels.clone().unwrap();
    assert!(!hy(&t).lakes.is_empty());
    for (i, &l) in labels.as_slice().iter().enumerate() {
        assert_eq!(l != 0, water.as_slice()[i] > 0.0);
    }
    let base = t.height.clone();
    let mut deep = bumpy_terrain(65, 65);
    run(
        "lakes",
        &[("min-area", ParamValue::Number(1.0)), ("carve-depth", ParamValue::Number(0.5))],
        &mut deep,
        0,
    )
    .unwrap();
    let deep_water = deep.water.clone().unwrap();
    for i in 0..base.len() {
        assert!(deep.height.as_slice()[i] <= base.as_slice()[i]);
        assert!(deep_water.as_slice()[i] >= water.as_slice()[i]);
    }
    let v0: f64 = hy(&t).lakes.iter().map(|l| l.volume).sum();
    let v1: f64 = hy(&deep).lakes.iter().map(|l| l.volume).sum();
    assert!(v1 > v0);
}

/// The `rivers` step floods for the exact fill beside its ε fill and leaves it for the lakes
/// (`ExactFill`): lakes after `rivers` must equal lakes found alone, and a height or sea-level
/// change in between must make the lakes step flood afresh (the kept fill is then stale).
#[test]
fn lakes_after_rivers_equal_lakes_alone_even_when_the_heights_change_between() {
    let min_area = [("min-area", ParamValue::Number(1.0))];
    let lakes_of =
        |t: &Terrain| (t.water.clone().unwrap(), hy(t).lake_labels.clone().unwrap(), hy(t).lakes.clone());
    let alone = |edit: &dyn Fn(&mut Terrain)| {
        let mut t = bumpy_terrain(65, 65);
        edit(&mut t);
        run("lakes", &min_area, &mut t, 0).unwrap();
        lakes_of(&t)
    };
    let after_rivers = |edit: &dyn Fn(&mut Terrain)| {
        let mut t = bumpy_terrain(65, 65);
        run("rivers", &[], &mut t, 0).unwrap();
        edit(&mut t);
        run("lakes", &min_area, &mut t, 0).unwrap();
        lakes_of(&t)
    };
    // A 3×3 pit dug where the map has no lake: a new lake, if the change is seen.
    let dig = |t: &mut Terrain| {
        for (x, y) in (40..43).flat_map(|x| (20..23).map(move |y| (x, y))) {
            t.height[(x, y)] -= 0.4;
        }
    };
    let raise_sea = |t: &mut Terrain| t.sea_level = 0.2;
    let unchanged = alone(&|_| {});
    assert!(!unchanged.2.is_empty(), "the test map has lakes");
    assert_eq!(after_rivers(&|_| {}), unchanged);
    for (what, edit) in [("dug pit", &dig as &dyn Fn(&mut Terrain)), ("raised sea", &raise_sea)] {
        let fresh = alone(edit);
        assert_ne!(fresh, unchanged, "{what}: the edit changes the lakes");
        assert_eq!(after_rivers(edit), fresh, "{what}: the lakes step used a stale fill");
    }
    // A recipe with `rivers` and no `lakes` step: the outputs' lake search reads the kept
    // fill, and finds what it finds without it.
    let mut with_rivers = bumpy_terrain(65, 65);
    run("rivers", &[], &mut with_rivers, 0).unwrap();
    let labels = |t: &Terrain| terrasynth::hydro::WaterLayers::build(t).unwrap().lake_labels.into_owned();
    assert_eq!(labels(&with_rivers), labels(&bumpy_terrain(65, 65)));
    dig(&mut with_rivers);
    let mut dug = bumpy_terrain(65, 65);
    dig(&mut dug);
    assert_eq!(labels(&with_rivers), labels(&dug), "the outputs used a stale fill");
}

/// A terrain whose steps made no water layers: the layers from one ε fill for both parts
/// (`WaterLayers::parts`) equal the flow and the lakes computed apart, each with its own flood.
#[test]
fn water_layers_from_one_fill_equal_the_parts_computed_apart() {
    use terrasynth::hydro::WaterLayers;
    let terrain = bumpy_terrain(97, 71);
    let together = WaterLayers::build(&terrain).unwrap();
    let flow = WaterLayers::flow_part(&terrain).unwrap();
    let lakes = WaterLayers::lake_part(&terrain).unwrap();
    let apart = WaterLayers::from_parts(&terrain, flow, lakes);
    assert!(together.lake_count > 0 && !together.rivers.is_empty(), "a map with lakes and rivers");
    assert_eq!(together.flow, apart.flow);
    assert_eq!(together.rivers, apart.rivers);
    assert_eq!(together.lake_labels, apart.lake_labels);
    assert_eq!(together.lake_count, apart.lake_count);
    assert_eq!(together.computed, vec!["flow", "rivers", "lakes"]);
    assert_eq!(together.computed, apart.computed);
}

#[test]
fn bad_parameters_are_refused_with_their_name() {
    let cases: &[(&str, &str, ParamValue)] = &[
        ("rivers", "threshold", ParamValue::Number(0.0)),
        ("rivers", "max-width", ParamValue::Number(f64::NAN)),
        ("rivers", "carve-depth", ParamValue::Number(-1.0)),
        ("lakes", "min-area", ParamValue::Number(0.5)),
        ("lakes", "min-depth", ParamValue::Number(f64::INFINITY)),
        ("fill", "epsilon", ParamValue::Number(1.0)),
        ("squig-rivers", "roughness", ParamValue::Number(2000.0)),
        ("squig-rivers", "rivers", ParamValue::Number(65.0)),
        ("squig-rivers", "tributaries", ParamValue::Number(-1.0)),
    ];
    for (step, key, value) in cases {
        let mut t = bumpy_terrain(9, 9);
        let err = run(step, &[(key, value.clone())], &mut t, 0).unwrap_err().to_string();
        assert!(err.contains(&format!("`{key}`")), "{step}: {err}");
    }
}

#[test]
fn squig_step_changes_with_the_seed() {
    let mut a = bumpy_terrain(65, 65);
    let mut b = bumpy_terrain(65, 65);
    run("squig-rivers", &[], &mut a, 1).unwrap();
    run("squig-rivers", &[], &mut b, 2).unwrap();
    assert_ne!(a.height.as_slice(), b.height.as_slice());
    assert!(hy(&a).rivers.len() >= 4, "3 rivers + tributaries by default: {}", hy(&a).rivers.len());
}
