//! Simple shaping: `normalize`, `clamp`, `scale`, `terrace`, `sea-level`.

use crate::step::params::check_number;
use crate::step::{Category, Step, StepContext, StepInfo, Terrain};
use crate::step::{DefaultValue, ParamKind, ParamSpec, Params};
use crate::{Error, Heightmap, Result};

/// The terrain's finite height range `(lo, hi - lo)`; a flat or empty map gives a range of 0.
pub(crate) fn range(map: &Heightmap) -> (f32, f32) {
    map.min_max().map_or((0.0, 0.0), |(lo, hi)| (lo, hi - lo))
}

/// Checks a `min`/`max` pair against `specs` and that `min <= max`.
fn check_bounds(specs: &[ParamSpec], lo: f32, hi: f32) -> Result<()> {
    check_number(specs, "min", lo as f64)?;
    check_number(specs, "max", hi as f64)?;
    if hi < lo {
        return Err(Error::param("max", hi, format!("a number >= min ({lo})")));
    }
    Ok(())
}

/// Rescales heights linearly so the map's min becomes `lo` and its max `hi` (inverse lerp over
/// min and max, seed 003; a flat map becomes all `lo`).
#[derive(Clone, Debug, PartialEq)]
pub struct Normalize {
    /// New minimum (default 0).
    pub lo: f32,
    /// New maximum (default 1).
    pub hi: f32,
}

const BOUND: ParamKind = ParamKind::Float { min: -1.0e9, max: 1.0e9 };

impl Normalize {
    /// Parameter specs (recipe keys).
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "min",
            kind: BOUND,
            default: DefaultValue::Number(0.0),
            unit: "height units",
            doc: "Height given to the lowest cell.",
        },
        ParamSpec {
            name: "max",
            kind: BOUND,
            default: DefaultValue::Number(1.0),
            unit: "height units",
            doc: "Height given to the highest cell (>= min).",
        },
    ];

    /// A checked step (`lo <= hi`).
    pub fn new(lo: f32, hi: f32) -> Result<Self> {
        check_bounds(Self::PARAMS, lo, hi)?;
        Ok(Self { lo, hi })
    }

    /// Applies to a heightmap.
    pub fn apply(&self, map: &mut Heightmap) {
        let (min, r) = range(map);
        let span = (self.hi - self.lo) as f64;
        for v in map.as_mut_slice() {
            let t = if r > 0.0 { (*v - min) as f64 / r as f64 } else { 0.0 };
            *v = (self.lo as f64 + t * span) as f32;
        }
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "normalize",
            category: Category::Shape,
            doc: "Linearly rescales heights so the lowest cell is `min` and the highest `max`.",
            source: "seed 003 (inverse lerp over min and max)",
            params: Self::PARAMS,
            build: |p: &Params| Ok(Box::new(Self::new(p.f32("min")?, p.f32("max")?)?)),
        }
    }
}

impl Step for Normalize {
    fn run(&self, terrain: &mut Terrain, _ctx: &StepContext) -> Result<()> {
        self.apply(&mut terrain.height);
        Ok(())
    }
}

/// Clamps heights to `[lo, hi]` (absolute height units).
#[derive(Clone, Debug, PartialEq)]
pub struct Clamp {
    /// Lower bound (default 0).
    pub lo: f32,
    /// Upper bound (default 1).
    pub hi: f32,
}

impl Clamp {
    /// Parameter specs (recipe keys).
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "min",
            kind: BOUND,
            default: DefaultValue::Number(0.0),
            unit: "height units",
            doc: "Heights below become this.",
        },
        ParamSpec {
            name: "max",
            kind: BOUND,
            default: DefaultValue::Number(1.0),
            unit: "height units",
            doc: "Heights above become this (>= min).",
        },
    ];

    /// A checked step (`lo <= hi`).
    pub fn new(lo: f32, hi: f32) -> Result<Self> {
        check_bounds(Self::PARAMS, lo, hi)?;
        Ok(Self { lo, hi })
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "clamp",
            category: Category::Shape,
            doc: "Clamps every height to [min, max].",
            source: "terrasynth (standard shaping)",
            params: Self::PARAMS,
            build: |p: &Params| Ok(Box::new(Self::new(p.f32("min")?, p.f32("max")?)?)),
        }
    }
}

impl Step for Clamp {
    fn run(&self, terrain: &mut Terrain, _ctx: &StepContext) -> Result<()> {
        terrain.height.clamp(self.lo, self.hi)
    }
}

/// `h' = factor · h + offset`.
#[derive(Clone, Debug, PartialEq)]
pub struct Scale {
    /// Multiplier (default 1).
    pub factor: f32,
    /// Added after multiplying (default 0).
    pub offset: f32,
}

impl Scale {
    /// Parameter specs (recipe keys).
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "factor",
            kind: BOUND,
            default: DefaultValue::Number(1.0),
            unit: "",
            doc: "Multiplier applied to every height.",
        },
        ParamSpec {
            name: "offset",
            kind: BOUND,
            default: DefaultValue::Number(0.0),
            unit: "height units",
            doc: "Added to every height after multiplying.",
        },
    ];

    /// A checked step.
    pub fn new(factor: f32, offset: f32) -> Result<Self> {
        check_number(Self::PARAMS, "factor", factor as f64)?;
        check_number(Self::PARAMS, "offset", offset as f64)?;
        Ok(Self { factor, offset })
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "scale",
            category: Category::Shape,
            doc: "Multiplies every height by `factor`, then adds `offset`.",
            source: "terrasynth (standard shaping)",
            params: Self::PARAMS,
            build: |p: &Params| Ok(Box::new(Self::new(p.f32("factor")?, p.f32("offset")?)?)),
        }
    }
}

