//! [`NoiseSpec`]: the plain, flat, serde description of a noise (easy to save, diff and edit in
//! a form), parsed from TOML and validated once into a runtime [`Noise`](crate::Noise).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::NoiseError;

/// Smallest accepted `frequency` and `warp-frequency` (a closed range, so a form can offer it).
pub const MIN_FREQUENCY: f64 = 1e-6;
/// Largest accepted `frequency` and `warp-frequency`.
pub const MAX_FREQUENCY: f64 = 1e6;
/// Smallest accepted `res` (perlin-table zoom).
pub const MIN_RES: f64 = 1e-6;
/// Largest accepted |`offset`| component, in lattice units.
pub const MAX_OFFSET: f64 = 1e9;
/// Largest accepted `res` (perlin-table zoom).
pub const MAX_RES: f64 = 1e9;
/// Octave counts accepted: `1..=MAX_OCTAVES`.
pub const MAX_OCTAVES: u32 = 32;
/// Largest accepted `lacunarity`.
pub const MAX_LACUNARITY: f64 = 16.0;
/// Largest accepted `persistence`.
pub const MAX_PERSISTENCE: f64 = 2.0;
/// Largest accepted Musgrave `h`.
pub const MAX_H: f64 = 2.0;
/// Largest accepted Musgrave `mf-offset`.
pub const MAX_MF_OFFSET: f64 = 4.0;
/// Largest accepted Musgrave `gain`.
pub const MAX_GAIN: f64 = 16.0;
/// Largest accepted `warp` amplitude, in lattice units.
pub const MAX_WARP: f64 = 1e3;
/// Largest accepted `period`, in lattice cells.
pub const MAX_PERIOD: u32 = 1 << 20;

/// Default octave count.
pub const DEFAULT_OCTAVES: u32 = 6;
/// Default lacunarity (frequency multiplier per octave).
pub const DEFAULT_LACUNARITY: f64 = 2.0;
/// Default persistence (amplitude multiplier per octave, fBm and billow).
pub const DEFAULT_PERSISTENCE: f64 = 0.5;
/// Musgrave's starting values for the ridged multifractal: H, offset, gain (algorithms.md §7c).
pub const DEFAULT_RIDGED: (f64, f64, f64) = (1.0, 1.0, 2.0);
/// Musgrave's starting values for the hybrid multifractal: H, offset (algorithms.md §7c); gain
/// is unused by hybrid.
pub const DEFAULT_HYBRID: (f64, f64) = (0.25, 0.7);

/// Declares a choice enum from one list `Variant = "spec-name"`: the enum with its serde names,
/// `ALL` (every variant, in declaration order), `NAMES` (their spec names, same order), `name()`
/// and `from_name()`. Help, validation and the `noise` step's choice lists all read `NAMES`.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $key:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $key)] $variant, )+
        }

        impl $name {
            /// Every variant, in declaration order (the order of `NAMES`).
            pub const ALL: [Self; [$($key),+].len()] = [$(Self::$variant),+];
            /// The name of every variant as written in a spec, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($key),+];

            /// The name used in a spec.
            pub fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => $key, )+
                }
            }

            /// The variant called `name` in a spec.
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( $key => Some(Self::$variant), )+
                    _ => None,
                }
            }
        }
    };
}

named_enum! {
    /// The basic noise, before any fractal or warp.
    pub enum NoiseKind {
        /// One uniform value in [-1, 1) per lattice cell (no interpolation).
        White = "white",
        /// Random values at lattice points, smoothstep bilinear interpolation (seed 004 §5).
        Value = "value",
        /// Classic gradient noise, one random unit gradient per lattice point drawn as an angle
        /// (seeds 000, 004).
        PerlinAngle = "perlin-angle",
        /// Classic gradient noise of the tutorial (seed 002): 8-direction table, doubled permutation.
        PerlinTable = "perlin-table",
        /// Improved Perlin noise (Perlin 2002), 2D and 3D.
        #[default]
        Perlin = "perlin",
        /// OpenSimplex2-style simplex noise (2D simplex lattice, 3D rotated BCC lattice).
        OpenSimplex2 = "opensimplex2",
        /// Cellular (Worley) noise: distances to jittered feature points.
        Worley = "worley",
    }
}

