//! Height → colour palettes: a list of stops (height fraction → sRGB colour), either smooth
//! (linear interpolation between stops, seed 003: "a smooth gradient looks better than hard
//! bands") or in hard classes (seed 004 §7).
//!
//! ## Height fraction and sea level
//! A height `h` is turned into a fraction `t ∈ [0, 1]` before the stops are looked up. Without
//! a sea level, `t = (h − lo)/(hi − lo)` over the map's min and max. With a sea level `s`, the
//! map is stretched piecewise-linearly so that **`s` lands exactly on the palette's shoreline
//! [`Palette::sea_at`]**: `t = sea_at · (h − lo)/(s − lo)` below the sea and
//! `t = sea_at + (1 − sea_at) · (h − s)/(hi − s)` above it (with `lo = min(min, s)`,
//! `hi = max(max, s)`). So water is coloured exactly where `terrain.sea_level` puts it, deep
//! water gets the palette's depth gradient, and land uses the land classes from coast to peak,
//! whatever the map's height units.
//!
//! Colours are interpolated in sRGB (as the seeds' tools do).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{Error, Heightmap, Result};

/// One palette stop: at height fraction `at`, the colour is `color`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    /// Height fraction in [0, 1].
    pub at: f32,
    /// sRGB colour.
    pub color: [u8; 3],
}

/// A palette: stops sorted by `at` (two stops may share an `at` to make a hard edge, e.g. the
/// shoreline), interpolation mode, and where the shoreline sits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Palette {
    /// Stops, sorted by `at` (non-decreasing), at least one.
    pub stops: Vec<Stop>,
    /// true: linear gradient between consecutive stops; false: hard classes, each stop's
    /// colour holds from its `at` up to the next stop.
    pub smooth: bool,
    /// Height fraction of the shoreline: the sea level is mapped here (see the module docs).
    #[serde(default = "default_sea_at")]
    pub sea_at: f32,
}

fn default_sea_at() -> f32 {
    0.15
}

const fn s(at: f32, color: [u8; 3]) -> Stop {
    Stop { at, color }
}

/// Class colours of the seed 004 §7 palette.
const DEEP_WATER: [u8; 3] = [18, 52, 110];
const SHALLOW_WATER: [u8; 3] = [62, 128, 188];
const SAND: [u8; 3] = [214, 196, 140];
const BEACH: [u8; 3] = [226, 212, 164];
const GRASS: [u8; 3] = [106, 160, 68];
const FOREST: [u8; 3] = [46, 108, 50];
const MOUNTAIN: [u8; 3] = [124, 110, 96];
const SNOW: [u8; 3] = [246, 246, 250];

