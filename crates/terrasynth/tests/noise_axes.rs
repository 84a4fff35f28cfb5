//! Seed 003's scale and offset per axis on the `noise` step (issue 14 part 4): `scale-x`,
//! `scale-y`, `offset-x`, `offset-y`, on a map (offsets in cells) and in a world (offsets in
//! metres, windows still equal to crops). The maps use `feature-size · L` = 16 cells per noise
//! unit, a power of two, so the sample positions are exact and the shifted or strided maps
//! must match bit for bit.

use terrasynth::Heightmap;
use terrasynth::recipe::world::assert_window_is_crop;
use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, World, registry};

/// A `w × h` map of the default fBm noise with `keys` added to the step.
fn map(w: usize, h: usize, keys: &str) -> Heightmap {
    let recipe = Recipe::from_toml_str(&format!(
        "name = \"n\"\nwidth = {w}\nheight = {h}\nseed = 7\n[[steps]]\ntype = \"noise\"\nfeature-size = 0.25\n{keys}"
    ))
    .unwrap();
    Pipeline::new(recipe, &registry()).unwrap().run(&PipelineProgress::new()).unwrap().terrain.height
}

#[test]
fn the_defaults_are_the_unscaled_map() {
    let plain = map(64, 64, "");
    let explicit = map(64, 64, "scale-x = 1.0\nscale-y = 1.0\noffset-x = 0.0\noffset-y = 0.0");
    assert_eq!(plain.as_slice(), explicit.as_slice());
    assert!(plain.as_slice().iter().any(|&v| v != plain[(0, 0)]));
}

#[test]
fn an_offset_of_k_cells_is_the_map_shifted_by_k() {
    let plain = map(64, 64, "");
    let shifted = map(64, 64, "offset-x = 5.0\noffset-y = -3.0");
    for y in 3..64 {
        for x in 0..59 {
            assert_eq!(shifted[(x, y)].to_bits(), plain[(x + 5, y - 3)].to_bits(), "cell ({x}, {y})");
        }
    }
    assert_ne!(shifted.as_slice(), plain.as_slice());
    // Half a cell is not a crop: it samples between the cells.
    let half = map(64, 64, "offset-x = 0.5");
    assert!((0..63).any(|x| half[(x, 9)] != plain[(x, 9)] && half[(x, 9)] != plain[(x + 1, 9)]));
}

#[test]
fn scale_x_2_samples_every_other_column_of_a_map_twice_as_wide() {
    // 32 × 64 and 64 × 64 have the same longer side, so the same 16 cells per noise unit.
    let narrow = map(32, 64, "scale-x = 2.0");
    let wide = map(64, 64, "");
    for y in 0..64 {
        for x in 0..32 {
            assert_eq!(narrow[(x, y)].to_bits(), wide[(2 * x, y)].to_bits(), "cell ({x}, {y})");
        }
    }
    // scale-y = 0.5 doubles every row: rows 2j and 2j + 1 sample rows j and j + ½ of the map.
    let tall = map(64, 64, "scale-y = 0.5");
    for x in 0..64 {
        for j in 0..32 {
            assert_eq!(tall[(x, 2 * j)].to_bits(), wide[(x, j)].to_bits(), "cell ({x}, {})", 2 * j);
        }
    }
}

#[test]
fn bad_scales_and_offsets_are_refused_with_their_range() {
    for (keys, key) in [
        ("scale-x = 0.0", "scale-x"),
        ("scale-y = -2.0", "scale-y"),
        ("scale-x = 2000.0", "scale-x"),
        ("offset-y = 1e13", "offset-y"),
    ] {
        let recipe = Recipe::from_toml_str(&format!(
            "name = \"n\"\nwidth = 8\nheight = 8\n[[steps]]\ntype = \"noise\"\n{keys}"
        ))
        .unwrap();
        let e = Pipeline::new(recipe, &registry()).unwrap_err().to_string();
        assert!(e.contains(key) && e.contains("allowed"), "{keys}: {e}");
    }
}

/// A world recipe of the noise step with `keys`: 1 m cells, 16 m per noise unit.
fn world(keys: &str) -> Recipe {
    Recipe::from_toml_str(&format!(
        "name = \"w\"\ncell-size = 1.0\nwidth = 64\nheight = 64\nseed = 3\n[world]\nheight-range = [-1.0, 1.0]\n\
         [[steps]]\ntype = \"noise\"\nfeature-size-m = 16.0\n{keys}"
    ))
    .unwrap()
}

#[test]
fn world_windows_with_scale_and_offset_are_crops() {
    assert_window_is_crop(&world("scale-x = 2.5\nscale-y = 0.75\noffset-x = 1234.5\noffset-y = -77.25"));
}

#[test]
fn a_world_offset_of_k_cells_in_metres_is_the_window_k_cells_on() {
    let p = PipelineProgress::new();
    let plain = World::new(world("")).unwrap();
    let offset = World::new(world("offset-x = 5.0\noffset-y = -3.0")).unwrap();
    let a = offset.window(-20, 40, 17, 13, &p).unwrap().height;
    let b = plain.window(-15, 37, 17, 13, &p).unwrap().height;
    assert_eq!(a.as_slice(), b.as_slice());
    // scale-x = 2: cell X samples where cell 2X of the unscaled world does.
    let scaled = World::new(world("scale-x = 2.0")).unwrap().window(-8, 0, 8, 4, &p).unwrap().height;
    let wide = plain.window(-16, 0, 16, 4, &p).unwrap().height;
    for y in 0..4 {
        for x in 0..8 {
            assert_eq!(scaled[(x, y)].to_bits(), wide[(2 * x, y)].to_bits(), "cell ({x}, {y})");
        }
    }
}