impl NoiseKind {
    /// One line about this kind for [`NoiseSpec::help`]: what it is and its output range.
    pub fn about(self) -> &'static str {
        match self {
            NoiseKind::White => "one uniform value per lattice cell, range [-1, 1)",
            NoiseKind::Value => "smoothstep-interpolated lattice values (seed 004 §5), range [-1, 1]",
            NoiseKind::PerlinAngle => {
                "classic gradient noise, random angle per lattice point, range [-0.7072, 0.7072]"
            }
            NoiseKind::PerlinTable => {
                "the tutorial's gradient noise (seed 002), 8 gradients, `res` zoom, range [-0.7072, 0.7072]"
            }
            NoiseKind::Perlin => {
                "improved Perlin noise (2002); 2D: 16 unit gradients off the axes; range [-0.6954, 0.6954] (3D 1.037)"
            }
            NoiseKind::OpenSimplex2 => "OpenSimplex2-style simplex noise; 2D and 3D; range [-1, 1]",
            NoiseKind::Worley => "cellular noise: F1, F2 or F2-F1 of distances to feature points, >= 0",
        }
    }

    /// Whether `period` (tileable output) is available for this kind.
    pub fn supports_period(self) -> bool {
        matches!(
            self,
            NoiseKind::White
                | NoiseKind::Value
                | NoiseKind::PerlinAngle
                | NoiseKind::PerlinTable
                | NoiseKind::Perlin
        )
    }

    /// Whether [`Noise::get3`](crate::Noise::get3) is available for this kind.
    pub fn has_3d(self) -> bool {
        matches!(self, NoiseKind::Perlin | NoiseKind::OpenSimplex2)
    }
}

/// The seed: a number, or `"reference"` for the published permutation (perlin-table and
/// perlin). For the hash-based kinds (white, value, perlin-angle, opensimplex2, worley),
/// `"reference"` means the number 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Seed {
    /// The published permutation of Perlin's reference code and of the tutorial (seed 002).
    #[default]
    Reference,
    /// Any 64-bit seed. Permutation-based kinds shuffle the reference permutation with it.
    Number(u64),
}

impl Seed {
    /// The numeric value used for hashing and per-octave streams (`Reference` → 0).
    pub fn value(self) -> u64 {
        match self {
            Seed::Reference => 0,
            Seed::Number(n) => n,
        }
    }
}

impl Serialize for Seed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Seed::Reference => s.serialize_str("reference"),
            Seed::Number(n) => s.serialize_u64(*n),
        }
    }
}

impl<'de> Deserialize<'de> for Seed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Seed;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a non-negative integer or the string \"reference\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Seed, E> {
                Ok(Seed::Number(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Seed, E> {
                u64::try_from(v).map(Seed::Number).map_err(|_| {
                    E::custom(format!("seed = {v}: expected a non-negative integer or \"reference\""))
                })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Seed, E> {
                if v == "reference" {
                    Ok(Seed::Reference)
                } else if let Ok(n) = v.parse::<u64>() {
                    Ok(Seed::Number(n))
                } else {
                    Err(E::custom(format!(
                        "seed = \"{v}\": expected a non-negative integer or \"reference\""
                    )))
                }
            }
        }
        d.deserialize_any(V)
    }
}

named_enum! {
    /// The fractal applied over the basic noise.
    pub enum FractalKind {
        /// The basic noise alone (one octave, no per-octave offset).
        #[default]
        None = "none",
        /// Fractional Brownian motion: normalised weighted sum of octaves.
        Fbm = "fbm",
        /// Musgrave's ridged multifractal.
        Ridged = "ridged",
        /// Musgrave's hybrid multifractal.
        Hybrid = "hybrid",
        /// Billow: fBm of `2·|n| − 1`.
        Billow = "billow",
    }
}

named_enum! {
    /// Distance metric of Worley noise.
    pub enum WorleyDistance {
        /// √(dx² + dy²).
        #[default]
        Euclidean = "euclidean",
        /// dx² + dy².
        Squared = "squared",
        /// |dx| + |dy|.
        Manhattan = "manhattan",
    }
}

named_enum! {
    /// What Worley noise returns.
    pub enum WorleyReturn {
        /// Distance to the nearest feature point.
        #[default]
        F1 = "f1",
        /// Distance to the second-nearest feature point.
        F2 = "f2",
        /// F2 − F1 (cell borders).
        F2MinusF1 = "f2-f1",
    }
}

