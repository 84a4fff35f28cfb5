//! The editor's panels, each a small view over the [`Editor`] model with a
//! `ui(&mut self, ui, &mut Editor)` method, as in the egui demo app: the top bar, the recipe,
//! steps, tool (brush) and erosion panels on the left, the 2D map and 3D views in the centre,
//! the status bar, the help panel and the dialogs. Each keeps only its own UI state (textures,
//! menu choices, open windows); everything else is the model's.

mod brush;
mod dialogs;
mod entry;
mod erosion;
mod file_browser;
mod map_view;
mod mask;
mod params;
mod recipe;
mod rivers;
mod steps;
mod view_3d;

pub use brush::BrushPanel;
pub use dialogs::Dialogs;
pub use entry::{Entry, FocusMoveDeferral, entry_ui, error_note, split_at_focus_move, typed_slider};
pub use erosion::ErosionPanel;
pub use file_browser::{FileBrowser, Outcome, Purpose};
pub use map_view::{MapView, around};
pub use params::{param_tooltip, params_ui};
pub use recipe::RecipePanel;
pub use rivers::{RIVER_MODES, RiverGallery, river_mode_ui};
pub use steps::StepsPanel;
pub use view_3d::View3dPanel;

use eframe::egui;

use crate::editor::Editor;
use crate::maprender::gradient;
use crate::settings::{Tool, ViewMode};

/// The top bar: project and export dialogs, undo/redo, tools, 2D/3D, view mode, help.
#[derive(Default)]
pub struct TopBar {
    /// A world preset chosen in the World menu this frame (the app opens its world view).
    pub open_world: Option<String>,
}

/// The built-in presets that are worlds (a `[world]` table): the World menu.
pub fn world_presets() -> Vec<terrasynth::recipe::Preset> {
    terrasynth::recipe::presets().iter().copied().filter(|p| p.recipe().is_ok_and(|r| r.is_world())).collect()
}

