//! Step masks: any shaping or erosion step of a recipe limited to part of the map, as World
//! Machine's and Gaea's masked nodes are (issue 10; research/terrain-tools.md on masks as
//! first-class inputs). A step entry's optional `[steps.mask]` table ([`StepMask`]) gives a
//! weight `w ∈ [0, 1]` per cell, computed on the step's **input** terrain; the step runs on the
//! whole map and the result is
//!
//! ```text
//! h' = h_in + w · (h_out − h_in)        (w = 1: exactly h_out; w = 0: exactly h_in)
//! ```
//!
//! (the water layer of a water-carrying step the same way, a missing input layer counting 0).
//! The weight is the product of every part the table gives:
//! - `height = [lo, hi]`, metres (a map's heights times `exports.height-scale`; a world's
//!   heights are metres already): 1 inside, falling to 0 over `soft-edge` metres outside;
//! - `slope = [lo, hi]`, degrees: the slope `atan |∇h|` from central differences (one-sided at
//!   the map edge), heights and cell size in metres; the edge falls over `soft-edge` degrees;
//! - `painted = "name"`: the recipe's painted mask `[masks.name]` ([`PaintedMask`], painted in
//!   the editor, stored map-relative like brush strokes);
//! - `image = "path"`: a grayscale heightmap file read as [0, 1] (PNG 8/16-bit and the other
//!   formats of the `import` step), resampled bilinearly corner onto corner to the map;
//! - `invert = true` uses `1 − w`.
//!
//! The soft edge is `smoothstep(1 − d / soft-edge)` of the distance `d` outside the range
//! (`smoothstep(t) = t²(3 − 2t)`, the brush fall-off of seed 004 §10), so it is monotone and
//! leaves the inside untouched. In a world window (docs/WORLDS.md) height and slope masks are
//! per cell; the slope stencil reads one cell further, so a masked step's reach grows by one
//! cell. Painted and image masks belong to one map, not an endless world: world recipes refuse
//! them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use terrasynth_noise::detmath::smoothstep;

use super::model::{Recipe, StepEntry};
use super::project::map_scale;
use crate::io::{ReadOptions, read_heightmap};
use crate::shape::brush::{Brush, BrushMode, MAX_RADIUS};
use crate::step::{
    Category, DefaultValue, Frame, IterationHook, ParamKind, ParamSpec, ParamValue, Reach, Step, StepContext,
    Terrain, WorldFrame,
};
use crate::{Error, Grid, Problem, Result};

/// Largest magnitude of a height-range bound, metres (as a world's `height-range`).
pub const MAX_MASK_HEIGHT_M: f64 = 1.0e6;

/// Largest soft edge, metres or degrees.
pub const MAX_SOFT_EDGE: f64 = 1.0e6;

/// The keys of a `[steps.mask]` table as [`ParamSpec`]s: the one description of their ranges
/// and units, used by [`StepMask::problems`], the editor's mask panel and docs/RECIPES.md.
pub const MASK_FIELDS: &[ParamSpec] = &[
    ParamSpec {
        name: "height",
        label: "Height range",
        kind: ParamKind::List { min: -MAX_MASK_HEIGHT_M, max: MAX_MASK_HEIGHT_M, min_len: 2, max_len: 2 },
        default: DefaultValue::Absent,
        unit: "m",
        doc: "Height range [lowest, highest] where the step applies fully (metres: heights times \
              exports.height-scale on a map, world metres in a world).",
    },
    ParamSpec {
        name: "slope",
        label: "Slope range",
        kind: ParamKind::List { min: 0.0, max: 90.0, min_len: 2, max_len: 2 },
        default: DefaultValue::Absent,
        unit: "degrees",
        doc: "Slope range [lowest, highest] where the step applies fully (central differences; \
              in a world the step reads one cell further).",
    },
    ParamSpec {
        name: "painted",
        label: "Painted mask",
        kind: ParamKind::Text,
        default: DefaultValue::Absent,
        unit: "",
        doc: "Name of a painted mask of the recipe ([masks.NAME], painted in the editor). Maps only.",
    },
    ParamSpec {
        name: "image",
        label: "Mask image",
        kind: ParamKind::Text,
        default: DefaultValue::Absent,
        unit: "",
        doc: "Path of a grayscale image read as [0, 1] (any format the import step reads), \
              resampled to the map. Maps only.",
    },
    ParamSpec {
        name: "soft-edge",
        label: "Soft edge",
        kind: ParamKind::Float { min: 0.0, max: MAX_SOFT_EDGE },
        default: DefaultValue::Number(0.0),
        unit: "m or degrees",
        doc: "Width of the fade outside the height range (metres) and the slope range (degrees); \
              0 gives a hard edge.",
    },
    ParamSpec {
        name: "invert",
        label: "Invert",
        kind: ParamKind::Bool,
        default: DefaultValue::Bool(false),
        unit: "",
        doc: "Apply the step where the mask is 0 instead (w becomes 1 − w).",
    },
];

