//! The recipe panel at the top of the left side: preset, seed, size, cell size, sea level,
//! Generate / Cancel and the progress of the running job.

use eframe::egui;
use terrasynth::recipe::presets;

use super::entry::{entry_ui, error_note};
use super::params::{field_ui, param_tooltip};
use crate::editor::Editor;
use crate::limits;

/// The recipe panel (no state of its own).
#[derive(Default)]
pub struct RecipePanel;

impl RecipePanel {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, editor: &mut Editor) {
        ui.heading("terrasynth");
        ui.horizontal(|ui| {
            ui.label("Preset").on_hover_text("Start from a built-in recipe.");
            let mut chosen = None;
            // Tall enough to show every preset, each with its description on hover.
            egui::ComboBox::from_id_salt("preset")
                .selected_text(editor.doc.recipe.name.clone())
                .height(600.0)
                .show_ui(ui, |ui| {
                    for p in presets() {
                        let about = p.recipe().map(|r| r.description).unwrap_or_default();
                        if ui
                            .selectable_label(editor.doc.recipe.name == p.name, p.name)
                            .on_hover_text(about)
                            .clicked()
                        {
                            chosen = Some(p.name);
                        }
                    }
                })
                .response
                .accessible_name("preset menu")
                .on_hover_text(editor.doc.recipe.description.as_str());
            if let Some(name) = chosen {
                editor.load_preset(name);
            }
        });
        let locked = editor.view.seed_locked;
        let mut errors: Vec<String> = Vec::new();
        ui.horizontal(|ui| {
            ui.label("Seed").on_hover_text("The same seed always gives the same terrain.");
            let seed = editor.doc.recipe.seed;
            let e = ui.add_enabled_ui(!locked, |ui| {
                let spec = limits::recipe_field("seed");
                let e = entry_ui(ui, "seed", "seed field", &seed.to_string(), 172.0, |t| {
                    limits::parse_int_field(spec, t)
                });
                e.response
                    .on_hover_text(param_tooltip(spec))
                    .on_disabled_hover_text("The seed is locked: untick Lock to change it.");
                (e.committed, e.error)
            });
            let (committed, error) = e.inner;
            if let Some(s) = committed {
                editor.doc.recipe.seed = s as u64;
            }
            errors.extend(error);
            if ui
                .add_enabled(!locked, egui::Button::new("Random"))
                .on_hover_text("Pick a new random seed.")
                .on_disabled_hover_text("The seed is locked: untick Lock to change it.")
                .clicked()
            {
                editor.random_seed();
            }
            ui.checkbox(&mut editor.view.seed_locked, "Lock")
                .on_hover_text("Keep this seed when loading a preset; disables Random.");
        });
        notes(ui, &mut errors);
        let recipe = &mut editor.doc.recipe;
        ui.horizontal(|ui| {
            ui.label("Size").on_hover_text("Map width × height in cells.");
            let e = field_ui(ui, "width", recipe.width as f64, 60.0);
            if let Some(v) = e.committed {
                recipe.width = v as usize;
            }
            errors.extend(e.error);
            ui.label("×");
            let e = field_ui(ui, "height", recipe.height as f64, 60.0);
            if let Some(v) = e.committed {
                recipe.height = v as usize;
            }
            errors.extend(e.error);
            ui.label("cells");
        });
        notes(ui, &mut errors);
        ui.horizontal(|ui| {
            ui.label("Cell size").on_hover_text("Ground size of one cell, metres.");
            let e = field_ui(ui, "cell-size", recipe.cell_size, 60.0);
            if let Some(v) = e.committed {
                recipe.cell_size = v;
            }
            errors.extend(e.error);
            ui.label("m  Sea").on_hover_text("Sea level, height units (the `sea-level` step can change it).");
            let e = field_ui(ui, "sea-level", recipe.sea_level, 60.0);
            if let Some(v) = e.committed {
                recipe.sea_level = v;
            }
            errors.extend(e.error);
        });
        notes(ui, &mut errors);
        ui.horizontal(|ui| {
            let busy = editor.is_busy();
            if ui
                .add_enabled(!busy, egui::Button::new("Generate"))
                .on_hover_text("Run the recipe and replay your edits.")
                .on_disabled_hover_text("A job is running: wait for it or Cancel it first.")
                .clicked()
            {
                editor.commit();
                editor.generate(true);
            }
            if ui
                .add_enabled(busy, egui::Button::new("Cancel"))
                .on_hover_text("Stop the running job; the last full map comes back.")
                .on_disabled_hover_text("Nothing is running.")
                .clicked()
            {
                editor.cancel();
            }
        });
        // The progress bar's row is there whether a job runs or not, so the steps below never
        // move when one starts or ends (a dragged slider regenerates the preview: until session
        // 49 the bar's row appeared above it and moved it a row down under the pointer).
        let job = editor.active_job();
        let bar = match &job {
            // The bar is the whole job; the text the running step's own share and time left.
            Some(a) => {
                let (step, f, left) = a.step_status();
                let text = crate::worker::progress_text(a.label, &step, f, left);
                egui::ProgressBar::new(a.progress.fraction() as f32).text(text).animate(true)
            }
            None => egui::ProgressBar::new(0.0),
        };
        ui.add_visible(job.is_some(), bar);
    }
}

/// Draws the errors of the fields in the row above, then forgets them.
fn notes(ui: &mut egui::Ui, errors: &mut Vec<String>) {
    for e in errors.drain(..) {
        error_note(ui, Some(&e));
    }
}
