//! The start screen (seed 004 §11), the help panel following the active mode, and the river
//! tool's modes and gallery (seed 004 §9; issue 14 parts 1 and 5).

use eframe::egui;
use egui_kittest::kittest::Queryable;
use terrasynth::hydro::RiverMode;
use terrasynth_gui::document::EditOp;

use crate::common::{HarnessSpec, click_label, harness, highest_cell, test_options, wait_idle};

fn start_options() -> terrasynth_gui::AppOptions {
    terrasynth_gui::AppOptions { start_screen: true, ..test_options() }
}

#[test]
fn the_start_screen_shows_the_parameters_and_generate_opens_the_editor() {
    let mut h = harness(HarnessSpec { options: start_options(), ..HarnessSpec::default() });
    assert!(h.state().showing_start_screen());
    // The preset, seed and size, the recipe's steps with the parameters they set, one line per
    // mode, and no editor panels yet.
    for label in ["Preset", "Seed", "Size", "Main parameters of the recipe", "What you can do"] {
        h.get_by_label(label);
    }
    let first = h.state().doc.recipe.steps[0].kind.clone();
    assert!(h.query_by_label_contains(&format!("1. {first}")).is_some(), "step 1 listed");
    // The parameters a step sets read as the editor's rows do: plain label, value, unit (the
    // island's noise sets `feature-size = 0.5`), never the recipe key.
    assert_eq!(h.state().doc.recipe.name, "island");
    h.get_by_label_contains("Feature size 0.5 fraction of the longer side");
    h.get_by_label_contains("Octaves 8");
    assert!(h.query_by_label_contains("feature-size").is_none(), "recipe keys are not shown");
    for (mode, _) in terrasynth_gui::start::WHAT_YOU_CAN_DO {
        assert!(h.query_by_label_contains(&format!("{mode}: ")).is_some(), "line for {mode}");
    }
    assert!(h.query_by_label("Terraform").is_none(), "the editor's tool buttons are not shown yet");
    // A seed typed on the start screen is the seed of the map Generate makes, exactly, up to
    // 2^64 - 1 (Generate is greyed while a job runs: the start-up map may be on its way).
    wait_idle(&mut h);
    crate::common::enter(&mut h, "seed field", "18446744073709551614");
    assert!(h.state().showing_start_screen(), "typing a seed does not leave the start screen");
    click_label(&mut h, "Generate");
    assert!(!h.state().showing_start_screen());
    wait_idle(&mut h);
    assert_eq!(h.state().doc.recipe.seed, u64::MAX - 1);
    assert!(h.state().terrain.is_some() && !h.state().is_preview, "the full map was made");
    h.get_by_label("Terraform");
}

/// A step that sets many parameters wraps its line inside the window: `rivers`' coarse
/// stream-power step (a dozen parameters, about 1 400 points on one line) at a window 1 000
/// points wide.
#[test]
fn the_start_screens_long_parameter_lines_wrap_inside_the_window() {
    let width = 1000.0;
    let mut h = harness(HarnessSpec {
        size: egui::vec2(width, 800.0),
        options: start_options(),
        ..HarnessSpec::default()
    });
    let rivers = terrasynth::recipe::preset("rivers").unwrap().recipe().unwrap();
    h.state_mut().doc.recipe = rivers;
    h.step();
    h.step();
    let line = h.get_by_label_contains("Coarse factor 3").rect();
    assert!(line.max.x <= width, "the line ends at x = {} in a window {width} wide", line.max.x);
    assert!(line.height() > 25.0, "wrapped over two lines or more (one is about 15 points): {line:?}");
    // The line is whole: its last parameter is there too.
    h.get_by_label_contains(
        "Coarse factor 3, Coarse time step 15, Time step 5, Full-resolution steps 0, Deposition G 0.5, \
         Hillslope area 13 cells, Iterations 10, Erodibility K 0.2, Hillslope diffusion 0.05 cells²/dt, \
         Area exponent m 0.4, Slope exponent n 1, Uplift rate 0.005 height/dt",
    );
}

