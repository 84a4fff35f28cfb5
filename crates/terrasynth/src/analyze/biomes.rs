//! Biomes from height, slope and moisture, and four-layer engine splat maps (seed 004 asks for
//! biomes; issue 4 §4).
//!
//! Steps:
//! 1. **Water mask**: sea (height below the sea level), lakes and river cells.
//! 2. **Distance to water** `d` (cells) by a two-pass 8-neighbour chamfer transform with weights
//!    1 and √2 (Borgefors 1986, "Distance transformations in digital images"); within 8 % of
//!    the exact Euclidean distance.
//! 3. **Moisture** `m = (1 − f)·exp(−d / L) + f·ln(1 + A) / ln(1 + A_max)` in [0, 1], where `A`
//!    is the D8 flow accumulation (cells), `L` = [`BiomeOptions::moisture_length`] and `f` =
//!    [`BiomeOptions::flow_weight`].
//! 4. **Classification**, a Whittaker-like diagram with relative elevation standing in for
//!    temperature (Whittaker 1975, *Communities and Ecosystems*; the usual game simplification,
//!    e.g. Patel 2010, "Polygonal map generation"). With `t = (h − sea) / (h_max − sea)`:
//!    sea → [`Biome::Ocean`]; lake or river → [`Biome::FreshWater`]; slope ≥ rock slope →
//!    [`Biome::Rock`]; `t ≥ snow_line` → [`Biome::Snow`]; `t ≥ tree_line` → [`Biome::Tundra`];
//!    `t < beach_height` → [`Biome::Beach`]; else by moisture: `m < 0.15` [`Biome::Desert`],
//!    `< 0.4` [`Biome::Grassland`], `< 0.75` [`Biome::Forest`], else [`Biome::Swamp`] when low
//!    (`t < 0.15`) and flat (slope < 3°), [`Biome::Rainforest`] otherwise.
//! 5. **Splat weights** (sand, grass, rock, snow), smooth versions of the same rules:
//!    `snow = smoothstep(snow_line − 0.08, snow_line + 0.04, t)`,
//!    `rock = smoothstep(rock_slope − 10°, rock_slope, slope)`,
//!    `sand = max(smoothstep(beach, 0, t), 1 − smoothstep(0.1, 0.2, m))` (under water: sand),
//!    grass takes what is left; then `rock` and `snow` are scaled so the total is 1 and the
//!    four are rounded to bytes summing to exactly 255 (largest remainder).
//!
//! Every function works per cell or per row and gives the same bits on any thread count.

use rayon::prelude::*;

use terrasynth_noise::detmath;

use crate::{Error, Heightmap, Result};

/// A biome class (the values are the indices written by [`Biome::index`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Biome {
    /// Below the sea level.
    Ocean,
    /// Lake or river.
    FreshWater,
    /// Sand just above the sea.
    Beach,
    /// Dry land (low moisture).
    Desert,
    /// Moderate moisture.
    Grassland,
    /// Moist land.
    Forest,
    /// Very moist, low and flat (wetland).
    Swamp,
    /// Very moist, not flat.
    Rainforest,
    /// Above the tree line.
    Tundra,
    /// Steep slopes.
    Rock,
    /// Above the snow line.
    Snow,
}

impl Biome {
    /// Every biome, in index order.
    pub const ALL: [Biome; 11] = [
        Biome::Ocean,
        Biome::FreshWater,
        Biome::Beach,
        Biome::Desert,
        Biome::Grassland,
        Biome::Forest,
        Biome::Swamp,
        Biome::Rainforest,
        Biome::Tundra,
        Biome::Rock,
        Biome::Snow,
    ];

    /// Position in [`Biome::ALL`].
    pub fn index(self) -> u8 {
        Biome::ALL.iter().position(|&b| b == self).unwrap_or(0) as u8
    }

    /// Lower-case name (`"fresh-water"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Biome::Ocean => "ocean",
            Biome::FreshWater => "fresh-water",
            Biome::Beach => "beach",
            Biome::Desert => "desert",
            Biome::Grassland => "grassland",
            Biome::Forest => "forest",
            Biome::Swamp => "swamp",
            Biome::Rainforest => "rainforest",
            Biome::Tundra => "tundra",
            Biome::Rock => "rock",
            Biome::Snow => "snow",
        }
    }

    /// Colour in `biomes.png` (sRGB).
    pub fn color(self) -> [u8; 3] {
        match self {
            Biome::Ocean => [38, 76, 140],
            Biome::FreshWater => [62, 128, 188],
            Biome::Beach => [226, 210, 160],
            Biome::Desert => [212, 184, 120],
            Biome::Grassland => [150, 186, 92],
            Biome::Forest => [56, 120, 60],
            Biome::Swamp => [78, 110, 84],
            Biome::Rainforest => [24, 92, 48],
            Biome::Tundra => [150, 150, 120],
            Biome::Rock => [120, 110, 100],
            Biome::Snow => [245, 245, 250],
        }
    }
}

/// Settings of [`classify`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BiomeOptions {
    /// Decay length `L` of the water term of moisture, in cells (> 0; default 0 = automatic,
    /// the longer map side / 24).
    pub moisture_length: f32,
    /// Weight `f` of the flow-accumulation term of moisture, in [0, 1] (default 0.35).
    pub flow_weight: f32,
    /// Beach band: relative elevation `t` below which land is beach, in [0, 1] (default 0.03).
    pub beach_height: f32,
    /// Relative elevation of the tree line (tundra above), in [0, 1] (default 0.6).
    pub tree_line: f32,
    /// Relative elevation of the snow line, in [0, 1] (default 0.8).
    pub snow_line: f32,
    /// Slope (degrees, from heights in metres and the cell size) from which ground is bare
    /// rock, in (0, 90] (default 35).
    pub rock_slope_deg: f32,
}

