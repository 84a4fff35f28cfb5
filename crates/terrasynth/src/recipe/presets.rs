//! Built-in presets: TOML recipes in the repository's `presets/` folder, embedded in the
//! binary with `include_str!`. `island` is the default.

use crate::recipe::model::Recipe;
use crate::{Error, Result};

/// A built-in preset: its name and TOML text.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// Name, as given to `--preset`.
    pub name: &'static str,
    /// The recipe as TOML (with its comments).
    pub toml: &'static str,
}

impl Preset {
    /// The parsed recipe.
    pub fn recipe(&self) -> Result<Recipe> {
        Recipe::from_toml_str(self.toml).map_err(|e| match e {
            Error::Syntax { format, line_col, message, .. } => Error::Syntax {
                path: Some(format!("presets/{}.toml", self.name).into()),
                format,
                line_col,
                message,
            },
            other => other,
        })
    }
}

/// Name of the default preset.
pub const DEFAULT_PRESET: &str = "island";

macro_rules! preset {
    ($name:literal) => {
        Preset { name: $name, toml: include_str!(concat!("../../../../presets/", $name, ".toml")) }
    };
}

/// Every built-in preset, default first.
pub fn presets() -> &'static [Preset] {
    const ALL: &[Preset] = &[
        preset!("island"),
        preset!("archipelago"),
        preset!("mountains"),
        preset!("mdp"),
        preset!("spectral"),
        preset!("voronoi-ds"),
        preset!("olsen"),
        preset!("eroded-island"),
        preset!("olsen-eroded"),
        preset!("rivers"),
        preset!("highlands"),
        preset!("world"),
        preset!("world-island"),
        preset!("world-archipelago"),
    ];
    ALL
}

/// The preset named `name`; the error lists the known names.
pub fn preset(name: &str) -> Result<Preset> {
    presets().iter().copied().find(|p| p.name == name).ok_or_else(|| {
        let known = presets().iter().map(|p| p.name.to_string()).collect();
        Error::UnknownPreset { name: name.to_string(), known }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_is_named_after_itself() {
        for p in presets() {
            let r = p.recipe().unwrap();
            assert_eq!(r.name, p.name);
            assert!(!r.description.is_empty(), "{} has no description", p.name);
            assert!(r.check_fields().is_empty(), "{}: {:?}", p.name, r.check_fields());
        }
        assert_eq!(presets()[0].name, DEFAULT_PRESET);
    }

    #[test]
    fn unknown_preset_lists_known_ones() {
        let e = preset("atlantis").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown preset `atlantis` (known: island, archipelago, mountains, mdp, spectral, voronoi-ds, \
             olsen, eroded-island, olsen-eroded, rivers, highlands, world, world-island, world-archipelago)"
        );
        assert!(matches!(e, Error::UnknownPreset { name, .. } if name == "atlantis"));
    }
}
