//! The start screen (seed 004 §11, Fig. 10a): what the first page of the seed's program shows —
//! the current generation parameters (here the preset, seed, size and the parameters each step
//! of the recipe sets), a Generate button, and one line per mode on what it lets you do. Pressing
//! Generate opens the editor, which shows its loading message while the map is made.

use eframe::egui;
use terrasynth::recipe::presets;
use terrasynth::recipe::registry;
use terrasynth::step::{ParamSpec, ParamValue};

use crate::editor::Editor;
use crate::limits;
use crate::panels::{HELP_TEXT, entry_ui, error_note, param_tooltip, tool_name};
use crate::settings::Tool;

/// One line per mode: what you can do there.
pub const WHAT_YOU_CAN_DO: [(&str, &str); 5] = [
    ("Generate", "pick a preset, a seed and a size, edit any step's parameters, and regenerate."),
    ("Inspect", "pan and zoom the map and read the height and slope under the cursor; view it in 3D."),
    ("Terraform", "raise, lower, flatten or smooth the terrain with a brush."),
    ("Rivers", "place river sources; each river walks by the seed's v1, v2 or the filled surface."),
    ("Erosion", "run thermal, hydraulic, droplet or stream-power erosion and read the erosion score."),
];

/// The start screen's state: none beyond the model (the fields edit the document directly).
#[derive(Default)]
pub struct StartScreen;

impl StartScreen {
    /// Draws the screen; returns true when Generate was pressed (the app then shows the
    /// editor).
    pub fn ui(&mut self, ui: &mut egui::Ui, editor: &mut Editor) -> bool {
        let mut go = false;
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            ui.vertical_centered(|ui| {
                ui.add_space(16.0);
                ui.heading("terrasynth: procedural terrain");
                ui.label(
                    "These are the parameters of the next map. Change any of them, then press Generate.",
                );
                ui.add_space(8.0);
            });
            ui.horizontal(|ui| {
                ui.label("Preset");
                let current = editor.doc.recipe.name.clone();
                let mut chosen = None;
                egui::ComboBox::from_id_salt("start-preset")
                    .selected_text(current.as_str())
                    .height(600.0)
                    .show_ui(ui, |ui| {
                        for p in presets().iter().filter(|p| p.recipe().is_ok_and(|r| !r.is_world())) {
                            let doc = p.recipe().map(|r| r.description).unwrap_or_default();
                            if ui.selectable_label(p.name == current, p.name).on_hover_text(doc).clicked() {
                                chosen = Some(p.name);
                            }
                        }
                    });
                if let Some(name) = chosen {
                    editor.load_preset(name);
                }
            });
            let recipe = &mut editor.doc.recipe;
            let mut seed_error = None;
            ui.horizontal(|ui| {
                ui.label("Seed").on_hover_text("The same seed always gives the same terrain.");
                // Typed and read exactly, as in the recipe panel: any u64 (a drag value would
                // round seeds above 2^53).
                let spec = limits::recipe_field("seed");
                let e = entry_ui(ui, "start-seed", "seed field", &recipe.seed.to_string(), 172.0, |t| {
                    limits::parse_int_field(spec, t)
                });
                e.response.on_hover_text(param_tooltip(spec));
                if let Some(s) = e.committed {
                    recipe.seed = s as u64;
                }
                seed_error = e.error;
                ui.label("Size");
                let mut side = recipe.width as u32;
                if ui.add(egui::DragValue::new(&mut side).range(2..=4097).suffix(" cells")).changed() {
                    recipe.width = side as usize;
                    recipe.height = side as usize;
                }
                ui.label(format!("({} × {} cells of {} m)", recipe.width, recipe.height, recipe.cell_size));
            });
            error_note(ui, seed_error.as_deref());
            ui.add_space(6.0);
            ui.strong("Main parameters of the recipe");
            let reg = registry();
            // A step that sets many parameters (stream power sets up to a dozen) wraps its line
            // inside the window instead of running past its edge: the parameters' column is
            // at most the width left after the step names' (about 130 points).
            let line_width = (ui.available_width() - 140.0).max(200.0);
            egui::Grid::new("start-params").striped(true).max_col_width(line_width).show(ui, |ui| {
                for (k, step) in recipe.steps.iter().enumerate() {
                    ui.label(format!("{}. {}", k + 1, step.kind));
                    let specs = reg.iter().find(|s| s.name == step.kind).map(|s| s.params).unwrap_or(&[]);
                    let set: Vec<String> =
                        step.params.iter().map(|(key, v)| setting(specs, key, v)).collect();
                    let text = if set.is_empty() { "(defaults)".to_string() } else { set.join(", ") };
                    ui.add(egui::Label::new(text).wrap())
                        .on_hover_text("Set by the recipe; every other parameter has its default.");
                    ui.end_row();
                }
            });
            ui.add_space(10.0);
            ui.vertical_centered(|ui| {
                let busy = editor.is_busy();
                if ui
                    .add_enabled(!busy, egui::Button::new(egui::RichText::new("Generate").heading()))
                    .on_hover_text("Make the map and open the editor.")
                    .on_disabled_hover_text("A map is being generated: wait a moment.")
                    .clicked()
                {
                    editor.commit();
                    editor.generate(true);
                    go = true;
                }
            });
            ui.add_space(10.0);
            ui.strong("What you can do");
            for (mode, line) in WHAT_YOU_CAN_DO {
                ui.label(format!("{mode}: {line}"));
            }
            // The lines name the modes the help panel explains.
            debug_assert!(
                [Tool::Inspect, Tool::Terraform, Tool::River]
                    .iter()
                    .all(|t| HELP_TEXT.contains(tool_name(*t)))
            );
        });
        go
    }
}

/// A parameter the recipe sets, in the words of the editor's parameter rows: its plain label
/// (the recipe key when the step does not declare it), the value and its unit, as in
/// "Erodibility K 0.2" or "Feature size 0.5 fraction of the longer side".
fn setting(specs: &[ParamSpec], key: &str, v: &ParamValue) -> String {
    let spec = specs.iter().find(|s| s.name == key);
    let label = spec.map_or(key, |s| s.label);
    // As typed in its field, except where that would read badly in a comma-separated line.
    let value = match v {
        ParamValue::Bool(b) => if *b { "yes" } else { "no" }.into(),
        ParamValue::List(l) => l.iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(" "),
        ParamValue::Absent => "auto".into(),
        other => limits::value_text(other),
    };
    match spec.map(|s| s.unit).filter(|u| !u.is_empty() && matches!(v, ParamValue::Number(_))) {
        Some(unit) => format!("{label} {value} {unit}"),
        None => format!("{label} {value}"),
    }
}
