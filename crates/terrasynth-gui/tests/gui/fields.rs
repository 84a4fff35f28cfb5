//! Typed fields: text parameters type, numbers commit once on Enter (not on each keystroke),
//! and a value outside the library's range shows its error beside the field and runs nothing.

use eframe::egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use terrasynth::recipe::StepEntry;
use terrasynth::step::ParamValue;
use terrasynth_gui::TerrainApp;

use crate::common::{SIDE, app_harness, click_label, temp_dir, wait_idle};

/// Focuses the field named `name`, selects its text and types `text` one key at a time, with a
/// frame after each key (as a person types).
fn type_into(h: &mut Harness<'static, TerrainApp>, name: &str, text: &str) {
    h.get_by_label(name).focus();
    h.step();
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    for c in text.chars() {
        h.get_by_label(name).type_text(&c.to_string());
        h.step();
    }
}

#[test]
fn a_number_entry_commits_once_on_enter() {
    let mut h = app_harness();
    let jobs = h.state().jobs_started();
    type_into(&mut h, "width field", "257");
    // Typing alone changes nothing and starts nothing (it used to run 2, 25, 257).
    assert_eq!(h.state().doc.recipe.width, SIDE);
    assert_eq!(h.state().jobs_started(), jobs);
    assert_eq!(
        h.get_by_label("width field").value().as_deref(),
        Some("257"),
        "the field shows what was typed"
    );
    h.key_press(Key::Enter);
    wait_idle(&mut h);
    assert_eq!(h.state().doc.recipe.width, 257);
    assert_eq!(h.state().jobs_started(), jobs + 1, "one generation for the whole entry");
    let t = h.state().terrain.as_ref().unwrap();
    assert_eq!((t.height.width(), t.height.height()), (257, SIDE));
    // It is one undo step.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    wait_idle(&mut h);
    assert_eq!(h.state().doc.recipe.width, SIDE);
    assert_eq!(h.get_by_label("width field").value().as_deref(), Some("129"), "the field follows undo");
}

/// Moving to another field (focus loss) commits what was typed, as Enter does: one job.
#[test]
fn a_number_entry_commits_when_it_loses_focus() {
    let mut h = app_harness();
    let jobs = h.state().jobs_started();
    type_into(&mut h, "width field", "193");
    assert_eq!(h.state().doc.recipe.width, SIDE, "not applied while typing");
    h.get_by_label("height field").focus();
    h.step();
    wait_idle(&mut h);
    assert_eq!(h.state().doc.recipe.width, 193);
    assert_eq!(h.state().jobs_started(), jobs + 1, "one generation for the whole entry");
    let t = h.state().terrain.as_ref().unwrap();
    assert_eq!((t.height.width(), t.height.height()), (193, SIDE));
}

#[test]
fn an_out_of_range_value_shows_its_error_beside_the_field_and_runs_nothing() {
    let mut h = app_harness();
    let jobs = h.state().jobs_started();
    let bytes = h.state().height_bytes();
    for (field, typed) in [("width field", "0"), ("cell-size field", "-5"), ("seed field", "12x")] {
        type_into(&mut h, field, typed);
        h.key_press(Key::Enter);
        wait_idle(&mut h);
        let name = field.trim_end_matches(" field");
        let note = h.query_all_by_label_contains(&format!("`{name}`")).count();
        assert!(note > 0, "{field}: no error shown beside the field");
        assert_eq!(h.get_by_label(field).value().as_deref(), Some(typed), "the bad text stays to be fixed");
        // Not clamped, nothing ran, and no modal window covers the field.
        assert_eq!(h.state().jobs_started(), jobs, "{field}: a job ran");
        assert_eq!(h.state().height_bytes(), bytes);
        assert_eq!(h.state().error, None);
    }
    let r = &h.state().doc.recipe;
    assert_eq!((r.width, r.seed), (SIDE, 7));
    assert!(r.cell_size > 0.0);
    assert!(
        h.query_all_by_label_contains("allowed an integer in 2..=").next().is_some(),
        "the range is named"
    );
    // Fixing the value clears the error and applies it.
    type_into(&mut h, "width field", "65");
    h.key_press(Key::Enter);
    wait_idle(&mut h);
    assert_eq!(h.state().doc.recipe.width, 65);
    assert!(h.query_all_by_label_contains("`width`").next().is_none(), "the error went away");
}

#[test]
fn typing_into_a_text_field_sets_the_import_path() {
    let dir = temp_dir("import");
    let path = dir.join("my dem.png");
    // A 16-bit ramp to import.
    let img = image::ImageBuffer::<image::Luma<u16>, _>::from_fn(33, 33, |x, y| {
        image::Luma([(x * 1500 + y * 400) as u16])
    });
    img.save(&path).unwrap();
    let mut h = app_harness();
    let mut step = StepEntry::new("import");
    step.enabled = false;
    h.state_mut().doc.recipe.steps.insert(0, step);
    wait_idle(&mut h);
    // Clicking the step's name (not only its arrow) shows its parameters.
    click_label(&mut h, "1. import");
    let typed = path.display().to_string();
    type_into(&mut h, "path field", &typed);
    assert_eq!(h.get_by_label("path field").value().as_deref(), Some(typed.as_str()), "typed text shows");
    assert_eq!(h.state().doc.recipe.steps[0].params.get("path"), None, "not applied before Enter");
    h.key_press(Key::Enter);
    wait_idle(&mut h);
    assert_eq!(h.state().doc.recipe.steps[0].params.get("path"), Some(&ParamValue::Text(typed.clone())));
    assert_eq!(h.get_by_label("path field").value().as_deref(), Some(typed.as_str()), "the field keeps it");
    // Enabled, the import runs: the map is the file's ramp (resampled to the map size).
    h.state_mut().doc.recipe.steps[0].enabled = true;
    h.state_mut().doc.recipe.steps.truncate(1);
    wait_idle(&mut h);
    assert_eq!(h.state().error, None);
    let t = h.state().terrain.as_ref().unwrap();
    assert!(t.height[(SIDE - 1, SIDE - 1)] > t.height[(0, 0)], "the imported ramp rises to the far corner");
}
