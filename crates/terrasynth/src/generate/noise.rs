//! `noise`: terrain from any terrasynth-noise source or fractal.

use terrasynth_noise::spec::{FIELDS, Field, FieldDefault, FieldKind};
use terrasynth_noise::{
    CellRegion, FractalKind, Noise, NoiseError, NoiseKind, NoiseSpec, Region, Seed, WorleyDistance,
    WorleyReturn,
};

use super::{Generator, GeneratorStep};
use crate::step::params::{NO_SEED, check_number, spec_named, str_eq};
use crate::step::{Category, StepInfo, WorldFrame};
use crate::step::{DefaultValue, ParamKind, ParamSpec, Params};
use crate::{Error, Heightmap, Progress, Result};

/// The flat `seed` value that means the published permutation (`seed = "reference"` in a spec);
/// [`NO_SEED`] (-1, the default) means the step's seed.
pub const REFERENCE_SEED: i64 = -2;

/// The recipe parameter of one [`NoiseSpec`] field, made from its description in
/// [`terrasynth_noise::spec::FIELDS`] (range, default, unit, doc): numbers keep their range,
/// choices their names, `offset` is a list of 2, the optional fields (`h`, `mf-offset`, `gain`,
/// `period`) keep their range and default to [`DefaultValue::Absent`] (key omitted: the
/// fractal's default, not tileable), and the seed adds -1 (the step's seed, [`NO_SEED`]) and -2
/// ([`REFERENCE_SEED`]) below its range.
const fn field_param(f: &Field) -> ParamSpec {
    let (kind, default) = match f.kind {
        FieldKind::Float { min, max } => (ParamKind::Float { min, max }, number_default(f.default)),
        FieldKind::Int { min, max } => {
            (ParamKind::Int { min: min as i64, max: max as u64 }, number_default(f.default))
        }
        FieldKind::OptionalFloat { min, max } => (ParamKind::Float { min, max }, DefaultValue::Absent),
        FieldKind::OptionalInt { min, max } => {
            (ParamKind::Int { min: min as i64, max: max as u64 }, DefaultValue::Absent)
        }
        FieldKind::Pair { max_abs } => {
            let default = match f.default {
                FieldDefault::Pair(p) => DefaultValue::List(p),
                _ => DefaultValue::List(&[0.0, 0.0]),
            };
            (ParamKind::List { min: -max_abs, max: max_abs, min_len: 2, max_len: 2 }, default)
        }
        FieldKind::Choice(names) => {
            let default = match f.default {
                FieldDefault::Name(n) => DefaultValue::Text(n),
                _ => DefaultValue::Text(names[0]),
            };
            (ParamKind::Choice(names), default)
        }
        FieldKind::Seed => {
            (ParamKind::Int { min: REFERENCE_SEED, max: 1 << 52 }, DefaultValue::Number(NO_SEED as f64))
        }
    };
    let doc = match f.kind {
        FieldKind::Seed => SEED_DOC,
        _ => f.doc,
    };
    ParamSpec { name: f.key, label: f.label, kind, default, unit: f.unit, doc }
}

/// The step's `seed`: a [`Seed`] plus "the step's seed".
const SEED_DOC: &str = "Noise seed: -1 = the step's seed (derived from the recipe seed), -2 = \"reference\" \
                        (the published permutation of perlin-table and perlin), n >= 0 = that seed.";

/// A number field's default as a recipe default.
const fn number_default(d: FieldDefault) -> DefaultValue {
    match d {
        FieldDefault::Number(v) => DefaultValue::Number(v),
        _ => panic!("a number field's default is a number"),
    }
}

/// Number of recipe parameters: `feature-size`, the 18 spec fields, the inline `noise`,
/// `feature-size-m`, `scale-x`, `scale-y`, `offset-x`, `offset-y`.
const PARAM_COUNT: usize = FIELDS.len() + 7;

