//! The editor's input limits, all taken from the library's declarations so the widgets accept
//! exactly what the library accepts: recipe-level fields (size, cell size, seed, sea level,
//! export height scale and LOD) from `recipe::model::{RECIPE_FIELDS, EXPORT_FIELDS}`, step
//! parameters from their `ParamSpec`s, the brush from `shape::brush`. No egui types.

use std::ops::RangeInclusive;

use terrasynth::recipe::model::{EXPORT_FIELDS, RECIPE_FIELDS};
use terrasynth::recipe::registry;
use terrasynth::shape::brush::MAX_RADIUS;
use terrasynth::step::{ParamKind, ParamSpec, ParamValue};

/// Smallest brush radius the editor offers, cells (the library takes any radius > 0; below one
/// cell a dab touches a single cell).
pub const MIN_BRUSH_RADIUS: f64 = 1.0;

/// Brush radius, cells: [`MIN_BRUSH_RADIUS`] ..= `shape::brush::MAX_RADIUS`.
pub fn brush_radius() -> RangeInclusive<f64> {
    MIN_BRUSH_RADIUS..=MAX_RADIUS
}

/// The spec of the recipe-level field `name` (`width`, `height`, `cell-size`, `seed`,
/// `sea-level`) or export field (`height-scale`, `lod`), as named in a recipe file.
///
/// # Panics
/// On an unknown name (a bug: the editor asks only for the fields above).
pub fn recipe_field(name: &str) -> &'static ParamSpec {
    RECIPE_FIELDS
        .iter()
        .chain(EXPORT_FIELDS)
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("bug: the library declares no recipe field `{name}`"))
}

/// The integer range of an `Int` spec (None for other kinds), exact (the seed's end is 2^64 − 1).
pub fn int_range(spec: &ParamSpec) -> Option<RangeInclusive<i128>> {
    match spec.kind {
        ParamKind::Int { min, max } => Some(min as i128..=max as i128),
        _ => None,
    }
}

/// The number range of a `Float` or `Int` spec (None for other kinds).
pub fn number_range(spec: &ParamSpec) -> Option<RangeInclusive<f64>> {
    match spec.kind {
        ParamKind::Float { min, max } => Some(min..=max),
        ParamKind::Int { min, max } => Some(min as f64..=max as f64),
        _ => None,
    }
}

/// Widest span of a slider: a logarithmic slider covers at most this factor on each side of
/// its centre (two decades in all), a linear one this many times the centre's size on each
/// side. The typed field beside the slider takes the whole range of the spec.
pub const SLIDER_SPAN: f64 = 10.0;

/// Shift held while dragging a slider moves it this many times slower.
pub const FINE_DRAG: f64 = 10.0;

/// The range and scale of the slider of a number spanning `min ..= max` whose default is
/// `default` and whose value now is `current`: `(lo, hi, logarithmic)`. A usable slider, not the
/// whole range of the spec (a slider over 6–12 decades moves by orders of magnitude per pixel):
/// around the default, `default / 10 ..= default · 10` on a logarithmic scale when the range is
/// positive and spans more than 100×, else `default ± 10 · max(|default|, 1)` on a linear scale;
/// cut to `min ..= max`, and widened to hold `current` (so a typed value is never outside its
/// slider). None when the range is not finite. See [`slider_range_from`] for numbers that are
/// off (0) by default.
pub fn slider_range(min: f64, max: f64, default: f64, current: f64) -> Option<(f64, f64, bool)> {
    slider_range_from(min, max, default, current, f64::NAN)
}

/// Decades a logarithmic slider from 0 shows above its left end (the left end itself is 0).
pub const DECADES_FROM_ZERO: i32 = 3;

