//! The generic parameter editor: one widget per [`ParamSpec`] (slider, field, checkbox, menu),
//! used by the steps and erosion panels. Ranges and their wording come from the spec.

use eframe::egui;
use terrasynth::recipe::StepEntry;
use terrasynth::step::{ParamKind, ParamSpec, ParamValue};

use super::entry::{Entry, entry_ui, error_note, fine_slider};
use crate::limits::{self, value_text};

/// Width of the label column of a parameter row, points (fits "Full-resolution steps"; a
/// longer label pushes its row's widgets right).
const LABEL_WIDTH: f32 = 114.0;
/// Width of a parameter row's slider and typed field, points: with the label column and a unit
/// they fit the fixed left panel.
const SLIDER_WIDTH: f32 = 80.0;
const FIELD_WIDTH: f32 = 60.0;

/// Sliders and fields for `specs`, editing `entry.params`. Numbers have a slider (dragging
/// previews live; its range is a usable part of the spec's around the default, or around the
/// value for a key that is off by default, [`limits::slider_range_from`], and Shift drags ten
/// times finer) with a typed field beside it that
/// takes the spec's whole range; text, lists and numbers without a finite range
/// have the typed field alone. Typed fields commit on Enter or focus loss, checked with the
/// spec (no clamping); a bad value shows its error under the row and changes nothing. An
/// optional number ([`ParamSpec::optional`]) has an "auto" checkbox first: ticked, the key is
/// left out of the recipe (absent) and no number is shown; unticked, it takes its range's
/// lower end and the number widgets appear. [`ParamKind::LegacyText`] parameters (kept only for
/// older recipes) get no widget, nor do world-only ones unless `in_world` ([`shown`]). A file
/// path (a text parameter named `path`, the `import` step's) has a Browse… button: the
/// function returns that parameter's name when it was clicked (the caller opens the file
/// browser). `salt` keeps widget ids unique; `in_world` is whether the recipe is a world's.
pub fn params_ui(
    ui: &mut egui::Ui,
    specs: &[ParamSpec],
    entry: &mut StepEntry,
    salt: usize,
    in_world: bool,
) -> Option<&'static str> {
    let mut browse = None;
    for spec in specs.iter().filter(|s| shown(s, in_world)) {
        let current = entry.params.get(spec.name).cloned().unwrap_or_else(|| spec.default.to_value());
        let mut clear = false;
        let tip = param_tooltip(spec);
        let mut new_value = None;
        let mut error = None;
        ui.horizontal(|ui| {
            // A fixed label column, so the sliders and fields of a step line up.
            ui.spacing_mut().slider_width = SLIDER_WIDTH;
            let height = ui.spacing().interact_size.y;
            ui.allocate_ui_with_layout(
                egui::vec2(LABEL_WIDTH, height),
                egui::Layout::left_to_right(egui::Align::Center),
                |ui| {
                    ui.set_min_width(LABEL_WIDTH);
                    ui.label(spec.label).on_hover_text(tip.as_str());
                },
            );
            if spec.optional() {
                let auto = current == ParamValue::Absent;
                let mut x = auto;
                ui.checkbox(&mut x, "auto").on_hover_text(tip.as_str());
                if x && !auto {
                    clear = true;
                } else if !x && auto {
                    new_value = limits::number_range(spec).map(|r| ParamValue::Number(*r.start()));
                }
                if x {
                    return;
                }
            }
            let mut typed = |ui: &mut egui::Ui, width: f32| {
                let e = entry_ui(
                    ui,
                    (salt, spec.name),
                    &format!("{} field", spec.name),
                    &value_text(&current),
                    width,
                    |t| limits::parse_param(spec, t),
                );
                e.response.on_hover_text(tip.as_str());
                error = e.error;
                e.committed
            };
            let default = match spec.default.to_value() {
                ParamValue::Number(d) => d,
                _ => f64::NAN,
            };
            let (min, max) = limits::number_range(spec).map_or((0.0, 0.0), |r| (*r.start(), *r.end()));
            // The value the slider's range is built around: held while a pointer button is
            // down and in the frame it is released (egui still sets a dragged slider's value
            // from the pointer then), so a drag never moves the range under the pointer; then
            // moved as `limits::reanchor` says (not while the value stays inside the range's
            // decades, so the knob does not jump when the drag ends).
            let anchor = match &current {
                ParamValue::Number(v) => {
                    let id = ui.scope_id().with((salt, spec.name, "slider anchor"));
                    let held = ui.input(|i| i.pointer.any_down() || i.pointer.any_released());
                    ui.data_mut(|d| {
                        let a = d.get_temp_mut_or_insert_with(id, || *v);
                        if !held {
                            *a = limits::reanchor(min, max, default, *a, *v);
                        }
                        *a
                    })
                }
                _ => f64::NAN,
            };
            let slider = |v: f64| limits::slider_range_from(min, max, default, v, anchor);
            match (spec.kind, &current) {
                (ParamKind::Float { .. }, ParamValue::Number(v)) if slider(*v).is_some() => {
                    let mut x = *v;
                    fine_slider(ui, &mut x, slider(*v).expect("checked")).on_hover_text(tip.as_str());
                    if x != *v {
                        new_value = Some(ParamValue::Number(x));
                    }
                    new_value = typed(ui, FIELD_WIDTH).or(new_value.take());
                    ui.label(spec.unit);
                }
                // Seeds and other huge integer ranges: the typed field alone.
                (ParamKind::Int { min, max }, ParamValue::Number(v))
                    if (max as f64 - min as f64) <= 1e9 && slider(*v).is_some() =>
                {
                    let mut x = *v;
                    fine_slider(ui, &mut x, slider(*v).expect("checked")).on_hover_text(tip.as_str());
                    let x = x.round();
                    if x != *v {
                        new_value = Some(ParamValue::Number(x));
                    }
                    new_value = typed(ui, FIELD_WIDTH).or(new_value.take());
                    ui.label(spec.unit);
                }
                (ParamKind::Bool, ParamValue::Bool(b)) => {
                    let mut x = *b;
                    ui.checkbox(&mut x, "").on_hover_text(tip.as_str());
                    if x != *b {
                        new_value = Some(ParamValue::Bool(x));
                    }
                }
                (ParamKind::Choice(options), ParamValue::Text(s)) => {
                    let mut x = s.clone();
                    egui::ComboBox::from_id_salt((salt, spec.name))
                        .selected_text(x.clone())
                        .show_ui(ui, |ui| {
                            for o in options {
                                ui.selectable_value(&mut x, o.to_string(), *o);
                            }
                        })
                        .response
                        .accessible_name(format!("{} menu", spec.name))
                        .on_hover_text(param_tooltip(spec));
                    if &x != s {
                        new_value = Some(ParamValue::Text(x));
                    }
                }
                (ParamKind::Text, _) if spec.name == "path" => {
                    new_value = typed(ui, 130.0);
                    if ui.button("Browse…").on_hover_text("Pick the heightmap file.").clicked() {
                        browse = Some(spec.name);
                    }
                }
                (ParamKind::Text | ParamKind::List { .. }, _) => new_value = typed(ui, 180.0),
                _ => {
                    new_value = typed(ui, 100.0);
                    ui.label(spec.unit);
                    if let Some(note) = seed_note(spec, &current) {
                        ui.weak(note).on_hover_text(tip.as_str());
                    }
                }
            }
        });
        error_note(ui, error.as_deref());
        if clear {
            entry.params.remove(spec.name);
        }
        if let Some(v) = new_value {
            entry.params.insert(spec.name.to_string(), v);
        }
    }
    browse
}