/// The `[steps.mask]` table of a step entry (module docs). Every part given multiplies in.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct StepMask {
    /// Height range `[lo, hi]` in metres where the step applies fully.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<[f64; 2]>,
    /// Slope range `[lo, hi]` in degrees where the step applies fully.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope: Option<[f64; 2]>,
    /// Name of a painted mask in the recipe's `masks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub painted: Option<String>,
    /// Path of a grayscale image mask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Fade width outside the ranges: metres for `height`, degrees for `slope` (0: hard).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub soft_edge: f64,
    /// Use `1 − w`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub invert: bool,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
fn is_false(b: &bool) -> bool {
    !*b
}

/// The spec of mask key `name` (a bug if absent).
fn spec(name: &str) -> &'static ParamSpec {
    MASK_FIELDS.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("bug: no mask key `{name}`"))
}

impl StepMask {
    /// Whether the slope part is used (the step then reads one cell further in a world).
    pub fn uses_slope(&self) -> bool {
        self.slope.is_some()
    }

    /// Every problem of the table, keyed `mask.<key>` with the allowed range: values outside
    /// [`MASK_FIELDS`], `lo > hi`, no part given, a painted name the recipe lacks, painted or
    /// image masks in a world recipe. `masks` are the recipe's painted masks.
    pub fn problems(&self, masks: &BTreeMap<String, PaintedMask>, in_world: bool) -> Vec<Problem> {
        let mut out = Vec::new();
        let key = |k: &str| format!("mask.{k}");
        for (name, range) in [("height", self.height), ("slope", self.slope)] {
            let Some([lo, hi]) = range else { continue };
            let s = spec(name);
            let ok = s.check(&ParamValue::List(vec![lo, hi])).is_ok() && lo <= hi;
            if !ok {
                out.push(Problem::value(
                    &key(name),
                    format!("[{lo}, {hi}]"),
                    format!("{}, lowest <= highest ({})", s.allowed(), s.unit),
                ));
            }
        }
        let edge = spec("soft-edge");
        if edge.check(&ParamValue::Number(self.soft_edge)).is_err() {
            out.push(Problem::value(
                &key("soft-edge"),
                self.soft_edge,
                format!("{} ({})", edge.allowed(), edge.unit),
            ));
        }
        if self.height.is_none() && self.slope.is_none() && self.painted.is_none() && self.image.is_none() {
            out.push(Problem {
                field: Some("mask".into()),
                ..Problem::message("the `mask` table gives no mask")
            });
            out.last_mut().unwrap().allowed =
                Some("at least one of `height`, `slope`, `painted`, `image`".into());
        }
        if let Some(name) = &self.painted {
            if in_world {
                out.push(refused_in_world("painted"));
            } else if let Some(painted) = masks.get(name) {
                out.extend(painted.problems(name));
            } else {
                let known: Vec<&str> = masks.keys().map(String::as_str).collect();
                let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                out.push(Problem::value(
                    &key("painted"),
                    format!("\"{name}\""),
                    format!("the name of one of the recipe's painted masks ([masks.NAME]; it has: {known})"),
                ));
            }
        }
        if let Some(path) = &self.image {
            if in_world {
                out.push(refused_in_world("image"));
            } else if path.trim().is_empty() {
                out.push(Problem::value(&key("image"), "\"\"", "the path of a grayscale image file"));
            }
        }
        out
    }

