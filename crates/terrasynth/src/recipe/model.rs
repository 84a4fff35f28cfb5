//! [`Recipe`]: the plain serde description of a whole terrain (size, seed, ordered steps,
//! palette, exports), read from and written to TOML or JSON.
//!
//! A recipe is data only; [`crate::recipe::Pipeline::new`] validates it once against the
//! registry and reports every problem at the same time.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::recipe::mask::{PaintedMask, StepMask};
use crate::render::palette::{Palette, Stop};
use crate::step::{DefaultValue, ParamKind, ParamSpec, ParamValue};
use crate::{Error, Problem, Result};

/// Largest width or height a recipe may ask for, in cells. Engines stop at 8129 (Unreal) or
/// 16k (Terrain3D); twice that is allowed for offline work, within the memory limit of
/// [`crate::grid::check_size`].
pub const MAX_RECIPE_SIDE: usize = 32_769;

/// Largest seed a recipe may hold: any u64. TOML integers are signed 64-bit, so a recipe
/// writes a seed above 2^63 − 1 as a decimal string (`seed = "18446744073709551615"`); see
/// [`Recipe::seed`].
pub const MAX_SEED: u64 = u64::MAX;

/// Largest recipe or project file read, in bytes (64 MiB; presets are a few KiB).
pub const MAX_RECIPE_FILE_BYTES: u64 = 64 << 20;

/// Default width and height, in cells (Unity's 2^9 + 1).
pub const DEFAULT_SIDE: usize = 513;

/// Default cell size, in metres.
pub const DEFAULT_CELL_SIZE_M: f64 = 10.0;

/// Default vertical scale: metres per height unit (heights in [0, 1] become 0–1000 m).
pub const DEFAULT_HEIGHT_SCALE_M: f64 = 1000.0;

/// Smallest cell size, metres (1 mm).
pub const MIN_CELL_SIZE_M: f64 = 0.001;

/// Largest cell size, metres (1000 km).
pub const MAX_CELL_SIZE_M: f64 = 1.0e6;

/// Largest magnitude of the initial sea level, height units (the `sea-level` step's bound).
pub const MAX_ABS_SEA_LEVEL: f64 = 1.0e9;

/// Smallest vertical scale, metres per height unit.
pub const MIN_HEIGHT_SCALE_M: f64 = 0.001;

/// Largest vertical scale, metres per height unit.
pub const MAX_HEIGHT_SCALE_M: f64 = 1.0e5;

/// The recipe-level fields (`width`, `height`, `cell-size`, `seed`, `sea-level`) as
/// [`ParamSpec`]s: the one description of their defaults and ranges, used by
/// [`Recipe::check_fields`], the editor's widgets and the docs.
pub const RECIPE_FIELDS: &[ParamSpec] = &[
    ParamSpec {
        name: "width",
        label: "Width",
        kind: ParamKind::Int { min: 2, max: MAX_RECIPE_SIDE as u64 },
        default: DefaultValue::Number(DEFAULT_SIDE as f64),
        unit: "cells",
        doc: "Width of the map in cells (Unity uses 2^n + 1: 513, 1025, 2049, 4097).",
    },
    ParamSpec {
        name: "height",
        label: "Height",
        kind: ParamKind::Int { min: 2, max: MAX_RECIPE_SIDE as u64 },
        default: DefaultValue::Number(DEFAULT_SIDE as f64),
        unit: "cells",
        doc: "Height of the map in cells (Unity uses 2^n + 1: 513, 1025, 2049, 4097).",
    },
    ParamSpec {
        name: "cell-size",
        label: "Cell size",
        kind: ParamKind::Float { min: MIN_CELL_SIZE_M, max: MAX_CELL_SIZE_M },
        default: DefaultValue::Number(DEFAULT_CELL_SIZE_M),
        unit: "m",
        doc: "Horizontal size of one cell. Slopes, erosion and meshes use it.",
    },
    ParamSpec {
        name: "seed",
        label: "Seed",
        kind: ParamKind::Int { min: 0, max: MAX_SEED },
        default: DefaultValue::Number(0.0),
        unit: "",
        doc: "Seed of the whole recipe; step i gets derive_seed(seed, i), disabled steps counted.",
    },
    ParamSpec {
        name: "sea-level",
        label: "Sea level",
        kind: ParamKind::Float { min: -MAX_ABS_SEA_LEVEL, max: MAX_ABS_SEA_LEVEL },
        default: DefaultValue::Number(0.0),
        unit: "height units",
        doc: "Initial sea level; a `sea-level` step may change it.",
    },
];

