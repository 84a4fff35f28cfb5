//! The tool panel: the terraform brush (mode, radius, strength), the river sources count, or a
//! hint for the inspect tool.

use eframe::egui;
use terrasynth::shape::brush::BrushMode;

use super::entry::{error_note, typed_slider};
use crate::editor::Editor;
use crate::limits;
use crate::settings::Tool;

/// The tool panel (the brush lives in the view settings); the river tool's gallery window.
#[derive(Default)]
pub struct BrushPanel {
    /// The window comparing the three river walks (opened from the river tool).
    pub gallery: super::rivers::RiverGallery,
}

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
                        (
                            BrushMode::Flatten,
                            "Flatten",
                            "Pull heights towards the level under the stroke's first dab.",
                        ),
                        (BrushMode::Smooth, "Smooth", "Blend each cell towards its 3×3 neighbourhood mean."),
                    ] {
                        ui.selectable_value(&mut brush.mode, m, label).on_hover_text(tip);
                    }
                });
                let mut errors = Vec::new();
                let mut radius = brush.radius;
                errors.extend(typed_slider(
                    ui,
                    "brush",
                    ("radius", "cells", "Brush radius in cells; the fall-off is smooth to the edge."),
                    &mut radius,
                    limits::brush_radius(),
                    true,
                ));
                brush.radius = radius;
                let max =
                    if matches!(brush.mode, BrushMode::Smooth | BrushMode::Flatten) { 1.0 } else { 0.1 };
                let mut strength = brush.strength.min(max) as f64;
                errors.extend(typed_slider(
                    ui,
                    "brush",
                    (
                        "strength",
                        "",
                        "Per dab: height units for raise/lower, a blend fraction for flatten and smooth.",
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
            Tool::Mask => mask_brush_ui(ui, editor),
            Tool::River => super::rivers::river_mode_ui(ui, editor, &mut self.gallery),
        }
    }
}

/// The Paint mask tool: which painted mask of the recipe, paint or erase, radius, strength.
fn mask_brush_ui(ui: &mut egui::Ui, editor: &mut Editor) {
    ui.heading("Mask brush");
    let names: Vec<String> = editor.doc.recipe.masks.keys().cloned().collect();
    let brush = &mut editor.view.mask_brush;
    ui.horizontal(|ui| {
        ui.label("Mask");
        egui::ComboBox::from_id_salt("mask-brush-name").selected_text(brush.name.clone()).show_ui(ui, |ui| {
            for n in &names {
                ui.selectable_value(&mut brush.name, n.clone(), n);
            }
        });
    });
    ui.horizontal(|ui| {
        ui.selectable_value(&mut brush.erase, false, "Paint").on_hover_text("Paint the mask toward 1.");
        ui.selectable_value(&mut brush.erase, true, "Erase").on_hover_text("Erase the mask toward 0.");
    });
    let mut errors = Vec::new();
    errors.extend(typed_slider(
        ui,
        "brush",
        ("radius", "cells", "Brush radius in cells; the fall-off is smooth to the edge."),
        &mut brush.radius,
        limits::brush_radius(),
        true,
    ));
    let mut strength = brush.strength as f64;
    errors.extend(typed_slider(
        ui,
        "brush",
        ("strength", "", "Per dab: the fraction of the way to 1 (paint) or 0 (erase)."),
        &mut strength,
        0.0..=1.0,
        false,
    ));
    brush.strength = strength as f32;
    for e in &errors {
        error_note(ui, Some(e));
    }
    ui.label(format!(
        "Drag on the map to paint `{}` (magenta). The steps whose mask is this painted mask apply \
         where it is painted. Each stroke is one undo step.",
        brush.name
    ));
}
