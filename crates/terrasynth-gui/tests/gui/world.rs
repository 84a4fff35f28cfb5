//! The world view driven headless with egui_kittest: a brush stroke painted across a chunk
//! border with the mouse, saved, reopened: the chunks' heights are the same, and the two chunks
//! join without a seam; undo/redo; the snapshots of an edited world and of a far zoom.

use std::time::{Duration, Instant};

use eframe::egui::{self, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use terrasynth::Recipe;
use terrasynth::recipe::world_edits::{WorldEdit, edited_window};
use terrasynth::recipe::{PipelineProgress, World};
use terrasynth_gui::world_view::{CHUNK, ChunkKey, WorldApp, WorldCamera, window_rgba};

/// A quick world (debug builds make its chunks in well under a second).
fn test_world() -> World {
    let r = Recipe::from_toml_str(
        r#"
        name = "test-world"
        cell-size = 30.0
        sea-level = 0.0
        palette = "classic"
        [world]
        height-range = [-1000.0, 2000.0]
        [[steps]]
        type = "noise"
        octaves = 6
        feature-size-m = 12000.0
        [[steps]]
        type = "normalize"
        input-range = [-1.0, 1.0]
        min = -1000.0
        max = 2000.0
        [[steps]]
        type = "thermal"
        iterations = 2
        talus-slope = 0.7
        "#,
    )
    .unwrap();
    World::new(r).unwrap()
}

fn harness(world: World, size: egui::Vec2, wgpu: bool) -> Harness<'static, WorldApp> {
    let mut b = Harness::builder().with_size(size).with_accessibility_check(false);
    if wgpu {
        b = b.wgpu();
    }
    let mut h = b.build_eframe(move |_cc| WorldApp::new(world, "test-world"));
    h.step();
    h
}