/// The numeric `exports` fields (`height-scale`, `lod`) as [`ParamSpec`]s, named as in a recipe's
/// `[exports]` table; [`Recipe::check_fields`] reports them as `exports.<name>`.
pub const EXPORT_FIELDS: &[ParamSpec] = &[
    ParamSpec {
        name: "height-scale",
        label: "Height scale",
        kind: ParamKind::Float { min: MIN_HEIGHT_SCALE_M, max: MAX_HEIGHT_SCALE_M },
        default: DefaultValue::Number(DEFAULT_HEIGHT_SCALE_M),
        unit: "m per height unit",
        doc: "Vertical scale used by meshes and engine exports (heights in [0, 1] become 0–1000 m \
              at the default).",
    },
    ParamSpec {
        name: "lod",
        label: "Mesh detail (LOD)",
        kind: ParamKind::Int { min: 0, max: MAX_LOD as u64 },
        default: DefaultValue::Number(0.0),
        unit: "levels",
        doc: "Mesh level of detail: the mesh keeps every 2^lod-th vertex.",
    },
];

/// The spec called `name` in `specs` (a bug if absent: the names above are fixed).
fn field(specs: &'static [ParamSpec], name: &str) -> &'static ParamSpec {
    specs.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("bug: no field spec `{name}`"))
}

/// One recipe-level problem, `invalid `key` = value: allowed …`, or `None` if `value` is allowed.
/// Integers are compared exactly (a seed near 2^64 does not round).
fn field_problem(spec: &ParamSpec, key: &str, value: FieldValue) -> Option<Problem> {
    let ok = match (spec.kind, value) {
        (ParamKind::Int { min, max }, FieldValue::Int(v)) => (min as i128..=max as i128).contains(&v),
        (_, FieldValue::Float(v)) => spec.check(&ParamValue::Number(v)).is_ok(),
        _ => false,
    };
    if ok {
        return None;
    }
    let shown = match value {
        FieldValue::Int(v) => v.to_string(),
        FieldValue::Float(v) => v.to_string(),
    };
    let unit = if spec.unit.is_empty() { String::new() } else { format!(" ({})", spec.unit) };
    Some(Problem::value(key, shown, format!("{}{unit}", spec.allowed())))
}

/// The serde form of [`Recipe::seed`]: an integer up to 2^63 − 1, a decimal string above (TOML
/// integers are signed 64-bit); either form is read, anything else is refused with the range.
pub(crate) mod seed_form {
    use std::fmt;

