//! Retouching (seed 001 §3): `perturb` (§3.2) and `spectral-overlay` (§3.1).

use rayon::prelude::*;
use terrasynth_noise::rng::derive_seed;
use terrasynth_noise::{CellRegion, NoiseKind};

use super::basic::range;
use crate::generate::common::refuse_world_length;
use crate::generate::{Interpolation, Spectral};
use crate::step::params::step_params;
use crate::step::{Category, Frame, Reach, Step, StepContext, StepInfo, Terrain, WorldFrame};
use crate::step::{DefaultValue, ParamKind, Params};
use crate::{Heightmap, Result};

/// A spectral field scaled to [−1, 1] (divided by `Σ p^i`).
fn unit_field(spectral: &Spectral, width: usize, height: usize, seed: u64) -> Vec<f64> {
    let mut f = spectral.field(width, height, seed);
    to_unit(&mut f, spectral);
    f
}

/// Scales values of `spectral`'s field to [−1, 1]: divided by `Σ p^i` (when positive).
fn to_unit(values: &mut [f64], spectral: &Spectral) {
    let norm: f64 = spectral.amplitudes().iter().sum();
    if norm > 0.0 {
        values.iter_mut().for_each(|v| *v /= norm);
    }
}

/// Mirrors a sample position into `[0, n − 1]` (reflection about the first and last cell
/// centres, period `2(n − 1)`), however far outside it lies.
pub(crate) fn reflect(v: f64, n: usize) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let last = (n - 1) as f64;
    let period = 2.0 * last;
    // `rem_euclid` is a library `fmod` call; inside one period either side of 0 its result is
    // `v` or `v + period` exactly (fmod is exact and returns `v` when |v| < period), so those
    // positions, nearly all of them, skip the call and give the same bits.
    let t = if (0.0..period).contains(&v) {
        v
    } else if v < 0.0 && v > -period {
        v + period
    } else {
        v.rem_euclid(period)
    };
    if t > last { period - t } else { t }
}

step_params! {
    /// Perturbation (seed 001 §3.2): each cell takes the height found at a displaced position,
    /// `h'(x, y) = h(x + m·L·n₁(x, y), y + m·L·n₂(x, y))`, bilinear; positions outside the map
    /// are mirrored back into it ([`reflect`]), so the border keeps its relief (clamping them made
    /// flat smeared strips along the edges at large magnitudes).
    ///
    /// `n₁`, `n₂` are two independent smooth spectral fields ([`Spectral`], smoothstep
    /// interpolation, step 2, persistence 0.5) scaled to [−1, 1], so the displacement is at most
    /// `magnitude · L` cells (`L` = longer side): the seed's "radius of allowed displacement".
    /// Olsen 2004 (research/algorithms.md §1) used noise displacement (Ebert et al.) with
    /// magnitude 0.25, where his erosion score peaks; lower values just roughen outlines.
    ///
    /// **In a world** the displacement is `magnitude-m` metres at most, i.e. `m = magnitude-m /
    /// cell-size` cells: `h'(p) = h(p + m·(n₁(p), n₂(p)))`, where `n₁`, `n₂` are value-noise fBm
    /// fields (smoothstep lattice values as the spectral fields, `passes` octaves, lacunarity 2,
    /// persistence 0.5, seeds `derive_seed(seed, 0)` and `(seed, 1)`) sampled at each cell's
    /// world position over `spacing-m` metres per lattice cell ([`terrasynth_noise::Noise::fill_cells`]:
    /// exact per world cell, the same bits on every SIMD level) and clamped to [−1, 1]. The
    /// displacement is split into whole cells and a fraction (`⌊d⌋`, `d − ⌊d⌋`) before it is
    /// added to the cell, so the bilinear weights do not depend on where the window starts.
    /// Reach `⌈m⌉ + 1` cells (the bilinear sample reads one more cell); no mirroring (the
    /// window's border is cut off anyway). Without `magnitude-m` the step is refused in a world.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Perturb {
        magnitude: f64 = ParamSpec {
            name: "magnitude",
            label: "Displacement",
            kind: ParamKind::Float { min: 0.0, max: 0.5 },
            default: DefaultValue::Number(0.05),
            unit: "fraction of the longer side",
            doc: "Largest displacement of a sample position (seed 001 §3.2 `magnitude`; Olsen \
                  2004 uses 0.25).",
        },
        frequency: f64 = ParamSpec {
            name: "frequency",
            label: "Frequency",
            kind: ParamKind::Float { min: 2.0, max: 1024.0 },
            default: DefaultValue::Number(6.0),
            unit: "points per side",
            doc: "Lattice points per side of the displacement field's coarsest pass: higher \
                  gives a finer, more chaotic warp.",
        },
        passes: u32 = ParamSpec {
            name: "passes",
            label: "Passes",
            kind: ParamKind::Int { min: 1, max: 12 },
            default: DefaultValue::Number(3.0),
            unit: "",
            doc: "Passes (octaves) of the displacement field.",
        },
        magnitude_m: Option<f64> = ParamSpec {
            name: "magnitude-m",
            label: "World displacement",
            kind: ParamKind::Float { min: 0.0, max: 1.0e6 },
            default: DefaultValue::Absent,
            unit: "m",
            doc: "World recipes only (and required there): largest displacement in metres, in \
                  place of `magnitude`. The step's reach is this many cells plus one.",
        },
        spacing_m: f64 = ParamSpec {
            name: "spacing-m",
            label: "World spacing",
            kind: ParamKind::Float { min: 1.0, max: 1.0e9 },
            default: DefaultValue::Number(2000.0),
            unit: "m",
            doc: "World recipes only: lattice spacing of the displacement field's coarsest pass, \
                  in place of `frequency`. A map recipe may only leave it at its default.",
        },
    }
}