/// The kind and allowed range of one [`NoiseSpec`] field (see [`FIELDS`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldKind {
    /// A finite number in `[min, max]`.
    Float {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// An integer in `min..=max`.
    Int {
        /// Smallest allowed value.
        min: u32,
        /// Largest allowed value.
        max: u32,
    },
    /// An optional finite number in `[min, max]` (`min >= 0`); absent means the fractal's
    /// default (see [`NoiseSpec::musgrave`]).
    OptionalFloat {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// An optional integer in `min..=max` (`min >= 1`); absent means off.
    OptionalInt {
        /// Smallest allowed value.
        min: u32,
        /// Largest allowed value.
        max: u32,
    },
    /// Two finite numbers, each with `|value| <= max_abs`.
    Pair {
        /// Largest allowed magnitude of each component.
        max_abs: f64,
    },
    /// One of a fixed set of names (an enum's `NAMES`).
    Choice(&'static [&'static str]),
    /// A [`Seed`]: an integer >= 0, or `"reference"`.
    Seed,
}

/// The default of one [`NoiseSpec`] field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldDefault {
    /// A number.
    Number(f64),
    /// A name (a choice, or the seed `"reference"`).
    Name(&'static str),
    /// A pair of numbers.
    Pair(&'static [f64]),
    /// Absent (an optional field).
    Absent,
}

/// One [`NoiseSpec`] field: the single description that validation ([`NoiseSpec::validate`]),
/// the defaults ([`NoiseSpec::default`]), [`NoiseSpec::help`] and the `noise` recipe step's
/// parameters are all made from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    /// Key as written in a spec (kebab-case).
    pub key: &'static str,
    /// Plain words for an editor's label (sentence case, no unit).
    pub label: &'static str,
    /// Kind and allowed range.
    pub kind: FieldKind,
    /// Default value.
    pub default: FieldDefault,
    /// Unit, or "" when unitless.
    pub unit: &'static str,
    /// What it does.
    pub doc: &'static str,
}

