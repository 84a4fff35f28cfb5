//! Simple shaping: `normalize`, `clamp`, `scale`, `terrace`, `sea-level`.

use rayon::prelude::*;

use crate::step::params::{Choice, choice_enum, step_params};
use crate::step::{Category, Frame, Reach, Step, StepContext, StepInfo, Terrain, WorldFrame};
use crate::step::{DefaultValue, ParamKind, Params};
use crate::{Error, Heightmap, Result};

/// The terrain's finite height range `(lo, hi - lo)`; a flat or empty map gives a range of 0.
pub(crate) fn range(map: &Heightmap) -> (f32, f32) {
    map.min_max().map_or((0.0, 0.0), |(lo, hi)| (lo, hi - lo))
}

/// Checks that `min <= max` (the ranges themselves are checked by `check_ranges`).
fn check_order(lo: f32, hi: f32) -> Result<()> {
    if hi < lo {
        return Err(Error::param("max", hi, format!("a number >= min ({lo})")));
    }
    Ok(())
}

step_params! {
    /// Rescales heights linearly so the map's min becomes `lo` and its max `hi` (inverse lerp over
    /// min and max, seed 003; a flat map becomes all `lo`).
    ///
    /// With `input-range = [a, b]` the map is linear and fixed instead: `a` becomes `lo` and `b`
    /// becomes `hi` whatever the map holds. That is what a world needs (a window must not depend
    /// on its own extremes), so in a world recipe `normalize` requires `input-range` and is a
    /// point step (reach 0).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Normalize {
        lo: f32 = ParamSpec {
            name: "min",
            label: "Minimum",
            kind: BOUND,
            default: DefaultValue::Number(0.0),
            unit: "height units",
            doc: "Height given to the lowest cell.",
        },
        hi: f32 = ParamSpec {
            name: "max",
            label: "Maximum",
            kind: BOUND,
            default: DefaultValue::Number(1.0),
            unit: "height units",
            doc: "Height given to the highest cell (>= min).",
        },
        input: Vec<f64> = ParamSpec {
            name: "input-range",
            label: "Input range",
            kind: ParamKind::List { min: -1.0e9, max: 1.0e9, min_len: 0, max_len: 2 },
            default: DefaultValue::List(&[]),
            unit: "height units",
            doc: "Optional fixed input range [a, b] (a < b): a becomes min and b becomes max \
                  instead of the map's own lowest and highest cells. Required in a world recipe.",
        },
    }
}

/// The kind of a height bound (`normalize`, `clamp`, `scale`, `sea-level`'s value).
const BOUND: ParamKind = ParamKind::Float { min: -1.0e9, max: 1.0e9 };

impl Normalize {
    /// A checked step (`lo <= hi`) over the map's own range.
    pub fn new(lo: f32, hi: f32) -> Result<Self> {
        let s = Self { lo, hi, input: Vec::new() };
        s.check_ranges()?;
        check_order(lo, hi)?;
        Ok(s)
    }

    /// A checked step mapping the fixed input range `[a, b]` (`a < b`) onto `[lo, hi]`.
    pub fn fixed(lo: f32, hi: f32, a: f64, b: f64) -> Result<Self> {
        let s = Self { input: vec![a, b], ..Self::new(lo, hi)? };
        s.check_ranges()?;
        if a.partial_cmp(&b) != Some(std::cmp::Ordering::Less) {
            return Err(Error::param("input-range", format!("[{a}, {b}]"), "two numbers [a, b] with a < b"));
        }
        Ok(s)
    }

    /// Applies to a heightmap.
    pub fn apply(&self, map: &mut Heightmap) {
        if let [a, b] = self.input[..] {
            // Fixed linear map: each cell from its own value alone.
            let k = (self.hi as f64 - self.lo as f64) / (b - a);
            map.as_mut_slice().par_chunks_mut(1 << 14).for_each(|cells| {
                for v in cells {
                    *v = (self.lo as f64 + (*v as f64 - a) * k) as f32;
                }
            });
            return;
        }
        let (min, r) = range(map);
        let span = (self.hi - self.lo) as f64;
        // Each cell from its own value alone: the same bytes on any thread count.
        map.as_mut_slice().par_chunks_mut(1 << 14).for_each(|cells| {
            for v in cells {
                let t = if r > 0.0 { (*v - min) as f64 / r as f64 } else { 0.0 };
                *v = (self.lo as f64 + t * span) as f32;
            }
        });
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "normalize",
            category: Category::Shape,
            doc: "Linearly rescales heights so the lowest cell is `min` and the highest `max`.",
            source: "seed 003 (inverse lerp over min and max)",
            params: Self::PARAMS,
            build: |p: &Params| {
                let Self { lo, hi, input } = Self::read_params(p)?;
                Ok(Box::new(match input[..] {
                    [] => Self::new(lo, hi)?,
                    [a, b] => Self::fixed(lo, hi, a, b)?,
                    _ => {
                        return Err(Error::param(
                            "input-range",
                            format!("{input:?}"),
                            "two numbers [a, b] with a < b, or none (the map's own range)",
                        ));
                    }
                }))
            },
        }
    }
}