impl Default for BiomeOptions {
    fn default() -> Self {
        Self {
            moisture_length: 0.0,
            flow_weight: 0.35,
            beach_height: 0.03,
            tree_line: 0.6,
            snow_line: 0.8,
            rock_slope_deg: 35.0,
        }
    }
}

impl BiomeOptions {
    /// Rejects out-of-range or non-finite settings with [`Error::InvalidParameter`].
    pub fn validate(&self) -> Result<()> {
        let unit = |name: &str, v: f32| {
            if v.is_finite() && (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(Error::param(name, v, "a number in [0, 1]"))
            }
        };
        if !(self.moisture_length.is_finite() && self.moisture_length >= 0.0) {
            return Err(Error::param(
                "moisture-length",
                self.moisture_length,
                "a finite number >= 0 (cells)",
            ));
        }
        unit("flow-weight", self.flow_weight)?;
        unit("beach-height", self.beach_height)?;
        unit("tree-line", self.tree_line)?;
        unit("snow-line", self.snow_line)?;
        if !(self.rock_slope_deg.is_finite() && self.rock_slope_deg > 0.0 && self.rock_slope_deg <= 90.0) {
            return Err(Error::param("rock-slope", self.rock_slope_deg, "a number in (0, 90] (degrees)"));
        }
        Ok(())
    }
}

/// Chamfer distance (cells, weights 1 and √2) from every cell to the nearest `true` cell of
/// `mask` (W × H, row-major); `f32::INFINITY` everywhere when the mask is empty.
pub fn distance_to(mask: &[bool], width: usize, height: usize) -> Vec<f32> {
    let diag = std::f32::consts::SQRT_2;
    let mut d: Vec<f32> = mask.iter().map(|&m| if m { 0.0 } else { f32::INFINITY }).collect();
    if width == 0 {
        return d;
    }
    // Each pass takes, row by row, the minimum over the three neighbours of the row already
    // done (independent per cell, so without bounds tests inside the row), then scans the
    // row for its own neighbour. Minima and sums are exact per cell, so this is the classic
    // raster-order chamfer (Rosenfeld & Pfaltz 1966) bit for bit, only faster.
    let near = |row: &mut [f32], done: &[f32]| {
        let w = row.len();
        row[0] = row[0].min(done[0] + 1.0);
        for x in 1..w {
            row[x] = row[x].min(done[x] + 1.0).min(done[x - 1] + diag);
        }
        for x in 0..w - 1 {
            row[x] = row[x].min(done[x + 1] + diag);
        }
    };
    // Forward pass: the row above, then left to right.
    for y in 0..height {
        let (done, rest) = d.split_at_mut(y * width);
        let row = &mut rest[..width];
        if y > 0 {
            near(row, &done[(y - 1) * width..]);
        }
        for x in 1..width {
            row[x] = row[x].min(row[x - 1] + 1.0);
        }
    }
    // Backward pass: the row below, then right to left.
    for y in (0..height).rev() {
        let (head, done) = d.split_at_mut((y + 1) * width);
        let row = &mut head[y * width..];
        if y + 1 < height {
            near(row, &done[..width]);
        }
        for x in (0..width - 1).rev() {
            row[x] = row[x].min(row[x + 1] + 1.0);
        }
    }
    d
}

/// Moisture in [0, 1] per cell (step 3 of the module docs) from the water mask and an optional
/// flow accumulation (cells; `None`: the flow term is 0).
pub fn moisture(
    mask: &[bool],
    flow: Option<&[f32]>,
    width: usize,
    height: usize,
    opts: &BiomeOptions,
) -> Result<Vec<f32>> {
    opts.validate()?;
    let n = width * height;
    if mask.len() != n || flow.is_some_and(|f| f.len() != n) {
        return Err(Error::SizeMismatch {
            what: "biome water mask / flow".into(),
            expected_w: width,
            expected_h: height,
            got_w: mask.len(),
            got_h: 1,
        });
    }
    let dist = distance_to(mask, width, height);
    let length = if opts.moisture_length > 0.0 {
        opts.moisture_length
    } else {
        (width.max(height) as f32 / 24.0).max(1.0)
    };
    let f = opts.flow_weight;
    // `detmath`'s functions, not the platform's libm: the same bytes on every platform.
    let log_max = flow.map_or(0.0, |a| detmath::ln_1pf(a.iter().fold(0.0f32, |m, &v| m.max(v))));
    // Drainage areas are whole numbers of cells, most of them small: `ln(1 + A)` of those is
    // looked up (the same value, computed once each), and a water cell (distance 0) is
    // `exp(−0) = 1` without the call. On `rivers` at 4097² this took the biome pass from
    // 0.90 s to 0.74–0.83 s.
    let ln_1p_table: Vec<f32> = if flow.is_some() {
        (0..LN_1P_TABLE).map(|k| detmath::ln_1pf(k as f32)).collect()
    } else {
        Vec::new()
    };
    let ln_1p = |v: f32| {
        let k = v as u32;
        if (k as usize) < ln_1p_table.len() && k as f32 == v {
            ln_1p_table[k as usize]
        } else {
            detmath::ln_1pf(v)
        }
    };
    // Pieces of cells in parallel; in each, the wetness of every cell in one loop without a
    // branch (SIMD lanes), then the flow term and the sum: the same arithmetic per cell.
    let mut out = vec![0.0f32; n];
    out.par_chunks_mut(MOISTURE_PIECE).enumerate().for_each(|(c, piece)| {
        let first = c * MOISTURE_PIECE;
        let dist = &dist[first..first + piece.len()];
        for (v, &d) in piece.iter_mut().zip(dist) {
            let e = detmath::exp_fast(-d / length);
            *v = if d == 0.0 { 1.0 } else { e };
        }
        match flow {
            Some(a) if log_max > 0.0 => {
                for (v, &a) in piece.iter_mut().zip(&a[first..first + dist.len()]) {
                    let flow_term = (ln_1p(a.max(0.0)) / log_max).clamp(0.0, 1.0);
                    *v = ((1.0 - f) * *v + f * flow_term).clamp(0.0, 1.0);
                }
            }
            _ => {
                // `+ f · 0`, the flow term of 0 as before, so a zero keeps its sign bit.
                for v in piece.iter_mut() {
                    *v = ((1.0 - f) * *v + f * 0.0).clamp(0.0, 1.0);
                }
            }
        }
    });
    Ok(out)
}

