//! Triangular midpoint displacement (seed 001 §1.1.1, "base triangulaire"): the square form
//! (two triangles rasterised on the grid) and the seed's own triangle form (`shape =
//! "triangle"`: one triangle stored as the triangular array of its Fig. 5).

use terrasynth_noise::rng::{SplitMix64, derive_seed};

use super::common::{crop_square, pow2_exponent, symmetric};
use super::diamond_square::DiamondSquare;
use super::{Generator, GeneratorStep};
use crate::step::Params;
use crate::step::params::{Choice, choice_enum, step_params};
use crate::step::{
    Category, DefaultValue, ParamKind, Reach, Step, StepContext, StepInfo, Terrain, WorldFrame,
};
use crate::{Heightmap, Progress, Result};

choice_enum! {
    /// What the `triangular` step subdivides (its `shape` key).
    pub enum TriangleShape {
        /// The map's `(2^n + 1)²` square cut into two triangles (the default).
        Square = "square",
        /// The seed's single triangle, stored as its triangular array (seed 001 Fig. 5).
        Triangle = "triangle",
    }
}

step_params! {
/// Triangle-based midpoint displacement (seed 001 §1.1.1): each triangle is split into 4 by
/// its edge midpoints, and a midpoint gets the mean of the triangle's 3 vertices plus
/// `disp · u` (`u` uniform in [−1, 1)); `disp` starts at `roughness` and is multiplied by
/// `2^(−smoothness)` per level.
///
/// Rasterisation: the map's `(2^n + 1)²` working square is cut into two right triangles along
/// its "\" diagonal. Splitting such a triangle at its edge midpoints gives four triangles that
/// again are halves of squares cut the same way, so after `n` levels every grid node is a
/// triangle vertex and the triangle mesh *is* the grid: no resampling is needed. Levels run
/// iteratively (each node is written once; seed 001 "Implémentation"). A midpoint on an edge
/// shared by two triangles takes the mean over both triangles, `(2a + 2b + c + d) / 6` (a, b
/// the edge's ends, c, d the opposite vertices); a border edge uses its one triangle,
/// `(a + b + c) / 3`. Levels past `detail` (when `detail > 0`) get no offset and take the
/// mean of the edge's two ends, which is exact linear interpolation over each coarser
/// triangle. Other map sizes are the top-left window of the square. (The seed stores the
/// single triangle as rows of length `i + 1`; the two-triangle square covers rectangles.)
/// Because every triangle has the same orientation, fine detail has a slight grain along the
/// "\\" diagonal (visible in a hillshade), the usual price of fixed-orientation triangle
/// subdivision.
///
/// Its parameters are `diamond-square`'s (same keys, ranges, defaults and docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Triangular {
    /// Initial displacement factor, in height units (default 1).
    roughness: f64 = shared(DiamondSquare::PARAMS, "roughness"),
    /// `H` in `2^(−H)` per level (default 1).
    smoothness: f64 = shared(DiamondSquare::PARAMS, "smoothness"),
    /// Number of displaced levels; 0 = all (default 0).
    detail: u32 = shared(DiamondSquare::PARAMS, "detail"),
    /// `square` (default) or `triangle` (see [`TriangleShape`] and [`Triangular::triangle_array`]).
    shape: TriangleShape = ParamSpec {
        name: "shape",
        label: "Shape",
        kind: ParamKind::Choice(TriangleShape::NAMES),
        default: DefaultValue::Text("square"),
        unit: "",
        doc: "square: the map's square cut into two triangles; triangle: the seed's one triangle \
              (2^n + 1 rows, row i of i + 1 points, seed 001 Fig. 5) in the lower-left half of the \
              map (cells x <= y); the other half mirrors it across the diagonal and is masked in \
              the triangle outputs (triangle.png transparent there, triangle.glb without it).",
    },
}
}

/// Which cells of a map lie in the triangle of a `triangular` step with `shape = "triangle"`:
/// cell `(x, y)` is inside when `x ≤ y` (row `y` of the triangular array holds points
/// `0..=y`). Stored in [`Terrain::layers`] by that step and removed by any later generator;
/// the export writes `triangle.png` (transparent outside) and `triangle.glb` (the triangle
/// only) when a terrain carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriangleMask;

