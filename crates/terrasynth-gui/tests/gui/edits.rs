//! Edits are map-relative: after a resize a stroke and a river source stay on the same spot of
//! the map (they used to replay at the same cell indices, squeezed into the top-left corner),
//! and a seed change keeps them in place and says so.

use eframe::egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use terrasynth::recipe::PipelineProgress;
use terrasynth_gui::TerrainApp;
use terrasynth_gui::document::Document;

use crate::common::{HarnessSpec, app_harness, click_label, drag_cells, enter, harness, wait_idle};

/// Centre of what the edits raised, as fractions `[x / (w − 1), y / (h − 1)]` of the map: the
/// height-weighted mean position of the cells above the unedited map of the same recipe.
fn raised_centre(app: &TerrainApp) -> [f64; 2] {
    let base = Document::new(app.doc.recipe.clone()).build(&PipelineProgress::new()).unwrap();
    let t = app.terrain.as_ref().unwrap();
    let (w, h) = (t.height.width(), t.height.height());
    let (mut sum, mut sx, mut sy) = (0.0, 0.0, 0.0);
    for (i, (a, b)) in t.height.as_slice().iter().zip(base.height.as_slice()).enumerate() {
        let d = (a - b).max(0.0) as f64;
        sum += d;
        sx += d * (i % w) as f64;
        sy += d * (i / w) as f64;
    }
    assert!(sum > 0.0, "nothing raised");
    [sx / sum / (w - 1) as f64, sy / sum / (h - 1) as f64]
}

#[test]
fn edits_keep_their_place_after_a_resize() {
    let mut h = harness(HarnessSpec { side: 513, ..HarnessSpec::default() });
    click_label(&mut h, "Terraform");
    drag_cells(&mut h, (120.0, 140.0), (220.0, 180.0));
    h.state_mut().add_river_source(300, 260);
    wait_idle(&mut h);
    let before = raised_centre(h.state());
    let bytes_513 = h.state().height_bytes();
    enter(&mut h, "width field", "1025");
    enter(&mut h, "height field", "1025");
    let t = h.state().terrain.as_ref().unwrap();
    assert_eq!((t.height.width(), t.height.height()), (1025, 1025));
    let status = h.state().status.clone();
    assert!(status.contains("keep their place"), "the status bar says what happened to the edits: {status}");
    let after = raised_centre(h.state());
    for k in 0..2 {
        assert!((after[k] - before[k]).abs() < 0.003, "stroke moved: {before:?} -> {after:?}");
    }
    // 513 → 1025 doubles every cell index: the source is on the same spot, its river from it.
    assert_eq!(h.state().doc.sources(), vec![(600, 520)]);
    let water = h.state().water.as_ref().expect("river traced");
    assert_eq!(water.rivers[0][0], (600, 520));
    // Undo back to 513: the exact map of before.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    wait_idle(&mut h);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    wait_idle(&mut h);
    assert_eq!(h.state().doc.recipe.width, 513);
    assert_eq!(h.state().height_bytes(), bytes_513);
}

/// A new cell size changes the metres a cell stands for, not the map's cells: strokes and river
/// sources stay on the same cells.
#[test]
fn a_cell_size_change_moves_no_edit() {
    let mut h = app_harness();
    click_label(&mut h, "Terraform");
    drag_cells(&mut h, (30.0, 40.0), (60.0, 50.0));
    h.state_mut().add_river_source(90, 70);
    wait_idle(&mut h);
    let before = raised_centre(h.state());
    let cell = h.state().doc.recipe.cell_size;
    enter(&mut h, "cell-size field", &format!("{}", cell * 2.0));
    assert_eq!(h.state().doc.recipe.cell_size, cell * 2.0);
    assert_eq!(h.state().doc.sources(), vec![(90, 70)], "the source kept its cell");
    let after = raised_centre(h.state());
    assert!(
        (after[0] - before[0]).abs() < 0.01 && (after[1] - before[1]).abs() < 0.01,
        "{before:?} -> {after:?}"
    );
}

#[test]
fn a_seed_change_keeps_the_edits_in_place_and_says_so() {
    let mut h = app_harness();
    click_label(&mut h, "Terraform");
    drag_cells(&mut h, (30.0, 40.0), (60.0, 50.0));
    let before = raised_centre(h.state());
    enter(&mut h, "seed field", "123456");
    assert_eq!(h.state().doc.recipe.seed, 123456);
    let status = h.state().status.clone();
    assert!(status.contains("stay where they were"), "{status}");
    assert!(
        h.query_all_by_label_contains("stay where they were").next().is_some(),
        "shown in the status bar"
    );
    let after = raised_centre(h.state());
    assert!(
        (after[0] - before[0]).abs() < 0.01 && (after[1] - before[1]).abs() < 0.01,
        "{before:?} -> {after:?}"
    );
}