/// Cells per parallel piece of [`moisture`].
const MOISTURE_PIECE: usize = 1 << 14;

/// Whole drainage areas below this many cells take `ln_1p` from a table in [`moisture`].
const LN_1P_TABLE: usize = 1 << 12;

/// Slope in degrees per cell from heights in metres (central differences, one-sided at the
/// edges, run = the map's cell size): `atan √(∂z/∂x² + ∂z/∂y²)` by [`detmath::hypotf`] and
/// [`detmath::atan_fast`], the same bits on every platform. The inner cells of a row take the
/// same arithmetic as its ends without a test per cell, so the loop vectorizes: 12 → 4 ms at
/// 1025² on one thread (the libm `atanf` it replaced was 1 ms of the 12).
pub fn slope_degrees(metres: &Heightmap) -> Vec<f32> {
    let (w, h) = (metres.width(), metres.height());
    let cs = metres.cell_size() as f32;
    let z = metres.as_slice();
    let mut out = vec![0.0f32; w * h];
    let slope = |dzdx: f32, dzdy: f32| detmath::atan_fast(detmath::hypotf(dzdx, dzdy)).to_degrees();
    out.par_chunks_mut(w.max(1)).enumerate().for_each(|(y, row)| {
        let (y0, y1) = (y.saturating_sub(1), (y + 1).min(h - 1));
        let run_y = (y1 - y0) as f32 * cs;
        let (r, up, down) = (&z[y * w..(y + 1) * w], &z[y0 * w..(y0 + 1) * w], &z[y1 * w..(y1 + 1) * w]);
        let dzdy = |x: usize| if y1 > y0 { (down[x] - up[x]) / run_y } else { 0.0 };
        if w == 1 {
            row[0] = slope(0.0, dzdy(0));
            return;
        }
        row[0] = slope((r[1] - r[0]) / cs, dzdy(0));
        row[w - 1] = slope((r[w - 1] - r[w - 2]) / cs, dzdy(w - 1));
        let run_x = 2.0 * cs;
        if y1 > y0 {
            for x in 1..w - 1 {
                row[x] = slope((r[x + 1] - r[x - 1]) / run_x, (down[x] - up[x]) / run_y);
            }
        } else {
            for x in 1..w - 1 {
                row[x] = slope((r[x + 1] - r[x - 1]) / run_x, 0.0);
            }
        }
    });
    out
}

/// Biome classes and the fields they came from.
#[derive(Clone, Debug)]
pub struct BiomeMap {
    /// Width in cells.
    pub width: usize,
    /// Height in cells.
    pub height: usize,
    /// Class per cell (row-major).
    pub classes: Vec<Biome>,
    /// Moisture per cell in [0, 1].
    pub moisture: Vec<f32>,
    /// Slope per cell, degrees.
    pub slope_deg: Vec<f32>,
    /// Relative elevation `t` per cell (0 at the sea level, 1 at the highest point; negative
    /// under the sea).
    pub elevation: Vec<f32>,
    /// Fresh water (lake or river) per cell.
    pub fresh_water: Vec<bool>,
}

/// Classifies every cell (steps 1–4 of the module docs). `metres`: heights in metres;
/// `sea_level_m`: sea level in metres; `fresh_water`: lake and river cells (W × H);
/// `flow`: D8 accumulation in cells, if known.
pub fn classify(
    metres: &Heightmap,
    sea_level_m: f32,
    fresh_water: &[bool],
    flow: Option<&[f32]>,
    opts: &BiomeOptions,
) -> Result<BiomeMap> {
    opts.validate()?;
    if !sea_level_m.is_finite() {
        return Err(Error::param("sea-level", sea_level_m, "a finite number (metres)"));
    }
    let (w, h) = (metres.width(), metres.height());
    let z = metres.as_slice();
    if fresh_water.len() != z.len() {
        return Err(Error::SizeMismatch {
            what: "biome fresh-water mask".into(),
            expected_w: w,
            expected_h: h,
            got_w: fresh_water.len(),
            got_h: 1,
        });
    }
    let mask: Vec<bool> = z.iter().zip(fresh_water).map(|(&v, &f)| f || v < sea_level_m).collect();
    // The distance pass inside `moisture` is sequential: the slopes run beside it.
    let (moisture, slope_deg) = rayon::join(|| moisture(&mask, flow, w, h, opts), || slope_degrees(metres));
    let moisture = moisture?;
    let top = z.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let span = (top - sea_level_m).max(f32::MIN_POSITIVE);
    let elevation: Vec<f32> = z.par_iter().map(|&v| (v - sea_level_m) / span).collect();
    let classes = (0..z.len())
        .into_par_iter()
        .map(|i| {
            if z[i] < sea_level_m {
                return Biome::Ocean;
            }
            if fresh_water[i] {
                return Biome::FreshWater;
            }
            let (t, s, m) = (elevation[i], slope_deg[i], moisture[i]);
            if s >= opts.rock_slope_deg {
                Biome::Rock
            } else if t >= opts.snow_line {
                Biome::Snow
            } else if t >= opts.tree_line {
                Biome::Tundra
            } else if t < opts.beach_height {
                Biome::Beach
            } else if m < 0.15 {
                Biome::Desert
            } else if m < 0.4 {
                Biome::Grassland
            } else if m < 0.75 {
                Biome::Forest
            } else if t < 0.15 && s < 3.0 {
                Biome::Swamp
            } else {
                Biome::Rainforest
            }
        })
        .collect();
    Ok(BiomeMap {
        width: w,
        height: h,
        classes,
        moisture,
        slope_deg,
        elevation,
        fresh_water: fresh_water.to_vec(),
    })
}