    /// The weight `w ∈ [0, 1]` of every cell of `terrain` (module docs), row-major.
    /// `height_scale` turns a map's heights into metres; in a world (`frame` a window)
    /// heights are metres already. `masks` are the recipe's painted masks.
    pub fn weights(
        &self,
        terrain: &Terrain,
        frame: &Frame,
        height_scale: f64,
        masks: &BTreeMap<String, PaintedMask>,
    ) -> Result<Vec<f32>> {
        let map = &terrain.height;
        let (w, h) = (map.width(), map.height());
        let to_m = if matches!(frame, Frame::World(_)) { 1.0 } else { height_scale };
        let mut out = vec![1.0f64; w * h];
        if let Some(range) = self.height {
            for (o, &v) in out.iter_mut().zip(map.as_slice()) {
                *o *= range_weight(v as f64 * to_m, range, self.soft_edge);
            }
        }
        if let Some(range) = self.slope {
            let degrees = slope_degrees(map, to_m);
            for (o, s) in out.iter_mut().zip(degrees) {
                *o *= range_weight(s, range, self.soft_edge);
            }
        }
        if let Some(name) = &self.painted {
            let painted = masks.get(name).ok_or_else(|| {
                Error::recipe(format!("the recipe has no painted mask `{name}` ([masks.{name}])"))
            })?;
            for (o, &p) in out.iter_mut().zip(painted.rasterize(w, h)?.as_slice()) {
                *o *= p as f64;
            }
        }
        if let Some(path) = &self.image {
            let mut img = read_heightmap(path, &ReadOptions::default())?;
            if (img.width(), img.height()) != (w, h) {
                img = img.resample(w, h)?;
            }
            for (o, &p) in out.iter_mut().zip(img.as_slice()) {
                *o *= if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) as f64 };
            }
        }
        Ok(out.into_iter().map(|v| if self.invert { 1.0 - v } else { v } as f32).collect())
    }
}

fn refused_in_world(key: &str) -> Problem {
    Problem::value(
        &format!("mask.{key}"),
        "(given)",
        "height and slope masks only in a world recipe: a painted or image mask covers one map, \
         not an endless world (docs/WORLDS.md)",
    )
}

/// 1 on `[lo, hi]`, `smoothstep(1 − d / edge)` at distance `d` outside it, 0 beyond the edge
/// (and for NaN).
pub fn range_weight(v: f64, [lo, hi]: [f64; 2], edge: f64) -> f64 {
    if v >= lo && v <= hi {
        return 1.0;
    }
    let d = if v < lo { lo - v } else { v - hi };
    if !(edge > 0.0 && d < edge) { 0.0 } else { smoothstep(1.0 - d / edge) }
}

/// Slope in degrees of every cell: `atan |∇h|` with central differences over heights in
/// metres (`h · to_m`) and the map's cell size; one-sided at the edges.
pub fn slope_degrees(map: &Grid<f32>, to_m: f64) -> Vec<f64> {
    let (w, h) = (map.width(), map.height());
    let cell = map.cell_size();
    let at = |x: usize, y: usize| map[(x, y)] as f64 * to_m;
    let mut out = Vec::with_capacity(w * h);
    for y in 0..h {
        let (y0, y1) = (y.saturating_sub(1), (y + 1).min(h - 1));
        for x in 0..w {
            let (x0, x1) = (x.saturating_sub(1), (x + 1).min(w - 1));
            let gx = if x1 > x0 { (at(x1, y) - at(x0, y)) / ((x1 - x0) as f64 * cell) } else { 0.0 };
            let gy = if y1 > y0 { (at(x, y1) - at(x, y0)) / ((y1 - y0) as f64 * cell) } else { 0.0 };
            let g = (gx * gx + gy * gy).sqrt();
            // detmath: the same bits on every platform (world windows are compared across them).
            out.push(terrasynth_noise::detmath::atan(g).to_degrees());
        }
    }
    out
}