/// The lowest positive value of the logarithmic slider `0 ..= hi` (egui's `smallest_positive`):
/// [`DECADES_FROM_ZERO`] decades below `hi`. A slider whose `lo` is above 0 starts at `lo`.
pub fn log_floor(lo: f64, hi: f64) -> f64 {
    if lo > 0.0 { lo } else { hi / 10f64.powi(DECADES_FROM_ZERO) }
}

/// [`slider_range`] with an `anchor`: the value the number had when no pointer button was last
/// held (the editor keeps it while a slider is dragged, so the range stays put under the
/// pointer). A number that is off by default (`min` and `default` 0, e.g. `floodplain-area`,
/// `hillslope-area`, `floodplain-depth`) and on here (`anchor` > 0, the range reaching 100× past
/// it) gets a logarithmic slider from 0 (the left end: off) to two decades above the anchor's
/// decade, `10^(⌊log₁₀ anchor⌋ + 2)`, showing [`DECADES_FROM_ZERO`] decades: the anchor sits
/// near the middle, whatever its unit (30 cells on `0 ..= 1000`, 0.03 height units on
/// `0 ..= 1`). The editor moves the anchor with [`reanchor`]. Any other number: as
/// [`slider_range`].
pub fn slider_range_from(
    min: f64,
    max: f64,
    default: f64,
    current: f64,
    anchor: f64,
) -> Option<(f64, f64, bool)> {
    if !(min.is_finite() && max.is_finite() && max > min) {
        return None;
    }
    if min == 0.0 && default == 0.0 && anchor > 0.0 && anchor.is_finite() && max >= 100.0 * anchor {
        let top = 10f64.powi(anchor.log10().floor() as i32 + 2).min(max);
        let hi = if current.is_finite() && current <= max { top.max(current) } else { top };
        return Some((0.0, hi, true));
    }
    let d = if default.is_finite() { default.clamp(min, max) } else { min };
    let log = min > 0.0 && max / min > 100.0;
    let (lo, hi) = if log {
        (d / SLIDER_SPAN, d * SLIDER_SPAN)
    } else {
        let size = if d != 0.0 { d.abs() } else { 1.0 };
        (d - SLIDER_SPAN * size, d + SLIDER_SPAN * size)
    };
    let (mut lo, mut hi) = (lo.max(min), hi.min(max));
    if current.is_finite() && (min..=max).contains(&current) {
        lo = lo.min(current);
        hi = hi.max(current);
    }
    Some((lo, hi, log && hi / lo > 20.0))
}

/// The anchor of [`slider_range_from`] once no pointer button is held, the value now being
/// `value`: where the slider is a logarithmic one from 0 (a number off by default, on here) and
/// the value is 0 or strictly inside the decades it shows, the anchor stays, so the range and
/// the knob stay where the drag left them; at either end of those decades, or past them (a drag
/// to the end, a typed or loaded value), the anchor becomes the value and the range moves to
/// it (a drag to the right end then a second drag reaches two decades further). Any other
/// number is anchored at its value (its range does not depend on the anchor).
pub fn reanchor(min: f64, max: f64, default: f64, anchor: f64, value: f64) -> f64 {
    match slider_range_from(min, max, default, f64::NAN, anchor) {
        Some((lo, hi, true)) if lo == 0.0 && (value == 0.0 || (value > log_floor(lo, hi) && value < hi)) => {
            anchor
        }
        _ => value,
    }
}

/// The value after a fine drag (Shift held) of `dx_px` pixels on a slider `width_px` wide over
/// `lo ..= hi`: the pointer moves the value [`FINE_DRAG`] times less than a plain drag would
/// (on the slider's own scale, logarithmic or linear), kept inside `lo ..= hi`. On a
/// logarithmic slider from 0, a value of 0 moves from [`log_floor`].
pub fn fine_drag(value: f64, dx_px: f64, width_px: f64, (lo, hi, log): (f64, f64, bool)) -> f64 {
    let t = dx_px / width_px.max(1.0) / FINE_DRAG;
    let v = if log {
        let floor = log_floor(lo, hi);
        (value.max(floor).ln() + t * (hi / floor).ln()).exp()
    } else {
        value + t * (hi - lo)
    };
    v.clamp(lo, hi)
}