/// Every [`NoiseSpec`] field, in the struct's order.
pub const FIELDS: &[Field] = &[
    Field {
        key: "kind",
        label: "Noise",
        kind: FieldKind::Choice(NoiseKind::NAMES),
        default: FieldDefault::Name("perlin"),
        unit: "",
        doc: "The basic noise, before any fractal or warp.",
    },
    Field {
        key: "seed",
        label: "Seed",
        kind: FieldKind::Seed,
        default: FieldDefault::Name("reference"),
        unit: "",
        doc: "An integer >= 0, or \"reference\" for the published permutation (perlin-table, perlin; \
              0 for the hash-based kinds).",
    },
    Field {
        key: "frequency",
        label: "Frequency",
        kind: FieldKind::Float { min: MIN_FREQUENCY, max: MAX_FREQUENCY },
        default: FieldDefault::Number(1.0),
        unit: "lattice cells per unit",
        doc: "Lattice cells per sample-space unit.",
    },
    Field {
        key: "offset",
        label: "Offset",
        kind: FieldKind::Pair { max_abs: MAX_OFFSET },
        default: FieldDefault::Pair(&[0.0, 0.0]),
        unit: "lattice cells",
        doc: "Added after the frequency: [x, y].",
    },
    Field {
        key: "res",
        label: "Zoom (res)",
        kind: FieldKind::Float { min: MIN_RES, max: MAX_RES },
        default: FieldDefault::Number(1.0),
        unit: "",
        doc: "perlin-table only: the tutorial's zoom, lattice = (p·frequency + offset) / res.",
    },
    Field {
        key: "fractal",
        label: "Fractal",
        kind: FieldKind::Choice(FractalKind::NAMES),
        default: FieldDefault::Name("none"),
        unit: "",
        doc: "Fractal over the basic noise: none, fbm, ridged, hybrid, billow.",
    },
    Field {
        key: "octaves",
        label: "Octaves",
        kind: FieldKind::Int { min: 1, max: MAX_OCTAVES },
        default: FieldDefault::Number(DEFAULT_OCTAVES as f64),
        unit: "",
        doc: "Octaves of the fractal (ignored with fractal = none).",
    },
    Field {
        key: "lacunarity",
        label: "Lacunarity",
        kind: FieldKind::Float { min: 1.0, max: MAX_LACUNARITY },
        default: FieldDefault::Number(DEFAULT_LACUNARITY),
        unit: "",
        doc: "Frequency multiplier per octave.",
    },
    Field {
        key: "persistence",
        label: "Persistence",
        kind: FieldKind::Float { min: 0.0, max: MAX_PERSISTENCE },
        default: FieldDefault::Number(DEFAULT_PERSISTENCE),
        unit: "",
        doc: "Amplitude multiplier per octave (fbm, billow).",
    },
    Field {
        key: "h",
        label: "Fractal increment H",
        kind: FieldKind::OptionalFloat { min: 0.0, max: MAX_H },
        default: FieldDefault::Absent,
        unit: "",
        doc: "Musgrave's fractal increment H (ridged, hybrid): octave weight lacunarity^(-i·H). \
              Absent (key omitted in a `noise` recipe step): 1.0 for ridged, 0.25 for hybrid.",
    },
    Field {
        key: "mf-offset",
        label: "Musgrave offset",
        kind: FieldKind::OptionalFloat { min: 0.0, max: MAX_MF_OFFSET },
        default: FieldDefault::Absent,
        unit: "",
        doc: "Musgrave's offset (ridged, hybrid). Absent (key omitted in a `noise` recipe step): 1.0 for ridged, 0.7 for hybrid.",
    },
    Field {
        key: "gain",
        label: "Musgrave gain",
        kind: FieldKind::OptionalFloat { min: 0.0, max: MAX_GAIN },
        default: FieldDefault::Absent,
        unit: "",
        doc: "Musgrave's gain (ridged). Absent (key omitted in a `noise` recipe step): 2.0.",
    },
    Field {
        key: "warp",
        label: "Warp amplitude",
        kind: FieldKind::Float { min: 0.0, max: MAX_WARP },
        default: FieldDefault::Number(0.0),
        unit: "lattice cells",
        doc: "Domain-warp amplitude; 0 disables the warp.",
    },
    Field {
        key: "warp-frequency",
        label: "Warp frequency",
        kind: FieldKind::Float { min: MIN_FREQUENCY, max: MAX_FREQUENCY },
        default: FieldDefault::Number(1.0),
        unit: "",
        doc: "Frequency of the warp noise relative to the main lattice.",
    },
    Field {
        key: "period",
        label: "Tile period",
        kind: FieldKind::OptionalInt { min: 1, max: MAX_PERIOD },
        default: FieldDefault::Absent,
        unit: "lattice cells",
        doc: "Tileable output every `period` cells in x and y (white, value, perlin-angle, perlin-table, \
              perlin); with a fractal `lacunarity` must be an integer, with a warp `warp-frequency` too. \
              Absent (key omitted in a `noise` recipe step): not tileable.",
    },
    Field {
        key: "distance",
        label: "Distance metric",
        kind: FieldKind::Choice(WorleyDistance::NAMES),
        default: FieldDefault::Name("euclidean"),
        unit: "",
        doc: "Worley distance metric.",
    },
    Field {
        key: "return",
        label: "Worley output",
        kind: FieldKind::Choice(WorleyReturn::NAMES),
        default: FieldDefault::Name("f1"),
        unit: "",
        doc: "Worley output: distance to the nearest point, the second nearest, or their difference.",
    },
    Field {
        key: "jitter",
        label: "Jitter",
        kind: FieldKind::Float { min: 0.0, max: 1.0 },
        default: FieldDefault::Number(1.0),
        unit: "",
        doc: "Worley: how far feature points wander inside their cell; 0 is a regular grid.",
    },
];

/// The field called `key` in [`FIELDS`] (a missing key is a bug: every caller names a field).
pub fn field(key: &str) -> &'static Field {
    FIELDS.iter().find(|f| f.key == key).unwrap_or_else(|| panic!("bug: no NoiseSpec field `{key}`"))
}

