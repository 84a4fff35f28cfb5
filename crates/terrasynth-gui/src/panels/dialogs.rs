//! The editor's windows and the project commands behind the top bar: New / Open… / Save /
//! Save As… (with the in-editor [`FileBrowser`]) and recent files, the error bar and error log,
//! the export dialog, the "discard unsaved changes?" question before New or Open, and the
//! unsaved-changes prompt on close ("Save and close" saves the open project, or asks where).

use std::path::{Path, PathBuf};

use eframe::egui::{self, Color32};
use terrasynth::io::engine::Engine;

use super::entry::error_note;
use super::file_browser::{FileBrowser, Outcome, Purpose};
use super::params::field_ui;
use crate::editor::Editor;

/// What waits for the answer to "discard unsaved changes?".
#[derive(Clone, Debug, PartialEq)]
enum Pending {
    /// A new project.
    New,
    /// Open this project, or browse for one (None).
    Open(Option<PathBuf>),
}

/// Which windows are open.
#[derive(Default)]
pub struct Dialogs {
    /// The export dialog is open.
    pub show_export: bool,
    /// The error log window is open.
    pub show_error_log: bool,
    browser: Option<FileBrowser>,
    discard_prompt: Option<Pending>,
    close_prompt: bool,
    allow_close: bool,
    close_after_save: bool,
}

impl Dialogs {
    /// File ▸ New: a new project (asks first when there are unsaved changes).
    pub fn new_project(&mut self, editor: &mut Editor) {
        self.run_or_ask(editor, Pending::New);
    }

    /// File ▸ Open… (None: browse) or a recent file (asks first when there are unsaved
    /// changes).
    pub fn open_project(&mut self, editor: &mut Editor, path: Option<PathBuf>) {
        self.run_or_ask(editor, Pending::Open(path));
    }

    /// File ▸ Save: to the open project's file, or asks where when it has none.
    pub fn save(&mut self, editor: &mut Editor) {
        if !editor.save_project() {
            self.save_as(editor);
        }
    }

    /// File ▸ Save As…: asks where (starting at the open project's file).
    pub fn save_as(&mut self, editor: &Editor) {
        let start = editor.project_path.clone().unwrap_or_else(|| PathBuf::from("untitled.tsproj"));
        self.browser = Some(FileBrowser::new(Purpose::SaveAs, &start));
    }

    /// Whether a file browser is open.
    pub fn is_browsing(&self) -> bool {
        self.browser.is_some()
    }

    fn run_or_ask(&mut self, editor: &mut Editor, action: Pending) {
        if editor.has_unsaved_changes() {
            self.discard_prompt = Some(action);
        } else {
            self.run(editor, action);
        }
    }