/// The `iterations` parameter of the erosion step `kind`, if it has one.
pub fn iterations_spec(kind: &str) -> Option<ParamSpec> {
    registry().iter().find(|s| s.name == kind)?.params.iter().copied().find(|p| p.name == "iterations")
}

/// Parses text typed into the field of the recipe-level field `spec` (an `Int` or `Float`
/// spec, see [`recipe_field`]) and checks it against the library's range, exactly (integers are
/// read as integers, so a seed near 2^64 is not rounded). Nothing is clamped: a value outside
/// the range is an error naming the field and the allowed range, in the library's words.
pub fn parse_field(spec: &ParamSpec, text: &str) -> Result<f64, String> {
    let t = text.trim();
    match spec.kind {
        ParamKind::Int { .. } => parse_int_field(spec, t).map(|v| v as f64),
        _ => {
            let v: f64 = t.parse().map_err(|_| not_a(spec, t, "a number"))?;
            spec.check(&ParamValue::Number(v)).map_err(|e| e.to_string())?;
            Ok(v)
        }
    }
}

/// [`parse_field`] for integer fields, exact over the whole range (the seed's reaches 2^64 − 1).
pub fn parse_int_field(spec: &ParamSpec, text: &str) -> Result<i128, String> {
    let t = text.trim();
    let v: i128 = t.parse().map_err(|_| not_a(spec, t, "an integer"))?;
    match int_range(spec) {
        Some(range) if range.contains(&v) => Ok(v),
        _ => Err(terrasynth::Error::param(spec.name, t, spec.allowed()).to_string()),
    }
}

/// Parses text typed for the step parameter `spec` (numbers, number lists separated by commas,
/// free text) into the value a recipe holds, and checks it with [`ParamSpec::check`]. Nothing is
/// clamped; the error is the library's (name, value and allowed range).
pub fn parse_param(spec: &ParamSpec, text: &str) -> Result<ParamValue, String> {
    let t = text.trim();
    let value = match spec.kind {
        ParamKind::Float { .. } | ParamKind::Int { .. } => {
            ParamValue::Number(t.parse().map_err(|_| not_a(spec, t, "a number"))?)
        }
        ParamKind::List { .. } => ParamValue::List(
            t.trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| s.parse::<f64>().map_err(|_| not_a(spec, s, "a number")))
                .collect::<Result<_, _>>()?,
        ),
        ParamKind::Bool => ParamValue::Bool(t.parse().map_err(|_| not_a(spec, t, "true or false"))?),
        // Free text keeps its spaces; a choice is one of its names.
        ParamKind::Text | ParamKind::LegacyText => ParamValue::Text(text.to_string()),
        ParamKind::Choice(_) => ParamValue::Text(t.to_string()),
    };
    spec.check(&value).map_err(|e| e.to_string())?;
    Ok(value)
}

/// How a value is shown in its typed field: numbers in their shortest exact form (`0.05`,
/// `513`), lists as `1, 2.5`, text as is.
pub fn value_text(value: &ParamValue) -> String {
    match value {
        ParamValue::Number(v) => v.to_string(),
        ParamValue::List(l) => l.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "),
        ParamValue::Text(s) => s.clone(),
        ParamValue::Bool(b) => b.to_string(),
        ParamValue::Absent => String::new(),
    }
}

fn not_a(spec: &ParamSpec, text: &str, what: &str) -> String {
    format!("`{}`: \"{text}\" is not {what}; allowed {}", spec.name, spec.allowed())
}

#[cfg(test)]
mod tests {
    use terrasynth::shape::brush::{Brush, BrushMode};

    use super::*;