/// `h_in + w · (h_out − h_in)` cell by cell, exact at `w = 0` and `w = 1`.
fn blend(input: &[f32], output: &mut [f32], weights: &[f32]) {
    for ((o, &i), &w) in output.iter_mut().zip(input).zip(weights) {
        *o = if w <= 0.0 {
            i
        } else if w >= 1.0 {
            *o
        } else {
            (i as f64 + w as f64 * (*o as f64 - i as f64)) as f32
        };
    }
}

/// A mask painted in the editor: strokes stored like brush strokes (cell coordinates of the map
/// they were made on, scaled corner onto corner to any other map size, see
/// [`super::project`]), rasterised to `[0, 1]` in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaintedMask {
    /// The strokes, in the order they were painted.
    #[serde(default)]
    pub strokes: Vec<MaskStroke>,
}

/// One stroke of a painted mask: a dab at each centre. Painting moves a cell toward 1 by
/// `strength · f(d)`, erasing toward 0 (`f` the brush fall-off `smoothstep(1 − d / radius)`),
/// so values stay in [0, 1] and soft-edged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaskStroke {
    /// Erase (toward 0) instead of paint (toward 1).
    #[serde(default, skip_serializing_if = "is_false")]
    pub erase: bool,
    /// Brush radius, cells of `map`.
    pub radius: f64,
    /// Fraction in [0, 1] per dab.
    pub strength: f32,
    /// Dab centres `[x, y]` in cells of `map`.
    pub dabs: Vec<[f64; 2]>,
    /// Size `[width, height]` of the map the stroke was painted on.
    pub map: [usize; 2],
}

impl MaskStroke {
    /// The brush of this stroke at `at` (map cells), for its bounds and fall-off.
    fn brush(&self, at: [f64; 2], radius: f64) -> Brush {
        Brush { x: at[0], y: at[1], radius, strength: self.strength, mode: BrushMode::Raise }
    }

    /// Applies the stroke's dabs to `mask` (a `w × h` grid of [0, 1]), scaling positions and
    /// radius from the stroke's map as brush strokes are. Returns the touched rectangle
    /// `[x, y, w, h]` (empty when nothing was).
    pub fn apply(&self, mask: &mut Grid<f32>) -> Result<[usize; 4]> {
        let (w, h) = (mask.width(), mask.height());
        let scale = map_scale(Some(self.map), w, h);
        let radius = match scale {
            None => self.radius,
            Some((sx, sy)) => (self.radius * (sx * sy).sqrt()).clamp(f64::MIN_POSITIVE, MAX_RADIUS),
        };
        let mut touched: Option<[usize; 4]> = None;
        for &at in &self.dabs {
            let at = scale.map_or(at, |(sx, sy)| [at[0] * sx, at[1] * sy]);
            let b = self.brush(at, radius);
            b.validate()?;
            if !(0.0..=1.0).contains(&self.strength) {
                return Err(Error::param("strength", self.strength, "a number in [0, 1]"));
            }
            let r = b.bounds(w, h);
            let s = self.strength as f64;
            for y in r.y..r.y + r.h {
                for x in r.x..r.x + r.w {
                    let f = b.weight(x, y);
                    if f > 0.0 {
                        let v = &mut mask[(x, y)];
                        let goal = if self.erase { 0.0 } else { 1.0 };
                        *v = (*v as f64 + s * f * (goal - *v as f64)) as f32;
                    }
                }
            }
            if r.w > 0 && r.h > 0 {
                touched = Some(match touched {
                    None => [r.x, r.y, r.w, r.h],
                    Some([x, y, tw, th]) => {
                        let (x0, y0) = (x.min(r.x), y.min(r.y));
                        let (x1, y1) = ((x + tw).max(r.x + r.w), (y + th).max(r.y + r.h));
                        [x0, y0, x1 - x0, y1 - y0]
                    }
                });
            }
        }
        Ok(touched.unwrap_or([0, 0, 0, 0]))
    }
}