impl Step for Scale {
    fn run(&self, terrain: &mut Terrain, _ctx: &StepContext) -> Result<()> {
        terrain.height.scale(self.factor, self.offset)
    }
}

/// Terraces: flat treads joined by steep risers.
///
/// With `n = (h − lo) / (hi − lo)` in [0, 1] over the map's range, `k = ⌊n·L⌋` and
/// `f = n·L − k`: `h' = lo + (hi − lo) · (k + f^q) / L` with `q = 1 / (1 − sharpness)`.
/// Sharpness 0 leaves the map unchanged; towards 1 each band becomes a flat tread at its
/// lower level with a steep riser at its top. The range is kept.
#[derive(Clone, Debug, PartialEq)]
pub struct Terrace {
    /// Number of bands `L` (default 8).
    pub levels: u32,
    /// 0..=0.99 (default 0.8).
    pub sharpness: f64,
}

impl Terrace {
    /// Parameter specs (recipe keys).
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "levels",
            kind: ParamKind::Int { min: 1, max: 1024 },
            default: DefaultValue::Number(8.0),
            unit: "bands",
            doc: "Number of terraces across the height range.",
        },
        ParamSpec {
            name: "sharpness",
            kind: ParamKind::Float { min: 0.0, max: 0.99 },
            default: DefaultValue::Number(0.8),
            unit: "",
            doc: "0 = no change; towards 0.99 flatter treads and steeper risers (exponent 1/(1-s)).",
        },
    ];

    /// A checked step.
    pub fn new(levels: u32, sharpness: f64) -> Result<Self> {
        check_number(Self::PARAMS, "levels", levels as f64)?;
        check_number(Self::PARAMS, "sharpness", sharpness)?;
        Ok(Self { levels, sharpness })
    }

    /// Applies to a heightmap.
    pub fn apply(&self, map: &mut Heightmap) {
        let (lo, r) = range(map);
        if r <= 0.0 {
            return;
        }
        let l = self.levels as f64;
        let q = 1.0 / (1.0 - self.sharpness);
        for v in map.as_mut_slice() {
            let n = ((*v - lo) as f64 / r as f64).clamp(0.0, 1.0) * l;
            let k = n.floor();
            *v = (lo as f64 + r as f64 * (k + (n - k).powf(q)) / l) as f32;
        }
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "terrace",
            category: Category::Shape,
            doc: "Terraces: flat treads joined by steep risers, `levels` bands over the height range.",
            source: "terrasynth (standard shaping)",
            params: Self::PARAMS,
            build: |p: &Params| Ok(Box::new(Self::new(p.usize("levels")? as u32, p.f64("sharpness")?)?)),
        }
    }
}

impl Step for Terrace {
    fn run(&self, terrain: &mut Terrain, _ctx: &StepContext) -> Result<()> {
        self.apply(&mut terrain.height);
        Ok(())
    }
}

/// Sets `terrain.sea_level` (heights are unchanged).
///
/// `mode = "fraction"`: `sea = lo + value · (hi − lo)` over the current map's range, so a
/// preset keeps the same share of sea whatever the generator's units (seed 003 and 004 §7 use
/// thresholds on a [0, 1] map, e.g. water < 0.15). `mode = "absolute"`: `sea = value`.
#[derive(Clone, Debug, PartialEq)]
pub struct SeaLevel {
    /// Whether `value` is a fraction of the range (true, default) or a height.
    pub fraction: bool,
    /// The level (default 0.3).
    pub value: f64,
}

impl SeaLevel {
    /// Parameter specs (recipe keys).
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "mode",
            kind: ParamKind::Choice(&["fraction", "absolute"]),
            default: DefaultValue::Text("fraction"),
            unit: "",
            doc: "`fraction`: value in [0, 1] of the current height range; `absolute`: a height.",
        },
        ParamSpec {
            name: "value",
            kind: BOUND,
            default: DefaultValue::Number(0.3),
            unit: "fraction or height units",
            doc: "Sea level: with mode `fraction`, 0 = lowest cell, 1 = highest.",
        },
    ];

    /// A checked step (a fraction must be in [0, 1]).
    pub fn new(fraction: bool, value: f64) -> Result<Self> {
        check_number(Self::PARAMS, "value", value)?;
        if fraction && !(0.0..=1.0).contains(&value) {
            return Err(Error::param("value", value, "a number in [0, 1] with mode = \"fraction\""));
        }
        Ok(Self { fraction, value })
    }

    /// The sea level for a heightmap.
    pub fn level(&self, map: &Heightmap) -> f32 {
        if self.fraction {
            let (lo, r) = range(map);
            (lo as f64 + self.value * r as f64) as f32
        } else {
            self.value as f32
        }
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "sea-level",
            category: Category::Shape,
            doc: "Sets the terrain's sea level, as a fraction of the height range or an absolute height.",
            source: "seed 003, seed 004 §7 (height classes with water below a threshold)",
            params: Self::PARAMS,
            build: |p: &Params| Ok(Box::new(Self::new(p.text("mode")? == "fraction", p.f64("value")?)?)),
        }
    }
}

impl Step for SeaLevel {
    fn run(&self, terrain: &mut Terrain, _ctx: &StepContext) -> Result<()> {
        terrain.sea_level = self.level(&terrain.height);
        Ok(())
    }
}