/// The step's parameters: `feature-size`, then every [`NoiseSpec`] field in [`FIELDS`] order
/// (the step's `fractal` defaults to `fbm`, the spec's to `none`), then the inline `noise`, then
/// `feature-size-m`, then the seed 003 scale and offset per axis.
const fn params() -> [ParamSpec; PARAM_COUNT] {
    let mut out = [FEATURE_SIZE; PARAM_COUNT];
    let mut i = 0;
    while i < FIELDS.len() {
        let mut p = field_param(&FIELDS[i]);
        if str_eq(p.name, "fractal") {
            // `fractal`: the step's default is fbm (a plain noise is rarely a terrain).
            p.default = DefaultValue::Text("fbm");
        }
        out[i + 1] = p;
        i += 1;
    }
    out[PARAM_COUNT - 6] = INLINE;
    out[PARAM_COUNT - 5] = FEATURE_SIZE_M;
    out[PARAM_COUNT - 4] = scale_param("scale-x", "x");
    out[PARAM_COUNT - 3] = scale_param("scale-y", "y");
    out[PARAM_COUNT - 2] = offset_param("offset-x", "x");
    out[PARAM_COUNT - 1] = offset_param("offset-y", "y");
    out
}

/// Largest `scale-x`/`scale-y`; the smallest is its inverse.
pub const MAX_AXIS_SCALE: f64 = 1.0e3;

/// Largest |`offset-x`|/|`offset-y`| (cells on a map, metres in a world).
pub const MAX_AXIS_OFFSET: f64 = 1.0e12;

/// `scale-x` / `scale-y` (seed 003 `scale.x`, `scale.y`).
const fn scale_param(name: &'static str, axis: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        label: if str_eq(axis, "x") { "Scale x" } else { "Scale y" },
        kind: ParamKind::Float { min: 1.0 / MAX_AXIS_SCALE, max: MAX_AXIS_SCALE },
        // Absent rather than 1, so recipes (and report.json's resolved recipe) that do not set
        // it stay as they were.
        default: DefaultValue::Absent,
        unit: "",
        doc: if str_eq(axis, "x") {
            "Seed 003's scale along x, as a sampling step: column i samples the unscaled noise at column \
             i · scale-x, so 2 shows twice as much along x (features half as wide). Absent (the default) = 1, unscaled."
        } else {
            "Seed 003's scale along y, as a sampling step: row j samples the unscaled noise at row \
             j · scale-y, so 2 shows twice as much along y (features half as tall). Absent (the default) = 1, unscaled."
        },
    }
}

/// `offset-x` / `offset-y` (seed 003 `offset`).
const fn offset_param(name: &'static str, axis: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        label: if str_eq(axis, "x") { "Offset x" } else { "Offset y" },
        kind: ParamKind::Float { min: -MAX_AXIS_OFFSET, max: MAX_AXIS_OFFSET },
        default: DefaultValue::Absent,
        unit: "cells (metres in a world)",
        doc: if str_eq(axis, "x") {
            "Seed 003's offset along x: column i samples the unscaled noise at column i · scale-x + offset-x \
             (cells of the unscaled map; metres in a world recipe), so an offset of k cells shows the map k \
             columns further east. Absent (the default) = 0."
        } else {
            "Seed 003's offset along y: row j samples the unscaled noise at row j · scale-y + offset-y \
             (cells of the unscaled map; metres in a world recipe). Absent (the default) = 0."
        },
    }
}

const FEATURE_SIZE_M: ParamSpec = ParamSpec {
    name: "feature-size-m",
    label: "World feature size",
    kind: ParamKind::Float { min: 1e-3, max: 1e9 },
    default: DefaultValue::Absent,
    unit: "m",
    doc: "World recipes only (and required there): size of one lattice cell at frequency 1, in \
          metres, in place of `feature-size`.",
};

const FEATURE_SIZE: ParamSpec = ParamSpec {
    name: "feature-size",
    label: "Feature size",
    kind: ParamKind::Float { min: 1e-4, max: 100.0 },
    default: DefaultValue::Number(0.25),
    unit: "fraction of the longer side",
    doc: "Size of one lattice cell at frequency 1, relative to the map: larger gives bigger \
          features; the same value looks the same at any resolution.",
};

const INLINE: ParamSpec = ParamSpec {
    name: "noise",
    label: "Inline noise spec",
    kind: ParamKind::LegacyText,
    default: DefaultValue::Text(""),
    unit: "",
    doc: "Optional inline TOML noise spec (any NoiseSpec key, e.g. `kind = \"perlin\", \
          fractal = \"ridged\"`), kept for older recipes and `blend`; when set, the other noise \
          keys are ignored.",
};