impl PaintedMask {
    /// Every bad stroke of the mask called `name`, keyed `masks.NAME.strokes[k].<field>`: a
    /// radius outside (0, [`MAX_RADIUS`]] cells, a strength outside [0, 1], a dab that is not
    /// finite, a map side below 2 cells.
    pub fn problems(&self, name: &str) -> Vec<Problem> {
        let mut out = Vec::new();
        for (k, s) in self.strokes.iter().enumerate() {
            let key = |f: &str| format!("masks.{name}.strokes[{k}].{f}");
            if !(s.radius.is_finite() && s.radius > 0.0 && s.radius <= MAX_RADIUS) {
                out.push(Problem::value(
                    &key("radius"),
                    s.radius,
                    format!("a number in (0, {MAX_RADIUS}] (cells)"),
                ));
            }
            if !(0.0..=1.0).contains(&s.strength) {
                out.push(Problem::value(&key("strength"), s.strength, "a number in [0, 1]"));
            }
            if let Some(d) = s.dabs.iter().find(|d| !(d[0].is_finite() && d[1].is_finite())) {
                out.push(Problem::value(&key("dabs"), format!("{d:?}"), "finite cell coordinates"));
            }
            if s.map[0] < 2 || s.map[1] < 2 {
                out.push(Problem::value(
                    &key("map"),
                    format!("{:?}", s.map),
                    "[width, height], each at least 2 cells",
                ));
            }
        }
        out
    }

    /// The mask on a `w × h` map: every stroke replayed in order on zeros.
    pub fn rasterize(&self, w: usize, h: usize) -> Result<Grid<f32>> {
        let mut mask = Grid::new(w, h, 1.0)?;
        for s in &self.strokes {
            s.apply(&mut mask)?;
        }
        Ok(mask)
    }
}

/// A step run under a mask (module docs): what [`wrap`] makes of a masked step entry.
#[derive(Debug)]
pub struct MaskedStep {
    inner: Box<dyn Step>,
    mask: StepMask,
    height_scale: f64,
    masks: BTreeMap<String, PaintedMask>,
}

impl MaskedStep {
    /// Runs `run` (the inner step) between the weights of the input and the blend.
    fn masked<T>(
        &self,
        terrain: &mut Terrain,
        ctx: &StepContext,
        run: impl FnOnce(&mut Terrain) -> Result<T>,
    ) -> Result<T> {
        let weights = self.mask.weights(terrain, &ctx.frame, self.height_scale, &self.masks)?;
        let height = terrain.height.clone();
        let water = terrain.water.clone();
        let out = run(terrain)?;
        if !terrain.height.same_size(&height) {
            return Err(Error::recipe("a masked step must keep the map size"));
        }
        blend(height.as_slice(), terrain.height.as_mut_slice(), &weights);
        if let Some(after) = terrain.water.as_mut() {
            let before = match water {
                Some(w) if w.same_size(after) => w.as_slice().to_vec(),
                _ => vec![0.0; after.len()],
            };
            blend(&before, after.as_mut_slice(), &weights);
        }
        Ok(out)
    }
}

impl Step for MaskedStep {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        self.masked(terrain, ctx, |t| self.inner.run(t, ctx))
    }

    fn run_iterations(
        &self,
        terrain: &mut Terrain,
        ctx: &StepContext,
        each: &mut IterationHook<'_>,
    ) -> Result<bool> {
        self.masked(terrain, ctx, |t| self.inner.run_iterations(t, ctx, each))
    }

    fn check_world(&self, world: &WorldFrame) -> Result<()> {
        self.inner.check_world(world)
    }

    /// The inner step's reach, one cell more with a slope mask (its stencil).
    fn reach(&self, world: &WorldFrame) -> Reach {
        match self.inner.reach(world) {
            Reach::Cells(n) => Reach::Cells(n.saturating_add(self.mask.uses_slope() as usize)),
            Reach::Global => Reach::Global,
        }
    }
}

