//! Step masks in the editor (issue 10): the Mask section of a step's parameters (kind, range
//! fields checked with the library's specs, soft edge), and the Paint mask brush that paints
//! into the recipe's painted mask, shown as an overlay, undone and redone as one step.

use eframe::egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use terrasynth::recipe::{PipelineProgress, StepEntry, StepMask};
use terrasynth_gui::TerrainApp;
use terrasynth_gui::document::Document;
use terrasynth_gui::settings::Tool;

use crate::common::{app_harness, click_label, drag_cells, enter, wait_idle};

/// The default island with a `terrace` step appended (a shaping step that visibly changes the
/// map), its row opened; returns the step's index.
fn with_terrace(h: &mut Harness<'static, TerrainApp>) -> usize {
    h.state_mut().doc.recipe.steps.push(StepEntry::new("terrace").with("levels", 4.0));
    wait_idle(h);
    let i = h.state().doc.recipe.steps.len() - 1;
    click_label(h, &format!("{}. terrace", i + 1));
    i
}

/// The map the app shows equals the document built from scratch (recipe, masks, edits).
fn assert_map_is_the_documents(h: &Harness<'static, TerrainApp>) {
    let built = Document::build(&h.state().doc, &PipelineProgress::new()).unwrap();
    assert_eq!(h.state().terrain.as_ref().unwrap().height.as_slice(), built.height.as_slice());
}

#[test]
fn the_mask_section_sets_a_checked_height_range() {
    let mut h = app_harness();
    let i = with_terrace(&mut h);
    let unmasked = h.state().height_bytes();
    click_label(&mut h, "mask menu");
    click_label(&mut h, "height range");
    wait_idle(&mut h);
    let mask = h.state().doc.recipe.steps[i].mask.clone().expect("a mask");
    assert_eq!(mask.height, Some([0.0, 500.0]));
    // Typed ranges commit on Enter, checked with the library's spec.
    enter(&mut h, "mask height field", "100, 300");
    enter(&mut h, "mask soft edge field", "40");
    let mask = h.state().doc.recipe.steps[i].mask.clone().unwrap();
    assert_eq!((mask.height, mask.soft_edge), (Some([100.0, 300.0]), 40.0));
    assert_ne!(h.state().height_bytes(), unmasked, "the mask changed the map");
    assert_map_is_the_documents(&h);
    // Bad values are not applied; the problem is written under the field.
    enter(&mut h, "mask height field", "300, 100");
    h.get_by_label_contains("lowest <= highest");
    enter(&mut h, "mask soft edge field", "-1");
    h.get_by_label_contains("Not applied: invalid parameter `soft-edge` = -1");
    let after = h.state().doc.recipe.steps[i].mask.clone().unwrap();
    assert_eq!(after, StepMask { height: Some([100.0, 300.0]), soft_edge: 40.0, ..StepMask::default() });
    // "no mask" removes it: the map is the unmasked one again.
    click_label(&mut h, "mask menu");
    click_label(&mut h, "no mask");
    wait_idle(&mut h);
    assert_eq!(h.state().doc.recipe.steps[i].mask, None);
    assert_eq!(h.state().height_bytes(), unmasked);
}

#[test]
fn painting_a_mask_limits_the_step_and_undoes_as_one_step() {
    let mut h = app_harness();
    let i = with_terrace(&mut h);
    let unmasked = h.state().height_bytes();
    click_label(&mut h, "mask menu");
    click_label(&mut h, "painted mask");
    wait_idle(&mut h);
    // An empty painted mask: the step applies nowhere, the map is the step's input.
    let mut before = h.state().doc.clone();
    before.recipe.steps.remove(i);
    let input = Document::build(&before, &PipelineProgress::new()).unwrap();
    assert_eq!(h.state().terrain.as_ref().unwrap().height.as_slice(), input.height.as_slice());
    click_label(&mut h, "Paint mask");
    assert_eq!(h.state().view.tool, Tool::Mask);
    h.get_by_label_contains("Drag on the map to paint `mask`");
    drag_cells(&mut h, (30.0, 40.0), (90.0, 70.0));
    let strokes = &h.state().doc.recipe.masks["mask"].strokes;
    assert_eq!(strokes.len(), 1);
    assert_eq!(strokes[0].map, [129, 129]);
    // The overlay shows the painted mask: painted along the stroke, not far from it.
    let overlay = h.state_mut().mask_overlay().expect("overlay while painting").clone();
    assert!(overlay[(60, 55)] > 0.2 && overlay[(120, 5)] == 0.0);
    // The step now applies where the mask was painted: between the input and the full step.
    let painted = h.state().height_bytes();
    assert_ne!(painted, unmasked);
    assert_ne!(h.state().terrain.as_ref().unwrap().height.as_slice(), input.height.as_slice());
    assert_map_is_the_documents(&h);
    // One undo removes the stroke, redo brings it back exactly.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    wait_idle(&mut h);
    assert!(h.state().doc.recipe.masks["mask"].strokes.is_empty());
    assert_eq!(h.state().terrain.as_ref().unwrap().height.as_slice(), input.height.as_slice());
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    wait_idle(&mut h);
    assert_eq!(h.state().doc.recipe.masks["mask"].strokes.len(), 1);
    assert_eq!(h.state().height_bytes(), painted);
}

/// The window with a painted mask in use: a terrace step limited to a painted band, the Paint
/// mask tool on and the mask tinted over the shaded map (the picture in docs/GUI.md).
#[test]
fn snapshot_painted_mask() {
    use crate::common::{HarnessSpec, harness, test_options};
    let mut h = harness(HarnessSpec {
        size: eframe::egui::vec2(1200.0, 760.0),
        side: 193,
        wgpu: true,
        options: test_options(),
    });
    h.state_mut().view.show_help = false;
    h.state_mut().view.mode = terrasynth_gui::maprender::ViewMode::Shaded;
    let i = with_terrace(&mut h);
    click_label(&mut h, "mask menu");
    click_label(&mut h, "painted mask");
    wait_idle(&mut h);
    click_label(&mut h, "Paint mask");
    drag_cells(&mut h, (50.0, 60.0), (140.0, 120.0));
    assert_eq!(h.state().doc.recipe.masks["mask"].strokes.len(), 1);
    assert!(h.state().doc.recipe.steps[i].mask.is_some());
    let c = h.state().cell_to_screen(150.0, 60.0).expect("map drawn");
    h.hover_at(c);
    h.step();
    h.state_mut().status = "Painted mask `mask`".into();
    h.step();
    h.step();
    h.snapshot("painted_mask");
}