impl Step for Normalize {
    fn run(&self, terrain: &mut Terrain, _ctx: &StepContext) -> Result<()> {
        self.apply(&mut terrain.height);
        Ok(())
    }

    /// A point step with a fixed `input-range`; over the map's own extremes it is global.
    fn reach(&self, _world: &WorldFrame) -> Reach {
        if self.input.is_empty() { Reach::Global } else { Reach::Cells(0) }
    }
}

step_params! {
    /// Clamps heights to `[lo, hi]` (absolute height units).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Clamp {
        lo: f32 = ParamSpec {
            name: "min",
            label: "Minimum",
            kind: BOUND,
            default: DefaultValue::Number(0.0),
            unit: "height units",
            doc: "Heights below become this.",
        },
        hi: f32 = ParamSpec {
            name: "max",
            label: "Maximum",
            kind: BOUND,
            default: DefaultValue::Number(1.0),
            unit: "height units",
            doc: "Heights above become this (>= min).",
        },
    }
}

impl Clamp {
    /// A checked step (`lo <= hi`).
    pub fn new(lo: f32, hi: f32) -> Result<Self> {
        let s = Self { lo, hi };
        s.check_ranges()?;
        check_order(lo, hi)?;
        Ok(s)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "clamp",
            category: Category::Shape,
            doc: "Clamps every height to [min, max].",
            source: "terrasynth (standard shaping)",
            params: Self::PARAMS,
            build: |p: &Params| {
                let Self { lo, hi } = Self::read_params(p)?;
                Ok(Box::new(Self::new(lo, hi)?))
            },
        }
    }
}

impl Step for Clamp {
    fn run(&self, terrain: &mut Terrain, _ctx: &StepContext) -> Result<()> {
        terrain.height.clamp(self.lo, self.hi)
    }

    fn reach(&self, _world: &WorldFrame) -> Reach {
        Reach::Cells(0)
    }
}

step_params! {
    /// `h' = factor · h + offset`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Scale {
        factor: f32 = ParamSpec {
            name: "factor",
            label: "Factor",
            kind: BOUND,
            default: DefaultValue::Number(1.0),
            unit: "",
            doc: "Multiplier applied to every height.",
        },
        offset: f32 = ParamSpec {
            name: "offset",
            label: "Offset",
            kind: BOUND,
            default: DefaultValue::Number(0.0),
            unit: "height units",
            doc: "Added to every height after multiplying.",
        },
    }
}

impl Scale {
    /// A checked step.
    pub fn new(factor: f32, offset: f32) -> Result<Self> {
        let s = Self { factor, offset };
        s.check_ranges()?;
        Ok(s)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "scale",
            category: Category::Shape,
            doc: "Multiplies every height by `factor`, then adds `offset`.",
            source: "terrasynth (standard shaping)",
            params: Self::PARAMS,
            build: |p: &Params| Ok(Box::new(Self::read_params(p)?)),
        }
    }
}

impl Step for Scale {
    fn run(&self, terrain: &mut Terrain, _ctx: &StepContext) -> Result<()> {
        terrain.height.scale(self.factor, self.offset)
    }

    fn reach(&self, _world: &WorldFrame) -> Reach {
        Reach::Cells(0)
    }
}

step_params! {
    /// Terraces: flat treads joined by steep risers.
    ///
    /// With `n = (h − lo) / (hi − lo)` in [0, 1] over the map's range, `k = ⌊n·L⌋` and
    /// `f = n·L − k`: `h' = lo + (hi − lo) · (k + f^q) / L` with `q = 1 / (1 − sharpness)`.
    /// Sharpness 0 leaves the map unchanged; towards 1 each band becomes a flat tread at its
    /// lower level with a steep riser at its top. The range is kept. In a world the range is
    /// the world's declared height range (a point step).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Terrace {
        levels: u32 = ParamSpec {
            name: "levels",
            label: "Levels",
            kind: ParamKind::Int { min: 1, max: 1024 },
            default: DefaultValue::Number(8.0),
            unit: "bands",
            doc: "Number of terraces across the height range.",
        },
        sharpness: f64 = ParamSpec {
            name: "sharpness",
            label: "Sharpness",
            kind: ParamKind::Float { min: 0.0, max: 0.99 },
            default: DefaultValue::Number(0.8),
            unit: "",
            doc: "0 = no change; towards 0.99 flatter treads and steeper risers (exponent 1/(1-s)).",
        },
    }
}

impl Terrace {
    /// A checked step.
    pub fn new(levels: u32, sharpness: f64) -> Result<Self> {
        let s = Self { levels, sharpness };
        s.check_ranges()?;
        Ok(s)
    }

    /// Applies to a heightmap, over its own height range.
    pub fn apply(&self, map: &mut Heightmap) {
        let (lo, r) = range(map);
        self.apply_over(map, lo, r);
    }