    use serde::de::{self, Unexpected, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(seed: &u64, s: S) -> Result<S::Ok, S::Error> {
        if *seed <= i64::MAX as u64 { s.serialize_u64(*seed) } else { s.serialize_str(&seed.to_string()) }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        struct Seed;
        impl Visitor<'_> for Seed {
            type Value = u64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a seed: an integer in 0..=18446744073709551615 (above 9223372036854775807 \
                     written as a string, e.g. \"18446744073709551615\")",
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
                Ok(v)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
                u64::try_from(v).map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
                v.trim().parse().map_err(|_| E::invalid_value(Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(Seed)
    }
}

/// A recipe-level value to check.
#[derive(Clone, Copy)]
enum FieldValue {
    Int(i128),
    Float(f64),
}

/// A whole terrain description. Keys are kebab-case in TOML and JSON.
///
/// ```
/// use terrasynth::recipe::Recipe;
/// let r = Recipe::from_toml_str(r#"
/// name = "demo"
/// width = 65
/// height = 65
/// seed = 7
/// [[steps]]
/// type = "diamond-square"
/// roughness = 0.8
/// "#).unwrap();
/// assert_eq!(r.steps[0].kind, "diamond-square");
/// assert_eq!(r.cell_size, 10.0);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Recipe {
    /// Short name (presets use their preset name).
    #[serde(default)]
    pub name: String,
    /// One or two sentences for `terrasynth presets` and the GUI.
    #[serde(default)]
    pub description: String,
    /// Width in cells (2..=[`MAX_RECIPE_SIDE`]; default [`DEFAULT_SIDE`]; see [`RECIPE_FIELDS`]).
    #[serde(default = "default_side")]
    pub width: usize,
    /// Height in cells (2..=[`MAX_RECIPE_SIDE`]; default [`DEFAULT_SIDE`]; see [`RECIPE_FIELDS`]).
    #[serde(default = "default_side")]
    pub height: usize,
    /// Horizontal size of one cell, metres ([`MIN_CELL_SIZE_M`]..=[`MAX_CELL_SIZE_M`]; default
    /// [`DEFAULT_CELL_SIZE_M`]).
    #[serde(default = "default_cell_size")]
    pub cell_size: f64,
    /// Seed of the whole recipe (any u64, 0..=[`MAX_SEED`]; default 0). Step `i` gets
    /// `derive_seed(seed, i)`, `i` counting disabled steps too, so toggling a step leaves the
    /// others' randomness unchanged. Written as an integer up to 2^63 − 1 (the largest TOML
    /// integer) and as a decimal string above (`seed = "18446744073709551615"`); read in
    /// either form.
    #[serde(default, with = "seed_form")]
    pub seed: u64,
    /// Initial sea level in height units (±[`MAX_ABS_SEA_LEVEL`]; default 0); a `sea-level` step
    /// may change it.
    #[serde(default)]
    pub sea_level: f64,
    /// Colour palette: a built-in name or a list of stops.
    #[serde(default)]
    pub palette: PaletteSpec,
    /// Which files `generate` writes, and the vertical scale.
    #[serde(default)]
    pub exports: Exports,
    /// Present in a world recipe (a `[world]` table): the recipe defines an endless world of
    /// which `width × height` at cell (0, 0) is the default window; see [`WorldSpec`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world: Option<WorldSpec>,
    /// The steps, run in order.
    #[serde(default)]
    pub steps: Vec<StepEntry>,
    /// Painted masks by name (`[masks.NAME]`), which a step's `mask.painted` names; see
    /// [`crate::recipe::mask`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub masks: BTreeMap<String, PaintedMask>,
}

/// The `[world]` table of a world recipe: an endless world generated on demand from the seed
/// (seed 000: Minecraft's maps). Every length is in metres, heights are metres, and every step
/// computes each cell from world coordinates, so any window of the world equals the same cells
/// cut from any larger window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct WorldSpec {
    /// The world's height range in metres, `[lowest, highest]`: 16-bit outputs map it (never a
    /// window's own extremes, so tiles line up), fractions of the height range (sea level,
    /// terraces) are taken over it.
    pub height_range: [f64; 2],
}

/// Largest absolute height of a world's `height-range`, metres.
pub const MAX_ABS_WORLD_HEIGHT_M: f64 = 1.0e6;

impl WorldSpec {
    /// Every problem of the table (finite, `lowest < highest`, within ±[`MAX_ABS_WORLD_HEIGHT_M`]).
    pub fn problems(&self) -> Vec<Problem> {
        let [lo, hi] = self.height_range;
        let ok = |v: f64| v.is_finite() && v.abs() <= MAX_ABS_WORLD_HEIGHT_M;
        if ok(lo) && ok(hi) && lo < hi {
            return Vec::new();
        }
        vec![Problem::value(
            "world.height-range",
            format!("[{lo}, {hi}]"),
            format!("[lowest, highest] in metres, lowest < highest, each within ±{MAX_ABS_WORLD_HEIGHT_M}"),
        )]
    }
}

fn default_side() -> usize {
    DEFAULT_SIDE
}
fn default_cell_size() -> f64 {
    DEFAULT_CELL_SIZE_M
}
fn default_height_scale() -> f64 {
    DEFAULT_HEIGHT_SCALE_M
}
fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_false(b: &bool) -> bool {
    !*b
}

/// One step of a recipe: `type`, optional `enabled`, and the step's parameters as flat keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepEntry {
    /// Registry name, e.g. `"diamond-square"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Whether the step runs (default true). A disabled step keeps its index, hence its seed.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub enabled: bool,
    /// Parameters, validated against the step's `ParamSpec`s; missing keys take defaults.
    #[serde(flatten)]
    pub params: BTreeMap<String, ParamValue>,
    /// Limits a shaping or erosion step to part of the map (`[steps.mask]`), see
    /// [`crate::recipe::mask`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask: Option<StepMask>,
}

impl StepEntry {
    /// An enabled step with no parameters (all defaults).
    pub fn new(kind: impl Into<String>) -> Self {
        Self { kind: kind.into(), enabled: true, params: BTreeMap::new(), mask: None }
    }