    fn run(&mut self, editor: &mut Editor, action: Pending) {
        match action {
            Pending::New => editor.new_project(),
            Pending::Open(Some(p)) => editor.open_project(p),
            Pending::Open(None) => {
                let start = editor
                    .project_path
                    .as_deref()
                    .and_then(Path::parent)
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
                self.browser = Some(FileBrowser::new(Purpose::Open, &start));
            }
        }
    }

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
        if self.show_export {
            let mut open = true;
            let mut browse = false;
            egui::Window::new("Export").open(&mut open).show(ctx, |ui| browse = export_ui(ui, editor));
            self.show_export &= open;
            if browse {
                self.browser = Some(FileBrowser::new(Purpose::ExportFolder, Path::new(&editor.export_dir)));
            }
        }
        if let Some(b) = &mut self.browser {
            match b.ui(ctx) {
                Outcome::Open => {}
                Outcome::Cancelled => {
                    self.browser = None;
                    self.close_after_save = false;
                }
                Outcome::Chosen(p) => {
                    let purpose = b.purpose;
                    self.browser = None;
                    match purpose {
                        Purpose::Open => editor.open_project(&p),
                        Purpose::ExportFolder => editor.export_dir = p.display().to_string(),
                        // Opened by the steps panel and the world view, never here.
                        Purpose::ImportFile | Purpose::ProjectFile => {}
                        Purpose::SaveAs => {
                            editor.save_project_to(&p);
                            if std::mem::take(&mut self.close_after_save) && !editor.has_unsaved_changes() {
                                self.allow_close = true;
                                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                            }
                        }
                    }
                }
            }
        }
        if let Some(action) = self.discard_prompt.clone() {
            egui::Modal::new(egui::Id::unique("discard-prompt")).show(ctx, |ui| {
                ui.heading("Unsaved changes");
                ui.label("Your unsaved changes will be lost.");
                ui.horizontal(|ui| {
                    if ui.button("Discard changes").clicked() {
                        self.discard_prompt = None;
                        self.run(editor, action);
                    }
                    if ui.button("Keep editing").clicked() {
                        self.discard_prompt = None;
                    }
                });
            });
        }
        if self.close_prompt {
            egui::Modal::new(egui::Id::unique("close-prompt")).show(ctx, |ui| {
                ui.heading("Unsaved changes");
                match &editor.project_path {
                    Some(p) => ui.label(format!("Save the project to {} before closing?", p.display())),
                    None => {
                        ui.label("Save the project before closing? (It has no file yet: you choose where.)")
                    }
                };
                ui.horizontal(|ui| {
                    if ui.button("Save and close").clicked() {
                        // The open project's file, never a path typed for something else.
                        if editor.save_project() {
                            if !editor.has_unsaved_changes() {
                                self.allow_close = true;
                                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                            }
                        } else {
                            self.close_after_save = true;
                            self.save_as(editor);
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

/// The export's game engine (as `terrasynth generate --engine`): none, Unreal, Unity or Godot.
/// When the map's size is not one the engine imports, says which to set and offers it.
fn engine_ui(ui: &mut egui::Ui, editor: &mut Editor) {
    ui.horizontal(|ui| {
        ui.label("Engine");
        let name = editor.export_engine.map_or("none", Engine::name);
        egui::ComboBox::from_id_salt("export-engine")
            .selected_text(name)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut editor.export_engine, None, "none")
                    .on_hover_text("Only the files ticked below.");
                for e in [Engine::Unreal, Engine::Unity, Engine::Godot] {
                    ui.selectable_value(&mut editor.export_engine, Some(e), e.name())
                        .on_hover_text("Its import files (Unity: height.raw, south row first) and import settings in report.json (docs/ENGINES.md).");
                }
            })
            .response
            .accessible_name("engine menu")
            .on_hover_text("The game engine to export for, as `terrasynth generate --engine`.");
    });
    let (w, h) = (editor.doc.recipe.width, editor.doc.recipe.height);
    if let Some(engine) = editor.export_engine
        && let Some(problem) = crate::export::engine_size_problem(engine, w, h)
    {
        // Not `error_note` ("Not applied: …"): the engine is chosen; the size is what to fix.
        ui.add(egui::Label::new(egui::RichText::new(problem).color(Color32::from_rgb(255, 120, 110))).wrap());
        let side = engine.pick_side(w.max(h));
        if ui
            .button(format!("Use {side} × {side}"))
            .on_hover_text("Regenerate at this size; strokes and river sources keep their place on the map.")
            .clicked()
        {
            (editor.doc.recipe.width, editor.doc.recipe.height) = (side, side);
        }
    }
}

/// The export dialog; returns whether "Choose…" (browse for the folder) was clicked.
fn export_ui(ui: &mut egui::Ui, editor: &mut Editor) -> bool {
    let mut browse = false;
    ui.horizontal(|ui| {
        ui.label("Folder");
        ui.add(egui::TextEdit::singleline(&mut editor.export_dir).desired_width(240.0))
            .accessible_name("export folder field")
            .on_hover_text("Output folder (created if missing).");
        browse = ui.button("Choose…").on_hover_text("Browse for the folder.").clicked();
    });
    engine_ui(ui, editor);
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
        ui.label(crate::limits::recipe_field("height-scale").label);
        let e = field_ui(ui, "height-scale", ex.height_scale, 70.0);
        if let Some(v) = e.committed {
            ex.height_scale = v;
        }
        errors.extend(e.error);
        ui.label("m per height unit");
    });
    ui.horizontal(|ui| {
        ui.label(crate::limits::recipe_field("lod").label);
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
    browse
}
