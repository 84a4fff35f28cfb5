//! Retouching (seed 001 §3): `perturb` (§3.2) and `spectral-overlay` (§3.1).

use rayon::prelude::*;
use terrasynth_noise::rng::derive_seed;

use super::basic::range;
use crate::generate::{Interpolation, Spectral};
use crate::step::params::step_params;
use crate::step::{Category, Step, StepContext, StepInfo, Terrain};
use crate::step::{DefaultValue, ParamKind, Params};
use crate::{Heightmap, Result};

/// A spectral field scaled to [−1, 1] (divided by `Σ p^i`).
fn unit_field(spectral: &Spectral, width: usize, height: usize, seed: u64) -> Vec<f64> {
    let norm: f64 = spectral.amplitudes().iter().sum();
    let mut f = spectral.field(width, height, seed);
    if norm > 0.0 {
        f.iter_mut().for_each(|v| *v /= norm);
    }
    f
}

/// Mirrors a sample position into `[0, n − 1]` (reflection about the first and last cell
/// centres, period `2(n − 1)`), however far outside it lies.
pub(crate) fn reflect(v: f64, n: usize) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let last = (n - 1) as f64;
    let t = v.rem_euclid(2.0 * last);
    if t > last { 2.0 * last - t } else { t }
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
    #[derive(Clone, Debug, PartialEq)]
    pub struct Perturb {
        magnitude: f64 = ParamSpec {
            name: "magnitude",
            kind: ParamKind::Float { min: 0.0, max: 0.5 },
            default: DefaultValue::Number(0.05),
            unit: "fraction of the longer side",
            doc: "Largest displacement of a sample position (seed 001 §3.2 `magnitude`; Olsen \
                  2004 uses 0.25).",
        },
        frequency: f64 = ParamSpec {
            name: "frequency",
            kind: ParamKind::Float { min: 2.0, max: 1024.0 },
            default: DefaultValue::Number(6.0),
            unit: "points per side",
            doc: "Lattice points per side of the displacement field's coarsest pass: higher \
                  gives a finer, more chaotic warp.",
        },
        passes: u32 = ParamSpec {
            name: "passes",
            kind: ParamKind::Int { min: 1, max: 12 },
            default: DefaultValue::Number(3.0),
            unit: "",
            doc: "Passes (octaves) of the displacement field.",
        },
    }
}

impl Perturb {
    /// A checked step.
    pub fn new(magnitude: f64, frequency: f64, passes: u32) -> Result<Self> {
        let s = Self { magnitude, frequency, passes };
        s.check_ranges()?;
        Ok(s)
    }

    /// The perturbed copy of `map`.
    pub fn apply(&self, map: &Heightmap, seed: u64) -> Result<Heightmap> {
        let (w, h) = (map.width(), map.height());
        let spectral = Spectral::new(self.frequency, 2.0, 0.5, self.passes, Interpolation::Smooth)?;
        let n1 = unit_field(&spectral, w, h, derive_seed(seed, 0));
        let n2 = unit_field(&spectral, w, h, derive_seed(seed, 1));
        let reach = self.magnitude * w.max(h) as f64;
        let mut out = map.clone();
        out.as_mut_slice().par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, v) in row.iter_mut().enumerate() {
                let i = y * w + x;
                let sx = reflect(x as f64 + reach * n1[i], w);
                let sy = reflect(y as f64 + reach * n2[i], h);
                *v = map.sample_bilinear(sx, sy);
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
        terrain.height = self.apply(&terrain.height, ctx.seed)?;
        Ok(())
    }
}

step_params! {
    /// Spectral-synthesis overlay (seed 001 §3.1): adds one or more spectral layers to an
    /// existing terrain, `h' = h + a · (hi − lo) · S(x, y)`, where `S` is a [`Spectral`] field
    /// scaled to [−1, 1] and `a` the `amplitude` relative to the current height range (so it
    /// works whatever the generator's units). Same keys as `spectral`, with finer defaults
    /// (`start-frequency` 16, `passes` 3).
    #[derive(Clone, Debug, PartialEq)]
    pub struct SpectralOverlay {
        amplitude: f64 = ParamSpec {
            name: "amplitude",
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
        self.apply(&mut terrain.height, ctx.seed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::params::assert_ranges_enforced;
    use crate::step::{ParamSpec, ParamValue};

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
        assert_eq!(assert_ranges_enforced(specs, &build), 5);
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
            let Perturb { magnitude, frequency, passes } = Perturb::read_params(&p)?;
            Perturb::new(magnitude, frequency, passes).map(drop)
        };
        assert_eq!(assert_ranges_enforced(Perturb::PARAMS, &build), 3);
        assert_eq!(Perturb::default(), Perturb::new(0.05, 6.0, 3).unwrap());
    }
}
