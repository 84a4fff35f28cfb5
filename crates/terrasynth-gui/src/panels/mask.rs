//! The "Mask" section of a shaping or erosion step's parameters: none, a height range, a slope
//! range or a painted mask, with a soft edge and invert (`[steps.mask]`, see
//! `terrasynth::recipe::mask`). The fields are the library's [`MASK_FIELDS`] specs: their
//! ranges check the typed values (nothing is clamped) and their docs are the tooltips.

use std::collections::BTreeMap;

use eframe::egui;
use terrasynth::recipe::mask::MASK_FIELDS;
use terrasynth::recipe::{PaintedMask, StepEntry, StepMask};
use terrasynth::step::{ParamSpec, ParamValue};

use super::entry::{entry_ui, error_note};
use super::params::param_tooltip;
use crate::limits::{parse_param, value_text};
use crate::mask_paint::DEFAULT_MASK_NAME;

/// The kinds of mask the section offers (a recipe may combine parts; the section shows the
/// first of painted, slope, height).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskKind {
    /// No mask: the step applies everywhere.
    None,
    /// A height range, metres.
    Height,
    /// A slope range, degrees.
    Slope,
    /// A painted mask of the recipe.
    Painted,
}

impl MaskKind {
    /// Every kind with its menu label (unique labels: tests click them).
    pub const ALL: [(MaskKind, &'static str); 4] = [
        (MaskKind::None, "no mask"),
        (MaskKind::Height, "height range"),
        (MaskKind::Slope, "slope range"),
        (MaskKind::Painted, "painted mask"),
    ];

    /// The kind the section shows for `mask`.
    pub fn of(mask: Option<&StepMask>) -> Self {
        match mask {
            None => MaskKind::None,
            Some(m) if m.painted.is_some() => MaskKind::Painted,
            Some(m) if m.slope.is_some() => MaskKind::Slope,
            Some(m) if m.height.is_some() => MaskKind::Height,
            Some(_) => MaskKind::None,
        }
    }

    fn label(self) -> &'static str {
        Self::ALL.iter().find(|(k, _)| *k == self).map_or("no mask", |(_, l)| l)
    }
}

/// What the section asks of the editor.
#[derive(Default)]
pub struct MaskRequest {
    /// Turn the Paint mask tool on, painting into this mask.
    pub paint: Option<String>,
    /// Show (true) or hide (false) this step's mask over the map.
    pub show: Option<bool>,
}

fn spec(name: &str) -> &'static ParamSpec {
    MASK_FIELDS.iter().find(|s| s.name == name).expect("mask key")
}

/// The section for `entry` (step `index`): edits `entry.mask`, and `masks` (a painted mask
/// chosen by a name the recipe lacks is created empty, so the recipe stays valid). `showing`:
/// whether this step's mask is the overlay now.
pub fn mask_ui(
    ui: &mut egui::Ui,
    entry: &mut StepEntry,
    index: usize,
    masks: &mut BTreeMap<String, PaintedMask>,
    showing: bool,
) -> MaskRequest {
    let mut request = MaskRequest::default();
    ui.separator();
    let kind = MaskKind::of(entry.mask.as_ref());
    let mut chosen = kind;
    ui.horizontal(|ui| {
        ui.label("Mask").on_hover_text(
            "Limit this step to part of the map: where the mask is 1 the step applies fully, where \
             it is 0 the terrain stays as the step found it (computed on the step's input).",
        );
        egui::ComboBox::from_id_salt(("mask-kind", index))
            .selected_text(kind.label())
            .show_ui(ui, |ui| {
                for (k, label) in MaskKind::ALL {
                    ui.selectable_value(&mut chosen, k, label);
                }
            })
            .response
            .accessible_name("mask menu");
        if kind != MaskKind::None {
            let mut show = showing;
            if ui
                .toggle_value(&mut show, "Show mask")
                .on_hover_text(
                    "Tint the map where this step applies (height and slope weighed on the map shown).",
                )
                .changed()
            {
                request.show = Some(show);
            }
        }
    });
    if chosen != kind {
        let keep = entry.mask.take().unwrap_or_default();
        let base = StepMask { soft_edge: keep.soft_edge, invert: keep.invert, ..StepMask::default() };
        entry.mask = match chosen {
            MaskKind::None => None,
            MaskKind::Height => Some(StepMask { height: Some([0.0, 500.0]), ..base }),
            MaskKind::Slope => Some(StepMask { slope: Some([0.0, 30.0]), ..base }),
            MaskKind::Painted => {
                let name = masks.keys().next().cloned().unwrap_or_else(|| DEFAULT_MASK_NAME.to_string());
                masks.entry(name.clone()).or_default();
                Some(StepMask { painted: Some(name), ..base })
            }
        };
    }
    let Some(mask) = entry.mask.as_mut() else { return request };
    let mut errors = Vec::new();
    for (key, range) in [("height", &mut mask.height), ("slope", &mut mask.slope)] {
        let Some(r) = range else { continue };
        let s = spec(key);
        ui.horizontal(|ui| {
            ui.label(s.label).on_hover_text(param_tooltip(s));
            let shown = value_text(&ParamValue::List(r.to_vec()));
            let e = entry_ui(ui, ("mask", index, key), &format!("mask {key} field"), &shown, 110.0, |t| {
                match parse_param(s, t)? {
                    ParamValue::List(v) if v[0] <= v[1] => Ok([v[0], v[1]]),
                    _ => Err(format!("`mask.{key}` = {}: allowed lowest <= highest", t.trim())),
                }
            });
            e.response.on_hover_text(param_tooltip(s));
            if let Some(v) = e.committed {
                *r = v;
            }
            errors.extend(e.error);
            ui.label(s.unit);
        });
    }
    if let Some(name) = mask.painted.as_mut() {
        let s = spec("painted");
        ui.horizontal(|ui| {
            ui.label(s.label).on_hover_text(param_tooltip(s));
            let e = entry_ui(ui, ("mask", index, "painted"), "mask name field", name, 90.0, |t| {
                let t = t.trim();
                if t.is_empty() {
                    Err("`mask.painted`: allowed a non-empty name".into())
                } else {
                    Ok(t.to_string())
                }
            });
            if let Some(v) = e.committed {
                masks.entry(v.clone()).or_default();
                *name = v;
            }
            errors.extend(e.error);
            if ui
                .button("Paint mask")
                .on_hover_text("Paint this mask on the map (the Paint mask brush; Erase to remove).")
                .clicked()
            {
                request.paint = Some(name.clone());
            }
        });
    }
    if mask.height.is_some() || mask.slope.is_some() {
        let s = spec("soft-edge");
        ui.horizontal(|ui| {
            ui.label(s.label).on_hover_text(param_tooltip(s));
            let shown = value_text(&ParamValue::Number(mask.soft_edge));
            let e = entry_ui(ui, ("mask", index, "soft-edge"), "mask soft edge field", &shown, 70.0, |t| {
                match parse_param(s, t)? {
                    ParamValue::Number(v) => Ok(v),
                    _ => Err("a number".to_string()),
                }
            });
            if let Some(v) = e.committed {
                mask.soft_edge = v;
            }
            errors.extend(e.error);
            ui.label(s.unit);
        });
    }
    ui.checkbox(&mut mask.invert, "invert mask").on_hover_text(param_tooltip(spec("invert")));
    for e in &errors {
        error_note(ui, Some(e));
    }
    request
}