    #[test]
    fn recipe_field_limits_are_the_recipes() {
        use terrasynth::recipe::Recipe;
        use terrasynth::recipe::model::MAX_RECIPE_SIDE;
        // The size fields reach the library's largest side (the editor used to stop at 4097),
        // and the recipe's own check accepts the ends and rejects one past them.
        let width = int_range(recipe_field("width")).unwrap();
        assert_eq!(*width.end(), MAX_RECIPE_SIDE as i128);
        let recipe = |w: i128, cell: f64, sea: f64, scale: f64| {
            let mut r = terrasynth::recipe::presets()[0].recipe().unwrap();
            (r.width, r.cell_size, r.sea_level, r.exports.height_scale) = (w as usize, cell, sea, scale);
            r
        };
        let ok = |r: Recipe| r.check_fields().is_empty();
        let cell = number_range(recipe_field("cell-size")).unwrap();
        let sea = number_range(recipe_field("sea-level")).unwrap();
        let scale = number_range(recipe_field("height-scale")).unwrap();
        assert!(ok(recipe(*width.end(), *cell.end(), *sea.end(), *scale.end())));
        assert!(ok(recipe(*width.start(), *cell.start(), *sea.start(), *scale.start())));
        assert!(!ok(recipe(*width.end() + 1, 10.0, 0.0, 1000.0)));
        assert!(!ok(recipe(513, cell.end() * 2.0, 0.0, 1000.0)));
        assert!(!ok(recipe(513, 10.0, sea.end() * 2.0, 1000.0)));
        assert!(!ok(recipe(513, 10.0, 0.0, scale.start() / 2.0)));
        assert_eq!(int_range(recipe_field("seed")).unwrap(), 0..=u64::MAX as i128);
    }

    #[test]
    fn step_parameter_limits_are_the_specs() {
        // The erosion panel's iterations field: the range the `thermal` step itself checks.
        let spec = iterations_spec("thermal").expect("thermal has iterations");
        let range = int_range(&spec).unwrap();
        assert!(spec.check(&ParamValue::Number(*range.end() as f64)).is_ok());
        assert!(spec.check(&ParamValue::Number(*range.end() as f64 + 1.0)).is_err());
        assert!(spec.check(&ParamValue::Number(*range.start() as f64 - 1.0)).is_err());
        assert!(*range.end() >= 1_000_000, "the editor used to stop at 100 000: {range:?}");
        assert!(iterations_spec("no-such-step").is_none());
    }

    #[test]
    fn brush_limits_are_the_librarys() {
        let r = brush_radius();
        let dab = |radius| Brush { x: 3.0, y: 3.0, radius, strength: 0.1, mode: BrushMode::Raise };
        assert!(dab(*r.end()).validate().is_ok());
        assert!(dab(*r.start()).validate().is_ok());
        assert!(dab(r.end() * 1.001).validate().is_err(), "the widget's maximum is the library's");
    }

    #[test]
    fn typed_fields_are_checked_not_clamped() {
        let width = recipe_field("width");
        assert_eq!(parse_field(width, " 2049 "), Ok(2049.0));
        // Out of range, not a number, not an integer: one error naming the field and the range.
        for bad in ["0", "-5", "16386000", "abc", "2.5", ""] {
            let e = parse_field(width, bad).unwrap_err();
            assert!(e.contains("`width`") && e.contains(&width.allowed()), "{bad}: {e}");
        }
        let cell = recipe_field("cell-size");
        let e = parse_field(cell, "-5").unwrap_err();
        assert!(e.contains("cell-size") && e.contains(&cell.allowed()), "{e}");
        assert_eq!(parse_field(cell, "2.5"), Ok(2.5));
        // The seed is read exactly (no f64 rounding) up to the library's largest seed, 2^64 − 1.
        let seed = recipe_field("seed");
        let max = *int_range(seed).unwrap().end();
        assert_eq!(parse_int_field(seed, &max.to_string()), Ok(max));
        assert_eq!(parse_int_field(seed, "123457"), Ok(123457));
        assert_eq!(parse_int_field(seed, "9223372036854775808"), Ok(1 << 63));
        assert!(parse_int_field(seed, &(max + 1).to_string()).is_err());
        assert!(parse_int_field(seed, "-1").is_err());
    }