/// Rounds non-negative weights summing to 1 into bytes summing to exactly 255 (largest
/// remainder; ties go to the lower index). Written without a sort or libm's `floor`
/// (the build has no SSE4.1 `roundps`): the splat map calls it for every land cell.
fn to_bytes(weights: [f32; 4]) -> [u8; 4] {
    let total = weights[0] + weights[1] + weights[2] + weights[3];
    if total <= 0.0 {
        return [0, 255, 0, 0];
    }
    // A NaN total passes the test above: its weights count as 0 (the old rounding did the same).
    let scaled = weights.map(|v| if total > 0.0 { v / total * 255.0 } else { 0.0 });
    let floors = scaled.map(floor_fast);
    let mut out = floors.map(|v| v as u8);
    let used: u32 = out.iter().map(|&v| v as u32).sum();
    let left = 255u32.saturating_sub(used) as usize;
    let rem: [f32; 4] = std::array::from_fn(|k| scaled[k] - floors[k]);
    // Each index's place when sorted by remainder, largest first, ties to the lower index (a
    // stable sort), counted without a branch: the larger remainders, and the equal ones at
    // lower indices. The `left` bytes go one each to the places 0, 1, 2, 3, 0, … in turn.
    for (k, o) in out.iter_mut().enumerate() {
        let place: usize = (0..4)
            .map(|j| {
                let order = rem[j].total_cmp(&rem[k]);
                usize::from(order.is_gt() || (order.is_eq() && j < k))
            })
            .sum();
        *o += (left / 4 + usize::from(place < left % 4)) as u8;
    }
    out
}

/// Cells per block of [`BiomeMap::splat_row`].
const SPLAT_LANES: usize = 8;

/// [`to_bytes`] of [`SPLAT_LANES`] cells at once (`weights[channel][cell]`), the same
/// arithmetic on every lane without a branch, or `None` when a cell needs one of
/// [`to_bytes`]'s special cases (a sum of weights that is not positive, a scaled weight out
/// of the range where the integer conversion is the floor, NaN).
#[inline(always)]
fn bytes_lanes(weights: &[[f32; SPLAT_LANES]; 4]) -> Option<[[u8; SPLAT_LANES]; 4]> {
    const L: usize = SPLAT_LANES;
    let [a, b, c, d] = weights;
    let total: [f32; L] = std::array::from_fn(|k| a[k] + b[k] + c[k] + d[k]);
    let scaled = weights.map(|ch| std::array::from_fn::<f32, L, _>(|k| ch[k] / total[k] * 255.0));
    // Every lane positive and every scaled weight in [0, 2²³): a NaN fails both tests.
    let fine =
        total.iter().all(|&v| v > 0.0) && scaled.iter().flatten().all(|v| (0.0..8_388_608.0).contains(v));
    if !fine {
        return None;
    }
    // In [0, 2²³) the conversion to i32 (a SIMD instruction, where u32's is not) is the same
    // truncation as `floor_fast`'s.
    let floors = scaled.map(|ch| ch.map(|v| (v as i32) as f32));
    let mut out = floors.map(|ch| ch.map(|v| v as i32 as u32));
    let rem: [[f32; L]; 4] = std::array::from_fn(|j| std::array::from_fn(|k| scaled[j][k] - floors[j][k]));
    let left: [u32; L] =
        std::array::from_fn(|k| 255u32.saturating_sub(out[0][k] + out[1][k] + out[2][k] + out[3][k]));
    // The remainders are not negative and not NaN here, so `>` and `==` order them as
    // `total_cmp` does in `to_bytes`.
    for i in 0..4 {
        for k in 0..L {
            let place: u32 =
                (0..4).map(|j| u32::from(rem[j][k] > rem[i][k] || (rem[j][k] == rem[i][k] && j < i))).sum();
            out[i][k] += left[k] / 4 + u32::from(place < left[k] % 4);
        }
    }
    Some(out.map(|ch| ch.map(|v| v as u8)))
}

/// `v.floor()`, by an integer conversion where that is exact (0 ≤ v < 2²³).
#[inline]
fn floor_fast(v: f32) -> f32 {
    if (0.0..8_388_608.0).contains(&v) { (v as u32) as f32 } else { v.floor() }
}

impl BiomeMap {
    /// `biomes.png` pixels: RGB, W × H × 3, one [`Biome::color`] per cell.
    pub fn rgb(&self) -> Vec<u8> {
        self.classes.iter().flat_map(|b| b.color()).collect()
    }

    /// Splat weights per cell (step 5 of the module docs) as RGBA bytes, W × H × 4, in the
    /// order sand, grass, rock, snow; each pixel's four bytes sum to 255.
    pub fn splat_rgba(&self, opts: &BiomeOptions) -> Vec<u8> {
        let mut out = vec![0u8; self.classes.len() * 4];
        out.par_chunks_mut(4 * self.width.max(1))
            .enumerate()
            .for_each(|(y, row)| self.splat_row(y, opts, row));
        out
    }