    /// Adds a parameter (builder style).
    pub fn with(mut self, key: &str, value: impl Into<ParamValue>) -> Self {
        self.params.insert(key.to_string(), value.into());
        self
    }
}

impl From<f64> for ParamValue {
    fn from(v: f64) -> Self {
        ParamValue::Number(v)
    }
}
impl From<bool> for ParamValue {
    fn from(v: bool) -> Self {
        ParamValue::Bool(v)
    }
}
impl From<&str> for ParamValue {
    fn from(v: &str) -> Self {
        ParamValue::Text(v.to_string())
    }
}
impl From<Vec<f64>> for ParamValue {
    fn from(v: Vec<f64>) -> Self {
        ParamValue::List(v)
    }
}

/// A colour palette: the name of a built-in palette (see
/// [`crate::render::Palette::NAMES`]: `classic`, `classic-bands`, `mdp`, `simple`,
/// `grayscale`), or a custom table `{ stops = [...], smooth = true, sea-at = 0.15 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PaletteSpec {
    /// A built-in palette by name.
    Named(String),
    /// A custom palette.
    Custom(CustomPalette),
}

impl std::default::Default for PaletteSpec {
    fn default() -> Self {
        PaletteSpec::Named(DEFAULT_PALETTE.to_string())
    }
}

impl PaletteSpec {
    /// The render palette this names or describes; errors name the palette and the choices.
    pub fn resolve(&self) -> Result<Palette> {
        match self {
            PaletteSpec::Named(name) => Palette::named(name),
            PaletteSpec::Custom(c) => {
                let p = Palette {
                    stops: c.stops.iter().map(|s| Stop { at: s.at as f32, color: s.color }).collect(),
                    smooth: c.smooth,
                    sea_at: c.sea_at as f32,
                };
                p.validate()?;
                Ok(p)
            }
        }
    }
}

/// Name of the default palette (seed 004 §7 classes with smooth gradients).
pub const DEFAULT_PALETTE: &str = "classic";

/// A custom palette in a recipe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CustomPalette {
    /// Stops sorted by `at`.
    pub stops: Vec<PaletteStop>,
    /// Linear gradients between stops (true, default) or hard classes (false).
    #[serde(default = "yes")]
    pub smooth: bool,
    /// Height fraction in [0, 1] where the sea level lands (default 0.15).
    #[serde(default = "default_sea_at")]
    pub sea_at: f64,
}

fn default_sea_at() -> f64 {
    0.15
}