#[test]
fn without_the_start_screen_option_the_editor_opens_directly() {
    let h = harness(HarnessSpec::default());
    assert!(!h.state().showing_start_screen());
    h.get_by_label("Terraform");
}

#[test]
fn the_help_panel_follows_the_active_mode() {
    let mut h = harness(HarnessSpec::default());
    for (label, now) in
        [("Terraform", "Now: Terraform"), ("Rivers", "Now: Rivers"), ("Inspect", "Now: Inspect")]
    {
        click_label(&mut h, label);
        h.get_by_label(now);
    }
    let rivers = terrasynth_gui::panels::help_for(terrasynth_gui::app::Tool::River);
    assert!(
        rivers.contains("Walk v1") && rivers.contains("Backtrack v2") && rivers.contains("Filled surface")
    );
}

#[test]
fn river_sources_take_the_chosen_mode_and_the_gallery_compares_all_three() {
    let mut h = harness(HarnessSpec { size: egui::vec2(1400.0, 1000.0), ..HarnessSpec::default() });
    click_label(&mut h, "Rivers");
    click_label(&mut h, "Backtrack v2 (seed)");
    assert_eq!(h.state().view.river_mode, RiverMode::BacktrackV2);
    let (x, y) = highest_cell(h.state());
    h.state_mut().add_river_source(x, y);
    wait_idle(&mut h);
    assert!(
        matches!(h.state().doc.edits.last(), Some(EditOp::RiverSource { mode: RiverMode::BacktrackV2, .. })),
        "{:?}",
        h.state().doc.edits.last()
    );
    // The seed's v2 always reaches the sea or the edge: its river was traced and drawn.
    assert_eq!(h.state().water.as_ref().map(|w| !w.rivers.is_empty()), Some(true));
    click_label(&mut h, "Compare the modes…");
    h.get_by_label("River modes");
    for (_, label, _) in terrasynth_gui::panels::RIVER_MODES {
        // The radio button on the left and the gallery's column heading.
        assert_eq!(h.query_all_by_label(label).count(), 2, "{label}");
    }
    // Each column's caption says how its one river ended ("1 at sea", "1 at edge", …).
    assert_eq!(h.query_all_by_label_contains("1 at ").count(), 3);
}

/// A key typed and Tab pressed within one frame (a fast typist, or a frame slowed by a busy
/// machine) reach the field typed in, then move the focus: the seed takes the digit, the next
/// field (the size) gets the focus and nothing else. Written in session 27 after a hand run
/// under Xvfb, where the window's frame held exactly these events (the digit's press, text and
/// release, Tab's press and release) and the digit reached both fields (the size's "513"
/// became "5133", clamped to 4097), three times out of three. This harness does not show that
/// leak with the same events, so the fix, `FocusMoveDeferral` (the Tab gets a frame of its
/// own, installed as the window's `raw_input_hook`), is tested in `panels/entry.rs` and was
/// checked by hand under Xvfb (seed, Tab, size typed at once: each field took its own text).
#[test]
fn a_key_typed_with_tab_in_one_frame_stays_in_its_field() {
    let mut h = harness(HarnessSpec { options: start_options(), ..HarnessSpec::default() });
    wait_idle(&mut h);
    let (width, height) = (h.state().doc.recipe.width, h.state().doc.recipe.height);
    h.get_by_label("seed field").focus();
    h.step();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.step();
    // As winit sends a digit: the key pressed, its text, the key released.
    let key = |key, pressed| egui::Event::Key {
        key,
        physical_key: Some(key),
        pressed,
        repeat: false,
        modifiers: egui::Modifiers::NONE,
    };
    h.event(key(egui::Key::Num9, true));
    h.event(egui::Event::Text("9".into()));
    h.event(key(egui::Key::Num9, false));
    h.event(key(egui::Key::Tab, true));
    h.event(key(egui::Key::Tab, false));
    for _ in 0..4 {
        h.step();
    }
    let r = &h.state().doc.recipe;
    assert_eq!((r.width, r.height), (width, height), "the size field took the digit typed into the seed");
    assert_eq!(r.seed, 9, "the seed field commits what was typed when Tab takes the focus");
}