impl Perturb {
    /// A checked step.
    pub fn new(magnitude: f64, frequency: f64, passes: u32) -> Result<Self> {
        let s = Self { magnitude, frequency, passes, magnitude_m: None, spacing_m: 2000.0 };
        s.check_ranges()?;
        Ok(s)
    }

    /// The perturbed copy of `map`. The two displacement fields are made row by row beside
    /// the rows that read them (the values of [`unit_field`], bit for bit), so they are never
    /// held whole: two `f64` grids less in memory (at 1025² on one thread the step takes
    /// 19.7 ms instead of 26.7, but a whole run of `highlands` no less: the later steps fault
    /// in the pages this step no longer leaves them).
    pub fn apply(&self, map: &Heightmap, seed: u64) -> Result<Heightmap> {
        let (w, h) = (map.width(), map.height());
        let spectral = Spectral::new(self.frequency, 2.0, 0.5, self.passes, Interpolation::Smooth)?;
        let fields = [0, 1].map(|k| spectral.rows(w, h, derive_seed(seed, k)));
        let reach = self.magnitude * w.max(h) as f64;
        // Zeros from fresh pages, first written below (in parallel), never read before.
        let mut out = Heightmap::from_vec(w, h, map.cell_size(), vec![0.0; w * h])?;
        out.as_mut_slice().par_chunks_mut(w).enumerate().for_each_init(
            || (vec![0.0f64; w], vec![0.0f64; w]),
            |(n1, n2), (y, row)| {
                for (field, n) in fields.iter().zip([&mut *n1, &mut *n2]) {
                    field.row(y, n);
                    to_unit(n, &spectral);
                }
                for (x, v) in row.iter_mut().enumerate() {
                    let sx = reflect(x as f64 + reach * n1[x], w);
                    let sy = reflect(y as f64 + reach * n2[x], h);
                    *v = map.sample_bilinear(sx, sy);
                }
            },
        );
        Ok(out)
    }

    /// The same step in a world: displacements of at most `magnitude_m` metres over a field of
    /// `spacing_m` metres per lattice cell (checked).
    pub fn in_world(self, magnitude_m: f64, spacing_m: f64) -> Result<Self> {
        let s = Self { magnitude_m: Some(magnitude_m), spacing_m, ..self };
        s.check_ranges()?;
        Ok(s)
    }