/// Every problem of `entry`'s mask (none without one), as step-relative [`Problem`]s: the
/// table's own ([`StepMask::problems`]) and a mask on a step that is neither shaping nor
/// erosion.
pub fn problems(entry: &StepEntry, category: Category, recipe: &Recipe) -> Vec<Problem> {
    let Some(mask) = &entry.mask else { return Vec::new() };
    let mut out = mask.problems(&recipe.masks, recipe.is_world());
    if !matches!(category, Category::Shape | Category::Erode) {
        out.push(Problem {
            field: Some("mask".into()),
            allowed: Some("a mask on shaping and erosion steps only".into()),
            ..Problem::message(format!("`{}` cannot be masked", entry.kind))
        });
    }
    out
}

/// `step` under `entry`'s mask, or `step` itself when the entry has none.
pub fn wrap(step: Box<dyn Step>, entry: &StepEntry, recipe: &Recipe) -> Box<dyn Step> {
    match &entry.mask {
        None => step,
        Some(mask) => Box::new(MaskedStep {
            inner: step,
            mask: mask.clone(),
            height_scale: recipe.exports.height_scale,
            masks: match &mask.painted {
                Some(name) => recipe
                    .masks
                    .get_key_value(name)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .into_iter()
                    .collect(),
                None => BTreeMap::new(),
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_weight_is_one_inside_and_fades_monotonically() {
        let r = [100.0, 200.0];
        assert_eq!(range_weight(100.0, r, 0.0), 1.0);
        assert_eq!(range_weight(200.0, r, 10.0), 1.0);
        assert_eq!(range_weight(99.999, r, 0.0), 0.0);
        assert_eq!(range_weight(f64::NAN, r, 10.0), 0.0);
        // Half way through the edge: smoothstep(0.5) = 0.5.
        assert_eq!(range_weight(95.0, r, 10.0), 0.5);
        assert_eq!(range_weight(205.0, r, 10.0), 0.5);
        assert_eq!(range_weight(90.0, r, 10.0), 0.0);
        // Monotone across the whole edge, both sides.
        let below: Vec<f64> = (0..=100).map(|k| range_weight(90.0 + k as f64 * 0.1, r, 10.0)).collect();
        assert!(below.windows(2).all(|p| p[1] >= p[0]), "{below:?}");
        let above: Vec<f64> = (0..=100).map(|k| range_weight(200.0 + k as f64 * 0.1, r, 10.0)).collect();
        assert!(above.windows(2).all(|p| p[1] <= p[0]), "{above:?}");
    }

    #[test]
    fn slope_of_a_ramp_is_its_angle() {
        // 10 m cells, rising 10 m per cell in x: 45°; the edge differences are one-sided.
        let ramp = Grid::from_fn(5, 4, 10.0, |x, _| x as f32).unwrap();
        for s in slope_degrees(&ramp, 10.0) {
            assert!((s - 45.0).abs() < 1e-9, "{s}");
        }
    }

    #[test]
    fn painting_stays_in_unit_range_and_erasing_undoes_toward_zero() {
        let stroke =
            MaskStroke { erase: false, radius: 4.0, strength: 1.0, dabs: vec![[8.0, 8.0]], map: [17, 17] };
        let mut m = PaintedMask { strokes: vec![stroke.clone()] };
        let g = m.rasterize(17, 17).unwrap();
        assert_eq!(g[(8, 8)], 1.0);
        assert_eq!(g[(12, 8)], 0.0);
        assert!(g.as_slice().iter().all(|v| (0.0..=1.0).contains(v)));
        // On a map twice the size the dab lands on the same spot (cell 16 of 33).
        let big = m.rasterize(33, 33).unwrap();
        assert_eq!(big[(16, 16)], 1.0);
        // Erasing with the same dab moves each cell the fraction f(d) of the way back to 0: the
        // centre is clear, every cell f(d)·(1 − f(d)), at most 1/4.
        m.strokes.push(MaskStroke { erase: true, ..stroke });
        let erased = m.rasterize(17, 17).unwrap();
        assert_eq!(erased[(8, 8)], 0.0);
        for (e, p) in erased.as_slice().iter().zip(g.as_slice()) {
            assert!((*e - p * (1.0 - p)).abs() < 1e-6 && *e <= 0.25 + 1e-6, "{e} {p}");
        }
    }
}
