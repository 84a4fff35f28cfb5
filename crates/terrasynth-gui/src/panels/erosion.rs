//! The erosion panel: pick an erosion step, its iterations and parameters, run it on the
//! current map (an undoable edit) and read ε before and after.

use eframe::egui;
use terrasynth::recipe::registry;
use terrasynth::step::{Category, ParamSpec, ParamValue};

use super::entry::{entry_ui, error_note};
use super::params::{param_tooltip, params_ui};
use crate::editor::Editor;
use crate::limits;

/// The erosion panel (its settings live in [`Editor::erosion`]).
#[derive(Default)]
pub struct ErosionPanel;

impl ErosionPanel {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, editor: &mut Editor) {
        egui::CollapsingHeader::new("Erosion").default_open(false).show(ui, |ui| {
            let reg = registry();
            let in_world = editor.doc.recipe.is_world();
            let settings = &mut editor.erosion;
            let mut kind = settings.entry.kind.clone();
            egui::ComboBox::from_id_salt("erosion-kind").selected_text(kind.clone()).show_ui(ui, |ui| {
                for s in reg.iter().filter(|s| s.category == Category::Erode) {
                    ui.selectable_value(&mut kind, s.name.to_string(), s.name).on_hover_text(s.doc);
                }
            });
            settings.set_kind(&kind);
            if let Some(spec) = limits::iterations_spec(&settings.entry.kind) {
                let mut error = None;
                ui.horizontal(|ui| {
                    ui.label(spec.label);
                    let shown = settings.iterations.to_string();
                    let e = entry_ui(ui, "erosion-iterations", "iterations field", &shown, 80.0, |t| {
                        limits::parse_param(&spec, t)
                    });
                    e.response.on_hover_text(param_tooltip(&spec));
                    if let Some(ParamValue::Number(v)) = e.committed {
                        settings.iterations = v as u32;
                    }
                    error = e.error;
                });
                error_note(ui, error.as_deref());
            }
            if let Some(info) = reg.iter().find(|s| s.name == settings.entry.kind) {
                let specs: Vec<ParamSpec> = info.params.iter().copied().filter(|p| p.name != "iterations").collect();
                params_ui(ui, &specs, &mut settings.entry, 10_000, in_world);
            }
            if ui
                .add_enabled(editor.can_edit(), egui::Button::new("Run erosion"))
                .on_hover_text("Erode the current map (undoable).")
                .on_disabled_hover_text(editor.edit_blocker().unwrap_or_default())
                .clicked()
            {
                editor.run_erosion();
            }
            if let Some((a, b)) = editor.erosion_scores() {
                ui.label(format!("erosion score ε: {a:.3} -> {b:.3}")).on_hover_text(
                    "Olsen's ε = σ(slope) / mean(slope): higher means flat valleys and steep slopes, as in eroded land.",
                );
            }
        });
    }
}
