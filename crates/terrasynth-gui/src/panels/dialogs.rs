//! The editor's windows: the error bar and error log, the project dialog (save, open, restore the
//! recovery file), the export dialog, and the unsaved-changes prompt on close.

use eframe::egui::{self, Color32};

use super::entry::error_note;
use super::params::field_ui;
use crate::editor::Editor;

/// Which windows are open.
#[derive(Default)]
pub struct Dialogs {
    /// The project dialog is open.
    pub show_project: bool,
    /// The export dialog is open.
    pub show_export: bool,
    /// The error log window is open.
    pub show_error_log: bool,
    close_prompt: bool,
    allow_close: bool,
}

impl Dialogs {
    /// Call when the window is asked to close: with unsaved changes, the close is cancelled and
    /// the prompt shown (unless the user already chose to close).
    pub fn on_close_requested(&mut self, ctx: &egui::Context, editor: &Editor) {
        if editor.has_unsaved_changes() && !self.allow_close {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.close_prompt = true;
        }
    }

    /// The error bar (above the status bar, covering no field): the latest error until it is
    /// dismissed, and a button to the log of every error.
    pub fn error_bar_ui(&mut self, ui: &mut egui::Ui, editor: &mut Editor) {
        let Some(e) = editor.error.clone() else { return };
        ui.horizontal_wrapped(|ui| {
            if ui.button("Dismiss").on_hover_text("Hide this error (it stays in the error log).").clicked() {
                editor.dismiss_error();
            }
            if ui.button(format!("Error log ({})", editor.error_log.len())).clicked() {
                self.show_error_log = !self.show_error_log;
            }
            ui.colored_label(ERROR_RED, e.as_str());
        });
    }

    /// Draws the open windows.
    pub fn ui(&mut self, ctx: &egui::Context, editor: &mut Editor) {
        if self.show_error_log {
            let mut open = true;
            egui::Window::new("Error log")
                .open(&mut open)
                .default_width(420.0)
                .show(ctx, |ui| error_log_ui(ui, editor));
            self.show_error_log &= open;
        }
        if self.show_project {
            let mut open = true;
            egui::Window::new("Project").open(&mut open).show(ctx, |ui| project_ui(ui, editor));
            self.show_project &= open;
        }
        if self.show_export {
            let mut open = true;
            egui::Window::new("Export").open(&mut open).show(ctx, |ui| export_ui(ui, editor));
            self.show_export &= open;
        }
        if self.close_prompt {
            egui::Modal::new(egui::Id::unique("close-prompt")).show(ctx, |ui| {
                ui.heading("Unsaved changes");
                ui.label("Save the project before closing?");
                ui.horizontal(|ui| {
                    if ui.button("Save and close").clicked() {
                        let p = editor.project_path.clone();
                        editor.save_project_to(&p);
                        if !editor.has_unsaved_changes() {
                            self.allow_close = true;
                            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                        }
                        self.close_prompt = false;
                    }
                    if ui.button("Discard and close").clicked() {
                        self.allow_close = true;
                        self.close_prompt = false;
                        ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                    }
                    if ui.button("Keep editing").clicked() {
                        self.close_prompt = false;
                    }
                });
            });
        }
    }
}

/// Colour of error text.
pub const ERROR_RED: Color32 = Color32::from_rgb(255, 120, 110);

fn error_log_ui(ui: &mut egui::Ui, editor: &mut Editor) {
    if editor.error_log.is_empty() {
        ui.label("No errors.");
    }
    egui::ScrollArea::vertical().max_height(240.0).show(ui, |ui| {
        for (t, message) in editor.error_log.iter().rev() {
            ui.horizontal_wrapped(|ui| {
                ui.monospace(format!("{t:7.1} s"));
                ui.colored_label(ERROR_RED, message.as_str());
            });
        }
    });
    if ui.button("Clear log").clicked() {
        editor.error_log.clear();
        editor.dismiss_error();
    }
}

fn project_ui(ui: &mut egui::Ui, editor: &mut Editor) {
    ui.horizontal(|ui| {
        ui.label("File");
        ui.text_edit_singleline(&mut editor.project_path)
            .on_hover_text("Path of the project file (.tsproj, JSON).");
    });
    ui.horizontal(|ui| {
        if ui.button("Save project").on_hover_text("Save the recipe, your edits and the view.").clicked() {
            let p = editor.project_path.clone();
            editor.save_project_to(&p);
        }
        if ui
            .button("Open project")
            .on_hover_text("Load a project; the terrain is rebuilt exactly.")
            .clicked()
        {
            let p = editor.project_path.clone();
            editor.open_project(&p);
        }
    });
    if let Some(p) = editor.recovery_file().map(|p| p.display().to_string())
        && ui.button("Restore recovery file").on_hover_text(p).clicked()
    {
        editor.restore_recovery();
    }
}

fn export_ui(ui: &mut egui::Ui, editor: &mut Editor) {
    ui.horizontal(|ui| {
        ui.label("Folder");
        ui.text_edit_singleline(&mut editor.export_dir).on_hover_text("Output folder (created if missing).");
    });
    let ex = &mut editor.doc.recipe.exports;
    ui.checkbox(&mut ex.png, "height.png (16-bit)");
    ui.checkbox(&mut ex.r16, "height.r16 (Unity/Unreal raw)");
    ui.checkbox(&mut ex.exr, "height.exr (metres)");
    ui.checkbox(&mut ex.tiff, "height.tif (GeoTIFF, metres)");
    ui.checkbox(&mut ex.images, "color / hillshade / shaded PNG");
    ui.checkbox(&mut ex.glb, "mesh.glb");
    ui.checkbox(&mut ex.obj, "mesh.obj");
    let mut errors = Vec::new();
    ui.horizontal(|ui| {
        ui.label("height scale");
        let e = field_ui(ui, "height-scale", ex.height_scale, 70.0);
        if let Some(v) = e.committed {
            ex.height_scale = v;
        }
        errors.extend(e.error);
        ui.label("m per height unit");
    });
    ui.horizontal(|ui| {
        ui.label("mesh LOD");
        let e = field_ui(ui, "lod", ex.lod as f64, 40.0);
        if let Some(v) = e.committed {
            ex.lod = v as u32;
        }
        errors.extend(e.error);
    });
    for e in &errors {
        error_note(ui, Some(e));
    }
    if ui.button("Export now").clicked() {
        let d = editor.export_dir.clone();
        editor.export_to(&d);
    }
    if !editor.exported.is_empty() {
        ui.label(format!("Wrote: {}", editor.exported.join(", ")));
    }
}