    /// Splat weights of cell `i` (row-major index) as in [`BiomeMap::splat_rgba`].
    pub fn splat_at(&self, i: usize, opts: &BiomeOptions) -> [u8; 4] {
        if self.classes[i] == Biome::Ocean || self.fresh_water[i] {
            return [255, 0, 0, 0]; // all sand: to_bytes([1, 0, 0, 0])
        }
        let (t, s, m) = (self.elevation[i], self.slope_deg[i], self.moisture[i]);
        let snow = detmath::smoothstep_between(opts.snow_line - 0.08, opts.snow_line + 0.04, t);
        let rock = detmath::smoothstep_between(opts.rock_slope_deg - 10.0, opts.rock_slope_deg, s);
        let beach = if opts.beach_height > 0.0 {
            1.0 - detmath::smoothstep_between(0.0, opts.beach_height, t)
        } else {
            0.0
        };
        let dry = 1.0 - detmath::smoothstep_between(0.1, 0.2, m);
        let sand = beach.max(dry) * (1.0 - snow);
        let hard = (rock + snow).min(1.0);
        let (rock, snow) = if rock + snow > 0.0 {
            (hard * rock / (rock + snow), hard * snow / (rock + snow))
        } else {
            (0.0, 0.0)
        };
        let sand = sand * (1.0 - hard);
        let grass = (1.0 - hard - sand).max(0.0);
        to_bytes([sand, grass, rock, snow])
    }

