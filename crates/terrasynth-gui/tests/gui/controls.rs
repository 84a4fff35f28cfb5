//! Controls: short random seeds (any seed can still be typed), Fit view, and typed entries
//! beside the brush sliders.

use egui_kittest::kittest::Queryable;

use crate::common::{app_harness, click_label, enter, wait_idle};

#[test]
fn random_seeds_are_short_and_any_seed_can_be_typed() {
    let mut h = app_harness();
    let mut seen = Vec::new();
    for _ in 0..5 {
        click_label(&mut h, "Random");
        seen.push(h.state().doc.recipe.seed);
    }
    assert!(seen.iter().all(|&s| s < 1_000_000), "six digits at most: {seen:?}");
    seen.dedup();
    assert!(seen.len() > 1, "Random changes the seed: {seen:?}");
    wait_idle(&mut h);
    enter(&mut h, "seed field", "9000000000000000001");
    assert_eq!(h.state().doc.recipe.seed, 9_000_000_000_000_000_001, "a long seed typed exactly");
}

#[test]
fn fit_shows_the_whole_map_again() {
    let mut h = app_harness();
    h.state_mut().view.zoom = 4.0;
    h.state_mut().view.pan = [250.0, -120.0];
    click_label(&mut h, "Fit");
    assert_eq!((h.state().view.zoom, h.state().view.pan), (1.0, [0.0, 0.0]));
}

#[test]
fn brush_values_can_be_typed_and_are_checked() {
    let mut h = app_harness();
    click_label(&mut h, "Terraform");
    enter(&mut h, "radius field", "50");
    assert_eq!(h.state().view.brush.radius, 50.0);
    enter(&mut h, "strength field", "0.05");
    assert_eq!(h.state().view.brush.strength, 0.05);
    enter(&mut h, "radius field", "0");
    assert_eq!(h.state().view.brush.radius, 50.0, "not applied, not clamped");
    assert!(h.query_all_by_label_contains("`radius` = 0").next().is_some(), "error under the field");
}

#[test]
fn the_preset_menu_shows_every_preset_with_its_description() {
    let mut h = app_harness();
    click_label(&mut h, "preset menu");
    h.step();
    for p in terrasynth::recipe::presets() {
        let node = h.get_by_label(p.name);
        // Inside the window, not below the pop-up's fold (the last, `rivers`, used to be).
        assert!(node.rect().max.y < 900.0, "{} at {:?}", p.name, node.rect());
    }
    h.get_by_label("rivers").hover();
    for _ in 0..60 {
        h.step();
    }
    let about = terrasynth::recipe::preset("rivers").unwrap().recipe().unwrap().description;
    assert!(h.query_by_label(&about).is_some(), "the description shows on hover");
}