impl Palette {
    /// Names of the built-in palettes, for [`Palette::named`].
    pub const NAMES: &'static [&'static str] = &["classic", "classic-bands", "mdp", "simple", "grayscale"];

    /// A built-in palette by name:
    /// - `classic`: seed 004 §7 classes (water < 0.15, sand < 0.18, beach < 0.20, grass < 0.30,
    ///   forest < 0.60, mountain < 0.80, snow) with smooth gradients inside and between the land
    ///   classes, deep-to-shallow water, and a hard shoreline at 0.15;
    /// - `classic-bands`: the same classes as hard bands (the seed's original look);
    /// - `mdp`: seed 000's matplotlib ramp (deep ocean, ocean, dark green hills, green plateaus,
    ///   brown valleys, white mountains at 0, 0.2, …, 1), shoreline at 0.3;
    /// - `simple`: seed 004's 3 classes (water < 0.5, sand < 0.6, grass);
    /// - `grayscale`: black to white, shoreline at 0.
    pub fn named(name: &str) -> Result<Self> {
        let p = match name {
            "classic" => Self {
                stops: vec![
                    s(0.0, DEEP_WATER),
                    s(0.15, SHALLOW_WATER),
                    s(0.15, SAND),
                    s(0.18, BEACH),
                    s(0.20, GRASS),
                    s(0.30, FOREST),
                    s(0.60, MOUNTAIN),
                    s(0.80, [168, 160, 152]),
                    s(0.86, SNOW),
                    s(1.0, [255, 255, 255]),
                ],
                smooth: true,
                sea_at: 0.15,
            },
            "classic-bands" => Self {
                stops: vec![
                    s(0.0, SHALLOW_WATER),
                    s(0.15, SAND),
                    s(0.18, BEACH),
                    s(0.20, GRASS),
                    s(0.30, FOREST),
                    s(0.60, MOUNTAIN),
                    s(0.80, SNOW),
                ],
                smooth: false,
                sea_at: 0.15,
            },
            "mdp" => Self {
                stops: vec![
                    s(0.0, [0, 0, 128]),
                    s(0.2, [0, 0, 255]),
                    s(0.4, [0, 128, 0]),
                    s(0.6, [0, 255, 0]),
                    s(0.8, [128, 128, 0]),
                    s(1.0, [255, 255, 255]),
                ],
                smooth: true,
                sea_at: 0.3,
            },
            "simple" => Self {
                stops: vec![s(0.0, SHALLOW_WATER), s(0.5, SAND), s(0.6, GRASS)],
                smooth: false,
                sea_at: 0.5,
            },
            "grayscale" => {
                Self { stops: vec![s(0.0, [0, 0, 0]), s(1.0, [255, 255, 255])], smooth: true, sea_at: 0.0 }
            }
            other => {
                return Err(Error::param(
                    "palette",
                    format!("{other:?}"),
                    format!("one of {}", Self::NAMES.join(", ")),
                ));
            }
        };
        Ok(p)
    }

    /// Checks a palette read from a recipe: at least one stop, every `at` and `sea_at` finite in
    /// [0, 1], stops sorted.
    pub fn validate(&self) -> Result<()> {
        if self.stops.is_empty() {
            return Err(Error::param("palette.stops", "[]", "at least one stop"));
        }
        for (i, st) in self.stops.iter().enumerate() {
            if !(st.at.is_finite() && (0.0..=1.0).contains(&st.at)) {
                return Err(Error::param(format!("palette.stops[{i}].at"), st.at, "a number in [0, 1]"));
            }
            if i > 0 && st.at < self.stops[i - 1].at {
                return Err(Error::param(format!("palette.stops[{i}].at"), st.at, "stops sorted by `at`"));
            }
        }
        if !(self.sea_at.is_finite() && (0.0..=1.0).contains(&self.sea_at)) {
            return Err(Error::param("palette.sea_at", self.sea_at, "a number in [0, 1]"));
        }
        Ok(())
    }

    /// The colour at height fraction `t` (clamped to [0, 1]; NaN counts as 0).
    pub fn color_at(&self, t: f32) -> [u8; 3] {
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        let stops = &self.stops;
        let Some(first) = stops.first() else { return [0, 0, 0] };
        // Index of the first stop strictly above t: the stops are sorted, so it is the number
        // of stops at or below t, counted without the binary search's data-dependent branches
        // (with the integer rounding below: 21 ns a colour instead of 30 on heights in random
        // order, `classic`).
        let next: usize = stops.iter().map(|st| usize::from(st.at <= t)).sum();
        if next == 0 {
            return first.color;
        }
        let lower = stops[next - 1];
        if !self.smooth || next == stops.len() {
            return lower.color;
        }
        let upper = stops[next];
        let span = upper.at - lower.at;
        let f = if span > 0.0 { (t - lower.at) / span } else { 0.0 };
        let mix = |a: u8, b: u8| round_byte(a as f32 + (b as f32 - a as f32) * f);
        [
            mix(lower.color[0], upper.color[0]),
            mix(lower.color[1], upper.color[1]),
            mix(lower.color[2], upper.color[2]),
        ]
    }

    /// The fraction mapper for a map with height range `[lo, hi]` and an optional sea level
    /// (see the module docs).
    pub fn fraction_map(&self, lo: f32, hi: f32, sea_level: Option<f32>) -> FractionMap {
        FractionMap::new(lo, hi, sea_level, self.sea_at)
    }

    /// Colours a whole heightmap: `width × height × 3` sRGB bytes, row-major. Rows are done in
    /// parallel; each pixel depends only on its own height, so the output does not depend on
    /// the thread count.
    pub fn colorize(&self, map: &Heightmap, sea_level: Option<f32>) -> Vec<u8> {
        let (lo, hi) = map.min_max().unwrap_or((0.0, 1.0));
        self.colorize_mapped(map, self.fraction_map(lo, hi, sea_level))
    }

    /// [`Palette::colorize`] with a given height-to-fraction mapping (e.g. a world's declared
    /// height range instead of the map's own).
    pub fn colorize_mapped(&self, map: &Heightmap, fm: FractionMap) -> Vec<u8> {
        let mut out = vec![0u8; map.len() * 3];
        let segments = Segments::new(self);
        out.par_chunks_mut(map.width() * 3).zip(map.as_slice().par_chunks(map.width())).for_each(
            |(dst, row)| match &segments {
                Some(segments) => segments.colorize_row(&fm, row, dst),
                None => {
                    for (px, &h) in dst.chunks_exact_mut(3).zip(row) {
                        px.copy_from_slice(&self.color_at(fm.fraction(h)));
                    }
                }
            },
        );
        out
    }
}