    #[test]
    fn typed_parameters_are_the_librarys_values() {
        let reg = registry();
        let spec = |step: &str, name: &str| {
            *reg.iter().find(|s| s.name == step).unwrap().params.iter().find(|p| p.name == name).unwrap()
        };
        let path = spec("import", "path");
        assert_eq!(parse_param(&path, "maps/my dem.png"), Ok(ParamValue::Text("maps/my dem.png".into())));
        let octaves = spec("noise", "octaves");
        assert_eq!(parse_param(&octaves, "5"), Ok(ParamValue::Number(5.0)));
        let e = parse_param(&octaves, "-3").unwrap_err();
        assert!(e.contains("octaves") && e.contains(&octaves.allowed()), "{e}");
        assert!(parse_param(&octaves, "five").unwrap_err().contains("not a number"));
        // A value shown in its field reads back as the same value.
        for v in [ParamValue::Number(0.05), ParamValue::Number(513.0), ParamValue::Text("a b".into())] {
            let spec = if matches!(v, ParamValue::Text(_)) { path } else { spec("noise", "feature-size") };
            if spec.check(&v).is_ok() {
                assert_eq!(parse_param(&spec, &value_text(&v)), Ok(v));
            }
        }
    }

    #[test]
    fn sliders_cover_two_decades_around_the_default_and_shift_drags_ten_times_finer() {
        use terrasynth::recipe::registry;
        let reg = registry();
        let noise = reg.iter().find(|s| s.name == "noise").unwrap();
        let fs = noise.params.iter().find(|p| p.name == "feature-size").unwrap();
        let ParamKind::Float { min, max } = fs.kind else { panic!("feature-size is a float") };
        assert!(max / min >= 1e6, "feature-size spans {min}..{max}");
        let range = slider_range(min, max, 0.5, 0.5).unwrap();
        assert_eq!(range, (0.05, 5.0, true));
        // The review's drag: 50 px on a 100 px slider. Plain: half the slider, one decade; with
        // Shift a tenth of that. (It used to take 0.5 to 0.0002.)
        let at = |t: f64| (range.0.ln() + t * (range.1 / range.0).ln()).exp();
        assert!((at(0.0) - 0.05).abs() < 1e-12 && (at(0.25) / 0.05 - 10f64.sqrt()).abs() < 1e-9);
        let fine = fine_drag(0.5, -50.0, 100.0, range);
        assert!((fine / 0.5 - 10f64.powf(-0.1)).abs() < 1e-9, "{fine}");
        assert_eq!(fine_drag(0.5, 1e6, 100.0, range), 5.0, "kept on the slider");
        // Linear: default ± 10 × its size, cut to the range; a typed value outside widens it.
        assert_eq!(slider_range(0.0, 1e6, 0.0, 0.0), Some((0.0, 10.0, false)));
        assert_eq!(slider_range(0.0, 1e6, 0.0, 250.0), Some((0.0, 250.0, false)));
        assert_eq!(slider_range(1.0, 16.0, 8.0, 8.0), Some((1.0, 16.0, false)));
        assert_eq!(slider_range(0.0, 1.0, 0.5, 0.5), Some((0.0, 1.0, false)));
        assert_eq!(fine_drag(0.5, 10.0, 100.0, (0.0, 1.0, false)), 0.51);
        assert_eq!(slider_range(0.0, f64::INFINITY, 1.0, 1.0), None);
        // Off by default, on here: a log slider from 0 with the anchor near its middle,
        // whatever the unit; a value typed past the top widens it; no anchor, as before.
        assert_eq!(slider_range_from(0.0, 1e9, 0.0, 400.0, 400.0), Some((0.0, 1e4, true)));
        assert_eq!(slider_range_from(0.0, 1e6, 0.0, 30.0, 30.0), Some((0.0, 1e3, true)));
        let (lo, hi, log) = slider_range_from(0.0, 1e6, 0.0, 0.03, 0.03).unwrap();
        assert!(lo == 0.0 && (hi - 1.0).abs() < 1e-12 && log, "{hi}");
        assert_eq!(slider_range_from(0.0, 1e6, 0.0, 2e4, 30.0), Some((0.0, 2e4, true)));
        assert_eq!(slider_range_from(0.0, 1e6, 0.0, 0.0, f64::NAN), Some((0.0, 10.0, false)));
        assert_eq!(slider_range_from(0.0, 100.0, 0.0, 30.0, 30.0), Some((0.0, 30.0, false)), "no room");
        assert_eq!(slider_range_from(0.0, 1e6, 0.05, 0.5, 0.5), slider_range(0.0, 1e6, 0.05, 0.5));
        // After a drag: the anchor stays while the value is 0 or inside the decades shown
        // (0.03's slider is 0 ..= 1, from 0.001), moves to a value at either end or past them.
        assert_eq!(reanchor(0.0, 1e6, 0.0, 0.03, 0.1), 0.03);
        assert_eq!(reanchor(0.0, 1e6, 0.0, 0.03, 0.0015), 0.03);
        assert_eq!(reanchor(0.0, 1e6, 0.0, 0.03, 0.0), 0.03);
        assert_eq!(reanchor(0.0, 1e6, 0.0, 0.03, 1.0), 1.0);
        assert_eq!(reanchor(0.0, 1e6, 0.0, 0.03, 0.001), 0.001);
        assert_eq!(reanchor(0.0, 1e6, 0.0, 0.03, 7.0), 7.0);
        assert_eq!(reanchor(0.0, 1e6, 0.0, 0.0, 0.1), 0.1, "off: no log slider yet");
        assert_eq!(reanchor(0.0, 1e6, 0.05, 0.5, 0.7), 0.7, "on by default: anchored at the value");
        // Where the knob sits on egui's scale (log from `log_floor` up): near the middle.
        let at = |v: f64, (lo, hi, _): (f64, f64, bool)| {
            let floor = log_floor(lo, hi);
            (v / floor).ln() / (hi / floor).ln()
        };
        for (v, key) in [(400.0, 1e9), (30.0, 1e6), (0.03, 1e6), (1600.0, 1e9)] {
            let t = at(v, slider_range_from(0.0, key, 0.0, v, v).unwrap());
            assert!((0.3..=0.7).contains(&t), "{v}: {t}");
        }
        // A fine drag from 0 leaves the floor; one to the far left stays at 0's end.
        let r = slider_range_from(0.0, 1e9, 0.0, 400.0, 400.0).unwrap();
        let up = fine_drag(0.0, 100.0, 100.0, r);
        assert!((up / 10.0 - 10f64.powf(0.3)).abs() < 1e-9, "{up}");
        assert_eq!(fine_drag(400.0, -1e6, 100.0, r), 0.0);
        // Every parameter of every step gets a slider of at most two decades (log) or
        // 20 × its default's size (linear), holding its default.
        for step in reg.iter() {
            for p in step.params {
                let (Some(r), ParamValue::Number(d)) = (number_range(p), p.default.to_value()) else {
                    continue;
                };
                if let Some((lo, hi, log)) = slider_range(*r.start(), *r.end(), d, d) {
                    assert!(lo <= d && d <= hi, "{}.{}", step.name, p.name);
                    assert!(if log {
                        hi / lo <= 100.0 + 1e-9
                    } else {
                        hi - lo <= 20.0 * d.abs().max(1.0) + 1e-9
                    });
                }
            }
        }
    }
}