    /// The largest displacement in cells of `world`.
    fn world_cells(&self, world: &WorldFrame) -> Option<f64> {
        self.magnitude_m.map(|m| m / world.cell_size)
    }

    /// The perturbed copy of the window `map` of `world` (see the type's "In a world").
    pub fn apply_world(&self, map: &Heightmap, world: &WorldFrame, seed: u64) -> Result<Heightmap> {
        let reach = self
            .world_cells(world)
            .ok_or_else(|| super::world::required("magnitude-m", "the largest displacement in metres"))?;
        let (w, h) = (map.width(), map.height());
        let cells = CellRegion {
            col0: world.x0,
            row0: world.y0,
            width: w,
            height: h,
            scale_x: world.cell_size / self.spacing_m,
            scale_y: world.cell_size / self.spacing_m,
            offset_x: 0.0,
            offset_y: 0.0,
        };
        let [n1, n2] = super::world::warp_fields(&cells, NoiseKind::Value, self.passes, seed)?;
        // A displacement as whole cells (clamped to the window: its border is garbage) and the
        // fraction of a cell, independent of the window's origin.
        let split = |at: usize, d: f64, n: usize| {
            let whole = d.floor();
            let cell = (at as i64 + whole as i64).clamp(0, n.saturating_sub(2) as i64) as usize;
            (cell, d - whole)
        };
        let src = map.as_slice();
        // Zeros from fresh pages, first written below (in parallel), never read before.
        let mut out = Heightmap::from_vec(w, h, map.cell_size(), vec![0.0; w * h])?;
        out.as_mut_slice().par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, v) in row.iter_mut().enumerate() {
                let i = y * w + x;
                let (cx, u) = split(x, reach * n1[i] as f64, w);
                let (cy, t) = split(y, reach * n2[i] as f64, h);
                let k = cy * w + cx;
                let (dx, dy) = (usize::from(w > 1), if h > 1 { w } else { 0 });
                let (a, b, c, d) =
                    (src[k] as f64, src[k + dx] as f64, src[k + dy] as f64, src[k + dy + dx] as f64);
                *v = (a * (1.0 - u) * (1.0 - t) + b * u * (1.0 - t) + c * (1.0 - u) * t + d * u * t) as f32;
            }
        });
        Ok(out)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "perturb",
            category: Category::Shape,
            doc: "Perturbation: every cell samples the terrain at a position displaced by a \
                  smooth noise field, within `magnitude` of the map size.",
            source: "seed 001 §3.2; Olsen 2004 (research/algorithms.md §1, magnitude 0.25)",
            params: Self::PARAMS,
            build: |p: &Params| Ok(Box::new(Self::read_params(p)?)),
        }
    }
}

impl Step for Perturb {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        terrain.height = match &ctx.frame {
            Frame::Map => self.apply(&terrain.height, ctx.seed)?,
            Frame::World(world) => self.apply_world(&terrain.height, world, ctx.seed)?,
        };
        Ok(())
    }

    /// `⌈magnitude-m / cell-size⌉ + 1` cells; global without `magnitude-m`.
    fn reach(&self, world: &WorldFrame) -> Reach {
        match self.world_cells(world) {
            Some(cells) if cells.is_finite() => Reach::Cells(cells.ceil() as usize + 1),
            _ => Reach::Global,
        }
    }
}

step_params! {
    /// Spectral-synthesis overlay (seed 001 §3.1): adds one or more spectral layers to an
    /// existing terrain, `h' = h + a · (hi − lo) · S(x, y)`, where `S` is a [`Spectral`] field
    /// scaled to [−1, 1] and `a` the `amplitude` relative to the current height range (so it
    /// works whatever the generator's units). Same keys as `spectral`, with finer defaults
    /// (`start-frequency` 16, `passes` 3).
    ///
    /// **In a world** `S` is the `spectral` step's world field (lattices hashed by world lattice
    /// coordinates, first-pass spacing `feature-size-m` metres: see [`Spectral`]) divided by
    /// `Σ p^i`, and the range is the world's declared height range: `h' = h + a · (hi − lo) ·
    /// S`. A point step (reach 0); without `feature-size-m` it is refused in a world, and
    /// `feature-size-m` is refused on a single map (as by `spectral`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct SpectralOverlay {
        amplitude: f64 = ParamSpec {
            name: "amplitude",
            label: "Amplitude",
            kind: ParamKind::Float { min: 0.0, max: 10.0 },
            default: DefaultValue::Number(0.1),
            unit: "fraction of the height range",
            doc: "Largest height added or removed, relative to the terrain's current range.",
        },
        /// The layers (`spectral`'s keys).
        spectral: Spectral = nested(
            "start-frequency" => DefaultValue::Number(16.0),
            "passes" => DefaultValue::Number(3.0),
        ),
    }
}