/// Pixels per block of [`Segments::colorize_row`] (its buffers live on the stack).
const ROW_BLOCK: usize = 256;

/// A palette laid out for colouring whole rows: the same arithmetic as
/// [`Palette::color_at`], bit for bit, in passes over a block of pixels that the compiler can
/// put on SIMD lanes (the height fractions, then the stop counts, then the colours), instead of
/// one pixel through every step at a time (21 ns a pixel; 1025² `rivers` on one thread: 24 ms of
/// its outputs).
///
/// Segment `k` is what `color_at` does for a fraction with `k` stops at or below it: `k = 0`
/// and `k = stops` (and every `k` of a palette in hard classes) is one stop's colour, written
/// as `a + 0·f` with `f = 0`, which rounds back to `a` exactly; the others interpolate from
/// `a` (the lower stop's colour) by `d = b − a` (exact in `f32`) with `f = (t − at)/span`, or
/// `f = 0` if the two stops share their `at`, as `color_at` does.
struct Segments {
    /// The stops' fractions, for the counts.
    at: Vec<f32>,
    /// Per segment: the lower stop's fraction, the span to the upper one (0: no gradient), the
    /// lower colour and the difference to the upper one, as `f32`.
    lower: Vec<f32>,
    span: Vec<f32>,
    a: Vec<[f32; 3]>,
    d: Vec<[f32; 3]>,
}

impl Segments {
    /// `None` for a palette without stops (`color_at` gives black) or with more stops than a
    /// count of a block can hold.
    fn new(p: &Palette) -> Option<Self> {
        let n = p.stops.len();
        if n == 0 || n > u16::MAX as usize {
            return None;
        }
        let colour = |c: [u8; 3]| c.map(f32::from);
        let mut seg = Self {
            at: p.stops.iter().map(|st| st.at).collect(),
            lower: vec![],
            span: vec![],
            a: vec![],
            d: vec![],
        };
        for k in 0..=n {
            let (lower, upper) = (p.stops[k.saturating_sub(1)], p.stops.get(k));
            match upper {
                Some(upper) if k > 0 && p.smooth => {
                    let (a, b) = (colour(lower.color), colour(upper.color));
                    seg.lower.push(lower.at);
                    seg.span.push(upper.at - lower.at);
                    seg.a.push(a);
                    seg.d.push([b[0] - a[0], b[1] - a[1], b[2] - a[2]]);
                }
                _ => {
                    // One colour: the first stop's below it, the lower stop's otherwise.
                    seg.lower.push(0.0);
                    seg.span.push(0.0);
                    seg.a.push(colour(lower.color));
                    seg.d.push([0.0; 3]);
                }
            }
        }
        Some(seg)
    }