    /// The splat weights of row `y` into `out` (`4 × width` bytes), the same bytes as
    /// [`BiomeMap::splat_at`] cell by cell. Blocks of [`SPLAT_LANES`] cells run the same
    /// arithmetic on every lane without a branch (SIMD): the four weights (sea and fresh
    /// water as all sand), their rounding to bytes and each remainder's place. A block with a
    /// sum of weights that is not positive or a value out of the fast floor's range takes the
    /// per-cell path (the row's last cells too).
    pub fn splat_row(&self, y: usize, opts: &BiomeOptions, out: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            #[target_feature(enable = "avx2")]
            fn avx2(map: &BiomeMap, y: usize, opts: &BiomeOptions, out: &mut [u8]) {
                map.splat_row_lanes(y, opts, out)
            }
            // SAFETY: the CPU has AVX2 (tested just above).
            return unsafe { avx2(self, y, opts, out) };
        }
        self.splat_row_lanes(y, opts, out)
    }

    /// [`BiomeMap::splat_row`], inlined into each instruction set's copy. The weights are
    /// [`BiomeMap::splat_at`]'s formula spelled one quantity at a time over the lanes, and
    /// [`bytes_lanes`] is [`to_bytes`] on lanes: written twice so that these loops vectorize;
    /// `splat_rows_equal_the_per_cell_weights` keeps the two the same, byte for byte.
    #[inline(always)]
    fn splat_row_lanes(&self, y: usize, opts: &BiomeOptions, out: &mut [u8]) {
        const L: usize = SPLAT_LANES;
        let w = self.width;
        let row = y * w..(y + 1) * w;
        let (t, s, m) =
            (&self.elevation[row.clone()], &self.slope_deg[row.clone()], &self.moisture[row.clone()]);
        let (classes, fresh) = (&self.classes[row.clone()], &self.fresh_water[row]);
        let per_cell = |x: usize, px: &mut [u8]| px.copy_from_slice(&self.splat_at(y * w + x, opts));
        let beach_on = opts.beach_height > 0.0;
        let mut x = 0;
        while x + L <= w {
            let px = &mut out[4 * x..4 * (x + L)];
            if (x..x + L).all(|i| classes[i] == Biome::Ocean || fresh[i]) {
                for p in px.chunks_exact_mut(4) {
                    p.copy_from_slice(&[255, 0, 0, 0]);
                }
                x += L;
                continue;
            }
            // One array per quantity, each a loop of its own over the lanes (SIMD).
            let lanes = |v: &[f32]| -> [f32; L] { std::array::from_fn(|k| v[x + k]) };
            let (t, s, m) = (lanes(t), lanes(s), lanes(m));
            #[inline(always)]
            fn each(f: impl Fn(usize) -> f32) -> [f32; L] {
                std::array::from_fn(f)
            }
            let snow =
                each(|k| detmath::smoothstep_between(opts.snow_line - 0.08, opts.snow_line + 0.04, t[k]));
            let rock =
                each(|k| detmath::smoothstep_between(opts.rock_slope_deg - 10.0, opts.rock_slope_deg, s[k]));
            let beach = each(|k| {
                if beach_on { 1.0 - detmath::smoothstep_between(0.0, opts.beach_height, t[k]) } else { 0.0 }
            });
            let dry = each(|k| 1.0 - detmath::smoothstep_between(0.1, 0.2, m[k]));
            let sand = each(|k| beach[k].max(dry[k]) * (1.0 - snow[k]));
            let hard = each(|k| (rock[k] + snow[k]).min(1.0));
            let both = each(|k| rock[k] + snow[k]);
            let rock_w = each(|k| if both[k] > 0.0 { hard[k] * rock[k] / both[k] } else { 0.0 });
            let snow_w = each(|k| if both[k] > 0.0 { hard[k] * snow[k] / both[k] } else { 0.0 });
            let sand = each(|k| sand[k] * (1.0 - hard[k]));
            let grass = each(|k| (1.0 - hard[k] - sand[k]).max(0.0));
            // Sea and fresh water are all sand: `to_bytes([1, 0, 0, 0])` is [255, 0, 0, 0].
            let wet: [bool; L] = std::array::from_fn(|k| classes[x + k] == Biome::Ocean || fresh[x + k]);
            let pick = |v: &[f32; L], water: f32| -> [f32; L] {
                std::array::from_fn(|k| if wet[k] { water } else { v[k] })
            };
            let wt = [pick(&sand, 1.0), pick(&grass, 0.0), pick(&rock_w, 0.0), pick(&snow_w, 0.0)];
            match bytes_lanes(&wt) {
                Some(bytes) => {
                    for (k, p) in px.chunks_exact_mut(4).enumerate() {
                        p.copy_from_slice(&[bytes[0][k], bytes[1][k], bytes[2][k], bytes[3][k]]);
                    }
                }
                None => {
                    for (k, p) in px.chunks_exact_mut(4).enumerate() {
                        per_cell(x + k, p);
                    }
                }
            }
            x += L;
        }
        for (k, p) in out[4 * x..4 * w].chunks_exact_mut(4).enumerate() {
            per_cell(x + k, p);
        }
    }

    /// Share of the cells in each biome, in [`Biome::ALL`] order.
    pub fn shares(&self) -> [f64; 11] {
        let mut counts = [0usize; 11];
        for b in &self.classes {
            counts[b.index() as usize] += 1;
        }
        counts.map(|c| c as f64 / self.classes.len().max(1) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cone(n: usize) -> Heightmap {
        let c = (n - 1) as f32 / 2.0;
        Heightmap::from_fn(n, n, 10.0, |x, y| {
            let d = (x as f32 - c).hypot(y as f32 - c) / c;
            100.0 * (1.0 - d) - 10.0
        })
        .unwrap()
    }

    #[test]
    fn chamfer_distance_matches_reference_values() {
        let mut mask = vec![false; 9 * 9];
        mask[4 * 9 + 4] = true;
        let d = distance_to(&mask, 9, 9);
        assert_eq!(d[4 * 9 + 4], 0.0);
        assert_eq!(d[4 * 9 + 8], 4.0);
        assert!((d[0] - 4.0 * std::f32::consts::SQRT_2).abs() < 1e-5);
        assert!((d[2 * 9 + 8] - (2.0 + 2.0 * std::f32::consts::SQRT_2)).abs() < 1e-5);
        assert!(distance_to(&[false; 4], 2, 2).iter().all(|v| v.is_infinite()));
    }

    /// The raster-order chamfer cell by cell, each cell taking its four done neighbours with
    /// bounds tests: the reference the row-wise passes must equal bit for bit.
    fn chamfer_reference(mask: &[bool], w: usize, h: usize) -> Vec<f32> {
        let diag = std::f32::consts::SQRT_2;
        let mut d: Vec<f32> = mask.iter().map(|&m| if m { 0.0 } else { f32::INFINITY }).collect();
        let (wi, hi) = (w as isize, h as isize);
        let mut pass = |ys: Vec<isize>, xs: Vec<isize>, nbs: [(isize, isize, f32); 4]| {
            for &y in &ys {
                for &x in &xs {
                    let mut v = d[(y * wi + x) as usize];
                    for (dx, dy, c) in nbs {
                        let (nx, ny) = (x + dx, y + dy);
                        if nx >= 0 && nx < wi && ny >= 0 && ny < hi {
                            v = v.min(d[(ny * wi + nx) as usize] + c);
                        }
                    }
                    d[(y * wi + x) as usize] = v;
                }
            }
        };
        pass(
            (0..hi).collect(),
            (0..wi).collect(),
            [(-1, 0, 1.0), (-1, -1, diag), (0, -1, 1.0), (1, -1, diag)],
        );
        pass(
            (0..hi).rev().collect(),
            (0..wi).rev().collect(),
            [(1, 0, 1.0), (1, 1, diag), (0, 1, 1.0), (-1, 1, diag)],
        );
        d
    }

    #[test]
    fn chamfer_distance_equals_the_cell_by_cell_passes() {
        let mut rng = terrasynth_noise::rng::SplitMix64::new(3);
        for (w, h, p) in [(1, 1, 2), (1, 7, 3), (9, 1, 4), (2, 2, 2), (37, 23, 50), (64, 64, 400), (5, 40, 9)]
        {
            let mask: Vec<bool> = (0..w * h).map(|_| rng.below(p) == 0).collect();
            let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
            assert_eq!(bits(distance_to(&mask, w, h)), bits(chamfer_reference(&mask, w, h)), "{w}x{h}");
        }
    }

    /// [`slope_degrees`] equals the per-cell formula (a central difference over the cells
    /// either side, one-sided at the edges) bit for bit, on maps down to one row or column.
    #[test]
    fn slope_degrees_equals_the_per_cell_formula() {
        for (w, h) in [(37usize, 23usize), (1, 5), (5, 1), (2, 2), (1, 1), (3, 2)] {
            let map =
                Heightmap::from_fn(w, h, 7.5, |x, y| ((x * 7919 + y * 104_729) % 97) as f32 * 1.3 + x as f32)
                    .unwrap();
            let z = map.as_slice();
            let got = slope_degrees(&map);
            for y in 0..h {
                for x in 0..w {
                    let (x0, x1) = (x.saturating_sub(1), (x + 1).min(w - 1));
                    let (y0, y1) = (y.saturating_sub(1), (y + 1).min(h - 1));
                    let run = |d: usize| d as f32 * 7.5;
                    let dzdx = if x1 > x0 { (z[y * w + x1] - z[y * w + x0]) / run(x1 - x0) } else { 0.0 };
                    let dzdy = if y1 > y0 { (z[y1 * w + x] - z[y0 * w + x]) / run(y1 - y0) } else { 0.0 };
                    let want = detmath::atan_fast(detmath::hypotf(dzdx, dzdy)).to_degrees();
                    assert_eq!(got[y * w + x].to_bits(), want.to_bits(), "{w}×{h}, cell ({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn moisture_equals_the_plain_formula() {
        let (w, h) = (97, 61);
        let mask: Vec<bool> = (0..w * h).map(|i| (i * 7919) % 13 == 0 || i % w < 3).collect();
        let mut flow: Vec<f32> = (0..w * h).map(|i| ((i * 2654435761) % 9000) as f32).collect();
        flow[5] = 2.5;
        flow[6] = -3.0;
        flow[7] = f32::NAN;
        flow[8] = LN_1P_TABLE as f32;
        flow[9] = 1.0e9;
        let opts = BiomeOptions::default();
        let got = moisture(&mask, Some(&flow), w, h, &opts).unwrap();
        let dist = distance_to(&mask, w, h);
        let length = (w.max(h) as f32 / 24.0).max(1.0);
        let log_max = detmath::ln_1pf(flow.iter().fold(0.0f32, |m, &v| m.max(v)));
        let f = opts.flow_weight;
        for i in 0..w * h {
            let wet = detmath::exp_fast(-dist[i] / length);
            let flow_term = (detmath::ln_1pf(flow[i].max(0.0)) / log_max).clamp(0.0, 1.0);
            let want = ((1.0 - f) * wet + f * flow_term).clamp(0.0, 1.0);
            assert_eq!(got[i].to_bits(), want.to_bits(), "cell {i}: flow {}, distance {}", flow[i], dist[i]);
        }
    }

    #[test]
    fn moisture_falls_with_distance_and_rises_with_flow() {
        let mut mask = vec![false; 33 * 33];
        for y in 0..33 {
            mask[y * 33] = true;
        }
        let opts = BiomeOptions { moisture_length: 4.0, flow_weight: 0.0, ..Default::default() };
        let m = moisture(&mask, None, 33, 33, &opts).unwrap();
        assert_eq!(m[10 * 33], 1.0);
        for x in 1..33 {
            assert!(m[10 * 33 + x] < m[10 * 33 + x - 1]);
        }
        assert!((m[10 * 33 + 4] - (-1.0f32).exp()).abs() < 1e-6);
        let flow: Vec<f32> = (0..33 * 33).map(|i| (i % 33) as f32).collect();
        let opts = BiomeOptions { flow_weight: 1.0, ..opts };
        let m = moisture(&mask, Some(&flow), 33, 33, &opts).unwrap();
        assert_eq!(m[32], 1.0);
        assert!(m[5] < m[6]);
    }

    #[test]
    fn cone_has_ocean_beach_and_snow_in_order() {
        let map = cone(65);
        let water = vec![false; 65 * 65];
        let b = classify(&map, 0.0, &water, None, &BiomeOptions::default()).unwrap();
        assert_eq!(b.classes[0], Biome::Ocean);
        assert_eq!(b.classes[32 * 65 + 32], Biome::Snow);
        // Walking from the summit to the sea, snow comes before tundra, beach just before sea.
        let row: Vec<Biome> = (0..=32).rev().map(|x| b.classes[32 * 65 + x]).collect();
        let first = |k: Biome| row.iter().position(|&c| c == k);
        assert!(first(Biome::Snow).unwrap() < first(Biome::Tundra).unwrap());
        let beach = first(Biome::Beach).unwrap();
        assert!(beach > first(Biome::Tundra).unwrap());
        assert!(row[beach..].iter().all(|&c| c == Biome::Beach || c == Biome::Ocean));
    }

    #[test]
    fn steep_slopes_are_rock_and_rivers_are_fresh_water() {
        // A ramp rising 20 m per 10 m cell (63°) is rock everywhere on land.
        let map = Heightmap::from_fn(33, 33, 10.0, |x, _| 20.0 * x as f32 + 1.0).unwrap();
        let mut water = vec![false; 33 * 33];
        water[5 * 33 + 5] = true;
        let b = classify(&map, 0.0, &water, None, &BiomeOptions::default()).unwrap();
        assert_eq!(b.classes[5 * 33 + 5], Biome::FreshWater);
        assert_eq!(b.classes[10 * 33 + 3], Biome::Rock);
        assert!(b.slope_deg[10 * 33 + 3] > 63.0 && b.slope_deg[10 * 33 + 3] < 64.0);
    }

    /// The bytes equal the largest-remainder rounding written with a stable sort (std's),
    /// on random weights, weights with tied remainders, zeros and a NaN.
    #[test]
    fn to_bytes_equals_the_sorted_largest_remainder() {
        let reference = |weights: [f32; 4]| -> [u8; 4] {
            let total = weights[0] + weights[1] + weights[2] + weights[3];
            if total <= 0.0 {
                return [0, 255, 0, 0];
            }
            let scaled = weights.map(|v| if total > 0.0 { v / total * 255.0 } else { 0.0 });
            let floors = scaled.map(|v| v.floor());
            let mut out = floors.map(|v| v as u8);
            let left = 255 - out.iter().map(|&v| v as usize).sum::<usize>();
            let mut order = [0usize, 1, 2, 3];
            order.sort_by(|&a, &b| (scaled[b] - floors[b]).total_cmp(&(scaled[a] - floors[a])));
            for k in 0..left {
                out[order[k % 4]] += 1;
            }
            out
        };
        let mut rng = terrasynth_noise::rng::SplitMix64::new(41);
        let mut cases = vec![[0.25f32; 4], [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]];
        cases.push([f32::NAN, 0.5, 0.5, 0.0]);
        for _ in 0..20000 {
            let mut w = [0.0f32; 4];
            for v in &mut w {
                *v = match rng.below(4) {
                    0 => 0.0,
                    1 => rng.below(4) as f32 * 0.25,
                    _ => rng.range_f64(0.0, 1.0) as f32,
                };
            }
            cases.push(w);
        }
        for w in cases {
            assert_eq!(to_bytes(w), reference(w), "weights {w:?}");
        }
    }

    #[test]
    fn splat_weights_sum_to_255_everywhere() {
        let map = cone(65);
        let mut water = vec![false; 65 * 65];
        water[20 * 65 + 20] = true;
        let flow: Vec<f32> = (0..65 * 65).map(|i| ((i * 7919) % 500) as f32).collect();
        let opts = BiomeOptions::default();
        let b = classify(&map, 0.0, &water, Some(&flow), &opts).unwrap();
        let splat = b.splat_rgba(&opts);
        assert_eq!(splat.len(), 65 * 65 * 4);
        for px in splat.chunks(4) {
            assert_eq!(px.iter().map(|&v| v as u32).sum::<u32>(), 255, "{px:?}");
        }
        // Summit all snow, sea all sand.
        assert_eq!(&splat[(32 * 65 + 32) * 4..][..4], &[0, 0, 0, 255]);
        assert_eq!(&splat[..4], &[255, 0, 0, 0]);
        for w in [[0.3, 0.3, 0.3, 0.1], [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0], [0.0; 4]] {
            assert_eq!(to_bytes(w).iter().map(|&v| v as u32).sum::<u32>(), 255);
        }
    }

    /// The first form of [`to_bytes`] (a sort call and `floor`), the oracle of the fast one.
    fn to_bytes_reference(weights: [f32; 4]) -> [u8; 4] {
        let total: f32 = weights.iter().sum();
        let scaled = weights.map(|v| if total > 0.0 { v / total * 255.0 } else { 0.0 });
        let mut out = scaled.map(|v| v.floor() as u8);
        let used: u32 = out.iter().map(|&v| v as u32).sum();
        let mut left = 255u32.saturating_sub(used);
        if total <= 0.0 {
            return [0, 255, 0, 0];
        }
        let mut order = [0usize, 1, 2, 3];
        order.sort_by(|&a, &b| {
            let (ra, rb) = (scaled[a] - scaled[a].floor(), scaled[b] - scaled[b].floor());
            rb.total_cmp(&ra).then(a.cmp(&b))
        });
        for &k in order.iter().cycle() {
            if left == 0 {
                break;
            }
            out[k] += 1;
            left -= 1;
        }
        out
    }

    #[test]
    fn fast_splat_rounding_equals_the_sorting_one() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // A third of the draws on a coarse lattice, so that ties and zeros are common.
            match x % 3 {
                0 => ((x >> 8) % 5) as f32 / 4.0,
                _ => (x >> 40) as f32 / (1u64 << 24) as f32,
            }
        };
        let mut special =
            vec![[1.0, 0.0, 0.0, 0.0], [0.0; 4], [0.25; 4], [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0]];
        special.push([f32::NAN, 0.5, 0.5, 0.0]);
        special.push([1e-30, 0.0, 0.0, 0.0]);
        for w in special.into_iter().chain((0..1_000_000).map(|_| [next(), next(), next(), next()])) {
            let (got, want) = (to_bytes(w), to_bytes_reference(w));
            assert_eq!(got, want, "{w:?}");
        }
    }

    #[test]
    fn splat_rows_equal_the_per_cell_weights() {
        let (w, h) = (61, 40);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32
        };
        let n = w * h;
        let mut map = BiomeMap {
            width: w,
            height: h,
            classes: vec![Biome::Grassland; n],
            moisture: Vec::new(),
            slope_deg: Vec::new(),
            elevation: Vec::new(),
            fresh_water: vec![false; n],
        };
        for i in 0..n {
            // Values across every threshold of the weights, a third of them on a coarse
            // lattice (ties between remainders, weights of exactly 0 and 1), a few NaN.
            let coarse = i % 3 == 0;
            let v =
                |r: f32, lo: f32, hi: f32| lo + (hi - lo) * if coarse { (r * 4.0).floor() / 4.0 } else { r };
            map.elevation.push(v(next(), -0.2, 1.2));
            map.slope_deg.push(v(next(), 0.0, 90.0));
            map.moisture.push(v(next(), 0.0, 1.0));
            match i % 97 {
                1 => map.classes[i] = Biome::Ocean,
                2 => map.fresh_water[i] = true,
                3 => map.moisture[i] = f32::NAN,
                4 => map.elevation[i] = f32::INFINITY,
                _ => {}
            }
        }
        for opts in [BiomeOptions::default(), BiomeOptions { beach_height: 0.0, ..Default::default() }] {
            let mut row = vec![0u8; 4 * w];
            for y in 0..h {
                map.splat_row(y, &opts, &mut row);
                for (x, px) in row.chunks_exact(4).enumerate() {
                    assert_eq!(px, map.splat_at(y * w + x, &opts), "cell ({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn same_bits_on_one_and_four_threads() {
        let map = cone(129);
        let water: Vec<bool> = (0..129 * 129).map(|i| i % 97 == 0).collect();
        let flow: Vec<f32> = (0..129 * 129).map(|i| (i % 31) as f32).collect();
        let run = |n: usize| {
            rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(|| {
                let opts = BiomeOptions::default();
                let b = classify(&map, 0.0, &water, Some(&flow), &opts).unwrap();
                (b.rgb(), b.splat_rgba(&opts), b.moisture.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
            })
        };
        assert_eq!(run(1), run(4));
    }

    #[test]
    fn bad_options_are_rejected() {
        let map = cone(9);
        let water = vec![false; 81];
        for opts in [
            BiomeOptions { snow_line: f32::NAN, ..Default::default() },
            BiomeOptions { rock_slope_deg: 0.0, ..Default::default() },
            BiomeOptions { moisture_length: -1.0, ..Default::default() },
        ] {
            assert!(matches!(classify(&map, 0.0, &water, None, &opts), Err(Error::InvalidParameter { .. })));
        }
        assert!(classify(&map, 0.0, &water[..10], None, &BiomeOptions::default()).is_err());
    }
}
