//! The tool panel: the terraform brush (mode, radius, strength), the river sources count, or a
//! hint for the inspect tool.

use eframe::egui;
use terrasynth::shape::brush::BrushMode;

use crate::editor::Editor;
use crate::limits;
use crate::settings::Tool;

/// The tool panel (no state of its own: the brush lives in the view settings).
#[derive(Default)]
pub struct BrushPanel;

impl BrushPanel {
    /// Draws the panel of the current tool.
    pub fn ui(&mut self, ui: &mut egui::Ui, editor: &mut Editor) {
        if editor.view.tool != Tool::Inspect
            && let Some(why) = editor.edit_blocker()
        {
            ui.colored_label(egui::Color32::from_rgb(230, 190, 90), format!("Editing is paused: {why}"));
        }
        match editor.view.tool {
            Tool::Inspect => {
                ui.label("Inspect: drag to pan, scroll to zoom.");
            }
            Tool::Terraform => {
                let brush = &mut editor.view.brush;
                ui.heading("Brush");
                ui.horizontal(|ui| {
                    for (m, label, tip) in [
                        (BrushMode::Raise, "Raise", "Add height under the brush."),
                        (BrushMode::Lower, "Lower", "Remove height under the brush."),
                        (BrushMode::Flatten, "Flatten", "Pull heights towards the mean under the brush."),
                        (BrushMode::Smooth, "Smooth", "Blend each cell towards its 3×3 neighbourhood mean."),
                    ] {
                        ui.selectable_value(&mut brush.mode, m, label).on_hover_text(tip);
                    }
                });
                ui.add(
                    egui::Slider::new(&mut brush.radius, limits::brush_radius())
                        .logarithmic(true)
                        .text("radius")
                        .suffix(" cells"),
                )
                .on_hover_text("Brush radius in cells; the fall-off is smooth to the edge.");
                let max = if brush.mode == BrushMode::Smooth { 1.0 } else { 0.1 };
                brush.strength = brush.strength.min(max);
                ui.add(egui::Slider::new(&mut brush.strength, 0.0..=max).text("strength")).on_hover_text(
                    "Per dab: height units for raise/lower/flatten, a blend fraction for smooth.",
                );
            }
            Tool::River => {
                ui.heading("River sources");
                ui.label(format!("{} sources. Click the map to add one.", editor.doc.sources().len()));
            }
        }
    }
}
