//! [`NoiseSpec`]: the plain, flat, serde description of a noise (easy to save, diff and edit in
//! a form), parsed from TOML and validated once into a runtime [`Noise`](crate::Noise).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::NoiseError;

/// Largest accepted `frequency` and `warp-frequency`.
pub const MAX_FREQUENCY: f64 = 1e6;
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

/// The basic noise, before any fractal or warp.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseKind {
    /// One uniform value in [-1, 1) per lattice cell (no interpolation).
    White,
    /// Random values at lattice points, smoothstep bilinear interpolation (seed 004 §5).
    Value,
    /// Classic gradient noise, one random unit gradient per lattice point drawn as an angle
    /// (seeds 000, 004).
    PerlinAngle,
    /// Classic gradient noise of the tutorial (seed 002): 8-direction table, doubled permutation.
    PerlinTable,
    /// Improved Perlin noise (Perlin 2002), 2D and 3D.
    #[default]
    Perlin,
    /// OpenSimplex2-style simplex noise (2D simplex lattice, 3D rotated BCC lattice).
    #[serde(rename = "opensimplex2")]
    OpenSimplex2,
    /// Cellular (Worley) noise: distances to jittered feature points.
    Worley,
}

impl NoiseKind {
    /// Every kind, in documentation order.
    pub const ALL: [NoiseKind; 7] = [
        NoiseKind::White,
        NoiseKind::Value,
        NoiseKind::PerlinAngle,
        NoiseKind::PerlinTable,
        NoiseKind::Perlin,
        NoiseKind::OpenSimplex2,
        NoiseKind::Worley,
    ];

    /// The name used in a spec.
    pub fn name(self) -> &'static str {
        match self {
            NoiseKind::White => "white",
            NoiseKind::Value => "value",
            NoiseKind::PerlinAngle => "perlin-angle",
            NoiseKind::PerlinTable => "perlin-table",
            NoiseKind::Perlin => "perlin",
            NoiseKind::OpenSimplex2 => "opensimplex2",
            NoiseKind::Worley => "worley",
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

/// The fractal applied over the basic noise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FractalKind {
    /// The basic noise alone (one octave, no per-octave offset).
    #[default]
    None,
    /// Fractional Brownian motion: normalised weighted sum of octaves.
    Fbm,
    /// Musgrave's ridged multifractal.
    Ridged,
    /// Musgrave's hybrid multifractal.
    Hybrid,
    /// Billow: fBm of `2·|n| − 1`.
    Billow,
}

/// Distance metric of Worley noise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorleyDistance {
    /// √(dx² + dy²).
    #[default]
    Euclidean,
    /// dx² + dy².
    Squared,
    /// |dx| + |dy|.
    Manhattan,
}