/// Terrain from a [`NoiseSpec`]: `h(x, y) = noise((x + ½) / s, (y + ½) / s)` with
/// `s = feature-size · L` cells per noise unit (`L` = the map's longer side), evaluated by the
/// bulk [`Noise::fill`] (SIMD, rows in parallel).
///
/// Expressing the scale as a fraction of the map makes presets size-independent: with the
/// default `feature-size = 0.25` the map spans 4 lattice cells of the base frequency whatever
/// its resolution. The spec's own `frequency` multiplies on top (default 1).
///
/// The spec comes either from the flat keys, one per [`NoiseSpec`] field with the range, default
/// and doc of its description in [`terrasynth_noise::spec::FIELDS`] (optionals absent when their
/// key is omitted; `seed = -1` for the step's seed and -2 for `"reference"`), or, when the
/// `noise` key is a non-empty inline TOML table (e.g.
/// `noise = "kind = \"worley\", fractal = \"fbm\", octaves = 4"`), from that table alone (the
/// flat noise keys are then ignored; `feature-size` still applies). The noise seed is the
/// step's seed unless the spec gives one. Heights are the noise's raw values (about [−1, 1] for
/// most kinds).
///
/// **Scale and offset per axis** (seed 003 `GenerateNoiseMap(…, Vector2 scale, Vector2
/// offset)`): with `scale-x = a`, `offset-x = b` column `i` samples where column `a·i + b` of
/// the unscaled map would, `h(i, j) = noise((a·i + b + ½) / s, (c·j + d + ½) / s)` (`c`, `d`
/// the y keys). The seed divides by its scale (`(x − halfWidth + offset.x) / scale.x`), whose
/// role `feature-size` already plays here; `scale-x`/`scale-y` stretch the two axes apart
/// from it, as a sampling step, so `scale-x = 2` equals every other column of a map twice as
/// wide. The seed turns a scale ≤ 0 into its absolute value or 20; here a scale outside
/// `[1e-3, 1e3]` is refused with the allowed range. Absent (the defaults: 1 and 0) they give the same bits as
/// without them. In a world the offsets are metres: cell `X` samples
/// `(X · cell-size · a + b) / feature-size-m`, still from its world cell alone.
#[derive(Clone, Debug)]
pub struct NoiseTerrain {
    /// The spec; its seed is replaced by the step seed when `seed_given` is false.
    pub spec: NoiseSpec,
    /// Whether the spec's seed is used as is.
    pub seed_given: bool,
    /// Size of one base lattice cell as a fraction of the longer side (default 0.25).
    pub feature_size: f64,
    /// Size of one base lattice cell in metres; when set it replaces `feature_size` (and is
    /// required in a world).
    pub feature_size_m: Option<f64>,
    /// Sampling step per axis `[scale-x, scale-y]` (default `[1, 1]`).
    pub scale: [f64; 2],
    /// Offset per axis `[offset-x, offset-y]`: cells of the unscaled map, metres in a world
    /// (default `[0, 0]`).
    pub offset: [f64; 2],
}

impl NoiseTerrain {
    /// Parameter specs (recipe keys): `feature-size`, every [`NoiseSpec`] field, `noise`.
    pub const PARAMS: &'static [ParamSpec] = &params();

    /// A checked generator (the spec is validated).
    pub fn new(spec: NoiseSpec, seed_given: bool, feature_size: f64) -> Result<Self> {
        check_number(Self::PARAMS, "feature-size", feature_size)?;
        // A field out of range is a parameter error naming its key, as for every other step.
        spec.validate().map_err(|e| match e {
            NoiseError::InvalidParameter { name, value, allowed } => {
                Error::InvalidParameter { name: name.into(), value, allowed }
            }
            other => other.into(),
        })?;
        Ok(Self {
            spec,
            seed_given,
            feature_size,
            feature_size_m: None,
            scale: [1.0, 1.0],
            offset: [0.0, 0.0],
        })
    }

    /// The same noise with seed 003's scale and offset per axis (checked; see the type's docs).
    pub fn with_axes(mut self, scale: [f64; 2], offset: [f64; 2]) -> Result<Self> {
        check_number(Self::PARAMS, "scale-x", scale[0])?;
        check_number(Self::PARAMS, "scale-y", scale[1])?;
        check_number(Self::PARAMS, "offset-x", offset[0])?;
        check_number(Self::PARAMS, "offset-y", offset[1])?;
        self.scale = scale;
        self.offset = offset;
        Ok(self)
    }