/// A typed field for the recipe-level field `name` (see [`limits::recipe_field`]) holding
/// `value`: it commits on Enter or focus loss a value inside the library's range and returns
/// it; a bad value is not applied and its error is returned (draw it with [`error_note`] after
/// the row). The tooltip comes from the library's spec.
pub fn field_ui(ui: &mut egui::Ui, name: &str, value: f64, width: f32) -> Entry<f64> {
    let spec = limits::recipe_field(name);
    let shown = match spec.kind {
        ParamKind::Int { .. } => format!("{}", value as i64),
        _ => value.to_string(),
    };
    let e = entry_ui(ui, ("field", name), &format!("{name} field"), &shown, width, |t| {
        limits::parse_field(spec, t)
    });
    let response = e.response.on_hover_text(param_tooltip(spec));
    Entry { response, ..e }
}

/// What a special seed value of a step means, shown beside its field: `-1` is the step's own
/// seed (derived from the recipe seed and the step's position, so Random and the seed field
/// change it), `-2` the fixed reference seed of the noise tables. None for other values.
pub fn seed_note(spec: &ParamSpec, value: &ParamValue) -> Option<&'static str> {
    match (spec.name, value) {
        ("seed", ParamValue::Number(v)) if *v == -1.0 => Some("-1 = the step's seed (from the recipe seed)"),
        ("seed", ParamValue::Number(v)) if *v == -2.0 => Some("-2 = the fixed reference seed"),
        _ => None,
    }
}