impl TopBar {
    /// Draws the bar; the dialog buttons open windows of `dialogs`.
    pub fn ui(&mut self, ui: &mut egui::Ui, editor: &mut Editor, dialogs: &mut Dialogs) {
        ui.horizontal_wrapped(|ui| {
            if ui.button("New").on_hover_text("Start a new project from the first preset.").clicked() {
                dialogs.new_project(editor);
            }
            if ui
                .button("Open…")
                .on_hover_text("Open a project (.tsproj); the terrain is rebuilt exactly.")
                .clicked()
            {
                dialogs.open_project(editor, None);
            }
            let save_tip = match &editor.project_path {
                Some(p) => format!("Save the recipe, your edits and the view to {}.", p.display()),
                None => "Save the recipe, your edits and the view (asks where: the project has no file yet)."
                    .into(),
            };
            if ui.button("Save").on_hover_text(save_tip).clicked() {
                dialogs.save(editor);
            }
            if ui.button("Save As…").on_hover_text("Save the project to a new file.").clicked() {
                dialogs.save_as(editor);
            }
            let mut recent_chosen = None;
            ui.add_enabled_ui(!editor.recent.is_empty(), |ui| {
                ui.menu_button("Recent", |ui| {
                    for p in &editor.recent {
                        let name =
                            p.file_name().map_or(p.display().to_string(), |n| n.to_string_lossy().into());
                        if ui.button(name).on_hover_text(p.display().to_string()).clicked() {
                            recent_chosen = Some(p.clone());
                        }
                    }
                })
                .response
                .on_disabled_hover_text("No project opened or saved yet.")
            });
            if let Some(p) = recent_chosen {
                dialogs.open_project(editor, Some(p));
            }
            if let Some(p) = editor.recovery_file().map(|p| p.display().to_string())
                && ui
                    .button("Restore recovery file")
                    .on_hover_text(format!("Bring back the unsaved work of the last session ({p})."))
                    .clicked()
            {
                editor.restore_recovery();
            }
            let worlds = world_presets();
            ui.add_enabled_ui(!worlds.is_empty(), |ui| {
                ui.menu_button("World", |ui| {
                    for p in &worlds {
                        let doc = p.recipe().map(|r| r.description).unwrap_or_default();
                        if ui.button(p.name).on_hover_text(doc).clicked() {
                            self.open_world = Some(p.name.to_string());
                        }
                    }
                })
                .response
                .on_hover_text("Open an endless world: pan and zoom without edges, made chunk by chunk.")
                .on_disabled_hover_text("No world preset is built in.")
            });
            ui.separator();
            if ui
                .button("Export…")
                .on_hover_text("Write heightmaps, images and meshes (as `terrasynth generate`).")
                .clicked()
            {
                dialogs.show_export = true;
            }
            ui.separator();
            if ui
                .add_enabled(editor.can_undo(), egui::Button::new("Undo"))
                .on_hover_text("Undo the last edit or parameter change (Ctrl+Z).")
                .on_disabled_hover_text("Nothing to undo.")
                .clicked()
            {
                editor.undo();
            }
            if ui
                .add_enabled(editor.can_redo(), egui::Button::new("Redo"))
                .on_hover_text("Redo (Ctrl+Shift+Z).")
                .on_disabled_hover_text("Nothing to redo.")
                .clicked()
            {
                editor.redo();
            }
            ui.separator();
            let view = &mut editor.view;
            for (tool, label, tip) in [
                (
                    Tool::Inspect,
                    "Inspect",
                    "Look around: drag to pan, scroll to zoom, read heights under the cursor.",
                ),
                (
                    Tool::Terraform,
                    "Terraform",
                    "Paint the terrain: raise, lower, flatten or smooth while dragging.",
                ),
                (Tool::River, "Rivers", "Click to place a river source; the river runs downhill to the sea."),
            ] {
                ui.selectable_value(&mut view.tool, tool, label).on_hover_text(tip);
            }
            ui.separator();
            ui.selectable_value(&mut view.show_3d, false, "2D").on_hover_text("Top-down map.");
            ui.selectable_value(&mut view.show_3d, true, "3D")
                .on_hover_text("Lit 3D view: drag to orbit, right-drag to pan, scroll to zoom.");
            if !view.show_3d {
                egui::ComboBox::from_id_salt("view-mode")
                    .selected_text(view.mode.label())
                    .show_ui(ui, |ui| {
                        for m in ViewMode::ALL {
                            ui.selectable_value(&mut view.mode, m, m.label()).on_hover_text(m.tooltip());
                        }
                    })
                    .response
                    .on_hover_text("What the map shows.");
                if ui.button("Fit").on_hover_text("Show the whole map (reset zoom and pan).").clicked() {
                    view.zoom = 1.0;
                    view.pan = [0.0, 0.0];
                }
            }
            ui.separator();
            ui.toggle_value(&mut view.show_help, "Help").on_hover_text("Explain each mode (F1).");
            if !editor.error_log.is_empty() {
                let n = editor.error_log.len();
                ui.toggle_value(&mut dialogs.show_error_log, format!("Errors ({n})"))
                    .on_hover_text("Every error of this session, newest first.");
            }
        });
    }
}

/// The status bar: the cell under the cursor (position, height, slope), the status message
/// and the unsaved-changes mark.
#[derive(Default)]
pub struct StatusBar;

impl StatusBar {
    /// Draws the bar; `hover_cell` is the cell under the cursor in the map view.
    pub fn ui(&mut self, ui: &mut egui::Ui, editor: &Editor, hover_cell: Option<(usize, usize)>) {
        ui.horizontal(|ui| {
            if let (Some((x, y)), Some(t)) = (hover_cell, &editor.terrain)
                && x < t.height.width()
                && y < t.height.height()
            {
                let hs = editor.doc.recipe.exports.height_scale as f32;
                let hv = t.height[(x, y)];
                let (dx, dy) = gradient(&t.height, x, y, hs);
                let slope = (dx * dx + dy * dy).sqrt().atan().to_degrees();
                ui.monospace(format!(
                    "x {x:5}  y {y:5}  height {hv:.4} ({:.1} m)  slope {slope:.1}°",
                    hv * hs
                ));
            } else {
                ui.monospace("x —  y —  height —  slope —");
            }
            ui.separator();
            ui.label(editor.status.as_str());
            if editor.has_unsaved_changes() {
                ui.label("• unsaved changes");
            }
        });
    }
}