    /// The same noise with its base lattice cell `metres` wide (checked), whatever the map's
    /// size: what a world needs.
    pub fn with_feature_size_m(mut self, metres: f64) -> Result<Self> {
        check_number(Self::PARAMS, "feature-size-m", metres)?;
        self.feature_size_m = Some(metres);
        Ok(self)
    }

    /// Applies `feature-size-m` when present, and the scale and offset per axis.
    fn metres(self, p: &Params) -> Result<Self> {
        let with = match p.opt_f64("feature-size-m")? {
            Some(m) => self.with_feature_size_m(m)?,
            None => self,
        };
        let or = |key: &str, absent: f64| Ok::<_, Error>(p.opt_f64(key)?.unwrap_or(absent));
        with.with_axes(
            [or("scale-x", 1.0)?, or("scale-y", 1.0)?],
            [or("offset-x", 0.0)?, or("offset-y", 0.0)?],
        )
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
            return Self::new(spec, inline_sets_seed(inline), feature_size)?.metres(p);
        }
        check_number(Self::PARAMS, "seed", p.f64("seed")?)?;
        let (seed, seed_given) = match p.i64("seed")? {
            NO_SEED => (Seed::Reference, false),
            REFERENCE_SEED => (Seed::Reference, true),
            n if n >= 0 => (Seed::Number(n as u64), true),
            n => return Err(Error::param("seed", n, allowed("seed"))),
        };
        let offset = p.list("offset")?;
        let spec = NoiseSpec {
            kind: choice(p, "kind", NoiseKind::from_name)?,
            seed,
            frequency: p.f64("frequency")?,
            offset: [offset[0], offset[1]],
            res: p.f64("res")?,
            fractal: choice(p, "fractal", FractalKind::from_name)?,
            octaves: u32::try_from(p.usize("octaves")?)
                .map_err(|_| Error::param("octaves", "", allowed("octaves")))?,
            lacunarity: p.f64("lacunarity")?,
            persistence: p.f64("persistence")?,
            h: p.opt_f64("h")?,
            mf_offset: p.opt_f64("mf-offset")?,
            gain: p.opt_f64("gain")?,
            warp: p.f64("warp")?,
            warp_frequency: p.f64("warp-frequency")?,
            period: match p.opt_f64("period")? {
                None => None,
                Some(n) => {
                    Some(u32::try_from(n as i64).map_err(|_| Error::param("period", n, allowed("period")))?)
                }
            },
            distance: choice(p, "distance", WorleyDistance::from_name)?,
            return_: choice(p, "return", WorleyReturn::from_name)?,
            jitter: p.f64("jitter")?,
        };
        Self::new(spec, seed_given, feature_size)?.metres(p)
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

/// The allowed values of the flat key `key`, in words.
fn allowed(key: &str) -> String {
    let spec = spec_named(NoiseTerrain::PARAMS, key);
    match spec.kind {
        ParamKind::Int { max, .. } if key == "seed" => {
            format!("-1 (the step's seed), -2 (\"reference\") or a seed in 0..={max}")
        }
        _ => spec.allowed(),
    }
}

/// The choice `key` as its enum (the spec's `NAMES` are the step's choice list).
fn choice<T>(p: &Params, key: &str, from_name: fn(&str) -> Option<T>) -> Result<T> {
    let name = p.text(key)?;
    from_name(name).ok_or_else(|| Error::param(key, format!("{name:?}"), allowed(key)))
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
        if let Some(m) = self.feature_size_m {
            return Err(Error::param(
                "feature-size-m",
                m,
                "only in a world recipe (one with a [world] table); a finite map uses `feature-size`",
            ));
        }
        let s = self.feature_size * width.max(height) as f64;
        let ([a, c], [b, d]) = (self.scale, self.offset);
        // With the defaults (1, 0) these are the exact values 0.5 / s and 1.0 / s.
        let region = Region { x0: (0.5 + b) / s, y0: (0.5 + d) / s, dx: a / s, dy: c / s, width, height };
        let mut map = Heightmap::new(width, height, 1.0)?;
        noise.fill(&region, map.as_mut_slice())?;
        Ok(map)
    }

    fn in_world(&self) -> bool {
        self.feature_size_m.is_some()
    }

