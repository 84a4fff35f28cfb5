//! The editor's input limits, all taken from the library's declarations so the widgets accept
//! exactly what the library accepts: recipe-level fields (size, cell size, seed, sea level,
//! export height scale and LOD) from `recipe::model::{RECIPE_FIELDS, EXPORT_FIELDS}`, step
//! parameters from their `ParamSpec`s, the brush from `shape::brush`. No egui types.

use std::ops::RangeInclusive;

use terrasynth::recipe::model::{EXPORT_FIELDS, RECIPE_FIELDS};
use terrasynth::recipe::registry;
use terrasynth::shape::brush::MAX_RADIUS;
use terrasynth::step::{ParamKind, ParamSpec};

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

/// The integer range of an `Int` spec (None for other kinds).
pub fn int_range(spec: &ParamSpec) -> Option<RangeInclusive<i64>> {
    match spec.kind {
        ParamKind::Int { min, max } => Some(min..=max),
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

/// The `iterations` parameter of the erosion step `kind`, if it has one.
pub fn iterations_spec(kind: &str) -> Option<ParamSpec> {
    registry().iter().find(|s| s.name == kind)?.params.iter().copied().find(|p| p.name == "iterations")
}

#[cfg(test)]
mod tests {
    use terrasynth::shape::brush::{Brush, BrushMode};
    use terrasynth::step::ParamValue;

    use super::*;

    #[test]
    fn recipe_field_limits_are_the_recipes() {
        use terrasynth::recipe::Recipe;
        use terrasynth::recipe::model::MAX_RECIPE_SIDE;
        // The size fields reach the library's largest side (the editor used to stop at 4097),
        // and the recipe's own check accepts the ends and rejects one past them.
        let width = int_range(recipe_field("width")).unwrap();
        assert_eq!(*width.end(), MAX_RECIPE_SIDE as i64);
        let recipe = |w: i64, cell: f64, sea: f64, scale: f64| {
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
        assert_eq!(int_range(recipe_field("seed")).unwrap().start(), &0);
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
}
