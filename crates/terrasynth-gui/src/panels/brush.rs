//! The tool panel: the terraform brush (mode, radius, strength), the river sources count, or a
//! hint for the inspect tool.

use eframe::egui;
use terrasynth::shape::brush::BrushMode;

use super::entry::{entry_ui, error_note, fine_slider};
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
                let mut errors = Vec::new();
                let mut radius = brush.radius;
                errors.extend(typed_slider(
                    ui,
                    ("radius", "cells", "Brush radius in cells; the fall-off is smooth to the edge."),
                    &mut radius,
                    limits::brush_radius(),
                    true,
                ));
                brush.radius = radius;
                let max = if brush.mode == BrushMode::Smooth { 1.0 } else { 0.1 };
                let mut strength = brush.strength.min(max) as f64;
                errors.extend(typed_slider(
                    ui,
                    (
                        "strength",
                        "",
                        "Per dab: height units for raise/lower/flatten, a blend fraction for smooth.",
                    ),
                    &mut strength,
                    0.0..=max as f64,
                    false,
                ));
                if strength != brush.strength.min(max) as f64 {
                    brush.strength = strength as f32;
                } else {
                    brush.strength = brush.strength.min(max);
                }
                for e in &errors {
                    error_note(ui, Some(e));
                }
            }
            Tool::River => {
                ui.heading("River sources");
                ui.label(format!("{} sources. Click the map to add one.", editor.doc.sources().len()));
            }
        }
    }
}

/// One row: `name`, a slider over `range` (logarithmic when `log`; Shift drags ten times
/// finer) and a typed field beside
/// it that commits on Enter (checked against `range`, not clamped), then `unit`; returns the
/// typed field's error, if any.
fn typed_slider(
    ui: &mut egui::Ui,
    (name, unit, tip): (&str, &str, &str),
    value: &mut f64,
    range: std::ops::RangeInclusive<f64>,
    log: bool,
) -> Option<String> {
    ui.horizontal(|ui| {
        ui.label(name);
        fine_slider(ui, value, (*range.start(), *range.end(), log)).on_hover_text(tip);
        let shown = format!("{:.4}", *value).trim_end_matches('0').trim_end_matches('.').to_string();
        let e = entry_ui(ui, ("brush", name), &format!("{name} field"), &shown, 60.0, |t| {
            parse_in(t, name, &range)
        });
        if let Some(v) = e.committed {
            *value = v;
        }
        ui.label(unit);
        e.error
    })
    .inner
}

/// Parses a typed brush value and checks it against `range` (no clamping).
fn parse_in(text: &str, name: &str, range: &std::ops::RangeInclusive<f64>) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(format!(
            "`{name}` = {}: allowed a number in [{}, {}]",
            text.trim(),
            range.start(),
            range.end()
        )),
    }
}
