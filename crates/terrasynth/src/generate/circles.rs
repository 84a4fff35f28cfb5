//! Circles: a sum of random round hills.

use rayon::prelude::*;
use terrasynth_noise::rng::SplitMix64;

use super::{Generator, GeneratorStep};
use crate::step::params::{Choice, choice_enum, step_params};
use crate::step::{Category, DefaultValue, ParamKind, Params, StepInfo};
use crate::{Error, Heightmap, Progress, Result};

choice_enum! {
    /// Profile of one hill, as a function of `q = (d / r)²` for `d < r` (0 outside).
    pub enum HillProfile {
        /// `1 − q`: the paraboloid `r² − d²` of the "hill algorithm", with a crease at the rim.
        Parabolic = "parabolic",
        /// `(1 − q)²`: smooth at the rim (zero slope), rounder hills.
        Smooth = "smooth",
    }
}

step_params! {
    /// Circles (the "hill algorithm"). Seed 001 §1 only names "Circles"; this follows the widely
    /// used hill algorithm (robot-frog.com, "Hill algorithm" tutorial): add many random round
    /// bumps, bigger ones taller.
    ///
    /// For each of `count` hills: centre uniform over the map, radius `r` uniform in
    /// `[radius-min, radius-max] · L` (`L` = longer side, in cells); every cell at distance
    /// `d < r` gets `+ (r / L) · profile((d/r)²)`. Heights scale with the relative radius, so the
    /// map looks the same at any resolution. The hills are drawn first, then rows are summed in
    /// parallel (each cell adds its hills in drawing order: bit-identical for any thread count).
    ///
    /// **Single map only** (refused in world recipes): the hill algorithm is defined over *the
    /// map*: `count` hills for the whole map, centres uniform over it, radii and heights as
    /// fractions of its longer side `L`. An endless plane has no `L` and no hill count; hills
    /// hashed per world cell with radii in metres would be a different parameterisation (and a
    /// Voronoi with `c = [−1]` or a `noise` step already gives round hills in a world).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Circles {
        count: u32 = ParamSpec {
            name: "count",
            label: "Count",
            kind: ParamKind::Int { min: 1, max: 100_000 },
            default: DefaultValue::Number(300.0),
            unit: "hills",
            doc: "Number of random circular hills.",
        },
        radius_min: f64 = ParamSpec {
            name: "radius-min",
            label: "Smallest radius",
            kind: ParamKind::Float { min: 0.001, max: 1.0 },
            default: DefaultValue::Number(0.02),
            unit: "fraction of the longer side",
            doc: "Smallest hill radius.",
        },
        radius_max: f64 = ParamSpec {
            name: "radius-max",
            label: "Largest radius",
            kind: ParamKind::Float { min: 0.001, max: 1.0 },
            default: DefaultValue::Number(0.12),
            unit: "fraction of the longer side",
            doc: "Largest hill radius (must be >= radius-min). Bigger hills are also taller.",
        },
        profile: HillProfile = ParamSpec {
            name: "profile",
            label: "Profile",
            kind: ParamKind::Choice(HillProfile::NAMES),
            default: DefaultValue::Text("smooth"),
            unit: "",
            doc: "`parabolic` (r² − d², the hill algorithm) or `smooth` ((1 − d²/r²)², no rim crease).",
        },
    }
}

impl Circles {
    /// A checked generator.
    pub fn new(count: u32, radius_min: f64, radius_max: f64, profile: HillProfile) -> Result<Self> {
        let s = Self { count, radius_min, radius_max, profile };
        s.check_ranges()?;
        if radius_max < radius_min {
            return Err(Error::param(
                "radius-max",
                radius_max,
                format!("a number >= radius-min ({radius_min})"),
            ));
        }
        Ok(s)
    }

    /// From validated recipe parameters (ranges, then `radius-max >= radius-min`).
    pub fn from_params(p: &Params) -> Result<Self> {
        let Self { count, radius_min, radius_max, profile } = Self::read_params(p)?;
        Self::new(count, radius_min, radius_max, profile)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "circles",
            category: Category::Generate,
            doc: "Circles (hill algorithm): the sum of many random round hills, bigger ones taller.",
            source: "seed 001 §1 (named only); the \"hill algorithm\" (robot-frog.com tutorial)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(GeneratorStep(Self::from_params(p)?))),
        }
    }
}

impl Generator for Circles {
    fn generate(&self, width: usize, height: usize, seed: u64, progress: &Progress) -> Result<Heightmap> {
        crate::grid::check_size::<f32>(width, height)?;
        let long = width.max(height) as f64;
        let mut rng = SplitMix64::new(seed);
        // (cx, cy, r) in cells.
        let hills: Vec<[f64; 3]> = (0..self.count)
            .map(|_| {
                let cx = rng.next_f64() * width as f64;
                let cy = rng.next_f64() * height as f64;
                let r = rng.range_f64(self.radius_min, self.radius_max) * long;
                [cx, cy, r.max(0.5)]
            })
            .collect();
        let profile = self.profile;
        let mut data = vec![0.0f32; width * height];
        let rows = super::common::RowProgress::new(progress, height);
        data.par_chunks_mut(width).enumerate().try_for_each(|(y, row)| -> Result<()> {
            rows.row_done()?;
            let yc = y as f64 + 0.5;
            let mut acc = vec![0.0f64; width];
            for &[cx, cy, r] in &hills {
                let dy = yc - cy;
                if dy.abs() >= r {
                    continue;
                }
                let half = (r * r - dy * dy).sqrt();
                let x0 = (cx - half - 0.5).floor().max(0.0) as usize;
                let x1 = ((cx + half - 0.5).ceil().max(0.0) as usize).min(width - 1);
                let amp = r / long;
                for (x, a) in acc.iter_mut().enumerate().take(x1 + 1).skip(x0) {
                    let dx = x as f64 + 0.5 - cx;
                    let q = (dx * dx + dy * dy) / (r * r);
                    if q < 1.0 {
                        *a += amp
                            * match profile {
                                HillProfile::Parabolic => 1.0 - q,
                                HillProfile::Smooth => (1.0 - q) * (1.0 - q),
                            };
                    }
                }
            }
            for (cell, a) in row.iter_mut().zip(acc) {
                *cell = a as f32;
            }
            Ok(())
        })?;
        Heightmap::from_vec(width, height, 1.0, data)
    }
}
