//! Iterative diamond-square (seed 001 §1.1.1).

use terrasynth_noise::rng::{SplitMix64, derive_seed};

use super::common::{Subdivision, crop_square, diamond_square_fill, pow2_exponent, symmetric};
use super::{Generator, GeneratorStep};
use crate::step::params::step_params;
use crate::step::{Category, DefaultValue, ParamKind, StepInfo};
use crate::{Heightmap, Progress, Result};

step_params! {
    /// Square-based midpoint displacement, computed iteratively level by level (seed 001 §1.1.1).
    ///
    /// Steps, on a `(2^n + 1)²` grid with the smallest `n` that covers the map:
    /// 1. the 4 corners get `roughness · u`, `u` uniform in [−1, 1);
    /// 2. for each level (half-step `h = 2^(n−1) … 1`): *diamond* — each square's centre is the
    ///    mean of its 4 corners plus `disp · u`; *square* — each edge midpoint is the mean of its 4
    ///    diamond neighbours (3 on the border) plus `disp · u`;
    /// 3. `disp` starts at `roughness` and is multiplied by `2^(−smoothness)` after each level.
    ///
    /// The seed draws `random() ∈ [0, 1]`; this uses `u ∈ [−1, 1)` so the map does not drift
    /// upwards level after level (the shape statistics are otherwise the same). Levels past
    /// `detail` (when `detail > 0`) get no offset: their cells are bilinear interpolation of the
    /// coarser grid, so `detail` sets how many points carry fractal detail. Maps that are not
    /// `2^n + 1` square are the top-left window of the next valid square.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DiamondSquare {
        roughness: f64 = ParamSpec {
            name: "roughness",
            kind: ParamKind::Float { min: 0.0, max: 1000.0 },
            default: DefaultValue::Number(1.0),
            unit: "height units",
            doc: "Initial displacement factor (seed 001 §1.1.1): offsets at the coarsest level are \
                  uniform in [-roughness, roughness]. Scales the whole relief.",
        },
        smoothness: f64 = ParamSpec {
            name: "smoothness",
            kind: ParamKind::Float { min: 0.0, max: 4.0 },
            default: DefaultValue::Number(1.0),
            unit: "",
            doc: "H: the displacement is multiplied by 2^(-H) after each level (seed 001 §1.1.1). \
                  0 = very rough (white-noise-like), 1 = natural, 2+ = smooth rolling hills.",
        },
        detail: u32 = ParamSpec {
            name: "detail",
            kind: ParamKind::Int { min: 0, max: 20 },
            default: DefaultValue::Number(0.0),
            unit: "levels",
            doc: "Number of subdivision levels that get random offsets (the seed's `detail`, grid \
                  2^detail + 1); finer levels are bilinear interpolation. 0 = every level.",
        },
    }
}

impl DiamondSquare {
    /// A checked generator.
    pub fn new(roughness: f64, smoothness: f64, detail: u32) -> Result<Self> {
        let s = Self { roughness, smoothness, detail };
        s.check_ranges()?;
        Ok(s)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "diamond-square",
            category: Category::Generate,
            doc: "Iterative diamond-square midpoint displacement: fractal relief whose roughness \
                  is set by the per-level displacement factor 2^(-smoothness).",
            source: "seed 001 §1.1.1 (square base, iterative form)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(GeneratorStep(Self::read_params(p)?))),
        }
    }
}

impl Generator for DiamondSquare {
    fn generate(&self, width: usize, height: usize, seed: u64, _progress: &Progress) -> Result<Heightmap> {
        crate::grid::check_size::<f64>(width, height)?;
        let n = pow2_exponent(width, height);
        let side = (1usize << n) + 1;
        let mut buf = vec![0.0; side * side];
        let mut rng = SplitMix64::new(derive_seed(seed, 0));
        for (x, y) in [(0, 0), (side - 1, 0), (0, side - 1), (side - 1, side - 1)] {
            buf[y * side + x] = self.roughness * symmetric(&mut rng);
        }
        let sub = Subdivision {
            disp0: self.roughness,
            decay: (-self.smoothness).exp2(),
            noisy_levels: if self.detail == 0 { u32::MAX } else { self.detail },
        };
        diamond_square_fill(&mut buf, side, side - 1, sub, derive_seed(seed, 1));
        crop_square(&buf, side, width, height)
    }
}