    /// World cell `(X, Y)` takes the noise at `(X · cell-size · scale-x + offset-x) /
    /// feature-size-m` in x (the same in y; offsets in metres), each coordinate computed from
    /// its integer world cell alone ([`Noise::fill_cells`]), so the value of a cell does not
    /// depend on the window holding it.
    fn generate_window(
        &self,
        world: &WorldFrame,
        width: usize,
        height: usize,
        seed: u64,
        progress: &Progress,
    ) -> Result<Heightmap> {
        let Some(metres) = self.feature_size_m else {
            return Err(Error::NotInWorld {
                what: "the noise step needs `feature-size-m` (metres) in a world recipe".into(),
            });
        };
        crate::grid::check_size::<f32>(width, height)?;
        let noise = self.noise(seed)?;
        let k = world.cell_size / metres;
        let ([a, c], [b, d]) = (self.scale, self.offset);
        // With the defaults (1, 0) these are exactly k and 0 (k · 1 = k, 0 / m = 0).
        let cells = CellRegion {
            col0: world.x0,
            row0: world.y0,
            width,
            height,
            scale_x: k * a,
            scale_y: k * c,
            offset_x: b / metres,
            offset_y: d / metres,
        };
        let mut map = Heightmap::new(width, height, 1.0)?;
        progress.check_cancelled()?;
        noise.fill_cells(&cells, map.as_mut_slice())?;
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

    /// The step's choice lists are the noise crate's enum declarations (`NAMES`), and every name
    /// parses back to its variant and is its serde name.
    #[test]
    fn kind_and_fractal_names_parse() {
        fn check<T: Copy + PartialEq + std::fmt::Debug + serde::Serialize>(
            key: &str,
            names: &'static [&'static str],
            all: &[T],
            from_name: fn(&str) -> Option<T>,
        ) {
            assert_eq!(spec_named(NoiseTerrain::PARAMS, key).kind, ParamKind::Choice(names), "{key}");
            assert_eq!(names.len(), all.len(), "{key}");
            for (name, v) in names.iter().zip(all) {
                assert_eq!(from_name(name), Some(*v), "{key} = {name}");
                let serde_name = toml::Value::try_from(v).unwrap();
                assert_eq!(serde_name.as_str(), Some(*name), "{key}: serde name of {v:?}");
            }
        }
        check("kind", NoiseKind::NAMES, &NoiseKind::ALL, NoiseKind::from_name);
        check("fractal", FractalKind::NAMES, &FractalKind::ALL, FractalKind::from_name);
        check("distance", WorleyDistance::NAMES, &WorleyDistance::ALL, WorleyDistance::from_name);
        check("return", WorleyReturn::NAMES, &WorleyReturn::ALL, WorleyReturn::from_name);
    }