impl FieldKind {
    /// The allowed values in words, for errors and help.
    pub fn allowed(&self) -> String {
        match *self {
            FieldKind::Float { min, max } | FieldKind::OptionalFloat { min, max } => {
                format!("a finite number in [{min}, {max}]")
            }
            FieldKind::Int { min, max } | FieldKind::OptionalInt { min, max } => {
                format!("an integer in {min}..={max}")
            }
            FieldKind::Pair { max_abs } => format!("[x, y], finite components with |value| <= {max_abs:e}"),
            FieldKind::Choice(names) => names.join(" | "),
            FieldKind::Seed => "integer >= 0 or \"reference\" (= published permutation)".into(),
        }
    }
}

impl Field {
    /// The default as written in a spec (`"absent"` for an absent optional; an integer field's
    /// default without a fraction).
    pub fn default_text(&self) -> String {
        match (self.kind, self.default) {
            (FieldKind::Int { .. }, FieldDefault::Number(v)) => format!("{}", v as i64),
            (_, d) => d.text(),
        }
    }
}

impl FieldDefault {
    /// As written in a spec (`"absent"` for an absent optional).
    pub fn text(&self) -> String {
        match *self {
            FieldDefault::Number(v) => format!("{v:?}"),
            FieldDefault::Name(n) => format!("{n:?}"),
            FieldDefault::Pair(p) => format!("{p:?}"),
            FieldDefault::Absent => "absent".into(),
        }
    }
}

/// The number `value` of the field `key` checked against its range in [`FIELDS`].
fn check_number(key: &'static str, value: f64) -> Result<(), NoiseError> {
    let f = field(key);
    let (min, max) = match f.kind {
        FieldKind::Float { min, max } | FieldKind::OptionalFloat { min, max } => (min, max),
        FieldKind::Int { min, max } | FieldKind::OptionalInt { min, max } => (min as f64, max as f64),
        FieldKind::Pair { max_abs } => (-max_abs, max_abs),
        FieldKind::Choice(_) | FieldKind::Seed => unreachable!("bug: `{key}` is not a number"),
    };
    if value.is_finite() && value >= min && value <= max {
        Ok(())
    } else {
        Err(NoiseError::invalid(key, value, f.kind.allowed()))
    }
}

/// The default number of the field `key`.
fn default_number(key: &str) -> f64 {
    match field(key).default {
        FieldDefault::Number(v) => v,
        other => unreachable!("bug: `{key}` defaults to {other:?}"),
    }
}

/// The default name of the field `key`.
fn default_name(key: &str) -> &'static str {
    match field(key).default {
        FieldDefault::Name(n) => n,
        other => unreachable!("bug: `{key}` defaults to {other:?}"),
    }
}

/// A noise, as plain data. Every field has a default, so `{}` is a valid spec (improved Perlin
/// with the reference permutation at frequency 1).
///
/// Coordinates: a sample point `p = (x, y)` is first mapped to lattice coordinates
/// `q = p·frequency + offset` (and then `q / res` for `perlin-table`); `period`, `warp` and the
/// fractal all work in lattice units of `q`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct NoiseSpec {
    /// The basic noise. Default `perlin`.
    pub kind: NoiseKind,
    /// Seed: an integer, or `"reference"` (default).
    pub seed: Seed,
    /// Lattice cells per sample-space unit. Default 1, range (0, 1e6].
    pub frequency: f64,
    /// Added after the frequency, in lattice units. Default [0, 0], |component| ≤ 1e9.
    pub offset: [f64; 2],
    /// perlin-table only: the tutorial's "resolution" (zoom), the lattice coordinate is
    /// `(p·frequency + offset) / res`. Default 1, range (0, 1e9]. Ignored by other kinds.
    pub res: f64,
    /// Fractal over the basic noise. Default `none`.
    pub fractal: FractalKind,
    /// Number of octaves, 1..=32. Default 6. Ignored when `fractal = "none"`.
    pub octaves: u32,
    /// Frequency multiplier per octave, [1, 16]. Default 2.
    pub lacunarity: f64,
    /// Amplitude multiplier per octave for fbm and billow, [0, 2]. Default 0.5.
    pub persistence: f64,
    /// Musgrave's fractal increment H for ridged/hybrid: octave weight `lacunarity^(−i·H)`,
    /// [0, 2]. Default: 1.0 for ridged, 0.25 for hybrid.
    pub h: Option<f64>,
    /// Musgrave's offset for ridged/hybrid, [0, 4]. Default: 1.0 for ridged, 0.7 for hybrid.
    pub mf_offset: Option<f64>,
    /// Musgrave's gain for ridged, [0, 16]. Default 2.0.
    pub gain: Option<f64>,
    /// Domain-warp amplitude k in lattice units, [0, 1000]; 0 (default) disables the warp.
    pub warp: f64,
    /// Frequency of the warp noise relative to the main lattice, (0, 1e6]. Default 1.
    pub warp_frequency: f64,
    /// Tileable output: the noise repeats every `period` lattice cells in x and y (white, value,
    /// perlin-angle, perlin-table, perlin; for perlin-table the cells are those after `/ res`),
    /// 1..=2^20. Default: none. With a fractal, `lacunarity` must be an integer (octave i
    /// repeats every `period·λ^i` of its own cells); with a warp, `warp-frequency` too.
    pub period: Option<u32>,
    /// Worley distance metric. Default `euclidean`.
    pub distance: WorleyDistance,
    /// Worley output. Default `f1`.
    #[serde(rename = "return")]
    pub return_: WorleyReturn,
    /// Worley jitter: how far feature points wander inside their cell, [0, 1]; 0 is a regular
    /// grid of cell centres. Default 1.
    pub jitter: f64,
}