impl SpectralOverlay {
    /// A checked step.
    pub fn new(spectral: Spectral, amplitude: f64) -> Result<Self> {
        let s = Self { amplitude, spectral };
        s.check_ranges()?;
        Ok(s)
    }

    /// Applies to the window `map` of `world` with the step seed (see the type's "In a
    /// world").
    pub fn apply_world(&self, map: &mut Heightmap, world: &WorldFrame, seed: u64) -> Result<()> {
        let (w, h) = (map.width(), map.height());
        let mut field = self.spectral.world_field((world.x0, world.y0), world.cell_size, (w, h), seed)?;
        to_unit(&mut field, &self.spectral);
        let [lo, hi] = world.height_range;
        let scale = self.amplitude * (hi - lo);
        for (v, f) in map.as_mut_slice().iter_mut().zip(field) {
            *v = (*v as f64 + scale * f) as f32;
        }
        Ok(())
    }

    /// Applies to a heightmap.
    pub fn apply(&self, map: &mut Heightmap, seed: u64) {
        let (_, r) = range(map);
        let scale = self.amplitude * if r > 0.0 { r as f64 } else { 1.0 };
        let field = unit_field(&self.spectral, map.width(), map.height(), seed);
        for (v, f) in map.as_mut_slice().iter_mut().zip(field) {
            *v = (*v as f64 + scale * f) as f32;
        }
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "spectral-overlay",
            category: Category::Shape,
            doc: "Adds spectral-synthesis layers to the terrain (detail on top of a base).",
            source: "seed 001 §3.1",
            params: Self::PARAMS,
            build: |p: &Params| Ok(Box::new(Self::read_params(p)?)),
        }
    }
}

