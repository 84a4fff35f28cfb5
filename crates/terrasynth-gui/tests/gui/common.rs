//! Shared helpers: the app harness at a small map size, waiting for background jobs, clicks.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use eframe::egui::{self, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use terrasynth_gui::document::Document;
use terrasynth_gui::{AppOptions, TerrainApp};

/// Map side used by the tests (small, so debug builds stay quick).
pub const SIDE: usize = 129;

/// Options of a test app: no recovery file, no generation of the default preset at start.
pub fn test_options() -> AppOptions {
    AppOptions {
        recovery_path: None,
        recovery_interval: Duration::from_secs(3600),
        generate_at_start: false,
        open_at_start: None,
        recent_path: None,
        // The editor itself: the start screen has its own tests (start_screen.rs).
        start_screen: false,
    }
}

/// How to build a test harness.
pub struct HarnessSpec {
    /// Window size in points.
    pub size: egui::Vec2,
    /// Map side in cells.
    pub side: usize,
    /// Render with wgpu (needed for snapshots).
    pub wgpu: bool,
    /// App options.
    pub options: AppOptions,
}

impl Default for HarnessSpec {
    fn default() -> Self {
        Self { size: egui::vec2(1400.0, 900.0), side: SIDE, wgpu: false, options: test_options() }
    }
}

/// The app on the default preset at `spec.side`² with seed 7, generated (full map).
pub fn harness(spec: HarnessSpec) -> Harness<'static, TerrainApp> {
    let mut b = Harness::builder().with_size(spec.size).with_accessibility_check(false);
    if spec.wgpu {
        b = b.wgpu();
    }
    let (side, options) = (spec.side, spec.options);
    let mut h = b.build_eframe(move |cc| {
        let mut app = TerrainApp::with_options(cc, options);
        let mut recipe = app.doc.recipe.clone();
        recipe.width = side;
        recipe.height = side;
        recipe.seed = 7;
        app.new_document(Document::new(recipe));
        app
    });
    wait_idle(&mut h);
    h
}

/// [`harness`] with the default spec (no renderer, 129² map).
pub fn app_harness() -> Harness<'static, TerrainApp> {
    harness(HarnessSpec::default())
}

/// Steps frames until no job (generation, export, water) is running.
pub fn wait_idle(h: &mut Harness<'static, TerrainApp>) {
    let t0 = Instant::now();
    loop {
        h.step();
        if !h.state().is_busy() && !h.state().water_pending() {
            // Two more frames so results are drawn.
            h.step();
            h.step();
            if !h.state().is_busy() && !h.state().water_pending() {
                return;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "app stayed busy: {}", h.state().status);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A fresh, empty temporary folder for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("terrasynth-gui-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Clicks the one widget labelled `label` and runs two frames.
pub fn click_label(h: &mut Harness<'static, TerrainApp>, label: &str) {
    h.get_by_label(label).click();
    h.step();
    h.step();
}

/// The highest cell of the map (the island's interior).
pub fn highest_cell(app: &TerrainApp) -> (usize, usize) {
    let t = app.terrain.as_ref().expect("terrain");
    let s = t.height.as_slice();
    let i = (0..s.len()).max_by(|&a, &b| s[a].total_cmp(&s[b])).unwrap();
    (i % t.height.width(), i / t.height.width())
}

/// Drags from cell `a` to cell `b` on the 2D map with the primary button.
pub fn drag_cells(h: &mut Harness<'static, TerrainApp>, a: (f32, f32), b: (f32, f32)) {
    let p0 = h.state().cell_to_screen(a.0, a.1).expect("map drawn");
    let p1 = h.state().cell_to_screen(b.0, b.1).expect("map drawn");
    h.hover_at(p0);
    h.step();
    h.drag_at(p0);
    h.step();
    for k in 1..=8 {
        let t = k as f32 / 8.0;
        h.hover_at(Pos2::new(p0.x + (p1.x - p0.x) * t, p0.y + (p1.y - p0.y) * t));
        h.step();
    }
    h.drop_at(p1);
    h.step();
    wait_idle(h);
}

/// In the open file browser, types `path` (a full path) into the file name field and clicks
/// `confirm` ("Open file", "Save here", "Choose folder").
pub fn choose_file(h: &mut Harness<'static, TerrainApp>, path: &str, confirm: &str) {
    h.get_by_label("file name field").focus();
    h.step();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("file name field").type_text(path);
    h.step();
    click_label(h, confirm);
    wait_idle(h);
}

/// Focuses the field named `name`, replaces its text with `text` and presses Enter (any app:
/// the editor's tests wait with [`enter`], the world view's step on).
pub fn type_and_enter<S>(h: &mut Harness<'static, S>, name: &str, text: &str) {
    h.get_by_label(name).focus();
    h.step();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label(name).type_text(text);
    h.step();
    h.key_press(egui::Key::Enter);
}

/// Focuses the field named `name`, replaces its text with `text`, presses Enter and waits
/// for the editor to be idle.
pub fn enter(h: &mut Harness<'static, TerrainApp>, name: &str, text: &str) {
    type_and_enter(h, name, text);
    wait_idle(h);
}