impl Default for NoiseSpec {
    /// Every field at its default in [`FIELDS`].
    fn default() -> Self {
        let offset = match field("offset").default {
            FieldDefault::Pair(&[x, y]) => [x, y],
            other => unreachable!("bug: offset defaults to {other:?}"),
        };
        Self {
            kind: NoiseKind::from_name(default_name("kind")).unwrap_or_default(),
            seed: match default_name("seed") {
                "reference" => Seed::Reference,
                n => Seed::Number(n.parse().unwrap_or(0)),
            },
            frequency: default_number("frequency"),
            offset,
            res: default_number("res"),
            fractal: FractalKind::from_name(default_name("fractal")).unwrap_or_default(),
            octaves: default_number("octaves") as u32,
            lacunarity: default_number("lacunarity"),
            persistence: default_number("persistence"),
            h: None,
            mf_offset: None,
            gain: None,
            warp: default_number("warp"),
            warp_frequency: default_number("warp-frequency"),
            period: None,
            distance: WorleyDistance::from_name(default_name("distance")).unwrap_or_default(),
            return_: WorleyReturn::from_name(default_name("return")).unwrap_or_default(),
            jitter: default_number("jitter"),
        }
    }
}

/// Musgrave parameters resolved to numbers (defaults filled in for the chosen fractal).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Musgrave {
    /// Fractal increment H.
    pub h: f64,
    /// Offset.
    pub offset: f64,
    /// Gain.
    pub gain: f64,
}

