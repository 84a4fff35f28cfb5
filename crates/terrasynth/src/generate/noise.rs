//! `noise`: terrain from any terrasynth-noise source or fractal.

use terrasynth_noise::{FractalKind, Noise, NoiseKind, NoiseSpec, Region, Seed};

use super::{Generator, GeneratorStep};
use crate::step::params::check_number;
use crate::step::{Category, StepInfo};
use crate::step::{DefaultValue, ParamKind, ParamSpec, Params};
use crate::{Error, Heightmap, Progress, Result};

/// Names of [`NoiseKind`]s as written in recipes.
const KINDS: &[&str] =
    &["white", "value", "perlin-angle", "perlin-table", "perlin", "opensimplex2", "worley"];
/// Names of [`FractalKind`]s as written in recipes.
const FRACTALS: &[&str] = &["none", "fbm", "ridged", "hybrid", "billow"];

/// Terrain from a [`NoiseSpec`]: `h(x, y) = noise((x + ½) / s, (y + ½) / s)` with
/// `s = feature-size · L` cells per noise unit (`L` = the map's longer side), evaluated by the
/// bulk [`Noise::fill`] (SIMD, rows in parallel).
///
/// Expressing the scale as a fraction of the map makes presets size-independent: with the
/// default `feature-size = 0.25` the map spans 4 lattice cells of the base frequency whatever
/// its resolution. The spec's own `frequency` multiplies on top (default 1).
///
/// The spec comes either from the flat keys (`kind`, `fractal`, `octaves`, `lacunarity`,
/// `persistence`, `frequency`, `warp`, `seed`, mirroring the [`NoiseSpec`] fields and ranges) or,
/// when the `noise` key is a non-empty inline TOML table (e.g.
/// `noise = "kind = \"worley\", fractal = \"fbm\", octaves = 4"`), from that table alone (the
/// flat noise keys are then ignored; `feature-size` still applies). The noise seed is the
/// step's seed unless the spec gives one (`seed` flat key ≥ 0, or a `seed` in the inline
/// table). Heights are the noise's raw values (about [−1, 1] for most kinds).
#[derive(Clone, Debug)]
pub struct NoiseTerrain {
    /// The spec; its seed is replaced by the step seed when `seed_given` is false.
    pub spec: NoiseSpec,
    /// Whether the spec's seed is used as is.
    pub seed_given: bool,
    /// Size of one base lattice cell as a fraction of the longer side (default 0.25).
    pub feature_size: f64,
}

