//! The generic parameter editor: one widget per [`ParamSpec`] (slider, field, checkbox, menu),
//! used by the steps and erosion panels. Ranges and their wording come from the spec.

use eframe::egui;
use terrasynth::recipe::StepEntry;
use terrasynth::step::{ParamKind, ParamSpec, ParamValue};

use crate::limits;

/// Sliders and fields for `specs`, editing `entry.params` (a key is written only once its
/// value differs from the default's display). `salt` keeps widget ids unique.
pub fn params_ui(ui: &mut egui::Ui, specs: &[ParamSpec], entry: &mut StepEntry, salt: usize) {
    for spec in specs {
        let current = entry.params.get(spec.name).cloned().unwrap_or_else(|| spec.default.to_value());
        let tip = param_tooltip(spec);
        let mut new_value = None;
        ui.horizontal(|ui| {
            ui.label(spec.name).on_hover_text(tip.as_str());
            match (spec.kind, &current) {
                (ParamKind::Float { min, max }, ParamValue::Number(v)) => {
                    let mut x = *v;
                    let r = if min.is_finite() && max.is_finite() && max > min {
                        let log = min > 0.0 && max / min > 1000.0;
                        ui.add(
                            egui::Slider::new(&mut x, min..=max)
                                .logarithmic(log)
                                .suffix(unit_suffix(spec.unit)),
                        )
                    } else {
                        ui.add(egui::DragValue::new(&mut x).speed(0.01).suffix(unit_suffix(spec.unit)))
                    };
                    r.on_hover_text(tip.as_str());
                    if x != *v {
                        new_value = Some(ParamValue::Number(x.clamp(min, max)));
                    }
                }
                (ParamKind::Int { min, max }, ParamValue::Number(v)) => {
                    let mut x = *v as i64;
                    let r = if max - min <= 4096 {
                        ui.add(egui::Slider::new(&mut x, min..=max).suffix(unit_suffix(spec.unit)))
                    } else {
                        ui.add(egui::DragValue::new(&mut x).range(min..=max).suffix(unit_suffix(spec.unit)))
                    };
                    r.on_hover_text(tip.as_str());
                    if x as f64 != *v {
                        new_value = Some(ParamValue::Number(x as f64));
                    }
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
                    egui::ComboBox::from_id_salt((salt, spec.name)).selected_text(x.clone()).show_ui(
                        ui,
                        |ui| {
                            for o in options {
                                ui.selectable_value(&mut x, o.to_string(), *o);
                            }
                        },
                    );
                    if &x != s {
                        new_value = Some(ParamValue::Text(x));
                    }
                }
                (ParamKind::List { .. }, ParamValue::List(l)) => {
                    let text_id = ui.make_persistent_id((salt, spec.name, "list"));
                    let mut text = ui.data_mut(|d| {
                        d.get_temp::<String>(text_id)
                            .unwrap_or_else(|| l.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "))
                    });
                    let r = ui.text_edit_singleline(&mut text).on_hover_text(tip.as_str());
                    if r.changed() {
                        let parsed: Result<Vec<f64>, _> = text
                            .split(',')
                            .map(|s| s.trim())
                            .filter(|s| !s.is_empty())
                            .map(str::parse::<f64>)
                            .collect();
                        if let Ok(v) = parsed
                            && &v != l
                        {
                            new_value = Some(ParamValue::List(v));
                        }
                    }
                    ui.data_mut(|d| d.insert_temp(text_id, text));
                }
                (_, v) => {
                    let mut x = match v {
                        ParamValue::Text(s) => s.clone(),
                        other => other.to_string(),
                    };
                    if ui.text_edit_singleline(&mut x).on_hover_text(tip.as_str()).lost_focus() {
                        new_value = Some(ParamValue::Text(x));
                    }
                }
            }
        });
        if let Some(v) = new_value {
            entry.params.insert(spec.name.to_string(), v);
        }
    }
}

/// A number field for the recipe-level field `name` (see [`limits::recipe_field`]): its range
/// and tooltip come from the library's spec; `suffix` is shown after the value, `speed` is the
/// change per point dragged.
pub fn field_ui<N: egui::emath::Numeric>(
    ui: &mut egui::Ui,
    name: &str,
    value: &mut N,
    suffix: &str,
    speed: f64,
) -> egui::Response {
    let spec = limits::recipe_field(name);
    let mut field = egui::DragValue::new(value).suffix(suffix).speed(speed);
    if let Some(range) = limits::number_range(spec) {
        field = field.range(range);
    }
    ui.add(field).on_hover_text(param_tooltip(spec))
}

fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() { String::new() } else { format!(" {unit}") }
}

/// Tooltip of a parameter: its doc, then the allowed values as the library words them
/// ([`ParamSpec::allowed`], the text of its range errors), its unit and default.
pub fn param_tooltip(spec: &ParamSpec) -> String {
    let unit = if spec.unit.is_empty() { String::new() } else { format!(", unit {}", spec.unit) };
    format!("{}\n\nAllowed: {}{unit}; default {}", spec.doc, spec.allowed(), spec.default.to_value())
}

#[cfg(test)]
mod tests {
    use terrasynth::recipe::registry;

    use super::*;

    #[test]
    fn tooltips_state_the_librarys_range() {
        let reg = registry();
        let thermal = reg.iter().find(|s| s.name == "thermal").expect("thermal step");
        for spec in thermal.params {
            let tip = param_tooltip(spec);
            assert!(tip.starts_with(spec.doc), "{tip}");
            assert!(tip.contains(&format!("Allowed: {}", spec.allowed())), "{tip}");
            // The range in the tooltip is the one the library's check rejects values outside of.
            if let ParamKind::Float { max, .. } = spec.kind {
                assert!(spec.check(&ParamValue::Number(max)).is_ok());
                assert!(spec.check(&ParamValue::Number(max * 2.0 + 1.0)).is_err());
            }
        }
    }
}