    /// The colours of the heights `row` into `dst` (3 bytes a pixel).
    fn colorize_row(&self, fm: &FractionMap, row: &[f32], dst: &mut [u8]) {
        let mut t = [0.0f32; ROW_BLOCK];
        let mut count = [0u16; ROW_BLOCK];
        for (heights, out) in row.chunks(ROW_BLOCK).zip(dst.chunks_mut(3 * ROW_BLOCK)) {
            let n = heights.len();
            let (t, count) = (&mut t[..n], &mut count[..n]);
            fm.fractions(heights, t);
            for t in t.iter_mut() {
                // `color_at`'s own clamp after the fraction, as it does.
                *t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
            }
            count.fill(0);
            for &at in &self.at {
                for (c, &t) in count.iter_mut().zip(t.iter()) {
                    *c += u16::from(at <= t);
                }
            }
            for ((px, &t), &k) in out.chunks_exact_mut(3).zip(t.iter()).zip(count.iter()) {
                let k = k as usize;
                let span = self.span[k];
                let f = if span > 0.0 { (t - self.lower[k]) / span } else { 0.0 };
                let (a, d) = (self.a[k], self.d[k]);
                px[0] = round_byte(a[0] + d[0] * f);
                px[1] = round_byte(a[1] + d[1] * f);
                px[2] = round_byte(a[2] + d[2] * f);
            }
        }
    }
}

/// `x.round()` clamped to a byte, for `x` in about [0, 255] (as `f32::round`: half away from
/// zero), without the library call `round` is on x86-64 targets without SSE4.1: truncation is
/// one instruction and `x − trunc(x)` is exact.
#[inline]
fn round_byte(x: f32) -> u8 {
    let x = x.clamp(0.0, 255.0);
    let i = x as i32;
    (i + i32::from(x - i as f32 >= 0.5)) as u8
}

/// Maps heights to palette fractions (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FractionMap {
    lo: f32,
    hi: f32,
    sea: Option<f32>,
    sea_at: f32,
}

impl FractionMap {
    /// Builds the mapper; a non-finite sea level is ignored.
    pub fn new(lo: f32, hi: f32, sea_level: Option<f32>, sea_at: f32) -> Self {
        let sea = sea_level.filter(|s| s.is_finite());
        let (lo, hi) = match sea {
            Some(s) => (lo.min(s), hi.max(s)),
            None => (lo, hi),
        };
        Self { lo, hi, sea, sea_at: sea_at.clamp(0.0, 1.0) }
    }

    /// [`FractionMap::fraction`] of every height of `heights` into `out`, the same bits, with
    /// the map's cases decided once (so the loops run on SIMD lanes).
    fn fractions(&self, heights: &[f32], out: &mut [f32]) {
        let ratio = |num: f32, den: f32| (num / den).clamp(0.0, 1.0);
        let (lo, hi, sea_at) = (self.lo, self.hi, self.sea_at);
        let pairs = out.iter_mut().zip(heights);
        match self.sea {
            None if hi > lo => {
                pairs.for_each(|(t, &h)| *t = if h.is_nan() { 0.0 } else { ratio(h - lo, hi - lo) })
            }
            None => pairs.for_each(|(t, &h)| *t = if h.is_nan() { 0.0 } else { 0.5 }),
            Some(s) => {
                let (wet, dry) = (s > lo, hi > s);
                pairs.for_each(|(t, &h)| {
                    let below = if wet { sea_at * ratio(h - lo, s - lo) } else { 0.0 };
                    let above = if dry { sea_at + (1.0 - sea_at) * ratio(h - s, hi - s) } else { sea_at };
                    *t = if h.is_nan() {
                        0.0
                    } else if h < s {
                        below
                    } else {
                        above
                    };
                });
            }
        }
    }