impl TriangleMask {
    /// Whether cell `(x, y)` is inside the triangle.
    #[inline]
    pub fn inside(x: usize, y: usize) -> bool {
        x <= y
    }
}

/// The seed's triangular array (seed 001 §1.1.1 "Représentation", Fig. 5): `2^n + 1` rows,
/// row `i` (`0 ≤ i ≤ 2^n`) holding `i + 1` heights. Point `(i, j)` (`j ≤ i`) sits at row `i`,
/// column `j`; the triangle's corners are `(0, 0)`, `(2^n, 0)` and `(2^n, 2^n)`.
#[derive(Clone, Debug, PartialEq)]
pub struct TriangleArray {
    levels: u32,
    values: Vec<f64>,
}

impl TriangleArray {
    fn new(levels: u32) -> Self {
        let rows = (1usize << levels) + 1;
        Self { levels, values: vec![f64::NAN; rows * (rows + 1) / 2] }
    }

    #[inline]
    fn index(i: usize, j: usize) -> usize {
        debug_assert!(j <= i);
        i * (i + 1) / 2 + j
    }

    /// `n` (the array has `2^n + 1` rows).
    pub fn levels(&self) -> u32 {
        self.levels
    }

    /// Number of rows, `2^n + 1`.
    pub fn rows(&self) -> usize {
        (1usize << self.levels) + 1
    }

    /// Row `i`: `i + 1` heights.
    pub fn row(&self, i: usize) -> &[f64] {
        let start = Self::index(i, 0);
        &self.values[start..start + i + 1]
    }

    /// The height at point `(i, j)`, `j ≤ i`.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.values[Self::index(i, j)]
    }

    /// Sets the height at point `(i, j)`, `j ≤ i`.
    pub(crate) fn set(&mut self, i: usize, j: usize, v: f64) {
        self.values[Self::index(i, j)] = v;
    }

    /// The `width × height` map of the array (point `(i, j)` at cell `(x, y) = (j, i)`, cells
    /// with `x > y` mirroring `(y, x)`), cell size 1; the top-left window when the map is
    /// smaller than the array.
    pub fn to_map(&self, width: usize, height: usize) -> Result<Heightmap> {
        Heightmap::from_fn(width, height, 1.0, |x, y| {
            let (i, j) = if x <= y { (y, x) } else { (x, y) };
            self.get(i, j) as f32
        })
    }
}

impl Triangular {
    /// A checked generator (same ranges as [`DiamondSquare::new`]), square shape.
    pub fn new(roughness: f64, smoothness: f64, detail: u32) -> Result<Self> {
        let s = Self { roughness, smoothness, detail, shape: TriangleShape::Square };
        s.check_ranges()?;
        Ok(s)
    }

    /// The same generator with shape `shape`.
    pub fn with_shape(mut self, shape: TriangleShape) -> Self {
        self.shape = shape;
        self
    }

    /// Its shape.
    pub fn shape(&self) -> TriangleShape {
        self.shape
    }

    /// The seed's triangle (seed 001 §1.1.1, Fig. 3 and Fig. 5), `levels` = n (`2^n + 1` rows).
    ///
    /// The three corners get `roughness · u` (`u` uniform in [−1, 1), from stream
    /// `derive_seed(seed, 0)`, in the order `(0, 0)`, `(2^n, 0)`, `(2^n, 2^n)`). Then, iteratively
    /// (seed "Implémentation": each level in turn, each point written once), each level of
    /// leg `s` visits its triangles row by row — for each `i = 0, s, 2s, …` and `j = 0, s, …,
    /// i` the upward triangle `(i, j), (i+s, j), (i+s, j+s)`, then, when `j + s ≤ i`, the
    /// downward one `(i, j), (i, j+s), (i+s, j+s)` — and each triangle gives each of its edge
    /// midpoints not yet computed the seed's value
    ///
    /// `h(p) = (h(p1) + h(p2) + h(p3)) / 3 + random() × disp`,
    ///
    /// the mean of **that triangle's** three vertices plus `disp · u` (`u` uniform in [−1, 1),
    /// one draw per midpoint in visit order from stream `derive_seed(seed, 1)`; edges in the
    /// order (v1, v2), (v2, v3), (v3, v1) of the vertices above). An edge shared by two
    /// triangles is thus computed once, by the first of them in the visit order, from its own
    /// vertices: this is the seed's shared-edge rule ("on traite chaque point l'un après
    /// l'autre, une et une seule fois … le problème de sensibilité contextuelle y est donc
    /// réglé par construction"). `disp` starts at `roughness` and is multiplied by
    /// `2^(−smoothness)` after each level (seed "Principe fractal"). Levels past `detail`
    /// (when `detail > 0`) take the mean of the edge's two ends, no offset.
    pub fn triangle_array(&self, levels: u32, seed: u64) -> TriangleArray {
        self.triangle_array_with(levels, seed, &mut |_, _, _| {})
    }