    /// Applies with the bands spread over `[lo, lo + r]`.
    fn apply_over(&self, map: &mut Heightmap, lo: f32, r: f32) {
        if r <= 0.0 {
            return;
        }
        let l = self.levels as f64;
        let q = 1.0 / (1.0 - self.sharpness);
        for v in map.as_mut_slice() {
            let n = ((*v - lo) as f64 / r as f64).clamp(0.0, 1.0) * l;
            let k = n.floor();
            *v = (lo as f64 + r as f64 * (k + terrasynth_noise::detmath::pow(n - k, q)) / l) as f32;
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
            build: |p: &Params| Ok(Box::new(Self::read_params(p)?)),
        }
    }
}

impl Step for Terrace {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        match &ctx.frame {
            Frame::Map => self.apply(&mut terrain.height),
            Frame::World(w) => {
                let [lo, hi] = w.height_range;
                self.apply_over(&mut terrain.height, lo as f32, (hi - lo) as f32)
            }
        }
        Ok(())
    }

    fn reach(&self, _world: &WorldFrame) -> Reach {
        Reach::Cells(0)
    }
}

choice_enum! {
    /// How `sea-level`'s value is read.
    pub enum SeaMode {
        /// A fraction in [0, 1] of the current height range.
        Fraction = "fraction",
        /// A height.
        Absolute = "absolute",
    }
}

step_params! {
    /// Sets `terrain.sea_level` (heights are unchanged).
    ///
    /// `mode = "fraction"`: `sea = lo + value · (hi − lo)` over the current map's range, so a
    /// preset keeps the same share of sea whatever the generator's units (seed 003 and 004 §7 use
    /// thresholds on a [0, 1] map, e.g. water < 0.15); in a world, over the world's declared
    /// height range. `mode = "absolute"`: `sea = value`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct SeaLevel {
        mode: SeaMode = ParamSpec {
            name: "mode",
            label: "Mode",
            kind: ParamKind::Choice(SeaMode::NAMES),
            default: DefaultValue::Text("fraction"),
            unit: "",
            doc: "`fraction`: value in [0, 1] of the current height range; `absolute`: a height.",
        },
        value: f64 = ParamSpec {
            name: "value",
            label: "Sea level",
            kind: BOUND,
            default: DefaultValue::Number(0.3),
            unit: "fraction or height units",
            doc: "Sea level: with mode `fraction`, 0 = lowest cell, 1 = highest.",
        },
    }
}

impl SeaLevel {
    /// A checked step (a fraction must be in [0, 1]); `fraction` picks [`SeaMode::Fraction`].
    pub fn new(fraction: bool, value: f64) -> Result<Self> {
        let mode = if fraction { SeaMode::Fraction } else { SeaMode::Absolute };
        let s = Self { mode, value };
        s.check_ranges()?;
        if fraction && !(0.0..=1.0).contains(&value) {
            return Err(Error::param("value", value, "a number in [0, 1] with mode = \"fraction\""));
        }
        Ok(s)
    }

    /// The sea level for a heightmap.
    pub fn level(&self, map: &Heightmap) -> f32 {
        if self.mode == SeaMode::Fraction {
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
            build: |p: &Params| {
                let Self { mode, value } = Self::read_params(p)?;
                Ok(Box::new(Self::new(mode == SeaMode::Fraction, value)?))
            },
        }
    }
}

impl Step for SeaLevel {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        terrain.sea_level = match (&ctx.frame, self.mode) {
            (Frame::World(w), SeaMode::Fraction) => {
                let [lo, hi] = w.height_range;
                (lo + self.value * (hi - lo)) as f32
            }
            _ => self.level(&terrain.height),
        };
        Ok(())
    }

    fn reach(&self, _world: &WorldFrame) -> Reach {
        Reach::Cells(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::ParamValue;
    use crate::step::params::assert_ranges_enforced;

    /// The simple shaping steps refuse exactly what their specs refuse, plus their cross-field
    /// rules (min <= max, a fraction in [0, 1]).
    #[test]
    fn basic_shaping_steps_enforce_exactly_their_spec_ranges() {
        let with = |specs, name: &str, v: f64| Params::defaults(specs).with(name, ParamValue::Number(v));
        let terrace = |name: &str, v: f64| Terrace::read_params(&with(Terrace::PARAMS, name, v)).map(drop);
        assert_eq!(assert_ranges_enforced(Terrace::PARAMS, &terrace), 2);
        let scale = |name: &str, v: f64| Scale::read_params(&with(Scale::PARAMS, name, v)).map(drop);
        assert_eq!(assert_ranges_enforced(Scale::PARAMS, &scale), 2);
        assert_eq!(Terrace::default(), Terrace::new(8, 0.8).unwrap());
        assert!(
            matches!(Normalize::new(2.0, 1.0), Err(Error::InvalidParameter { name, .. }) if name == "max")
        );
        assert!(matches!(Clamp::new(0.0, 2.0e9), Err(Error::InvalidParameter { name, .. }) if name == "max"));
        assert!(SeaLevel::new(true, 1.5).is_err() && SeaLevel::new(false, 1.5).is_ok());
        assert_eq!(SeaLevel::default().mode, SeaMode::Fraction);
    }
}