impl NoiseSpec {
    /// Parses a spec from an inline TOML table, with or without the braces:
    /// `kind = "perlin", seed = "reference", frequency = 1.0` or `{ kind = "value" }`.
    /// A TOML document with one key per line is accepted too.
    ///
    /// Unknown keys and values of the wrong type give a [`NoiseError::Parse`] naming them.
    /// The result is not validated yet: call [`NoiseSpec::build`] (or
    /// [`NoiseSpec::validate`]).
    pub fn from_inline_toml(text: &str) -> Result<NoiseSpec, NoiseError> {
        let trimmed = text.trim();
        let inner = match trimmed.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            Some(inner) => inner,
            None => trimmed,
        };
        // Inline tables may not span lines, so try as `spec = { ... }` first, then as a document.
        let as_inline = format!("spec = {{ {} }}", inner.replace(['\n', '\r'], " "));
        #[derive(Deserialize)]
        struct Wrapper {
            spec: NoiseSpec,
        }
        match toml::from_str::<Wrapper>(&as_inline) {
            Ok(w) => Ok(w.spec),
            Err(inline_err) => {
                // A multi-line document (e.g. from a file) parses as a plain table.
                match toml::from_str::<NoiseSpec>(inner) {
                    Ok(spec) => Ok(spec),
                    Err(_) => Err(NoiseError::Parse { message: one_line(inline_err.message()) }),
                }
            }
        }
    }

    /// The spec as an inline TOML table string (round-trips through
    /// [`NoiseSpec::from_inline_toml`]).
    pub fn to_inline_toml(&self) -> String {
        let doc = toml::to_string(self).unwrap_or_default();
        let parts: Vec<&str> = doc.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        format!("{{ {} }}", parts.join(", "))
    }

    /// Musgrave's H, offset and gain for this spec's fractal, defaults filled in.
    pub fn musgrave(&self) -> Musgrave {
        let (dh, doff, dgain) = match self.fractal {
            FractalKind::Hybrid => (DEFAULT_HYBRID.0, DEFAULT_HYBRID.1, DEFAULT_RIDGED.2),
            _ => DEFAULT_RIDGED,
        };
        Musgrave {
            h: self.h.unwrap_or(dh),
            offset: self.mf_offset.unwrap_or(doff),
            gain: self.gain.unwrap_or(dgain),
        }
    }

    /// Checks every parameter; the first problem is returned as
    /// [`NoiseError::InvalidParameter`] naming the parameter, its value and the allowed range.
    pub fn validate(&self) -> Result<(), NoiseError> {
        // Ranges: each from the field's one description in FIELDS.
        check_number("frequency", self.frequency)?;
        for v in self.offset {
            if check_number("offset", v).is_err() {
                return Err(NoiseError::invalid(
                    "offset",
                    format!("[{}, {}]", self.offset[0], self.offset[1]),
                    field("offset").kind.allowed(),
                ));
            }
        }
        check_number("res", self.res)?;
        check_number("octaves", self.octaves as f64)?;
        check_number("lacunarity", self.lacunarity)?;
        check_number("persistence", self.persistence)?;
        for (key, v) in [("h", self.h), ("mf-offset", self.mf_offset), ("gain", self.gain)] {
            if let Some(v) = v {
                check_number(key, v)?;
            }
        }
        check_number("warp", self.warp)?;
        check_number("warp-frequency", self.warp_frequency)?;
        check_number("jitter", self.jitter)?;
        // Rules across fields.
        if let Some(p) = self.period {
            check_number("period", f64::from(p))?;
            if !self.kind.supports_period() {
                return Err(NoiseError::invalid(
                    "period",
                    p,
                    format!(
                        "only with kind white, value, perlin-angle, perlin-table or perlin (kind is {})",
                        self.kind.name()
                    ),
                ));
            }
            if self.fractal != FractalKind::None && self.lacunarity.fract() != 0.0 {
                return Err(NoiseError::invalid(
                    "lacunarity",
                    self.lacunarity,
                    "an integer when `period` is set with a fractal (octave i repeats every \
                     period·lacunarity^i cells)",
                ));
            }
            if self.warp > 0.0 && self.warp_frequency.fract() != 0.0 {
                return Err(NoiseError::invalid(
                    "warp-frequency",
                    self.warp_frequency,
                    "an integer when `period` is set with a warp",
                ));
            }
            if self.fractal != FractalKind::None {
                let top = f64::from(p) * crate::detmath::powi(self.lacunarity, self.octaves as i32 - 1);
                if top > f64::from(u32::MAX) {
                    return Err(NoiseError::invalid(
                        "octaves",
                        self.octaves,
                        format!(
                            "at most so many that period·lacunarity^(octaves−1) < 2^32 with \
                             period {p} and lacunarity {}",
                            self.lacunarity
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Lists the kinds and every parameter with its default, range and meaning, from
    /// [`NoiseKind::about`] and [`FIELDS`].
    pub fn help() -> String {
        let mut s = String::new();
        s.push_str(
            "A noise spec is an inline TOML table, e.g.\n  \
             kind = \"perlin\", seed = \"reference\", frequency = 1.0\n\n\
             Kinds (key `kind`, default \"perlin\"):\n",
        );
        for k in NoiseKind::ALL {
            s.push_str(&format!("  {:<13} {}\n", k.name(), k.about()));
        }
        s.push_str("\nParameters (key = default, allowed: meaning):\n");
        for f in FIELDS.iter().filter(|f| f.key != "kind") {
            let unit = if f.unit.is_empty() { String::new() } else { format!(" [{}]", f.unit) };
            s.push_str(&format!(
                "  {:<15} = {:<12} {}: {}{unit}\n",
                f.key,
                f.default_text(),
                f.kind.allowed(),
                f.doc
            ));
        }
        s
    }
}

/// Joins a multi-line parser message into one line.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
