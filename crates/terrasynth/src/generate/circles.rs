//! Circles: a sum of random round hills.

use rayon::prelude::*;
use terrasynth_noise::rng::SplitMix64;

use super::{Generator, GeneratorStep};
use crate::step::params::{check_number, check_text};
use crate::step::{Category, StepInfo};
use crate::step::{DefaultValue, ParamKind, ParamSpec, Params};
use crate::{Error, Heightmap, Progress, Result};

/// Profile of one hill, as a function of `q = (d / r)²` for `d < r` (0 outside).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HillProfile {
    /// `1 − q`: the paraboloid `r² − d²` of the "hill algorithm", with a crease at the rim.
    Parabolic,
    /// `(1 − q)²`: smooth at the rim (zero slope), rounder hills.
    Smooth,
}

impl HillProfile {
    /// Names as written in recipes.
    pub const NAMES: &'static [&'static str] = &["parabolic", "smooth"];

    /// Parses a recipe name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "parabolic" => Some(Self::Parabolic),
            "smooth" => Some(Self::Smooth),
            _ => None,
        }
    }
}

/// Circles (the "hill algorithm"). Seed 001 §1 only names "Circles"; this follows the widely
/// used hill algorithm (robot-frog.com, "Hill algorithm" tutorial): add many random round
/// bumps, bigger ones taller.
///
/// For each of `count` hills: centre uniform over the map, radius `r` uniform in
/// `[radius-min, radius-max] · L` (`L` = longer side, in cells); every cell at distance
/// `d < r` gets `+ (r / L) · profile((d/r)²)`. Heights scale with the relative radius, so the
/// map looks the same at any resolution. The hills are drawn first, then rows are summed in
/// parallel (each cell adds its hills in drawing order: bit-identical for any thread count).
#[derive(Clone, Debug, PartialEq)]
pub struct Circles {
    /// Number of hills (default 300).
    pub count: u32,
    /// Smallest radius, fraction of the longer side (default 0.02).
    pub radius_min: f64,
    /// Largest radius, fraction of the longer side (default 0.12).
    pub radius_max: f64,
    /// Hill profile (default smooth).
    pub profile: HillProfile,
}

impl Circles {
    /// Parameter specs (recipe keys).
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "count",
            kind: ParamKind::Int { min: 1, max: 100_000 },
            default: DefaultValue::Number(300.0),
            unit: "hills",
            doc: "Number of random circular hills.",
        },
        ParamSpec {
            name: "radius-min",
            kind: ParamKind::Float { min: 0.001, max: 1.0 },
            default: DefaultValue::Number(0.02),
            unit: "fraction of the longer side",
            doc: "Smallest hill radius.",
        },
        ParamSpec {
            name: "radius-max",
            kind: ParamKind::Float { min: 0.001, max: 1.0 },
            default: DefaultValue::Number(0.12),
            unit: "fraction of the longer side",
            doc: "Largest hill radius (must be >= radius-min). Bigger hills are also taller.",
        },
        ParamSpec {
            name: "profile",
            kind: ParamKind::Choice(HillProfile::NAMES),
            default: DefaultValue::Text("smooth"),
            unit: "",
            doc: "`parabolic` (r² − d², the hill algorithm) or `smooth` ((1 − d²/r²)², no rim crease).",
        },
    ];

    /// A checked generator.
    pub fn new(count: u32, radius_min: f64, radius_max: f64, profile: HillProfile) -> Result<Self> {
        check_number(Self::PARAMS, "count", count as f64)?;
        check_number(Self::PARAMS, "radius-min", radius_min)?;
        check_number(Self::PARAMS, "radius-max", radius_max)?;
        if radius_max < radius_min {
            return Err(Error::param(
                "radius-max",
                radius_max,
                format!("a number >= radius-min ({radius_min})"),
            ));
        }
        Ok(Self { count, radius_min, radius_max, profile })
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        let profile = p.text("profile")?;
        check_text(Self::PARAMS, "profile", profile)?;
        Self::new(
            p.usize("count")? as u32,
            p.f64("radius-min")?,
            p.f64("radius-max")?,
            HillProfile::from_name(profile).unwrap_or(HillProfile::Smooth),
        )
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
