//! Snapshot tests: the whole window rendered by egui's wgpu renderer (on CI: Mesa's lavapipe,
//! software Vulkan) and compared with the PNGs in `tests/snapshots/`. Per-pixel threshold and the
//! number of pixels allowed to differ are in `kittest.toml`: enough for anti-aliasing drift
//! between Mesa versions, far below what a missing panel or a changed label costs.
//!
//! Regenerate after an intended UI change with `UPDATE_SNAPSHOTS=1 cargo test -p terrasynth-gui
//! snapshots`, look at the PNGs, commit them.

use eframe::egui;
use egui_kittest::Harness;
use terrasynth_gui::TerrainApp;
use terrasynth_gui::maprender::ViewMode;

use crate::common::{HarnessSpec, click_label, harness, highest_cell, test_options, wait_idle};

/// Map side of the snapshots (enough detail to see relief and rivers).
const SNAP_SIDE: usize = 193;

fn snapshot_harness() -> Harness<'static, TerrainApp> {
    harness(HarnessSpec {
        size: egui::vec2(1200.0, 760.0),
        side: SNAP_SIDE,
        wgpu: true,
        options: test_options(),
    })
}

/// Replaces the status text that holds a timing ("Generated in 12 ms") and runs a frame, so
/// the picture does not depend on the machine's speed.
fn settle(h: &mut Harness<'static, TerrainApp>, status: &str) {
    h.state_mut().status = status.into();
    h.step();
    h.step();
}

#[test]
fn snapshot_start_screen() {
    let mut h = snapshot_harness();
    settle(&mut h, "Generated");
    h.snapshot("start_screen");
}

/// The start screen itself (seed 004 §11): what `terrasynth-gui` opens on without a project.
/// (`snapshot_start_screen` above is the editor as it looks after the first Generate.)
#[test]
fn snapshot_start_page() {
    let mut h = harness(HarnessSpec {
        size: egui::vec2(1200.0, 760.0),
        side: SNAP_SIDE,
        wgpu: true,
        options: terrasynth_gui::AppOptions { start_screen: true, ..test_options() },
    });
    assert!(h.state().showing_start_screen());
    h.state_mut().doc.recipe.seed = 7;
    h.step();
    h.snapshot("start_page");
}

#[test]
fn snapshot_shaded_view_with_rivers() {
    let mut h = snapshot_harness();
    h.state_mut().view.mode = ViewMode::Shaded;
    h.state_mut().view.show_help = false;
    let (hx, hy) = highest_cell(h.state());
    // The summit and three points on the way to the coast.
    let c = SNAP_SIDE / 2;
    for (x, y) in [(hx, hy), ((hx + c) / 2, hy.saturating_sub(30)), (c - 40, c + 20), (c + 35, c + 30)] {
        h.state_mut().add_river_source(x, y);
        wait_idle(&mut h);
    }
    assert_eq!(h.state().water.as_ref().map(|w| w.rivers.len()), Some(4), "four rivers traced");
    settle(&mut h, "Rivers");
    h.snapshot("shaded_rivers");
}

#[test]
fn snapshot_terraform_mode_with_brush_outline() {
    let mut h = snapshot_harness();
    h.state_mut().view.show_help = false;
    h.state_mut().view.mode = ViewMode::Shaded;
    click_label(&mut h, "Terraform");
    let c = SNAP_SIDE as f32 / 2.0;
    let p = h.state().cell_to_screen(c, c).expect("map drawn");
    h.hover_at(p);
    h.step();
    settle(&mut h, "Terraform");
    h.snapshot("terraform_brush");
}

#[test]
fn snapshot_3d_view() {
    let mut h = snapshot_harness();
    h.state_mut().view.show_help = false;
    click_label(&mut h, "3D");
    assert!(h.state().view.show_3d);
    h.step();
    assert!(h.state().has_3d_image(), "the 3D view drew a frame");
    settle(&mut h, "3D");
    h.snapshot("view_3d");
}