/// Whether the editor shows a widget for `spec`: every kind but [`ParamKind::LegacyText`], and
/// the world-only parameters ([`ParamSpec::world_only`]: world metres, droplets per world
/// cell) only for a world recipe (`in_world`); a single map ignores them.
pub fn shown(spec: &ParamSpec, in_world: bool) -> bool {
    spec.kind != ParamKind::LegacyText && (in_world || !spec.world_only())
}

/// Tooltip of a parameter: its doc, then the allowed values as the library words them
/// ([`ParamSpec::allowed`], the text of its range errors), its unit and default (as typed in
/// its field: `0.05`, not `Number(0.05)`), and its recipe key (the row shows the plain label).
pub fn param_tooltip(spec: &ParamSpec) -> String {
    let unit = if spec.unit.is_empty() { String::new() } else { format!(", unit {}", spec.unit) };
    let default = match spec.default.to_value() {
        ParamValue::Text(t) if t.is_empty() => "empty".to_string(),
        ParamValue::Absent => "auto (absent)".to_string(),
        v => value_text(&v),
    };
    format!(
        "{}\n\nAllowed: {}{unit}; default {default}. Recipe key `{}`.",
        spec.doc,
        spec.allowed(),
        spec.name
    )
}

#[cfg(test)]
mod tests {
    use terrasynth::recipe::registry;

    use super::*;

    /// The noise step's editor: no free-text box (the legacy inline `noise` key has no widget,
    /// nor has the world-only `feature-size-m` on a map; every other parameter has one), and
    /// its optional numbers say "auto" by default.
    #[test]
    fn noise_shows_typed_widgets_only() {
        let reg = registry();
        let noise = reg.iter().find(|s| s.name == "noise").expect("noise step");
        let widgets: Vec<_> = noise.params.iter().filter(|s| shown(s, false)).map(|s| s.name).collect();
        // On a map, neither the legacy key nor the world-only `feature-size-m`; in a world,
        // `feature-size-m` too (only the legacy key is hidden).
        assert_eq!(widgets.len(), noise.params.len() - 2);
        assert!(!widgets.contains(&"noise") && !widgets.contains(&"feature-size-m"));
        let in_world: Vec<_> = noise.params.iter().filter(|s| shown(s, true)).map(|s| s.name).collect();
        assert_eq!(in_world.len(), noise.params.len() - 1);
        assert!(in_world.contains(&"feature-size-m"));
        assert!(noise.params.iter().filter(|s| shown(s, false)).all(|s| s.kind != ParamKind::Text));
        let optional: Vec<_> = noise.params.iter().filter(|s| s.optional()).map(|s| s.name).collect();
        assert_eq!(
            optional,
            [
                "h",
                "mf-offset",
                "gain",
                "period",
                "feature-size-m",
                "scale-x",
                "scale-y",
                "offset-x",
                "offset-y"
            ]
        );
        for spec in noise.params.iter().filter(|s| s.optional()) {
            let tip = param_tooltip(spec);
            assert!(tip.contains("default auto (absent)"), "{tip}");
            assert!(tip.ends_with(&format!("Recipe key `{}`.", spec.name)), "{tip}");
            // Unticking "auto" gives the range's lower end, which the spec accepts.
            let start = *limits::number_range(spec).expect("a number").start();
            assert!(spec.check(&ParamValue::Number(start)).is_ok(), "{}", spec.name);
        }
    }

    #[test]
    fn tooltips_state_the_librarys_range() {
        let reg = registry();
        let thermal = reg.iter().find(|s| s.name == "thermal").expect("thermal step");
        for spec in thermal.params {
            let tip = param_tooltip(spec);
            assert!(tip.starts_with(spec.doc), "{tip}");
            assert!(tip.contains(&format!("Allowed: {}", spec.allowed())), "{tip}");
            assert!(!tip.contains("Number(") && !tip.contains("Text("), "debug text in {tip}");
            // The range in the tooltip is the one the library's check rejects values outside of.
            if let ParamKind::Float { max, .. } = spec.kind {
                assert!(spec.check(&ParamValue::Number(max)).is_ok());
                assert!(spec.check(&ParamValue::Number(max * 2.0 + 1.0)).is_err());
            }
        }
    }
}
