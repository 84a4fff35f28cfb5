//! The recipe panel at the top of the left side: preset, seed, size, cell size, sea level,
//! Generate / Cancel and the progress of the running job.

use eframe::egui;
use terrasynth::recipe::presets;

use super::params::field_ui;
use crate::editor::Editor;

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
            egui::ComboBox::from_id_salt("preset").selected_text(editor.doc.recipe.name.clone()).show_ui(
                ui,
                |ui| {
                    for p in presets() {
                        if ui.selectable_label(editor.doc.recipe.name == p.name, p.name).clicked() {
                            chosen = Some(p.name);
                        }
                    }
                },
            );
            if let Some(name) = chosen {
                editor.load_preset(name);
            }
        });
        let locked = editor.view.seed_locked;
        ui.horizontal(|ui| {
            ui.label("Seed").on_hover_text("The same seed always gives the same terrain.");
            ui.add_enabled_ui(!locked, |ui| field_ui(ui, "seed", &mut editor.doc.recipe.seed, "", 1.0));
            if ui
                .add_enabled(!locked, egui::Button::new("Random"))
                .on_hover_text("Pick a new random seed.")
                .clicked()
            {
                editor.random_seed();
            }
            ui.checkbox(&mut editor.view.seed_locked, "Lock")
                .on_hover_text("Keep this seed when loading a preset; disables Random.");
        });
        let recipe = &mut editor.doc.recipe;
        ui.horizontal(|ui| {
            ui.label("Size").on_hover_text("Map width × height in cells.");
            field_ui(ui, "width", &mut recipe.width, "", 1.0);
            ui.label("×");
            field_ui(ui, "height", &mut recipe.height, "", 1.0);
        });
        ui.horizontal(|ui| {
            ui.label("Cell size").on_hover_text("Ground size of one cell, metres.");
            field_ui(ui, "cell-size", &mut recipe.cell_size, " m", 0.1);
            ui.label("Sea").on_hover_text("Sea level, height units (the `sea-level` step can change it).");
            field_ui(ui, "sea-level", &mut recipe.sea_level, "", 0.01);
        });
        ui.horizontal(|ui| {
            let busy = editor.is_busy();
            if ui
                .add_enabled(!busy, egui::Button::new("Generate"))
                .on_hover_text("Run the recipe and replay your edits.")
                .clicked()
            {
                editor.commit();
                editor.generate(true);
            }
            if ui
                .add_enabled(busy, egui::Button::new("Cancel"))
                .on_hover_text("Stop the running job; the last map stays.")
                .clicked()
            {
                editor.cancel();
            }
        });
        if let Some(a) = editor.active_job() {
            let step = a.progress.current_step();
            let text = if step.is_empty() { a.label.to_string() } else { format!("{} {step}", a.label) };
            ui.add(egui::ProgressBar::new(a.progress.fraction() as f32).text(text).animate(true));
        }
    }
}
