//! The seed generators in world recipes (issue 11 part 3): `voronoi`, `spectral`,
//! `diamond-square` and `mdp` make windows of an endless world that equal the same cells cut
//! from any larger window (odd sizes, negative origins, |x| = 10⁷ cells); the single-map
//! generators are refused in worlds with one error naming the step; `feature-size-m` is refused
//! in finite maps.

use terrasynth::recipe::world::assert_window_is_crop;
use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, World, preset, registry};

/// A world recipe: the generator step `step` (TOML keys), then `normalize` of `input-range`
/// onto the world's height range (so the whole recipe is chunkable).
fn world(step: &str, input_range: [f64; 2]) -> Recipe {
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
        {step}
        [[steps]]
        type = "normalize"
        input-range = [{}, {}]
        min = -500.0
        max = 1500.0
        "#,
        input_range[0], input_range[1]
    ))
    .unwrap()
}

#[test]
fn voronoi_world_windows_are_crops() {
    assert_window_is_crop(&world("type = \"voronoi\"\nfeature-size-m = 900.0", [0.0, 1.0]));
    assert_window_is_crop(&world(
        "type = \"voronoi\"\nfeature-size-m = 450.0\ncoefficients = [1.0, -0.5, 0.25]\nmetric = \"squared\"",
        [-1.0, 2.0],
    ));
}

#[test]
fn spectral_world_windows_are_crops() {
    assert_window_is_crop(&world("type = \"spectral\"\nfeature-size-m = 1500.0\npasses = 7", [-2.0, 2.0]));
    assert_window_is_crop(&world(
        "type = \"spectral\"\nfeature-size-m = 700.0\nstep = 2.5\ninterpolation = \"linear\"",
        [-2.0, 2.0],
    ));
}

#[test]
fn diamond_square_world_windows_are_crops() {
    assert_window_is_crop(&world("type = \"diamond-square\"\nfeature-size-m = 960.0", [-3.0, 3.0]));
    assert_window_is_crop(&world(
        "type = \"diamond-square\"\nfeature-size-m = 3840.0\nsmoothness = 0.6\ndetail = 4",
        [-3.0, 3.0],
    ));
}

#[test]
fn mdp_world_windows_are_crops() {
    assert_window_is_crop(&world("type = \"mdp\"\nfeature-size-m = 1920.0", [-8192.0, 8192.0]));
}

/// A generator without `feature-size-m` in a world, and the single-map generators, are refused
/// by `World::new` with one error naming the step; `feature-size-m` in a finite map is refused
/// naming the key.
#[test]
fn single_map_generators_are_refused_in_worlds() {
    for step in
        ["voronoi", "spectral", "diamond-square", "mdp", "fault", "circles", "triangular", "voronoi-ds"]
    {
        let e = World::new(world(&format!("type = \"{step}\""), [0.0, 1.0])).unwrap_err().to_string();
        assert!(e.contains(&format!("step 1 ({step}): cannot run on a window of a world")), "{step}: {e}");
    }
    for step in ["voronoi", "spectral", "diamond-square", "mdp"] {
        let mut r = world(&format!("type = \"{step}\"\nfeature-size-m = 900.0"), [0.0, 1.0]);
        r.world = None;
        r.steps.truncate(1);
        let e = Pipeline::new(r, &registry())
            .and_then(|p| p.run(&PipelineProgress::new()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("feature-size-m") && e.contains("only in a world recipe"), "{step}: {e}");
    }
}

/// The world presets are world recipes whose windows are crops of larger windows.
#[test]
fn world_presets_are_chunkable() {
    for name in ["world", "world-island", "world-archipelago"] {
        let recipe = preset(name).unwrap().recipe().unwrap();
        assert!(recipe.world.is_some(), "{name} is not a world recipe");
        assert_window_is_crop(&recipe);
    }
}