/// Steps frames until every wanted chunk is made and drawn (at most two minutes).
fn wait_chunks(h: &mut Harness<'static, WorldApp>) {
    let t0 = Instant::now();
    loop {
        h.step();
        if !h.state().chunks().busy() {
            h.step();
            h.step();
            if !h.state().chunks().busy() {
                return;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "chunks still being made after two minutes");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Drags the primary button from world cell `a` to `b`.
fn drag_cells(h: &mut Harness<'static, WorldApp>, a: [f64; 2], b: [f64; 2]) {
    let p0 = h.state().cell_to_screen(a).expect("map drawn");
    let p1 = h.state().cell_to_screen(b).expect("map drawn");
    h.hover_at(p0);
    h.step();
    h.drag_at(p0);
    h.step();
    for k in 1..=10 {
        let t = k as f32 / 10.0;
        h.hover_at(Pos2::new(p0.x + (p1.x - p0.x) * t, p0.y + (p1.y - p0.y) * t));
        h.step();
    }
    h.drop_at(p1);
    h.step();
}

fn click(h: &mut Harness<'static, WorldApp>, label: &str) {
    h.get_by_label(label).click();
    h.step();
    h.step();
}

fn enter_path(h: &mut Harness<'static, WorldApp>, path: &str) {
    h.get_by_label("Project file").focus();
    h.step();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("Project file").type_text(path);
    h.step();
}

fn chunk_heights(h: &Harness<'static, WorldApp>, key: ChunkKey) -> Vec<f32> {
    h.state().chunks().get(key).unwrap_or_else(|| panic!("chunk {key:?} not made")).heights.clone()
}

/// Paint a Raise stroke across the border of chunks (0, 0) and (1, 0) with the mouse; the
/// chunks are made again with it, equal to the edited world's windows, and their shared border
/// has no seam (heights and colours equal those of a window straddling the border). Undo
/// restores the plain world, redo the stroke. Save, open in a new view: the same heights.
#[test]
fn a_stroke_across_a_chunk_border_saves_reopens_and_has_no_seam() {
    let mut h = harness(test_world(), egui::vec2(900.0, 600.0), false);
    *h.state_mut().camera_mut() = WorldCamera { centre: [256.0, 128.0], points_per_cell: 2.0 };
    wait_chunks(&mut h);
    let (a, b) = (ChunkKey::new(0, 0), ChunkKey::new(1, 0));
    let plain_a = chunk_heights(&h, a);
    click(&mut h, "Raise");
    drag_cells(&mut h, [200.0, 120.0], [320.0, 140.0]);
    wait_chunks(&mut h);
    let app = h.state();
    assert_eq!(app.edits().len(), 1, "{}", app.message);
    let edit = &app.edits().entries().next().unwrap().edit;
    let WorldEdit::Stroke { dabs, .. } = edit else { panic!("{edit:?}") };
    assert!(dabs.first().unwrap()[0] < 250.0 && dabs.last().unwrap()[0] > 262.0, "{dabs:?}");
    let p = PipelineProgress::new();
    let world = app.chunks().world();
    for key in [a, b] {
        let want = edited_window(world, app.edits(), key.x * CHUNK as i64, 0, CHUNK, CHUNK, &p).unwrap();
        assert_eq!(chunk_heights(&h, key), want.terrain.height.as_slice(), "chunk {key:?}");
    }
    let (ha, hb) = (chunk_heights(&h, a), chunk_heights(&h, b));
    assert_ne!(ha, plain_a, "the stroke changed chunk (0, 0)");
    // No seam: a window straddling the border has the two chunks' border cells and colours.
    let straddle = edited_window(world, app.edits(), 128, 0, CHUNK, CHUNK, &p).unwrap().terrain;
    let (mid_rgba, _) = window_rgba(world, app.edits(), 128, 0).unwrap();
    let (ca, cb) = (&app.chunks().get(a).unwrap().rgba, &app.chunks().get(b).unwrap().rgba);
    let px = |img: &[u8], x: usize, y: usize| img[(y * CHUNK + x) * 4..(y * CHUNK + x) * 4 + 4].to_vec();
    for y in 0..CHUNK {
        assert_eq!(ha[y * CHUNK + CHUNK - 1], straddle.height[(CHUNK / 2 - 1, y)], "row {y}");
        assert_eq!(hb[y * CHUNK], straddle.height[(CHUNK / 2, y)], "row {y}");
        assert_eq!(px(ca, CHUNK - 1, y), px(&mid_rgba, CHUNK / 2 - 1, y), "row {y}");
        assert_eq!(px(cb, 0, y), px(&mid_rgba, CHUNK / 2, y), "row {y}");
    }
    // The stroke is a ridge across the border: the cells beside it were raised on both sides.
    let row = 130 * CHUNK;
    assert!(ha[row + CHUNK - 1] > plain_a[row + CHUNK - 1] + 10.0);
    // Undo, redo.
    click(&mut h, "Undo");
    wait_chunks(&mut h);
    assert_eq!(h.state().edits().len(), 0);
    assert_eq!(chunk_heights(&h, a), plain_a);
    click(&mut h, "Redo");
    wait_chunks(&mut h);
    assert_eq!(chunk_heights(&h, a), ha);
    // The same from the keyboard: Ctrl+Z, then Ctrl+Y.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.step();
    wait_chunks(&mut h);
    assert_eq!(h.state().edits().len(), 0, "Ctrl+Z undid the stroke");
    assert_eq!(chunk_heights(&h, a), plain_a);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Y);
    h.step();
    wait_chunks(&mut h);
    assert_eq!(h.state().edits().len(), 1, "Ctrl+Y redid it");
    assert_eq!(chunk_heights(&h, a), ha);
    // A river source.
    click(&mut h, "River source");
    let p0 = h.state().cell_to_screen([300.0, 60.0]).unwrap();
    h.get_by_label("Project file"); // the tool bar is drawn
    h.hover_at(p0);
    h.step();
    h.event(egui::Event::PointerButton {
        pos: p0,
        button: egui::PointerButton::Primary,
        pressed: true,
        modifiers: egui::Modifiers::NONE,
    });
    h.step();
    h.event(egui::Event::PointerButton {
        pos: p0,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.step();
    wait_chunks(&mut h);
    assert_eq!(h.state().edits().len(), 2, "{}", h.state().message);
    let (ha, hb) = (chunk_heights(&h, a), chunk_heights(&h, b));
    // Save, reopen in a new view.
    let dir = std::env::temp_dir().join(format!("terrasynth-world-kittest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("edited.tsproj");
    enter_path(&mut h, path.to_str().unwrap());
    click(&mut h, "Save world");
    assert!(h.state().message.starts_with("Saved"), "{}", h.state().message);
    let mut h2 = harness(World::from_preset("world").unwrap(), egui::vec2(900.0, 600.0), false);
    enter_path(&mut h2, path.to_str().unwrap());
    click(&mut h2, "Open world");
    assert!(h2.state().message.starts_with("Opened"), "{}", h2.state().message);
    wait_chunks(&mut h2);
    assert_eq!(h2.state().edits(), h.state().edits());
    assert_eq!(h2.state().chunks().world().recipe(), h.state().chunks().world().recipe());
    assert_eq!(chunk_heights(&h2, a), ha);
    assert_eq!(chunk_heights(&h2, b), hb);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Snapshot (wgpu): an edited world (strokes, a river). Look at it after `UPDATE_SNAPSHOTS=1`.
#[test]
fn snapshot_world_edited() {
    let mut h = harness(test_world(), egui::vec2(900.0, 600.0), true);
    *h.state_mut().camera_mut() = WorldCamera { centre: [256.0, 128.0], points_per_cell: 2.0 };
    wait_chunks(&mut h);
    let app = h.state_mut();
    let strokes = [
        (
            terrasynth::shape::brush::BrushMode::Raise,
            400.0,
            vec![[150.0, 60.0], [230.0, 110.0], [330.0, 150.0]],
        ),
        (terrasynth::shape::brush::BrushMode::Lower, 300.0, vec![[180.0, 200.0], [340.0, 190.0]]),
        (terrasynth::shape::brush::BrushMode::Flatten, 0.9, vec![[380.0, 60.0], [400.0, 80.0]]),
    ];
    for (mode, strength, dabs) in strokes {
        app.push_edit(WorldEdit::Stroke { mode, radius: 22.0, strength, dabs }).unwrap();
    }
    app.push_edit(WorldEdit::RiverSource { x: 230, y: 110, reach: 256, depth_m: 6.0, width: 2.0 }).unwrap();
    wait_chunks(&mut h);
    h.snapshot("world_edited");
}

/// Snapshot (wgpu): the `world` preset zoomed far out (level of detail, 1/32 point per cell).
#[test]
fn snapshot_world_far_zoom() {
    let mut far = harness(World::from_preset("world").unwrap(), egui::vec2(900.0, 600.0), true);
    *far.state_mut().camera_mut() = WorldCamera { centre: [0.0, 0.0], points_per_cell: 1.0 / 32.0 };
    wait_chunks(&mut far);
    assert_eq!(far.state().chunks().error, None);
    far.snapshot("world_far_zoom");
}

/// Types `text` into the field named `name`, presses Enter, and draws two frames.
fn enter(h: &mut Harness<'static, WorldApp>, name: &str, text: &str) {
    crate::common::type_and_enter(h, name, text);
    h.step();
    h.step();
}

/// The world view's brush values have typed fields beside their sliders, checked against the
/// slider's range (a bad value is refused with its range, not clamped), and its project file
/// can be picked with the file browser.
#[test]
fn world_brush_values_can_be_typed_and_the_project_file_browsed() {
    let mut h = harness(test_world(), egui::vec2(1600.0, 600.0), false);
    click(&mut h, "Raise");
    enter(&mut h, "radius field", "50");
    assert_eq!(h.state().radius, 50.0);
    enter(&mut h, "strength field", "120");
    assert_eq!(h.state().height_strength, 120.0);
    enter(&mut h, "radius field", "0");
    assert_eq!(h.state().radius, 50.0, "not applied, not clamped");
    let problem = h.state().field_error.clone().unwrap_or_default();
    assert!(problem.contains("`radius` = 0: allowed a number in [1, 400]"), "{problem:?}");
    // The problem is shown under the tool bar, apart from the message, which it leaves alone:
    // a Save made while the bad text stays in its field still says "Saved".
    h.get_by_label_contains("Not applied: `radius` = 0");
    assert!(h.state().message.is_empty(), "{}", h.state().message);
    click(&mut h, "Smooth");
    enter(&mut h, "strength field", "0.25");
    assert_eq!((h.state().blend_strength, h.state().height_strength), (0.25, 120.0));
    // Browse…: the folder of the current path, its projects listed; the chosen one fills the field.
    let dir = std::env::temp_dir().join(format!("terrasynth-world-browse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("saved.tsproj"), "").unwrap();
    std::fs::write(dir.join("notes.txt"), "").unwrap();
    h.state_mut().path = dir.join("new.tsproj").display().to_string();
    click(&mut h, "Browse…");
    assert!(h.query_by_label("World project file").is_some(), "the browser is open");
    assert!(h.query_by_label("notes.txt").is_none(), "only projects are listed");
    click(&mut h, "saved.tsproj");
    click(&mut h, "Use this file");
    assert!(h.query_by_label("World project file").is_none(), "the browser closed");
    assert_eq!(h.state().path, dir.join("saved.tsproj").display().to_string());
    let _ = std::fs::remove_dir_all(&dir);
}