/// One palette stop: a colour at a height fraction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaletteStop {
    /// Height fraction in [0, 1] (see [`crate::render::palette`] for how heights and the sea
    /// level map to fractions).
    pub at: f64,
    /// sRGB colour, 0–255 per channel.
    pub color: [u8; 3],
}

/// Which outputs `terrasynth generate` writes, and how heights map to metres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Exports {
    /// Vertical scale: metres per height unit, used by meshes and engine exports
    /// ([`MIN_HEIGHT_SCALE_M`]..=[`MAX_HEIGHT_SCALE_M`]; default [`DEFAULT_HEIGHT_SCALE_M`]).
    #[serde(default = "default_height_scale")]
    pub height_scale: f64,
    /// Mesh level of detail: the mesh keeps every 2^lod-th vertex (0..=[`MAX_LOD`]; default 0).
    #[serde(default)]
    pub lod: u32,
    /// `height.png`, 16-bit grey (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub png: bool,
    /// `height.r16`, raw little-endian u16 (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub r16: bool,
    /// `height.exr`, f32 (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub exr: bool,
    /// `height.tif`, f32 GeoTIFF (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub tiff: bool,
    /// `color.png`, `hillshade.png`, `shaded.png` (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub images: bool,
    /// `mesh.glb` (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub glb: bool,
    /// `mesh.obj` (default false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub obj: bool,
    /// Cut the rivers into the mesh (`mesh.glb`/`mesh.obj`) with the hydrology carving, the
    /// largest river 4 m deep (default false; the height files are never carved).
    #[serde(default, skip_serializing_if = "is_false")]
    pub carve_mesh: bool,
}

impl std::default::Default for Exports {
    fn default() -> Self {
        Self {
            height_scale: DEFAULT_HEIGHT_SCALE_M,
            lod: 0,
            png: true,
            r16: true,
            exr: true,
            tiff: true,
            images: true,
            glb: true,
            obj: false,
            carve_mesh: false,
        }
    }
}

/// Largest mesh LOD (every 2^16th vertex), as in [`crate::render::mesh::MAX_LOD`].
pub const MAX_LOD: u32 = crate::render::mesh::MAX_LOD;