    /// Height → fraction in [0, 1] (NaN → 0).
    #[inline]
    pub fn fraction(&self, h: f32) -> f32 {
        if h.is_nan() {
            return 0.0;
        }
        let ratio = |num: f32, den: f32| (num / den).clamp(0.0, 1.0);
        match self.sea {
            None if self.hi > self.lo => ratio(h - self.lo, self.hi - self.lo),
            None => 0.5,
            Some(s) if h < s => {
                if s > self.lo {
                    self.sea_at * ratio(h - self.lo, s - self.lo)
                } else {
                    0.0
                }
            }
            Some(s) => {
                if self.hi > s {
                    self.sea_at + (1.0 - self.sea_at) * ratio(h - s, self.hi - s)
                } else {
                    self.sea_at
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// The straightforward colour lookup the fast [`Palette::color_at`] replaced: binary search
    /// for the segment, `f32::round`, then clamp.
    fn color_at_reference(p: &Palette, t: f32) -> [u8; 3] {
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        let Some(first) = p.stops.first() else { return [0, 0, 0] };
        let next = p.stops.partition_point(|st| st.at <= t);
        if next == 0 {
            return first.color;
        }
        let lower = p.stops[next - 1];
        if !p.smooth || next == p.stops.len() {
            return lower.color;
        }
        let upper = p.stops[next];
        let span = upper.at - lower.at;
        let f = if span > 0.0 { (t - lower.at) / span } else { 0.0 };
        let mix = |a: u8, b: u8| (a as f32 + (b as f32 - a as f32) * f).round().clamp(0.0, 255.0) as u8;
        [
            mix(lower.color[0], upper.color[0]),
            mix(lower.color[1], upper.color[1]),
            mix(lower.color[2], upper.color[2]),
        ]
    }

    /// The fast lookup equals the reference on every named palette, at a million evenly spaced
    /// fractions, at every stop and its neighbouring floats, and at two million pseudo-random
    /// fractions in [−0.1, 1.1] (clamped), NaN included.
    #[test]
    fn color_at_equals_the_reference_lookup() {
        for name in Palette::NAMES {
            let p = Palette::named(name).unwrap();
            let mut ts: Vec<f32> = (0..=1_000_000).map(|k| k as f32 / 1e6).collect();
            for st in &p.stops {
                ts.extend([st.at, st.at.next_up(), st.at.next_down()]);
            }
            let mut s = 0x2545_F491_4F6C_DD1Du64;
            ts.extend((0..2_000_000).map(|_| {
                s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                (s >> 40) as f32 / (1u64 << 24) as f32 * 1.2 - 0.1
            }));
            ts.push(f32::NAN);
            for t in ts {
                assert_eq!(p.color_at(t), color_at_reference(&p, t), "{name} at {t}");
            }
        }
    }

    use super::*;

    /// Whole rows coloured by [`Segments`] equal `color_at(fraction(h))` pixel by pixel, on
    /// every named palette and on palettes with repeated stops and a single stop, with and
    /// without a sea level, on heights below, at and above every stop and the sea, NaN and ±∞
    /// included, in rows longer and shorter than a block.
    #[test]
    fn colorized_rows_equal_the_pixel_by_pixel_colours() {
        let mut palettes: Vec<Palette> = Palette::NAMES.iter().map(|n| Palette::named(n).unwrap()).collect();
        let repeated =
            vec![s(0.0, [10, 20, 30]), s(0.4, [200, 100, 0]), s(0.4, [0, 255, 9]), s(1.0, [7, 7, 7])];
        palettes.push(Palette { stops: repeated.clone(), smooth: true, sea_at: 0.3 });
        palettes.push(Palette { stops: repeated, smooth: false, sea_at: 0.3 });
        palettes.push(Palette { stops: vec![s(0.5, [1, 2, 3])], smooth: true, sea_at: 0.2 });
        let mut z = 0x9E37_79B9_7F4A_7C15u64;
        let (w, h) = (700, 9);
        let mut heights: Vec<f32> = (0..w * h)
            .map(|_| {
                z = z.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                (z >> 40) as f32 / (1u64 << 24) as f32 * 140.0 - 20.0
            })
            .collect();
        heights[3] = f32::NAN;
        heights[5] = f32::INFINITY;
        heights[7] = f32::NEG_INFINITY;
        for (k, v) in
            [-10.0f32, 0.0, 100.0, 40.0, 40.0f32.next_up(), 40.0f32.next_down()].into_iter().enumerate()
        {
            heights[11 + k] = v;
        }
        let map = Heightmap::from_vec(w, h, 1.0, heights).unwrap();
        for p in &palettes {
            // Heights -10..100 (finite values), stops at every tenth of them, sea at 40.
            for fm in [
                p.fraction_map(-10.0, 100.0, Some(40.0)),
                p.fraction_map(-10.0, 100.0, None),
                p.fraction_map(-10.0, 100.0, Some(-30.0)),
                p.fraction_map(5.0, 5.0, None),
            ] {
                let rows = p.colorize_mapped(&map, fm);
                for (i, &v) in map.as_slice().iter().enumerate() {
                    assert_eq!(rows[3 * i..3 * i + 3], p.color_at(fm.fraction(v)), "{p:?} {fm:?} at {v}");
                }
            }
        }
    }

    #[test]
    fn smooth_interpolates_and_hard_edges_jump() {
        let p = Palette::named("classic").unwrap();
        assert_eq!(p.color_at(0.0), DEEP_WATER);
        assert_eq!(p.color_at(0.1499), SHALLOW_WATER); // rounds to the shallow colour
        assert_eq!(p.color_at(0.15), SAND); // shoreline jumps
        // Half way between grass (0.20) and forest (0.30).
        assert_eq!(p.color_at(0.25), [76, 134, 59]);
        assert_eq!(p.color_at(1.5), [255, 255, 255]);
        assert_eq!(p.color_at(f32::NAN), DEEP_WATER);
    }

    #[test]
    fn bands_hold_class_colours() {
        let p = Palette::named("classic-bands").unwrap();
        assert_eq!(p.color_at(0.10), SHALLOW_WATER);
        assert_eq!(p.color_at(0.19), BEACH);
        assert_eq!(p.color_at(0.29), GRASS);
        assert_eq!(p.color_at(0.30), FOREST);
        assert_eq!(p.color_at(0.95), SNOW);
        let simple = Palette::named("simple").unwrap();
        assert_eq!(simple.color_at(0.49), SHALLOW_WATER);
        assert_eq!(simple.color_at(0.55), SAND);
        assert_eq!(simple.color_at(0.61), GRASS);
    }

    #[test]
    fn sea_level_lands_on_the_shoreline() {
        // Heights -10..30, sea at 0, shoreline fraction 0.15.
        let fm = FractionMap::new(-10.0, 30.0, Some(0.0), 0.15);
        assert_eq!(fm.fraction(-10.0), 0.0);
        assert_eq!(fm.fraction(-5.0), 0.075);
        assert_eq!(fm.fraction(0.0), 0.15);
        assert!((fm.fraction(15.0) - 0.575).abs() < 1e-6);
        assert_eq!(fm.fraction(30.0), 1.0);
        // Sea below the whole map: all land.
        let fm = FractionMap::new(5.0, 10.0, Some(0.0), 0.15);
        assert!(fm.fraction(5.0) > 0.15);
        // No sea level: plain inverse lerp.
        let fm = FractionMap::new(0.0, 4.0, None, 0.15);
        assert_eq!(fm.fraction(1.0), 0.25);
    }

    #[test]
    fn serde_round_trip_and_validation() {
        for name in Palette::NAMES {
            let p = Palette::named(name).unwrap();
            p.validate().unwrap();
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<Palette>(&json).unwrap(), p);
        }
        let bad = Palette { stops: vec![s(0.5, [0; 3]), s(0.2, [0; 3])], smooth: true, sea_at: 0.1 };
        assert!(bad.validate().is_err());
        assert!(Palette::named("nope").is_err());
    }
}