    /// [`Triangular::triangle_array`] with a hook run after each level: `after_level(level, s,
    /// array)`, `s` the leg of the triangles that level split (its new points are at `s/2`
    /// steps). The hook may change points (squig-curve rivers lower their river points,
    /// `hydro::SquigRivers`); the next level reads the changed values.
    pub(crate) fn triangle_array_with(
        &self,
        levels: u32,
        seed: u64,
        after_level: &mut dyn FnMut(u32, usize, &mut TriangleArray),
    ) -> TriangleArray {
        let mut t = TriangleArray::new(levels);
        let last = 1usize << levels;
        let mut rng = SplitMix64::new(derive_seed(seed, 0));
        for (i, j) in [(0, 0), (last, 0), (last, last)] {
            t.values[TriangleArray::index(i, j)] = self.roughness * symmetric(&mut rng);
        }
        let mut rng = SplitMix64::new(derive_seed(seed, 1));
        let decay = terrasynth_noise::detmath::exp2(-self.smoothness);
        let mut disp = self.roughness;
        let (mut s, mut level) = (last, 0u32);
        while s > 1 {
            let noisy = self.detail == 0 || level < self.detail;
            let mut triangle = |v: [(usize, usize); 3]| {
                let at = |t: &TriangleArray, p: (usize, usize)| t.get(p.0, p.1);
                let mean = (at(&t, v[0]) + at(&t, v[1]) + at(&t, v[2])) / 3.0;
                for k in 0..3 {
                    let (a, b) = (v[k], v[(k + 1) % 3]);
                    let m = TriangleArray::index((a.0 + b.0) / 2, (a.1 + b.1) / 2);
                    if t.values[m].is_nan() {
                        let v = if noisy {
                            mean + disp * symmetric(&mut rng)
                        } else {
                            (at(&t, a) + at(&t, b)) * 0.5
                        };
                        t.values[m] = v;
                    }
                }
            };
            for i in (0..last).step_by(s) {
                for j in (0..=i).step_by(s) {
                    triangle([(i, j), (i + s, j), (i + s, j + s)]);
                    if j + s <= i {
                        triangle([(i, j), (i, j + s), (i + s, j + s)]);
                    }
                }
            }
            after_level(level, s, &mut t);
            disp *= decay;
            s /= 2;
            level += 1;
        }
        t
    }

    /// The triangle form as a `width × height` map: the triangular array of the smallest
    /// `2^n + 1` covering the map, point `(i, j)` at cell `(x, y) = (j, i)` (the lower-left
    /// half, [`TriangleMask`]); a cell with `x > y` mirrors `(y, x)` across the diagonal, so
    /// the map stays continuous for later steps. Other sizes are the top-left window.
    fn generate_triangle(&self, width: usize, height: usize, seed: u64) -> Result<Heightmap> {
        crate::grid::check_size::<f64>(width, height)?;
        let levels = pow2_exponent(width, height);
        self.triangle_array(levels, seed).to_map(width, height)
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        Self::read_params(p)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "triangular",
            category: Category::Generate,
            doc: "Triangular midpoint displacement: triangles split into 4 at their edge \
                  midpoints, each midpoint the mean of the triangle's vertices plus noise; \
                  rasterised on the grid's triangle mesh.",
            source: "seed 001 §1.1.1 (base triangulaire)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(TriangularStep(GeneratorStep(Self::from_params(p)?)))),
        }
    }
}

/// The `triangular` step: the generator, plus the [`TriangleMask`] layer for the triangle form.
#[derive(Clone, Debug)]
struct TriangularStep(GeneratorStep<Triangular>);

