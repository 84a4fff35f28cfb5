//! Controls: short random seeds (any u64 seed can still be typed), Fit view, and typed entries
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
    // Any u64, past the largest TOML integer: the map is made with it.
    wait_idle(&mut h);
    enter(&mut h, "seed field", "18446744073709551615");
    assert_eq!(h.state().doc.recipe.seed, u64::MAX);
    wait_idle(&mut h);
    assert!(h.state().terrain.is_some() && !h.state().is_preview, "the map of seed 2^64 - 1 was made");
    enter(&mut h, "seed field", "18446744073709551616");
    assert_eq!(h.state().doc.recipe.seed, u64::MAX, "one past u64 is not applied");
    h.get_by_label_contains("allowed an integer in 0..=18446744073709551615");
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

/// The 3D view's exaggeration and detail have typed fields beside their sliders, checked
/// against the slider's range.
#[test]
fn the_3d_view_values_can_be_typed_and_are_checked() {
    let mut h = app_harness();
    click_label(&mut h, "3D");
    enter(&mut h, "exaggeration field", "3.5");
    assert_eq!(h.state().view.camera.exaggeration, 3.5);
    enter(&mut h, "detail field", "300");
    assert_eq!(h.state().view.camera.detail, 300);
    enter(&mut h, "detail field", "5000");
    assert_eq!(h.state().view.camera.detail, 300, "not applied, not clamped");
    assert!(
        h.query_all_by_label_contains("`detail` = 5000: allowed a number in [32, 1024]").next().is_some(),
        "error under the field"
    );
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

/// Where the map's corners are drawn: they move when the left panel changes width.
fn map_corners(h: &egui_kittest::Harness<'static, terrasynth_gui::TerrainApp>) -> [eframe::egui::Pos2; 2] {
    let s = crate::common::SIDE as f32 - 1.0;
    [h.state().cell_to_screen(0.0, 0.0).unwrap(), h.state().cell_to_screen(s, s).unwrap()]
}

#[test]
fn the_left_panel_keeps_its_width_when_a_step_opens_and_while_dragging() {
    let mut h = app_harness();
    let before = map_corners(&h);
    click_label(&mut h, "1. noise");
    assert!(h.query_by_label("feature-size field").is_some(), "the step is open");
    assert_eq!(map_corners(&h), before, "opening a step");
    // Drag a slider across its whole width: the values' text changes, the panel does not.
    let slider = h.get_by_label("feature-size field").rect();
    let y = slider.center().y;
    let start = eframe::egui::pos2(slider.min.x - 60.0, y);
    h.hover_at(start);
    h.step();
    h.drag_at(start);
    for k in 0..6 {
        h.hover_at(eframe::egui::pos2(start.x - 40.0 + 20.0 * k as f32, y));
        h.step();
        assert_eq!(map_corners(&h), before, "while dragging");
    }
    h.drop_at(start);
    wait_idle(&mut h);
    assert_eq!(map_corners(&h), before);
    // The map starts right of the fixed-width panel.
    assert!(before[0].x >= terrasynth_gui::app::LEFT_PANEL_WIDTH, "{before:?}");
}

#[test]
fn the_noise_seed_field_says_what_minus_one_means() {
    use terrasynth::step::ParamValue;
    let mut h = app_harness();
    assert_eq!(h.state().doc.recipe.steps[0].kind, "noise");
    click_label(&mut h, "1. noise");
    // The recipe's seed field first, then the step's.
    let value = |h: &egui_kittest::Harness<'static, terrasynth_gui::TerrainApp>| {
        h.query_all_by_label("seed field").nth(1).and_then(|n| n.value())
    };
    assert_eq!(value(&h).as_deref(), Some("-1"));
    assert!(h.query_by_label("-1 = the step's seed (from the recipe seed)").is_some());
    let set = |h: &mut egui_kittest::Harness<'static, terrasynth_gui::TerrainApp>, v: f64| {
        h.state_mut().doc.recipe.steps[0].params.insert("seed".into(), ParamValue::Number(v));
        wait_idle(h);
    };
    set(&mut h, -2.0);
    assert!(h.query_by_label("-2 = the fixed reference seed").is_some());
    set(&mut h, 42.0);
    assert_eq!(value(&h).as_deref(), Some("42"));
    assert!(h.query_all_by_label_contains("= the").next().is_none(), "a plain seed needs no note");
}