impl NoiseTerrain {
    /// Parameter specs (recipe keys).
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "noise",
            kind: ParamKind::Text,
            default: DefaultValue::Text(""),
            unit: "",
            doc: "Optional inline TOML noise spec (any NoiseSpec key, e.g. `kind = \"perlin\", \
                  fractal = \"ridged\"`); when set, the flat noise keys are ignored.",
        },
        ParamSpec {
            name: "feature-size",
            kind: ParamKind::Float { min: 1e-4, max: 100.0 },
            default: DefaultValue::Number(0.25),
            unit: "fraction of the longer side",
            doc: "Size of one lattice cell at frequency 1, relative to the map: larger gives \
                  bigger features; the same value looks the same at any resolution.",
        },
        ParamSpec {
            name: "kind",
            kind: ParamKind::Choice(KINDS),
            default: DefaultValue::Text("perlin"),
            unit: "",
            doc: "Basic noise (terrasynth-noise NoiseKind).",
        },
        ParamSpec {
            name: "fractal",
            kind: ParamKind::Choice(FRACTALS),
            default: DefaultValue::Text("fbm"),
            unit: "",
            doc: "Fractal over the basic noise: none, fbm, ridged, hybrid, billow.",
        },
        ParamSpec {
            name: "octaves",
            kind: ParamKind::Int { min: 1, max: 32 },
            default: DefaultValue::Number(6.0),
            unit: "",
            doc: "Octaves of the fractal (ignored with fractal = none).",
        },
        ParamSpec {
            name: "lacunarity",
            kind: ParamKind::Float { min: 1.0, max: 16.0 },
            default: DefaultValue::Number(2.0),
            unit: "",
            doc: "Frequency multiplier per octave.",
        },
        ParamSpec {
            name: "persistence",
            kind: ParamKind::Float { min: 0.0, max: 2.0 },
            default: DefaultValue::Number(0.5),
            unit: "",
            doc: "Amplitude multiplier per octave (fbm, billow).",
        },
        ParamSpec {
            name: "frequency",
            kind: ParamKind::Float { min: 1e-6, max: 1e6 },
            default: DefaultValue::Number(1.0),
            unit: "lattice cells per feature-size",
            doc: "Extra frequency multiplier of the spec.",
        },
        ParamSpec {
            name: "warp",
            kind: ParamKind::Float { min: 0.0, max: 1000.0 },
            default: DefaultValue::Number(0.0),
            unit: "lattice cells",
            doc: "Domain-warp amplitude; 0 disables the warp.",
        },
        ParamSpec {
            name: "seed",
            kind: ParamKind::Int { min: -1, max: 1 << 52 },
            default: DefaultValue::Number(-1.0),
            unit: "",
            doc: "Noise seed; -1 = the step's seed (derived from the recipe seed).",
        },
    ];

    /// A checked generator (the spec is validated).
    pub fn new(spec: NoiseSpec, seed_given: bool, feature_size: f64) -> Result<Self> {
        check_number(Self::PARAMS, "feature-size", feature_size)?;
        spec.validate()?;
        Ok(Self { spec, seed_given, feature_size })
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        let inline = p.text("noise")?.trim();
        let feature_size = p.f64("feature-size")?;
        if !inline.is_empty() {
            let bad = |e: &dyn std::fmt::Display| {
                Error::param("noise", inline, format!("an inline noise spec ({e})"))
            };
            let spec = NoiseSpec::from_inline_toml(inline).map_err(|e| bad(&e))?;
            spec.validate().map_err(|e| bad(&e))?;
            return Self::new(spec, inline_sets_seed(inline), feature_size);
        }
        let choice = |key: &str, names: &[&str]| -> Result<usize> {
            let v = p.text(key)?;
            names
                .iter()
                .position(|n| *n == v)
                .ok_or_else(|| Error::param(key, v, format!("one of {}", names.join(", "))))
        };
        let fractal = match choice("fractal", FRACTALS)? {
            0 => FractalKind::None,
            1 => FractalKind::Fbm,
            2 => FractalKind::Ridged,
            3 => FractalKind::Hybrid,
            _ => FractalKind::Billow,
        };
        let kind_name = KINDS[choice("kind", KINDS)?];
        let kind = NoiseKind::ALL.into_iter().find(|k| k.name() == kind_name).unwrap_or(NoiseKind::Perlin);
        let seed = p.i64("seed")?;
        let spec = NoiseSpec {
            kind,
            fractal,
            octaves: p.usize("octaves")? as u32,
            lacunarity: p.f64("lacunarity")?,
            persistence: p.f64("persistence")?,
            frequency: p.f64("frequency")?,
            warp: p.f64("warp")?,
            seed: if seed >= 0 { Seed::Number(seed as u64) } else { Seed::Reference },
            ..NoiseSpec::default()
        };
        Self::new(spec, seed >= 0, feature_size)
    }

    /// The noise for a step seed.
    pub fn noise(&self, seed: u64) -> Result<Noise> {
        let mut spec = self.spec.clone();
        if !self.seed_given {
            spec.seed = Seed::Number(seed);
        }
        Ok(spec.build()?)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "noise",
            category: Category::Generate,
            doc: "Terrain from any terrasynth-noise source or fractal (flat keys or an inline \
                  spec), scaled to the map by `feature-size`.",
            source: "seeds 002, 003, 004 §5–6 (noise and octaves); terrasynth-noise",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(GeneratorStep(Self::from_params(p)?))),
        }
    }
}

/// Whether an inline TOML table sets `seed` (so the step seed must not replace it).
fn inline_sets_seed(text: &str) -> bool {
    let t = text.trim();
    let inner = t.strip_prefix('{').and_then(|t| t.strip_suffix('}')).unwrap_or(t);
    let as_inline = format!("spec = {{ {} }}", inner.replace(['\n', '\r'], " "));
    if let Ok(table) = as_inline.parse::<toml::Table>() {
        return table.get("spec").and_then(|s| s.as_table()).is_some_and(|s| s.contains_key("seed"));
    }
    inner.parse::<toml::Table>().is_ok_and(|t| t.contains_key("seed"))
}

impl Generator for NoiseTerrain {
    fn generate(&self, width: usize, height: usize, seed: u64, _progress: &Progress) -> Result<Heightmap> {
        crate::grid::check_size::<f32>(width, height)?;
        let noise = self.noise(seed)?;
        let s = self.feature_size * width.max(height) as f64;
        let region = Region { x0: 0.5 / s, y0: 0.5 / s, dx: 1.0 / s, dy: 1.0 / s, width, height };
        let mut map = Heightmap::new(width, height, 1.0)?;
        noise.fill(&region, map.as_mut_slice())?;
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_seed_detection() {
        assert!(inline_sets_seed("kind = \"value\", seed = 3"));
        assert!(inline_sets_seed("{ seed = \"reference\" }"));
        assert!(!inline_sets_seed("kind = \"value\""));
        assert!(inline_sets_seed("kind = \"value\"\nseed = 5"));
    }

    #[test]
    fn kind_and_fractal_names_parse() {
        assert_eq!(KINDS.len(), NoiseKind::ALL.len());
        for k in NoiseKind::ALL {
            assert!(KINDS.contains(&k.name()));
        }
    }
}
