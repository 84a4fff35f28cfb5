//! The steps panel: the recipe's steps top to bottom, each with its enable box, reorder and
//! remove buttons and its parameters; a menu to append a step.

use eframe::egui::{self, Color32};
use terrasynth::recipe::{StepEntry, registry};
use terrasynth::step::Category;

use super::file_browser::{FileBrowser, Outcome, Purpose};
use super::mask::mask_ui;
use super::params::params_ui;
use crate::editor::Editor;

/// The steps panel; remembers the step chosen in the "Add step" menu, and the file browser
/// open for a step's path parameter (step index, parameter, browser).
pub struct StepsPanel {
    add_step: &'static str,
    browser: Option<(usize, &'static str, FileBrowser)>,
}

impl Default for StepsPanel {
    fn default() -> Self {
        Self { add_step: "noise", browser: None }
    }
}

impl StepsPanel {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, editor: &mut Editor) {
        let Self { add_step, browser } = self;
        ui.heading("Steps").on_hover_text("The recipe: steps run top to bottom.");
        let reg = registry();
        let in_world = editor.doc.recipe.is_world();
        let steps = &mut editor.doc.recipe.steps;
        let masks = &mut editor.doc.recipe.masks;
        let (showing, mut mask_request) = (editor.mask.show_step, None);
        let mut remove = None;
        let mut swap = None;
        let n = steps.len();
        let mut toggle = None;
        for (i, entry) in steps.iter_mut().enumerate() {
            let info = reg.iter().find(|s| s.name == entry.kind);
            let id = ui.make_persistent_id(("step", i));
            egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, false)
                .show_header(ui, |ui| {
                    ui.checkbox(&mut entry.enabled, "").on_hover_text("Enable or disable this step.");
                    // The whole name opens the step, not only the small arrow.
                    let label = ui.add(
                        egui::Label::new(format!("{}. {}", i + 1, entry.kind)).sense(egui::Sense::click()),
                    );
                    if label.clicked() {
                        toggle = Some(id);
                    }
                    if let Some(info) = info {
                        label.on_hover_text(format!(
                            "{}\n\nSource: {}\n\nClick to show its parameters.",
                            info.doc, info.source
                        ));
                    }
                    if ui
                        .add_enabled(i > 0, egui::Button::new("Up").small())
                        .on_hover_text("Move up")
                        .on_disabled_hover_text("Already the first step.")
                        .clicked()
                    {
                        swap = Some((i - 1, i));
                    }
                    if ui
                        .add_enabled(i + 1 < n, egui::Button::new("Down").small())
                        .on_hover_text("Move down")
                        .on_disabled_hover_text("Already the last step.")
                        .clicked()
                    {
                        swap = Some((i, i + 1));
                    }
                    if ui.small_button("Remove").on_hover_text("Remove this step").clicked() {
                        remove = Some(i);
                    }
                })
                .body(|ui| match info {
                    Some(info) => {
                        if let Some(name) = params_ui(ui, info.params, entry, i, in_world) {
                            let current = match entry.params.get(name) {
                                Some(terrasynth::step::ParamValue::Text(t)) if !t.is_empty() => t.clone(),
                                _ => ".".to_string(),
                            };
                            let start = std::path::PathBuf::from(current);
                            *browser = Some((i, name, FileBrowser::new(Purpose::ImportFile, &start)));
                        }
                        if matches!(info.category, Category::Shape | Category::Erode) {
                            let r = mask_ui(ui, entry, i, masks, showing == Some(i));
                            if r.paint.is_some() || r.show.is_some() {
                                mask_request = Some((i, r));
                            }
                        }
                    }
                    None => {
                        ui.colored_label(Color32::RED, format!("unknown step type `{}`", entry.kind));
                    }
                });
        }
        if let Some((i, r)) = mask_request {
            if let Some(name) = r.paint {
                editor.view.tool = crate::settings::Tool::Mask;
                editor.view.mask_brush.name = name;
            }
            if let Some(show) = r.show {
                editor.mask.show_step = show.then_some(i);
            }
        }
        if let Some(id) = toggle
            && let Some(mut state) = egui::collapsing_header::CollapsingState::load(ui.ctx(), id)
        {
            state.toggle(ui);
            state.store(ui.ctx());
        }
        if let Some((i, name, b)) = browser {
            match b.ui(ui.ctx()) {
                Outcome::Open => {}
                Outcome::Cancelled => *browser = None,
                Outcome::Chosen(p) => {
                    if let Some(entry) = steps.get_mut(*i) {
                        let text = terrasynth::step::ParamValue::Text(p.display().to_string());
                        entry.params.insert(name.to_string(), text);
                    }
                    *browser = None;
                }
            }
        }
        if let Some(i) = remove {
            if browser.as_ref().is_some_and(|(b, _, _)| *b >= i) {
                *browser = None;
            }
            steps.remove(i);
        }
        if let Some((a, b)) = swap {
            if browser.as_ref().is_some_and(|(i, _, _)| *i == a || *i == b) {
                *browser = None;
            }
            steps.swap(a, b);
        }
        ui.horizontal(|ui| {
            egui::ComboBox::from_id_salt("add-step").selected_text(*add_step).height(600.0).show_ui(
                ui,
                |ui| {
                    for cat in [Category::Generate, Category::Shape, Category::Erode, Category::Hydro] {
                        ui.label(format!("{cat:?}"));
                        for s in reg.iter().filter(|s| s.category == cat) {
                            ui.selectable_value(add_step, s.name, s.name).on_hover_text(s.doc);
                        }
                    }
                },
            );
            if ui.button("Add step").on_hover_text("Append the chosen step to the recipe.").clicked() {
                steps.push(StepEntry::new(*add_step));
            }
        });
    }
}
