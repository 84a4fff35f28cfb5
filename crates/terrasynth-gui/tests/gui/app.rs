//! Behaviour tests: clicks, drags and keys go through egui's input, and the assertions read
//! the app's state.

use eframe::egui::{Color32, Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use terrasynth_gui::TerrainApp;
use terrasynth_gui::app::Tool;

use terrasynth::render::water::LAKE_RGBA;
use terrasynth_gui::AppOptions;
use terrasynth_gui::maprender::{MapStyle, ViewMode, render_rect};

use crate::common::{
    HarnessSpec, SIDE, app_harness, choose_file, click_label, drag_cells, harness, highest_cell, temp_dir,
    test_options, wait_idle,
};

fn undo(h: &mut Harness<'static, TerrainApp>) {
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    wait_idle(h);
}

fn redo(h: &mut Harness<'static, TerrainApp>) {
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    wait_idle(h);
}

#[test]
fn generate_shows_a_full_map_and_is_repeatable() {
    let mut h = app_harness();
    let app = h.state();
    let t = app.terrain.as_ref().expect("terrain after start");
    assert_eq!((t.height.width(), t.height.height()), (SIDE, SIDE));
    assert!(!app.is_preview);
    assert!(app.status.starts_with("Generated"), "{}", app.status);
    let first = app.height_bytes();
    let (lo, hi) = t.height.min_max().unwrap();
    assert!(hi > lo, "flat map");
    click_label(&mut h, "Generate");
    wait_idle(&mut h);
    assert_eq!(h.state().height_bytes(), first, "same recipe, same bytes");
}

#[test]
fn changing_a_parameter_regenerates_and_undo_redo_restore_it() {
    let mut h = app_harness();
    let before = h.state().height_bytes();
    let seed0 = h.state().doc.recipe.seed;
    click_label(&mut h, "Random");
    wait_idle(&mut h);
    let seed1 = h.state().doc.recipe.seed;
    assert_ne!(seed0, seed1);
    let after = h.state().height_bytes();
    assert_ne!(before, after, "a new seed changes the map");
    assert_eq!(h.state().undo_len(), 1);
    undo(&mut h);
    assert_eq!(h.state().doc.recipe.seed, seed0);
    assert_eq!(h.state().height_bytes(), before);
    redo(&mut h);
    assert_eq!(h.state().doc.recipe.seed, seed1);
    assert_eq!(h.state().height_bytes(), after);
}

#[test]
fn lock_keeps_the_seed_when_loading_a_preset() {
    let mut h = app_harness();
    h.get_by_label("Lock").click();
    h.step();
    assert!(h.state().view.seed_locked);
    let seed = h.state().doc.recipe.seed;
    h.state_mut().load_preset("mountains");
    wait_idle(&mut h);
    assert_eq!(h.state().doc.recipe.name, "mountains");
    assert_eq!(h.state().doc.recipe.seed, seed);
}

#[test]
fn modes_switch_from_the_toolbar() {
    let mut h = app_harness();
    click_label(&mut h, "Terraform");
    assert_eq!(h.state().view.tool, Tool::Terraform);
    assert!(h.query_all_by_label("Radius").next().is_some(), "brush settings shown");
    click_label(&mut h, "Rivers");
    assert_eq!(h.state().view.tool, Tool::River);
    click_label(&mut h, "3D");
    assert!(h.state().view.show_3d);
    h.step();
    assert!(h.state().has_3d_image(), "the 3D view drew a frame");
    click_label(&mut h, "2D");
    assert!(!h.state().view.show_3d);
    click_label(&mut h, "Inspect");
    assert_eq!(h.state().view.tool, Tool::Inspect);
}

#[test]
fn a_stroke_changes_the_map_and_undo_redo_return_the_exact_bytes() {
    let mut h = app_harness();
    click_label(&mut h, "Terraform");
    let before = h.state().height_bytes();
    drag_cells(&mut h, (40.0, 60.0), (90.0, 64.0));
    let after = h.state().height_bytes();
    assert_ne!(before, after, "the stroke raised the terrain");
    assert_eq!(h.state().doc.edits.len(), 1, "one stroke = one edit");
    assert_eq!(h.state().undo_len(), 1, "one stroke = one undo step");
    undo(&mut h);
    assert_eq!(h.state().height_bytes(), before, "undo restores every byte");
    assert!(h.state().doc.edits.is_empty());
    redo(&mut h);
    assert_eq!(h.state().height_bytes(), after, "redo restores every byte");
    // Replaying the document from scratch gives the same bytes as the live edit.
    click_label(&mut h, "Generate");
    wait_idle(&mut h);
    assert_eq!(h.state().height_bytes(), after, "regeneration replays the stroke exactly");
}

/// Clicks a river source on the highest land cell (the island's interior) with the Rivers
/// tool and waits for its river; returns the cell.
fn place_source_on_the_summit(h: &mut Harness<'static, TerrainApp>) -> (usize, usize) {
    click_label(h, "Rivers");
    let (x, y) = highest_cell(h.state());
    let p = h.state().cell_to_screen(x as f32, y as f32).unwrap();
    h.hover_at(p);
    h.step();
    h.drag_at(p);
    h.step();
    h.drop_at(p);
    h.step();
    wait_idle(h);
    (x, y)
}

#[test]
fn a_river_source_traces_a_river_to_the_sea_or_edge() {
    let mut h = app_harness();
    let (x, y) = place_source_on_the_summit(&mut h);
    let app = h.state();
    assert_eq!(app.doc.sources(), vec![(x, y)]);
    let water = app.water.as_ref().expect("water computed");
    assert_eq!(water.rivers.len(), 1);
    let river = &water.rivers[0];
    assert_eq!(river[0], (x, y));
    let t = app.terrain.as_ref().unwrap();
    let &(ex, ey) = river.last().unwrap();
    let at_edge = ex == 0 || ey == 0 || ex + 1 == SIDE || ey + 1 == SIDE;
    assert!(at_edge || t.height[(ex, ey)] < t.sea_level, "river ends at ({ex}, {ey})");
    undo(&mut h);
    assert!(h.state().doc.sources().is_empty());
    assert!(h.state().water.as_ref().is_none_or(|w| w.rivers.is_empty()));
}

#[test]
fn save_and_load_a_project_reproduces_the_terrain_exactly() {
    let dir = temp_dir("project");
    let path = dir.join("p.tsproj").display().to_string();
    let mut h = app_harness();
    click_label(&mut h, "Terraform");
    drag_cells(&mut h, (30.0, 30.0), (80.0, 90.0));
    h.state_mut().add_river_source(64, 64);
    wait_idle(&mut h);
    let bytes = h.state().height_bytes();
    let doc = h.state().doc.clone();
    assert!(h.state().has_unsaved_changes());
    click_label(&mut h, "Save As…");
    choose_file(&mut h, &path, "Save here");
    assert!(!h.state().has_unsaved_changes(), "{:?}", h.state().error);
    assert!(std::path::Path::new(&path).exists());

    let mut h2 = app_harness();
    assert_ne!(h2.state().height_bytes(), bytes);
    click_label(&mut h2, "Open…");
    choose_file(&mut h2, &path, "Open file");
    wait_idle(&mut h2);
    assert_eq!(h2.state().error, None);
    assert_eq!(h2.state().doc, doc, "document round-trips exactly");
    assert_eq!(h2.state().height_bytes(), bytes, "terrain reproduced bit for bit");
    assert!(!h2.state().has_unsaved_changes());
}

#[test]
fn a_corrupt_project_shows_an_error_and_keeps_the_state() {
    let dir = temp_dir("corrupt");
    let bad = dir.join("bad.tsproj");
    std::fs::write(
        &bad,
        b"{\"format\": \"terrasynth-project\", \"version\": 1, \"document\": {\"recipe\": 3",
    )
    .unwrap();
    let mut h = app_harness();
    let bytes = h.state().height_bytes();
    let doc = h.state().doc.clone();
    click_label(&mut h, "Open…");
    choose_file(&mut h, &bad.display().to_string(), "Open file");
    wait_idle(&mut h);
    let err = h.state().error.clone().expect("error shown");
    assert!(err.contains("Cannot open project"), "{err}");
    assert!(h.query_all_by_label_contains("Cannot open project").next().is_some(), "error visible in the UI");
    assert_eq!(h.state().doc, doc);
    assert_eq!(h.state().height_bytes(), bytes);
    // The error stays while other work finishes, until dismissed; the log keeps it.
    click_label(&mut h, "Generate");
    wait_idle(&mut h);
    assert!(h.state().error.is_some(), "a finished generation must not hide the error");
    click_label(&mut h, "Dismiss");
    assert_eq!(h.state().error, None);
    assert_eq!(h.state().error_log.len(), 1);
    click_label(&mut h, "Errors (1)");
    assert!(h.query_all_by_label_contains("Cannot open project").next().is_some(), "listed in the log");
}

/// `terrasynth-gui bad.tsproj`: the project cannot be opened, so the default map is generated
/// and the error is shown over it (it used to vanish when the first generation finished).
#[test]
fn a_bad_project_on_the_command_line_shows_an_error_at_start() {
    let dir = temp_dir("startup");
    let bad = dir.join("bad.tsproj");
    std::fs::write(&bad, b"not a project").unwrap();
    let options = AppOptions { open_at_start: Some(bad.clone()), generate_at_start: true, ..test_options() };
    let mut h = harness(HarnessSpec { options, ..HarnessSpec::default() });
    wait_idle(&mut h);
    h.run_steps(3);
    assert!(h.state().terrain.is_some() && !h.state().is_busy(), "the default map is generated");
    let err = h.state().error.clone().expect("start-up error kept after the generation");
    assert!(err.contains("Cannot open project") && err.contains("bad.tsproj"), "{err}");
    assert!(h.query_all_by_label_contains("Cannot open project").next().is_some(), "error visible");
    assert!(h.query_all_by_label_contains("unchanged").next().is_none(), "no false claim");
}

#[test]
fn an_invalid_parameter_shows_an_error_and_keeps_the_map() {
    let mut h = app_harness();
    let bytes = h.state().height_bytes();
    h.state_mut().doc.recipe.steps[0]
        .params
        .insert("octaves".into(), terrasynth::step::ParamValue::Number(-5.0));
    h.step();
    wait_idle(&mut h);
    let err = h.state().error.clone().expect("error shown");
    assert!(err.contains("octaves"), "{err}");
    assert_eq!(h.state().height_bytes(), bytes);
}

/// The Water view shows the lakes and rivers the export writes: every land cell of the
/// exported water.png is coloured exactly where the editor's water layer has a lake or a
/// river, and lakes away from rivers have water.png's lake colour. (That the export's files
/// are `generate`'s, byte for byte, is checked by the CLI's tests/editor_export.rs.)
#[test]
fn the_water_view_shows_the_lakes_and_rivers_the_export_writes() {
    let dir = temp_dir("export");
    let mut h = app_harness();
    h.state_mut().view.mode = terrasynth_gui::maprender::ViewMode::Water;
    wait_idle(&mut h);
    click_label(&mut h, "Export…");
    h.state_mut().export_dir = dir.display().to_string();
    click_label(&mut h, "Export now");
    wait_idle(&mut h);
    assert_eq!(h.state().error, None);
    for f in [
        "water.png",
        "flow.png",
        "biomes.png",
        "splat.png",
        "rivers.geojson",
        "report.json",
        "project.tsproj",
    ] {
        assert!(h.state().exported.iter().any(|e| e == f), "{f} missing; wrote {:?}", h.state().exported);
    }
    let state = h.state();
    let terrain = state.terrain.as_ref().expect("terrain");
    let water = state.water.as_ref().expect("water layers computed for the Water view");
    let png = image::open(dir.join("water.png")).unwrap().to_rgba8();
    assert_eq!((png.width() as usize, png.height() as usize), (SIDE, SIDE));
    let (mut fresh, mut lakes) = (0, 0);
    for (i, (&z, px)) in terrain.height.as_slice().iter().zip(png.pixels()).enumerate() {
        if z < terrain.sea_level {
            continue;
        }
        assert_eq!(px.0[3] != 0, water.is_fresh(i), "cell {i}: water.png {:?}", px.0);
        fresh += usize::from(water.is_fresh(i));
        if water.lake_labels.as_slice()[i] != 0 && !water.river_cells[i] {
            assert_eq!(px.0, terrasynth::render::water::LAKE_RGBA, "cell {i}");
            lakes += 1;
        }
    }
    assert!(fresh > 0 && !water.network.is_empty(), "no rivers on the test map");
    assert!(lakes > 0, "no lake away from rivers on the test map");
}

#[test]
fn erosion_runs_reports_epsilon_and_undoes_exactly() {
    let mut h = app_harness();
    let before = h.state().height_bytes();
    h.state_mut().run_erosion();
    wait_idle(&mut h);
    let (a, b) = h.state().erosion_scores().expect("ε shown");
    assert!(a.is_finite() && b.is_finite());
    assert_ne!(h.state().height_bytes(), before);
    undo(&mut h);
    assert_eq!(h.state().height_bytes(), before);
}

/// Cancel during a heavy generation brings back the previous full map (the preview used to
/// replace it for good, with "Generating…" left over the map), and the greyed-out Run erosion
/// says why it is disabled.
#[test]
fn cancel_restores_the_previous_full_map_and_disabled_buttons_say_why() {
    let mut h = harness(HarnessSpec { side: 1025, ..HarnessSpec::default() });
    let full = h.state().height_bytes();
    click_label(&mut h, "Erosion");
    // The rivers preset (stream power) at 1025² takes seconds; its 129² preview comes first.
    h.state_mut().load_preset("rivers");
    let t0 = std::time::Instant::now();
    while !h.state().is_preview {
        h.step();
        assert!(h.state().is_busy(), "the full map arrived before the test could cancel it");
        assert!(t0.elapsed() < std::time::Duration::from_secs(60), "no preview");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(h.state().map_overlay().is_some_and(|o| o.starts_with("Generating")));
    // While it runs, the disabled button tells why.
    h.get_by_label("Run erosion").hover();
    // egui shows a tooltip once the pointer has rested (each kittest step is 1/60 s).
    for _ in 0..60 {
        h.step();
        if h.query_all_by_label_contains("being generated").next().is_some() {
            break;
        }
    }
    assert!(
        h.query_all_by_label_contains("being generated").next().is_some(),
        "tooltip of the disabled button"
    );
    click_label(&mut h, "Cancel");
    wait_idle(&mut h);
    let app = h.state();
    assert!(!app.is_preview, "the full map is back");
    assert_eq!(app.height_bytes(), full, "the previous full map, byte for byte");
    assert_eq!(app.map_overlay(), None, "nothing left over the map");
    assert!(app.status.starts_with("Cancelled: showing the previous map"), "{}", app.status);
    assert!(app.can_edit() && app.edit_blocker().is_none());
    // The recipe is still the new one: Generate builds it.
    assert_eq!(app.doc.recipe.name, "rivers");
}

/// Exports the app's map into `dir` and checks that the shaded view's pixels (the map view's
/// style and renderer: the recipe's water and the sources' rivers) equal shaded.png's, pixel
/// for pixel; returns them.
fn shaded_view_equals_the_export(
    h: &mut Harness<'static, TerrainApp>,
    dir: &std::path::Path,
) -> Vec<Color32> {
    h.state_mut().export_to(&dir.display().to_string());
    wait_idle(h);
    assert_eq!(h.state().error, None);
    let app = h.state();
    let t = app.terrain.as_ref().unwrap();
    let c = app.colours().unwrap();
    let scale = app.doc.recipe.exports.height_scale;
    let style = MapStyle::new(&c.palette, (c.lo, c.hi), t.sea_level, scale, app.water_for_map())
        .with_recipe_water(c.recipe_water.as_deref());
    let view = render_rect(&t.height, &style, ViewMode::Shaded, (0, 0, SIDE, SIDE));
    // report.json has the generation's step timings and the ε of its erosion steps.
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let steps = &app.doc.recipe.steps;
    let timed: Vec<&str> =
        report["timings"].as_array().unwrap().iter().map(|t| t["type"].as_str().unwrap()).collect();
    let enabled: Vec<&str> = steps.iter().filter(|s| s.enabled).map(|s| s.kind.as_str()).collect();
    assert_eq!(timed, enabled, "one timing per enabled step");
    let scored = report["erosion_scores"].as_array().unwrap().len();
    let erosions = steps
        .iter()
        .filter(|s| s.enabled && ["stream-power", "droplets", "thermal"].contains(&s.kind.as_str()));
    assert_eq!(scored, erosions.count(), "ε after each erosion step");
    let png = image::open(dir.join("shaded.png")).unwrap().to_rgb8();
    for (i, (v, p)) in view.iter().zip(png.pixels()).enumerate() {
        assert_eq!([v.r(), v.g(), v.b()], p.0, "cell {i}");
    }
    view
}

/// What you see is what you export: the shaded view of a recipe with `rivers` and `lakes`
/// steps shows its rivers and lakes, pixel for pixel the exported shaded.png (they used to be
/// missing from the view).
#[test]
fn the_shaded_view_shows_the_rivers_and_lakes_the_export_writes() {
    let dir = temp_dir("wysiwyg");
    let mut h = app_harness();
    h.state_mut().load_preset("rivers");
    (h.state_mut().doc.recipe.width, h.state_mut().doc.recipe.height) = (SIDE, SIDE);
    wait_idle(&mut h);
    assert_eq!(h.state().view.mode, ViewMode::Shaded);
    let view = shaded_view_equals_the_export(&mut h, &dir);
    let mask =
        h.state().colours().unwrap().recipe_water.clone().expect("the rivers preset has rivers and lakes");
    let wet = mask.iter().filter(|&&w| w).count();
    assert!(wet > 50, "only {wet} river/lake cells");
    // And the water is blue there: rivers are visible.
    let blue = (0..SIDE * SIDE).filter(|&i| mask[i] && view[i].b() > view[i].r() + 20).count();
    assert!(blue * 10 >= wet * 9, "{blue} of {wet} water cells are blue");
    // The grey and slope views show the same water, in the export's lake colour, and their
    // own values elsewhere.
    let app = h.state();
    let (t, c) = (app.terrain.as_ref().unwrap(), app.colours().unwrap());
    let style = MapStyle::new(
        &c.palette,
        (c.lo, c.hi),
        t.sea_level,
        app.doc.recipe.exports.height_scale,
        app.water_for_map(),
    )
    .with_recipe_water(c.recipe_water.as_deref());
    let lake = Color32::from_rgb(LAKE_RGBA[0], LAKE_RGBA[1], LAKE_RGBA[2]);
    for mode in [ViewMode::Grayscale, ViewMode::Slope] {
        let px = render_rect(&t.height, &style, mode, (0, 0, SIDE, SIDE));
        assert!((0..SIDE * SIDE).filter(|&i| mask[i]).all(|i| px[i] == lake), "{mode:?}: water cells");
        let dry = (0..SIDE * SIDE).filter(|&i| !mask[i] && px[i] != lake).count();
        assert!(dry * 10 > (SIDE * SIDE - wet) * 9, "{mode:?}: {dry} dry cells drawn as themselves");
    }
}

/// Placed rivers are part of the terrain: a source clicked on the map gives a river that the
/// shaded view paints exactly as the exported shaded.png does, and that rivers.geojson lists
/// after the network (they used to be an overlay only, never exported).
#[test]
fn a_placed_river_is_painted_and_exported_as_the_view_shows_it() {
    let dir = temp_dir("placed-river");
    let mut h = app_harness();
    let (x, y) = place_source_on_the_summit(&mut h);
    assert_eq!(h.state().doc.sources(), vec![(x, y)]);
    let view = shaded_view_equals_the_export(&mut h, &dir);
    let app = h.state();
    let t = app.terrain.as_ref().unwrap();
    let water = app.water_for_map().expect("water computed");
    let placed = water.placed_cells.iter().filter(|&&w| w).count();
    assert!(placed >= water.rivers[0].len(), "{placed} painted cells");
    assert!(water.placed_cells[y * SIDE + x], "the source's cell is painted");
    let blue = (0..SIDE * SIDE).filter(|&i| water.placed_cells[i] && view[i].b() > view[i].r() + 20).count();
    assert!(blue * 10 >= placed * 9, "{blue} of {placed} river cells are blue");
    // rivers.geojson: the network, then the placed river from the source.
    let geo: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rivers.geojson")).unwrap()).unwrap();
    let features = geo["features"].as_array().unwrap();
    assert_eq!(features.len(), water.network.len());
    let last = features.last().unwrap()["geometry"]["coordinates"][0].as_array().unwrap().clone();
    let cs = t.height.cell_size();
    assert_eq!((last[0].as_f64().unwrap(), last[1].as_f64().unwrap()), (x as f64 * cs, y as f64 * cs));
    let _ = std::fs::remove_dir_all(&dir);
}

/// When the recipe carves its rivers, placing a river source cuts it into the map at once
/// (the map is rebuilt: it equals the project's map), and undo takes the cut away.
#[test]
fn a_river_source_is_carved_into_the_map_when_the_recipe_carves() {
    use terrasynth::recipe::{PipelineProgress, StepEntry};
    let mut h = app_harness();
    h.state_mut()
        .doc
        .recipe
        .steps
        .push(StepEntry::new("rivers").with("threshold", 0.02).with("carve-depth", 0.03));
    wait_idle(&mut h);
    let before = h.state().height_bytes();
    let (x, y) = highest_cell(h.state());
    h.state_mut().add_river_source(x, y);
    wait_idle(&mut h);
    assert!(h.state().rebuilds_on_edit());
    let built = h.state().doc.build(&PipelineProgress::new()).unwrap();
    assert_eq!(
        h.state().terrain.as_ref().unwrap().height.as_slice(),
        built.height.as_slice(),
        "the project's map"
    );
    assert_ne!(h.state().height_bytes(), before, "the river is cut into the heights");
    h.state_mut().undo();
    wait_idle(&mut h);
    assert_eq!(h.state().height_bytes(), before, "undo takes the cut away");
}

/// The Erosion panel's droplets count themselves ("auto": one droplet per cell, the count that
/// carves gullies), and world-only parameters (droplets per world cell, a falloff's world
/// centre and radius) are not offered on a single map, where they would do nothing.
#[test]
fn droplets_default_to_one_per_cell_and_world_only_parameters_are_hidden_on_a_map() {
    let mut h = harness(HarnessSpec::default());
    click_label(&mut h, "Erosion");
    h.state_mut().erosion.set_kind("droplets");
    h.step();
    h.get_by_label("Droplets");
    assert!(h.query_by_label("Droplets per cell").is_none(), "a world-only key on a map");
    let before = h.state().height_bytes();
    click_label(&mut h, "Run erosion");
    wait_idle(&mut h);
    assert_ne!(h.state().height_bytes(), before, "the droplets eroded the map");
    let run = h.state().doc.edits.last().cloned();
    let Some(terrasynth_gui::document::EditOp::Erode { step, .. }) = run else { panic!("{run:?}") };
    assert_eq!(step.kind, "droplets");
    assert!(!step.params.contains_key("droplets"), "auto, not a fixed count: {:?}", step.params);
    // The island's falloff step: its curve and shape, not its world centre and radius.
    click_label(&mut h, "2. falloff");
    h.get_by_label("Fall-off curve");
    assert!(h.query_by_label("World centre").is_none() && h.query_by_label("World radius").is_none());
}