impl Step for SpectralOverlay {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        match &ctx.frame {
            Frame::Map => {
                refuse_world_length(self.spectral.feature_size_m, "`start-frequency`")?;
                self.apply(&mut terrain.height, ctx.seed);
                Ok(())
            }
            Frame::World(world) => self.apply_world(&mut terrain.height, world, ctx.seed),
        }
    }

    /// A point step once `feature-size-m` is given (global without it).
    fn reach(&self, _world: &WorldFrame) -> Reach {
        if self.spectral.feature_size_m.is_some() { Reach::Cells(0) } else { Reach::Global }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::params::assert_ranges_enforced;
    use crate::step::{ParamSpec, ParamValue};

    /// The perturbation made row by row has the bits of the whole-field formula: both
    /// displacement fields made whole ([`unit_field`]), then every cell sampled.
    #[test]
    fn perturbation_by_rows_equals_the_whole_field_formula() {
        let (w, h) = (83, 61);
        let map = Heightmap::from_fn(w, h, 1.0, |x, y| {
            ((x * 7 + y * 13) % 17) as f32 * 0.1 + (x as f32 * 0.05).sin()
        })
        .unwrap();
        for (magnitude, frequency, passes, seed) in [(0.1, 4.0, 3, 5u64), (0.3, 2.0, 1, 9), (0.05, 7.5, 5, 0)]
        {
            let step = Perturb::new(magnitude, frequency, passes).unwrap();
            let got = step.apply(&map, seed).unwrap();
            let spectral = Spectral::new(frequency, 2.0, 0.5, passes, Interpolation::Smooth).unwrap();
            let n1 = unit_field(&spectral, w, h, derive_seed(seed, 0));
            let n2 = unit_field(&spectral, w, h, derive_seed(seed, 1));
            let reach = magnitude * w.max(h) as f64;
            for y in 0..h {
                for x in 0..w {
                    let i = y * w + x;
                    let want = map.sample_bilinear(
                        reflect(x as f64 + reach * n1[i], w),
                        reflect(y as f64 + reach * n2[i], h),
                    );
                    assert_eq!(got[(x, y)].to_bits(), want.to_bits(), "({x}, {y}), seed {seed}");
                }
            }
            assert!(got.as_slice() != map.as_slice(), "the step moved nothing");
        }
    }

    /// `reflect`'s shortcut gives the bits of the plain `rem_euclid` formula everywhere: at
    /// period boundaries and their neighbouring doubles, signed zeros, far outside, NaN and
    /// infinities, and a million pseudo-random positions.
    #[test]
    fn reflect_matches_the_rem_euclid_formula_bit_for_bit() {
        let plain = |v: f64, n: usize| {
            if n < 2 {
                return 0.0;
            }
            let last = (n - 1) as f64;
            let t = v.rem_euclid(2.0 * last);
            if t > last { 2.0 * last - t } else { t }
        };
        let mut values = vec![0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e300, -1e-300];
        for n in [1usize, 2, 3, 513, 1025] {
            let p = 2.0 * (n.max(2) - 1) as f64;
            for base in [0.0, p, -p, 0.5 * p, -0.5 * p, 2.0 * p, -2.0 * p] {
                values.extend([base, base.next_up(), base.next_down()]);
            }
        }
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..1_000_000 {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            values.push(((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 8000.0);
        }
        for n in [1usize, 2, 3, 513, 1025] {
            for &v in &values {
                assert_eq!(reflect(v, n).to_bits(), plain(v, n).to_bits(), "reflect({v}, {n})");
            }
        }
    }

    /// `spectral-overlay` lists `amplitude` then `spectral`'s parameters (same specs but the
    /// finer defaults `start-frequency` 16 and `passes` 3); recipes are refused exactly outside
    /// every number range; its `Default` is those defaults.
    #[test]
    fn spectral_overlay_nests_spectral_with_its_own_defaults() {
        let specs = SpectralOverlay::PARAMS;
        assert_eq!(specs[0].name, "amplitude");
        assert_eq!(specs.len(), Spectral::PARAMS.len() + 1);
        for (o, s) in specs[1..].iter().zip(Spectral::PARAMS) {
            let default = match o.name {
                "start-frequency" => DefaultValue::Number(16.0),
                "passes" => DefaultValue::Number(3.0),
                _ => s.default,
            };
            assert_eq!(*o, ParamSpec { default, ..*s });
        }
        let build = |name: &str, v: f64| {
            let p = Params::defaults(specs).with(name, ParamValue::Number(v));
            SpectralOverlay::read_params(&p).map(drop)
        };
        assert_eq!(assert_ranges_enforced(specs, &build), 6);
        let d = SpectralOverlay::default();
        assert_eq!((d.amplitude, d.spectral.start_frequency, d.spectral.passes), (0.1, 16.0, 3));
        let s = Spectral::default();
        assert_eq!((d.spectral.step, d.spectral.persistence), (s.step, s.persistence));
        assert_eq!(SpectralOverlay::new(d.spectral.clone(), 0.1).unwrap(), d);
    }

    /// `Perturb::new` and recipes refuse exactly what its specs refuse.
    #[test]
    fn perturb_enforces_exactly_its_spec_ranges() {
        let build = |name: &str, v: f64| {
            let p = Params::defaults(Perturb::PARAMS).with(name, ParamValue::Number(v));
            let Perturb { magnitude, frequency, passes, magnitude_m, spacing_m } = Perturb::read_params(&p)?;
            let s = Perturb::new(magnitude, frequency, passes)?;
            match magnitude_m {
                Some(m) => s.in_world(m, spacing_m).map(drop),
                None => s.in_world(1.0, spacing_m).map(drop),
            }
        };
        assert_eq!(assert_ranges_enforced(Perturb::PARAMS, &build), 5);
        assert_eq!(Perturb::default(), Perturb::new(0.05, 6.0, 3).unwrap());
    }
}