/// Line and column (1-based) of byte offset `pos` in `text`.
fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl Recipe {
    /// A recipe with default size and palette and no steps.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: String::new(),
            width: DEFAULT_SIDE,
            height: DEFAULT_SIDE,
            cell_size: DEFAULT_CELL_SIZE_M,
            seed: 0,
            sea_level: 0.0,
            palette: PaletteSpec::default(),
            exports: Exports::default(),
            world: None,
            steps: Vec::new(),
            masks: BTreeMap::new(),
        }
    }

    /// Whether this is a world recipe (it has a `[world]` table).
    pub fn is_world(&self) -> bool {
        self.world.is_some()
    }

    /// Parses TOML. A syntax or type error becomes [`Error::Syntax`] with the line and column.
    pub fn from_toml_str(text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| Error::Syntax {
            path: None,
            format: "TOML",
            line_col: e.span().map(|span| line_col(text, span.start)),
            message: e.message().trim().replace('\n', " "),
        })
    }

    /// Parses JSON. A syntax or type error becomes [`Error::Syntax`] with the line and column.
    pub fn from_json_str(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| {
            let msg = e.to_string();
            // serde_json appends " at line L column C"; keep ours in front, without repeating.
            let message = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            Error::Syntax { path: None, format: "JSON", line_col: Some((e.line(), e.column())), message }
        })
    }

    /// Reads a recipe file: JSON if the extension is `.json`, TOML otherwise. Only a regular
    /// file of at most [`MAX_RECIPE_FILE_BYTES`] is read. Relative file paths in the recipe
    /// (every step's `path`, e.g. `import`'s) are resolved against the recipe file's folder
    /// ([`Recipe::resolve_paths`]).
    pub fn from_path(path: &Path) -> Result<Self> {
        let bytes = crate::io::read_input_file(path, MAX_RECIPE_FILE_BYTES)?;
        let text = String::from_utf8(bytes).map_err(|e| Error::Format {
            path: path.to_path_buf(),
            message: format!("a recipe is UTF-8 text; byte {} is not", e.utf8_error().valid_up_to()),
        })?;
        let is_json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
        // An empty file (or only TOML comments) would parse as the defaults, a flat map with
        // no steps: almost surely a truncated download or the wrong file.
        let blank = text.lines().all(|l| {
            let l = l.trim();
            l.is_empty() || (!is_json && l.starts_with('#'))
        });
        if blank {
            return Err(Error::Format {
                path: path.to_path_buf(),
                message: "the recipe file is empty: a recipe has at least one [[steps]] table \
                          (see docs/RECIPES.md, or `terrasynth recipe PRESET` for an example)"
                    .into(),
            });
        }
        let parsed = if is_json { Self::from_json_str(&text) } else { Self::from_toml_str(&text) };
        let mut recipe = parsed.map_err(|e| match e {
            Error::Syntax { format, line_col, message, .. } => {
                Error::Syntax { path: Some(path.to_path_buf()), format, line_col, message }
            }
            other => other,
        })?;
        recipe.resolve_paths(path.parent().unwrap_or(Path::new("")));
        Ok(recipe)
    }

    /// Makes every relative file path of the steps (each step's `path` parameter: the files a
    /// recipe reads) absolute against `base`, the folder of the recipe or project file it came
    /// from (itself made absolute against the working directory), so a shared recipe finds
    /// the heightmaps shipped beside it wherever it is run from, and a recipe saved again
    /// elsewhere still names the same files. Absolute paths are kept; `..` and symbolic links
    /// are left to the operating system (reading follows them: see docs/RECIPES.md, "Files a
    /// recipe names"). Recipes never name output files.
    pub fn resolve_paths(&mut self, base: &Path) {
        let base = std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf());
        for step in &mut self.steps {
            if let Some(ParamValue::Text(p)) = step.params.get_mut("path")
                && !p.trim().is_empty()
                && Path::new(p.as_str()).is_relative()
            {
                *p = base.join(p.as_str()).to_string_lossy().into_owned();
            }
        }
    }

    /// As pretty TOML (steps as `[[steps]]` tables).
    pub fn to_toml_string(&self) -> Result<String> {
        toml::to_string_pretty(self)
            .map_err(|e| Error::Encode { what: "TOML".into(), message: e.to_string() })
    }

    /// As pretty JSON.
    pub fn to_json_string(&self) -> Result<String> {
        serde_json::to_string_pretty(self)
            .map_err(|e| Error::Encode { what: "JSON".into(), message: e.to_string() })
    }

    /// Checks the recipe-level fields (not the steps): every problem, one [`Problem`] each
    /// (key, value, allowed range). Ranges come from [`RECIPE_FIELDS`] and [`EXPORT_FIELDS`].
    pub fn check_fields(&self) -> Vec<Problem> {
        use FieldValue::{Float, Int};
        let r = RECIPE_FIELDS;
        let e = &self.exports;
        let checks = [
            (field(r, "width"), "width", Int(self.width as i128)),
            (field(r, "height"), "height", Int(self.height as i128)),
            (field(r, "cell-size"), "cell-size", Float(self.cell_size)),
            (field(r, "seed"), "seed", Int(self.seed as i128)),
            (field(r, "sea-level"), "sea-level", Float(self.sea_level)),
            (field(EXPORT_FIELDS, "height-scale"), "exports.height-scale", Float(e.height_scale)),
            (field(EXPORT_FIELDS, "lod"), "exports.lod", Int(e.lod as i128)),
        ];
        let mut problems: Vec<Problem> =
            checks.into_iter().filter_map(|(spec, key, value)| field_problem(spec, key, value)).collect();
        let sides_ok = [("width", self.width), ("height", self.height)]
            .iter()
            .all(|&(k, v)| field_problem(field(r, k), k, Int(v as i128)).is_none());
        if sides_ok && let Err(e) = crate::grid::check_size::<f32>(self.width, self.height) {
            problems.push(Problem::value(
                "width x height",
                format!("{}x{}", self.width, self.height),
                e.to_string(),
            ));
        }
        if let Some(w) = &self.world {
            problems.extend(w.problems());
        }
        if let Err(e) = self.palette.resolve() {
            problems.push(Problem {
                field: Some("palette".into()),
                ..Problem::message(format!("invalid `palette`: {e}"))
            });
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }

    #[test]
    fn toml_syntax_error_has_line_and_column() {
        let err = Recipe::from_toml_str("name = \"x\"\nwidth = = 3\n").unwrap_err().to_string();
        assert!(err.contains("line 2, column"), "{err}");
    }

    #[test]
    fn json_error_has_line_and_column() {
        let err = Recipe::from_json_str("{\n \"width\": \"big\"\n}").unwrap_err().to_string();
        assert!(err.contains("JSON line 2, column"), "{err}");
    }

    /// JSON floats are read exactly (serde_json's `float_roundtrip`, set in the workspace's
    /// Cargo.toml): without it 906.7979265841685 reads as 906.7979265841684, and one float in
    /// ten moves by one ULP. `cargo test -p terrasynth` builds without the editor's features and
    /// fails here if the feature is lost; scripts/python-test.sh checks the CLI the same way.
    #[test]
    fn json_floats_are_read_exactly() {
        for text in ["906.7979265841685", "1.0715660391465826e-75", "0.30000000000000004", "12.5"] {
            let json = format!(r#"{{"name": "t", "width": 17, "height": 17, "cell-size": {text}}}"#);
            let r = Recipe::from_json_str(&json).unwrap();
            assert_eq!(r.cell_size.to_bits(), text.parse::<f64>().unwrap().to_bits(), "{text}");
        }
    }

    #[test]
    fn unknown_top_level_key_is_rejected() {
        let err = Recipe::from_toml_str("colour = 3\n").unwrap_err().to_string();
        assert!(err.contains("colour"), "{err}");
    }

    #[test]
    fn check_fields_reports_every_problem() {
        let mut r = Recipe::new("x");
        r.width = 0;
        r.cell_size = f64::NAN;
        r.exports.lod = 99;
        r.sea_level = f64::INFINITY;
        let p = r.check_fields();
        assert_eq!(p.len(), 4, "{p:?}");
        assert!(p[0].to_string().contains("`width` = 0"));
        assert_eq!(p[0].field.as_deref(), Some("width"));
    }

    /// Each field's range comes from its spec: both bounds pass, one step past either fails,
    /// and the message quotes the spec's `allowed()` (one source for checks, editor and docs).
    #[test]
    fn field_checks_follow_the_specs_exactly() {
        type Set = fn(&mut Recipe, f64);
        // The seed is checked separately below (its max does not survive a trip through f64).
        let fields: [(&'static [ParamSpec], &str, &str, Set); 6] = [
            (RECIPE_FIELDS, "width", "width", |r, v| r.width = v as usize),
            (RECIPE_FIELDS, "height", "height", |r, v| r.height = v as usize),
            (RECIPE_FIELDS, "cell-size", "cell-size", |r, v| r.cell_size = v),
            (RECIPE_FIELDS, "sea-level", "sea-level", |r, v| r.sea_level = v),
            (EXPORT_FIELDS, "height-scale", "exports.height-scale", |r, v| r.exports.height_scale = v),
            (EXPORT_FIELDS, "lod", "exports.lod", |r, v| r.exports.lod = v as u32),
        ];
        for (specs, name, key, set) in fields {
            let spec = field(specs, name);
            let problems = |v: f64| {
                // A small map, so the largest side alone passes the memory check.
                let mut r = Recipe::new("x");
                (r.width, r.height) = (65, 65);
                set(&mut r, v);
                r.check_fields()
            };
            let (min, max, step) = match spec.kind {
                ParamKind::Float { min, max } => (min, max, min.abs().max(max.abs()) * 1e-9),
                ParamKind::Int { min, max } => (min as f64, max as f64, 1.0),
                _ => panic!("{name} is not a number"),
            };
            assert!(problems(min).is_empty(), "{name} = {min}");
            assert!(problems(max).is_empty(), "{name} = {max}");
            let mut outside = vec![max + step];
            if min > 0.0 || matches!(spec.kind, ParamKind::Float { .. }) {
                outside.push(min - step);
            }
            for v in outside {
                let p = problems(v);
                assert_eq!(p.len(), 1, "{name} = {v}: {p:?}");
                assert!(p[0].to_string().starts_with(&format!("invalid `{key}` =")), "{p:?}");
                assert_eq!(p[0].field.as_deref(), Some(key), "{p:?}");
                assert!(p[0].allowed.as_ref().unwrap().starts_with(&spec.allowed()), "{p:?}");
            }
        }
        // The seed takes every u64.
        let ParamKind::Int { min: 0, max } = field(RECIPE_FIELDS, "seed").kind else { panic!("seed") };
        assert_eq!(max, MAX_SEED);
        assert_eq!(MAX_SEED, u64::MAX);
        let mut r = Recipe::new("x");
        r.seed = MAX_SEED;
        assert!(r.check_fields().is_empty());
    }

    /// Any u64 seed survives TOML and JSON: up to 2^63 − 1 as an integer, above as a string
    /// (TOML integers are signed); bad seeds are refused with the range.
    #[test]
    fn every_u64_seed_round_trips_through_toml_and_json() {
        for seed in [0, 7, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            let mut r = Recipe::new("x");
            r.seed = seed;
            let toml = r.to_toml_string().unwrap();
            let line = toml.lines().find(|l| l.starts_with("seed = ")).unwrap();
            if seed <= i64::MAX as u64 {
                assert_eq!(line, format!("seed = {seed}"));
            } else {
                assert_eq!(line, format!("seed = \"{seed}\""));
            }
            assert_eq!(Recipe::from_toml_str(&toml).unwrap().seed, seed);
            assert_eq!(Recipe::from_json_str(&r.to_json_string().unwrap()).unwrap().seed, seed);
        }
        assert_eq!(Recipe::from_toml_str("seed = \"42\"").unwrap().seed, 42);
        for bad in ["seed = -1", "seed = \"18446744073709551616\"", "seed = \"abc\"", "seed = 1.5"] {
            let e = Recipe::from_toml_str(bad).unwrap_err().to_string();
            assert!(e.contains("0..=18446744073709551615"), "{bad}: {e}");
        }
    }

    #[test]
    fn defaults_match_the_specs() {
        let r = Recipe::new("x");
        let d = |specs: &'static [ParamSpec], n: &str| field(specs, n).default;
        assert_eq!(d(RECIPE_FIELDS, "width"), DefaultValue::Number(r.width as f64));
        assert_eq!(d(RECIPE_FIELDS, "height"), DefaultValue::Number(r.height as f64));
        assert_eq!(d(RECIPE_FIELDS, "cell-size"), DefaultValue::Number(r.cell_size));
        assert_eq!(d(RECIPE_FIELDS, "seed"), DefaultValue::Number(r.seed as f64));
        assert_eq!(d(RECIPE_FIELDS, "sea-level"), DefaultValue::Number(r.sea_level));
        assert_eq!(d(EXPORT_FIELDS, "height-scale"), DefaultValue::Number(r.exports.height_scale));
        assert_eq!(d(EXPORT_FIELDS, "lod"), DefaultValue::Number(r.exports.lod as f64));
        // And serde's defaults are the same values.
        assert_eq!(Recipe::from_toml_str("").unwrap(), Recipe { name: String::new(), ..r });
    }
}