    /// Every `NoiseSpec` field is a typed step parameter whose range is the one the noise crate
    /// declares (optionals: exactly their range, absent by default); the one free-text key, the
    /// legacy inline `noise`, is [`ParamKind::LegacyText`], which the editor does not show.
    #[test]
    fn every_spec_field_is_a_typed_parameter() {
        assert_eq!(NoiseTerrain::PARAMS.len(), 25);
        for f in FIELDS {
            let p = spec_named(NoiseTerrain::PARAMS, f.key);
            assert_ne!(p.kind, ParamKind::Text, "{}", f.key);
            assert!(p.doc == f.doc || f.kind == FieldKind::Seed, "{}", f.key);
            match (f.kind, p.kind) {
                (FieldKind::Float { min, max }, ParamKind::Float { min: a, max: b }) => {
                    assert_eq!((min, max), (a, b))
                }
                (FieldKind::Int { min, max }, ParamKind::Int { min: a, max: b }) => {
                    assert_eq!((min as i64, max as u64), (a, b))
                }
                (FieldKind::OptionalFloat { min, max }, ParamKind::Float { min: a, max: b }) => {
                    assert_eq!((min, max, DefaultValue::Absent), (a, b, p.default), "{}", f.key)
                }
                (FieldKind::OptionalInt { min, max }, ParamKind::Int { min: a, max: b }) => {
                    assert_eq!((min as i64, max as u64, DefaultValue::Absent), (a, b, p.default))
                }
                (FieldKind::Pair { max_abs }, ParamKind::List { min, max, min_len: 2, max_len: 2 }) => {
                    assert_eq!((-max_abs, max_abs), (min, max))
                }
                (FieldKind::Choice(a), ParamKind::Choice(b)) => assert_eq!(a, b),
                (FieldKind::Seed, ParamKind::Int { min: REFERENCE_SEED, .. }) => {}
                (a, b) => panic!("{}: {a:?} became {b:?}", f.key),
            }
        }
        assert_eq!(spec_named(NoiseTerrain::PARAMS, "fractal").default, DefaultValue::Text("fbm"));
        let text: Vec<_> = NoiseTerrain::PARAMS
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Text | ParamKind::LegacyText))
            .map(|p| (p.name, p.kind))
            .collect();
        assert_eq!(text, [("noise", ParamKind::LegacyText)]);
    }

    /// The noise step refuses exactly what its specs refuse (bounds accepted, one past refused,
    /// naming the key); the absent values read as absent.
    #[test]
    fn noise_enforces_exactly_its_spec_ranges() {
        use crate::step::ParamValue;
        use crate::step::params::assert_ranges_enforced;
        let with =
            |name: &str, v: f64| Params::defaults(NoiseTerrain::PARAMS).with(name, ParamValue::Number(v));
        let build = |name: &str, v: f64| NoiseTerrain::from_params(&with(name, v)).map(drop);
        assert_eq!(assert_ranges_enforced(NoiseTerrain::PARAMS, &build), 19);
        let t = NoiseTerrain::from_params(&Params::defaults(NoiseTerrain::PARAMS)).unwrap();
        assert_eq!((t.spec.h, t.spec.mf_offset, t.spec.gain, t.spec.period), (None, None, None, None));
        assert_eq!((t.spec.fractal, t.seed_given), (FractalKind::Fbm, false));
        let r = NoiseTerrain::from_params(&with("seed", REFERENCE_SEED as f64)).unwrap();
        assert_eq!((r.spec.seed, r.seed_given), (Seed::Reference, true));
        // The optionals' ranges are exactly the noise crate's: [0, max] (the old -1 sentinel
        // left a hole, -0.5 passed the spec and failed later), `period` 1..=max.
        for key in ["h", "mf-offset", "gain", "period"] {
            let spec = spec_named(NoiseTerrain::PARAMS, key);
            let (min, max) = match spec.kind {
                ParamKind::Float { min, max } => (min, max),
                ParamKind::Int { min, max } => (min as f64, max as f64),
                k => panic!("{key}: {k:?}"),
            };
            let field = FIELDS.iter().find(|f| f.key == key).unwrap();
            let declared = match field.kind {
                FieldKind::OptionalFloat { min, max } => (min, max),
                FieldKind::OptionalInt { min, max } => (min as f64, max as f64),
                k => panic!("{key}: {k:?}"),
            };
            assert_eq!(declared, (min, max), "{key}");
            assert!(spec.check(&ParamValue::Absent).is_ok(), "{key}");
            assert!(spec.check(&ParamValue::Number(min - 0.5)).is_err(), "{key}");
            assert!(spec.allowed().ends_with("or absent (key omitted)"), "{}", spec.allowed());
        }
        assert!(matches!(build("h", -0.5), Err(Error::InvalidParameter { name, .. }) if name == "h"));
        // A recipe sets an optional by its key and leaves it absent by omitting it.
        let recipe = |key: &str, v: f64| {
            let given = [(key.to_string(), ParamValue::Number(v))].into_iter().collect();
            NoiseTerrain::from_params(&Params::validate(NoiseTerrain::PARAMS, &given).unwrap()).unwrap().spec
        };
        assert_eq!(recipe("h", 0.25).h, Some(0.25));
        assert_eq!(recipe("gain", 0.0).gain, Some(0.0));
        assert_eq!(recipe("mf-offset", 1.5).mf_offset, Some(1.5));
        assert_eq!(recipe("period", 8.0).period, Some(8));
        let given = [("h".to_string(), ParamValue::Number(-0.5))].into_iter().collect();
        let problems = Params::validate(NoiseTerrain::PARAMS, &given).unwrap_err();
        assert!(problems[0].to_string().contains("`h`"), "{problems:?}");
        // The default flat keys are NoiseSpec::default() but for the step's fbm.
        assert_eq!(t.spec, NoiseSpec { fractal: FractalKind::Fbm, ..NoiseSpec::default() });
    }
}