/// What Worley noise returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WorleyReturn {
    /// Distance to the nearest feature point.
    #[default]
    #[serde(rename = "f1")]
    F1,
    /// Distance to the second-nearest feature point.
    #[serde(rename = "f2")]
    F2,
    /// F2 − F1 (cell borders).
    #[serde(rename = "f2-f1")]
    F2MinusF1,
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
    fn default() -> Self {
        Self {
            kind: NoiseKind::default(),
            seed: Seed::default(),
            frequency: 1.0,
            offset: [0.0, 0.0],
            res: 1.0,
            fractal: FractalKind::None,
            octaves: DEFAULT_OCTAVES,
            lacunarity: DEFAULT_LACUNARITY,
            persistence: DEFAULT_PERSISTENCE,
            h: None,
            mf_offset: None,
            gain: None,
            warp: 0.0,
            warp_frequency: 1.0,
            period: None,
            distance: WorleyDistance::default(),
            return_: WorleyReturn::default(),
            jitter: 1.0,
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
        check_range("frequency", self.frequency, false, MAX_FREQUENCY)?;
        for v in self.offset {
            if !v.is_finite() || v.abs() > MAX_OFFSET {
                return Err(NoiseError::invalid(
                    "offset",
                    format!("[{}, {}]", self.offset[0], self.offset[1]),
                    format!("finite components with |value| <= {MAX_OFFSET:e}"),
                ));
            }
        }
        check_range("res", self.res, false, MAX_RES)?;
        if !(1..=MAX_OCTAVES).contains(&self.octaves) {
            return Err(NoiseError::invalid(
                "octaves",
                self.octaves,
                format!("an integer in 1..={MAX_OCTAVES}"),
            ));
        }
        check_closed("lacunarity", self.lacunarity, 1.0, MAX_LACUNARITY)?;
        check_closed("persistence", self.persistence, 0.0, MAX_PERSISTENCE)?;
        if let Some(h) = self.h {
            check_closed("h", h, 0.0, MAX_H)?;
        }
        if let Some(o) = self.mf_offset {
            check_closed("mf-offset", o, 0.0, MAX_MF_OFFSET)?;
        }
        if let Some(g) = self.gain {
            check_closed("gain", g, 0.0, MAX_GAIN)?;
        }
        check_closed("warp", self.warp, 0.0, MAX_WARP)?;
        check_range("warp-frequency", self.warp_frequency, false, MAX_FREQUENCY)?;
        check_closed("jitter", self.jitter, 0.0, 1.0)?;
        if let Some(p) = self.period {
            if !(1..=MAX_PERIOD).contains(&p) {
                return Err(NoiseError::invalid(
                    "period",
                    p,
                    format!("an integer in 1..={MAX_PERIOD} (lattice cells)"),
                ));
            }
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
                let top = f64::from(p) * self.lacunarity.powi(self.octaves as i32 - 1);
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

    /// Lists the kinds and every parameter with its default, range and meaning.
    pub fn help() -> String {
        let mut s = String::new();
        s.push_str(
            "A noise spec is an inline TOML table, e.g.\n  \
             kind = \"perlin\", seed = \"reference\", frequency = 1.0\n\n\
             Kinds (key `kind`, default \"perlin\"):\n",
        );
        let kinds = [
            ("white", "one uniform value per lattice cell, range [-1, 1)"),
            ("value", "smoothstep-interpolated lattice values (seed 004 §5), range [-1, 1]"),
            (
                "perlin-angle",
                "classic gradient noise, random angle per lattice point, range [-0.7072, 0.7072]",
            ),
            (
                "perlin-table",
                "the tutorial's gradient noise (seed 002), 8 gradients, `res` zoom, range \
                 [-0.7072, 0.7072]",
            ),
            (
                "perlin",
                "improved Perlin noise (2002); 2D: 16 unit gradients off the axes; range [-0.6954, 0.6954] (3D 1.037)",
            ),
            ("opensimplex2", "OpenSimplex2-style simplex noise; 2D and 3D; range [-1, 1]"),
            ("worley", "cellular noise: F1, F2 or F2-F1 of distances to feature points, >= 0"),
        ];
        for (k, d) in kinds {
            s.push_str(&format!("  {k:<13} {d}\n"));
        }
        s.push_str("\nParameters (key = default, range: meaning):\n");
        let params = [
            ("seed", "\"reference\"", "integer >= 0 or \"reference\" (= published permutation)"),
            ("frequency", "1.0", "(0, 1e6]: lattice cells per sample unit"),
            ("offset", "[0.0, 0.0]", "|v| <= 1e9: added after frequency, lattice units"),
            ("res", "1.0", "(0, 1e9]: perlin-table zoom, lattice = (p*frequency + offset)/res"),
            ("fractal", "\"none\"", "none | fbm | ridged | hybrid | billow"),
            ("octaves", "6", "1..=32"),
            ("lacunarity", "2.0", "[1, 16]: frequency multiplier per octave"),
            ("persistence", "0.5", "[0, 2]: amplitude multiplier per octave (fbm, billow)"),
            ("h", "1.0 ridged, 0.25 hybrid", "[0, 2]: Musgrave H, weight lacunarity^(-i*H)"),
            ("mf-offset", "1.0 ridged, 0.7 hybrid", "[0, 4]: Musgrave offset"),
            ("gain", "2.0", "[0, 16]: Musgrave gain (ridged)"),
            ("warp", "0.0", "[0, 1000]: domain-warp amplitude in lattice units, 0 = off"),
            ("warp-frequency", "1.0", "(0, 1e6]: warp noise frequency relative to the lattice"),
            ("period", "none", "1..=1048576: tileable every `period` cells (white, value, perlin*)"),
            ("distance", "\"euclidean\"", "euclidean | squared | manhattan (worley)"),
            ("return", "\"f1\"", "f1 | f2 | f2-f1 (worley)"),
            ("jitter", "1.0", "[0, 1]: feature-point jitter inside its cell (worley)"),
        ];
        for (k, d, r) in params {
            s.push_str(&format!("  {k:<15} = {d:<24} {r}\n"));
        }
        s
    }
}

/// `value` finite and in (0, max] (`zero_ok = false`) or [0, max].
fn check_range(name: &'static str, value: f64, zero_ok: bool, max: f64) -> Result<(), NoiseError> {
    let ok = value.is_finite() && (if zero_ok { value >= 0.0 } else { value > 0.0 }) && value <= max;
    if ok {
        Ok(())
    } else {
        let lo = if zero_ok { "[0" } else { "(0" };
        Err(NoiseError::invalid(name, value, format!("a finite number in {lo}, {max}]")))
    }
}

/// `value` finite and in [lo, hi].
fn check_closed(name: &'static str, value: f64, lo: f64, hi: f64) -> Result<(), NoiseError> {
    if value.is_finite() && value >= lo && value <= hi {
        Ok(())
    } else {
        Err(NoiseError::invalid(name, value, format!("a finite number in [{lo}, {hi}]")))
    }
}

/// Joins a multi-line parser message into one line.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