/// The help panel.
#[derive(Default)]
pub struct HelpPanel;

impl HelpPanel {
    /// Draws the help text, the active tool's paragraph first (seed 004 §11: the frame under the
    /// mode buttons explains the mode in use).
    pub fn ui(&mut self, ui: &mut egui::Ui, tool: Tool) {
        let active = help_for(tool);
        egui::ScrollArea::vertical().show(ui, |ui| {
            ui.heading("Help");
            ui.group(|ui| {
                ui.strong(format!("Now: {}", tool_name(tool)));
                ui.label(active);
            });
            for p in HELP_TEXT.split("\n\n").filter(|p| *p != active) {
                ui.label(p);
            }
        });
    }
}

/// The mode name of `tool`, as its help paragraph begins.
pub fn tool_name(tool: Tool) -> &'static str {
    match tool {
        Tool::Inspect => "Inspect",
        Tool::Terraform => "Terraform",
        Tool::River => "Rivers",
        Tool::Mask => "Masks",
    }
}

/// The paragraph of [`HELP_TEXT`] on `tool`.
pub fn help_for(tool: Tool) -> &'static str {
    let name = tool_name(tool);
    HELP_TEXT.split("\n\n").find(|p| p.starts_with(name)).unwrap_or("")
}

/// The help panel's text: one paragraph per mode.
pub const HELP_TEXT: &str = "\
Generate: choose a preset, set the seed (Random picks one, Lock keeps it), edit the steps on \
the left and press Generate. Any change starts a quick low-resolution preview, then the full \
map; the progress bar shows the step running and Cancel stops it.

Steps: each step of the recipe runs top to bottom. Tick the box to enable or disable a step, \
Up and Down to reorder, Remove to delete it, and 'Add step' to append one. Hover a parameter for its \
meaning, unit and range.

Inspect: drag to pan, scroll to zoom. The bar at the bottom reads x, y, height and slope under \
the cursor. The view menu shows colour, shaded relief, grayscale, slope, water or flow.

Terraform: drag on the map to paint. Raise and Lower add or remove height, Flatten pulls \
towards the mean, Smooth blurs. Radius and strength are on the left; the white circle is the \
brush. Right-drag pans.

Masks: a shaping or erosion step's Mask section limits it to a height range, a slope range or a \
painted mask (Paint mask, then drag on the map; Show mask tints where the step applies).

Rivers: click on land to place a source, traced by the mode chosen on the left: Walk v1 (seed \
004 §9: lowest neighbour not yet in the river, uphill if it must; stops at the sea or when \
surrounded by its own cells), Backtrack v2 (the same, stepping back around the lakes it makes, so \
it always reaches the sea), or Filled surface (steepest descent on the filled terrain, crossing \
lakes: the default). 'Compare the modes…' shows all three on this map. Rivers and lakes are \
recomputed after every edit (Water view shows lakes).

Erosion: pick an erosion, set the iterations and press Run erosion; ε (the erosion score) is \
shown before and after.

3D: drag to orbit, right-drag to pan, scroll to zoom. The mesh is simplified (LOD) on large maps.

Fields: type a value and press Enter (or click elsewhere) to apply it; Escape abandons it. A \
value outside the allowed range is not applied: the problem is written under the field.

Errors stay in the red bar at the bottom until you dismiss them; Errors (n) in the top bar \
lists every error of the session.

Undo / redo: Ctrl+Z / Ctrl+Shift+Z undo every stroke, source, erosion and parameter change. \
Projects (New, Open…, Save, Save As…, Recent) save the recipe with all edits; the title shows the file and * when unsaved; Export… writes the same files as \
`terrasynth generate`. Unsaved work is written to a recovery file every 30 s.";