impl Step for TriangularStep {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        self.0.run(terrain, ctx)?;
        if self.0.0.shape == TriangleShape::Triangle {
            terrain.layers.insert(TriangleMask);
        }
        Ok(())
    }

    fn reach(&self, world: &WorldFrame) -> Reach {
        self.0.reach(world)
    }
}

impl Generator for Triangular {
    fn generate(&self, width: usize, height: usize, seed: u64, _progress: &Progress) -> Result<Heightmap> {
        if self.shape == TriangleShape::Triangle {
            return self.generate_triangle(width, height, seed);
        }
        crate::grid::check_size::<f64>(width, height)?;
        let side = (1usize << pow2_exponent(width, height)) + 1;
        let last = side - 1;
        let mut buf = vec![0.0f64; side * side];
        let mut rng = SplitMix64::new(derive_seed(seed, 0));
        for (x, y) in [(0, 0), (last, 0), (0, last), (last, last)] {
            buf[y * side + x] = self.roughness * symmetric(&mut rng);
        }
        let mut rng = SplitMix64::new(derive_seed(seed, 1));
        let decay = terrasynth_noise::detmath::exp2(-self.smoothness);
        let mut disp = self.roughness;
        let mut s = last;
        let mut level = 0u32;
        while s > 1 {
            let h = s / 2;
            let noisy = self.detail == 0 || level < self.detail;
            for y in (0..side).step_by(h) {
                for x in (0..side).step_by(h) {
                    let (odd_x, odd_y) = ((x / h) % 2 == 1, (y / h) % 2 == 1);
                    if !odd_x && !odd_y {
                        continue;
                    }
                    let at = |x: usize, y: usize| buf[y * side + x];
                    // The edge's two ends and the opposite vertices of the triangles sharing it.
                    let (a, b, opposite): (f64, f64, [Option<f64>; 2]) = match (odd_x, odd_y) {
                        // Diagonal of square (x-h, y-h): both its triangles.
                        (true, true) => (
                            at(x - h, y - h),
                            at(x + h, y + h),
                            [Some(at(x + h, y - h)), Some(at(x - h, y + h))],
                        ),
                        // Horizontal edge: lower triangle of the square below, upper of the square above.
                        (true, false) => (
                            at(x - h, y),
                            at(x + h, y),
                            [(y + s <= last).then(|| at(x + h, y + s)), (y >= s).then(|| at(x - h, y - s))],
                        ),
                        // Vertical edge: upper triangle of the square right, lower of the square left.
                        _ => (
                            at(x, y - h),
                            at(x, y + h),
                            [(x + s <= last).then(|| at(x + s, y + h)), (x >= s).then(|| at(x - s, y - h))],
                        ),
                    };
                    let v = if noisy {
                        let (sum, count) =
                            opposite.iter().flatten().fold((0.0, 0.0), |(s, n), &c| (s + a + b + c, n + 3.0));
                        sum / count + disp * symmetric(&mut rng)
                    } else {
                        (a + b) * 0.5
                    };
                    buf[y * side + x] = v;
                }
            }
            disp *= decay;
            s = h;
            level += 1;
        }
        crop_square(&buf, side, width, height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::params::assert_ranges_enforced;

    /// `triangular` declares `diamond-square`'s parameters (same specs, same order; not the
    /// world-only `feature-size-m`, triangular has no world form), reading a recipe enforces exactly
    /// their ranges, and its defaults are diamond-square's.
    #[test]
    fn shares_diamond_square_parameters() {
        assert_eq!(&Triangular::PARAMS[..3], &DiamondSquare::PARAMS[..3]);
        assert_eq!(Triangular::PARAMS[3].name, "shape");
        assert_eq!(DiamondSquare::PARAMS[3].name, "feature-size-m");
        let d = Triangular::default();
        let build = |name: &str, v: f64| {
            let p = Params::defaults(Triangular::PARAMS).with(name, crate::step::ParamValue::Number(v));
            Triangular::from_params(&p).map(drop)
        };
        assert_eq!(assert_ranges_enforced(Triangular::PARAMS, &build), 3);
        let ds = DiamondSquare::default();
        assert_eq!((d.roughness, d.smoothness, d.detail), (ds.roughness, ds.smoothness, ds.detail));
    }
}

#[cfg(test)]
mod triangle_tests {
    use super::*;

    /// n = 2: 5 rows of lengths 1..5, every point written, and every value the seed's formula
    /// replayed by hand on the same two SplitMix64 streams: corners `u`, then level 0 (disp 1,
    /// the one triangle) and level 1 (disp 2^−1) visiting up(0,0), up(2,0), down(2,0),
    /// up(2,2). (3,2) is the shared edge of down(2,0) and up(2,2): down(2,0) comes first, so it
    /// is the mean of (2,0), (2,2), (4,2) plus noise — not an average over both triangles.
    #[test]
    fn triangle_array_matches_the_hand_computed_n2() {
        let g = Triangular::new(1.0, 1.0, 0).unwrap().with_shape(TriangleShape::Triangle);
        let t = g.triangle_array(2, 7);
        assert_eq!(t.rows(), 5);
        for i in 0..5 {
            assert_eq!(t.row(i).len(), i + 1);
            assert!(t.row(i).iter().all(|v| v.is_finite()), "row {i}");
        }
        let mut c = SplitMix64::new(derive_seed(7, 0));
        let (a, b, cc) = (symmetric(&mut c), symmetric(&mut c), symmetric(&mut c));
        let mut r = SplitMix64::new(derive_seed(7, 1));
        let mut u = || symmetric(&mut r);
        let m0 = (a + b + cc) / 3.0;
        let (p20, p42, p22) = (m0 + u(), m0 + u(), m0 + u());
        let m1 = (a + p20 + p22) / 3.0; // up (0,0): (0,0), (2,0), (2,2)
        let (p10, p21, p11) = (m1 + 0.5 * u(), m1 + 0.5 * u(), m1 + 0.5 * u());
        let m2 = (p20 + b + p42) / 3.0; // up (2,0): (2,0), (4,0), (4,2)
        let (p30, p41, p31) = (m2 + 0.5 * u(), m2 + 0.5 * u(), m2 + 0.5 * u());
        let m3 = (p20 + p22 + p42) / 3.0; // down (2,0): (2,0), (2,2), (4,2)
        let p32 = m3 + 0.5 * u();
        let m4 = (p22 + p42 + cc) / 3.0; // up (2,2): (2,2), (4,2), (4,4)
        let (p43, p33) = (m4 + 0.5 * u(), m4 + 0.5 * u());
        let want: [&[f64]; 5] =
            [&[a], &[p10, p11], &[p20, p21, p22], &[p30, p31, p32, p33], &[b, p41, p42, p43, cc]];
        for (i, row) in want.iter().enumerate() {
            assert_eq!(t.row(i), *row, "row {i}");
        }
    }

    /// The triangle step writes the array into the lower-left half (x ≤ y), mirrors it into
    /// the other half, marks the terrain with [`TriangleMask`], and a later generator drops
    /// the mark. The square form (the default) leaves no mark.
    #[test]
    fn triangle_step_fills_the_lower_left_half_and_marks_the_terrain() {
        use crate::step::ParamValue;
        let step = |shape: &str| {
            let p = Params::defaults(Triangular::PARAMS).with("shape", ParamValue::Text(shape.into()));
            (Triangular::info().build)(&p).unwrap()
        };
        let ctx = StepContext::new(11, Progress::new());
        let mut t = Terrain::new(9, 9, 1.0).unwrap();
        step("triangle").run(&mut t, &ctx).unwrap();
        assert_eq!(t.layers.get::<TriangleMask>(), Some(&TriangleMask));
        let a = Triangular::default().with_shape(TriangleShape::Triangle).triangle_array(3, 11);
        for y in 0..9 {
            for x in 0..9 {
                let (i, j) = if x <= y { (y, x) } else { (x, y) };
                assert_eq!(t.height[(x, y)], a.get(i, j) as f32, "({x}, {y})");
            }
        }
        let ds = super::super::GeneratorStep(DiamondSquare::default());
        ds.run(&mut t, &ctx).unwrap();
        assert!(t.layers.get::<TriangleMask>().is_none());
        step("square").run(&mut t, &ctx).unwrap();
        assert!(t.layers.get::<TriangleMask>().is_none());
    }
}