#[test]
fn the_import_path_can_be_picked_with_the_file_browser() {
    let dir = crate::common::temp_dir("import-browse");
    let img = image::ImageBuffer::<image::Luma<u16>, _>::from_fn(17, 17, |x, y| {
        image::Luma([(x * 900 + y * 100) as u16])
    });
    img.save(dir.join("ramp.png")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a heightmap").unwrap();
    let mut h = app_harness();
    let mut step = terrasynth::recipe::StepEntry::new("import");
    step.enabled = false;
    step.params
        .insert("path".into(), terrasynth::step::ParamValue::Text(dir.join("x.png").display().to_string()));
    h.state_mut().doc.recipe.steps.insert(0, step);
    wait_idle(&mut h);
    click_label(&mut h, "1. import");
    click_label(&mut h, "Browse…");
    // The browser opens in the path's folder and lists heightmaps only.
    assert!(h.query_by_label("Heightmap to import").is_some());
    assert!(h.query_by_label("ramp.png").is_some());
    assert!(h.query_by_label("notes.txt").is_none());
    click_label(&mut h, "ramp.png");
    click_label(&mut h, "Use file");
    wait_idle(&mut h);
    let want = terrasynth::step::ParamValue::Text(dir.join("ramp.png").display().to_string());
    assert_eq!(h.state().doc.recipe.steps[0].params.get("path"), Some(&want));
    assert!(h.query_by_label("Heightmap to import").is_none(), "the browser closed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The World menu lists the built-in world presets; opening one shows the world view, whose
/// chunks arrive from the workers, and "Back to the editor" returns to the project untouched. A
/// preset that is not a world gives one error in the error bar.
#[test]
fn the_world_menu_opens_a_world_view_and_back_returns_to_the_project() {
    let mut h = app_harness();
    let seed = h.state().doc.recipe.seed;
    h.state_mut().open_world("island");
    assert!(!h.state().showing_world());
    let e = h.state().error.clone().unwrap_or_default();
    assert!(e.contains("cannot open world `island`") && e.contains("not a world recipe"), "{e}");
    let worlds = terrasynth_gui::panels::world_presets();
    assert!(worlds.iter().any(|p| p.name == "world"), "the `world` preset is in the World menu");
    click_label(&mut h, "World");
    click_label(&mut h, "world");
    assert!(h.state().showing_world());
    for _ in 0..200 {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    h.get_by_label_contains("World `world`: drag to pan");
    click_label(&mut h, "Back to the editor");
    assert!(!h.state().showing_world());
    assert_eq!(h.state().doc.recipe.seed, seed);
}

/// Hovers the first widget labelled `label` until a tooltip containing `tip` shows (egui shows
/// it once the pointer has rested; each kittest step is 1/60 s).
fn tooltip_shows(
    h: &mut egui_kittest::Harness<'static, terrasynth_gui::TerrainApp>,
    label: &str,
    tip: &str,
) -> bool {
    h.query_all_by_label(label).next().unwrap_or_else(|| panic!("no {label}")).hover();
    for _ in 0..60 {
        h.step();
        if h.query_all_by_label_contains(tip).next().is_some() {
            return true;
        }
    }
    false
}

/// Disabled controls say why they are disabled, and a choice parameter's menu shows its
/// documentation (the allowed values) on hover.
#[test]
fn disabled_controls_say_why_and_choice_menus_explain_themselves() {
    let mut h = app_harness();
    h.state_mut().view.seed_locked = true;
    h.step();
    assert!(tooltip_shows(&mut h, "seed field", "The seed is locked"), "locked seed field");
    assert!(tooltip_shows(&mut h, "Up", "Already the first step"), "Up on the first step");
    click_label(&mut h, "1. noise");
    let kind = terrasynth::recipe::registry().iter().find(|s| s.name == "noise").unwrap().params;
    let kind = kind.iter().find(|p| p.name == "kind").expect("noise kind");
    assert!(tooltip_shows(&mut h, "kind menu", kind.doc), "the kind menu's tooltip");
    assert!(
        h.query_all_by_label_contains(&format!("Allowed: {}", kind.allowed())).next().is_some(),
        "its allowed values"
    );
}

/// The export dialog's Engine menu: an engine whose sizes the map does not have shows what to
/// set, and its button sets it (the CLI test `editor_export_for_an_engine_equals_generate_engine`
/// checks the files against `generate --engine`).
#[test]
fn the_export_engine_menu_names_the_size_to_set_and_sets_it() {
    let mut h = app_harness();
    click_label(&mut h, "Export…");
    click_label(&mut h, "engine menu");
    click_label(&mut h, "unity");
    assert_eq!(h.state().export_engine, Some(terrasynth::io::engine::Engine::Unity));
    // 129² is a Unity size: nothing to fix.
    assert!(h.query_all_by_label_contains("set the size to").next().is_none());
    enter(&mut h, "width field", "193");
    assert!(
        h.query_all_by_label_contains("unity imports square maps of 33, 65").next().is_some(),
        "the note names the sizes"
    );
    click_label(&mut h, "Use 257 × 257");
    wait_idle(&mut h);
    assert_eq!((h.state().doc.recipe.width, h.state().doc.recipe.height), (257, 257));
    assert!(h.query_all_by_label_contains("set the size to").next().is_none());
}

/// A step's rows are labelled in plain words from the library's spec (`Erodibility K`, not
/// the recipe key `k`), and the tooltip names the recipe key, its range and unit.
#[test]
fn step_parameters_are_labelled_in_plain_words_with_their_key_in_the_tooltip() {
    let mut h = app_harness();
    h.state_mut()
        .doc
        .recipe
        .steps
        .push(terrasynth::recipe::StepEntry::new("stream-power").with("iterations", 1.0));
    wait_idle(&mut h);
    let i = h.state().doc.recipe.steps.len();
    click_label(&mut h, &format!("{i}. stream-power"));
    for (label, key) in [("Erodibility K", "k"), ("Hillslope diffusion", "kd"), ("Deposition G", "g")] {
        assert!(h.query_by_label(label).is_some(), "{label}");
        assert!(h.query_by_label(key).is_none(), "the key `{key}` is not the row's label");
    }
    h.get_by_label("Hillslope diffusion").hover();
    for _ in 0..60 {
        h.step();
    }
    assert!(
        h.query_all_by_label_contains("Recipe key `kd`").next().is_some(),
        "the tooltip names the recipe key"
    );
    assert!(h.query_by_label("cells²/dt").is_some(), "the unit follows the value");
}
