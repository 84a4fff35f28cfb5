//! Fractals over any basic noise: fBm, billow, Musgrave's ridged and hybrid multifractals
//! (seeds 000, 003, 004 §6; algorithms.md §7c), and their per-octave table.
//!
//! Octave `i` (0-based) samples the basic noise at `q·λ^i + o_i`, where `q` is the lattice
//! point, `λ` the lacunarity and `o_i` = [`octave_offset`]`(seed, i)` (seed 003 gives every
//! octave its own random offset). Write `n_i` for that sample and `M` for the largest |value| of
//! the basic noise.
//!
//! - **fbm**: `Σ a_i·n_i / Σ a_i`, `a_0 = 1`, `a_{i+1} = a_i·persistence`. Same range as the
//!   basic noise.
//! - **billow**: `Σ a_i·(2|n_i| − 1) / Σ a_i`. Range `[−1, 2M − 1]` (= [−1, 1] for noises in
//!   [−1, 1]).
//! - **ridged** (Musgrave): weights `w_i = λ^(−i·H)`; `s_0 = (offset − |n_0|)²`, `r = s_0`; for
//!   `i ≥ 1`: `weight = clamp(s_{i−1}·gain, 0, 1)`, `s_i = (offset − |n_i|)²·weight`,
//!   `r += s_i·w_i`. Output `r / (S·Σ w_i)` with `S = max(offset², (M − offset)²)`: range
//!   [0, 1].
//!
//!   Known artefact (faint straight lines, one per lattice cell of each octave, e.g. every
//!   16 px for the octave whose cell is 16 px): gradient noise is not stationary, it is 0 at the
//!   lattice points and its spread is smallest on the lattice lines (improved Perlin 2D, one
//!   octave, standard deviation by position across the cell measured over 1024² samples: 0.169
//!   on the lattice lines, 0.254 mid-cell). Ridged folds `|n|`, so its mean is higher along
//!   each octave's lattice lines: ridged perlin, 6 octaves, 64-px base cell, mean by column
//!   modulo 16 px varies from 0.668 to 0.687 (≈ 3 %), a periodic ramp that hillshading
//!   shows as lines. Not a bulk-fill defect (the point path gives the same statistics). Ways
//!   to soften it, not done: rotate each octave's domain (the lines of different octaves then
//!   stop being parallel), or use opensimplex2, whose lattice is not axis-aligned.
//! - **hybrid** (Musgrave): `r = (n_0 + offset)·w_0`, `weight = r`; for `i ≥ 1`:
//!   `weight = min(weight, 1)`, `s = (n_i + offset)·w_i`, `r += weight·s`, `weight *= s` (no
//!   early exit). Output `r / ((M + offset)·Σ w_i)`: range [0, 1] when `offset ≥ M`; otherwise
//!   the range is bounded by interval arithmetic over the same recurrence.

use crate::rng::{SplitMix64, derive_seed};
use crate::spec::{FractalKind, Musgrave};

/// Half-width of the per-octave offset box, in lattice units.
pub const OCTAVE_OFFSET_SPAN: f64 = 256.0;
/// Per-octave offsets are multiples of 1/1024 (exact in binary, so tileable output stays
/// exactly periodic).
pub const OCTAVE_OFFSET_QUANTUM: f64 = 1.0 / 1024.0;

/// One octave of a fractal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Octave {
    /// Frequency multiplier `λ^i`.
    pub scale: f64,
    /// Offset `o_i` added after scaling (x, y, z), lattice units.
    pub offset: [f64; 3],
    /// `a_i = persistence^i` (fbm, billow) or `w_i = λ^(−i·H)` (ridged, hybrid); 1 for none.
    pub weight: f64,
    /// Period of this octave in its own lattice cells (`period·λ^i`), when tileable.
    pub period: Option<u32>,
}

/// The offset of octave `i` for `seed`: three uniform draws in [−256, 256) from
/// `SplitMix64(derive_seed(seed, i))`, each rounded down to a multiple of 1/1024.
/// The single source of per-octave offsets (the bulk path reads them from the octave table).
pub fn octave_offset(seed: u64, i: u32) -> [f64; 3] {
    let mut rng = SplitMix64::new(derive_seed(seed, u64::from(i)));
    [0; 3].map(|_| {
        let v = rng.range_f64(-OCTAVE_OFFSET_SPAN, OCTAVE_OFFSET_SPAN);
        (v / OCTAVE_OFFSET_QUANTUM).floor() * OCTAVE_OFFSET_QUANTUM
    })
}

/// The octave table for a fractal. `FractalKind::None` gives one octave with scale 1, offset 0
/// and weight 1, so that the plain noise is sampled exactly at `q`.
pub(crate) fn octave_table(
    fractal: FractalKind,
    seed: u64,
    octaves: u32,
    lacunarity: f64,
    persistence: f64,
    musgrave: Musgrave,
    period: Option<u32>,
) -> Vec<Octave> {
    if fractal == FractalKind::None {
        return vec![Octave { scale: 1.0, offset: [0.0; 3], weight: 1.0, period }];
    }
    let mut table = Vec::with_capacity(octaves as usize);
    let mut scale: f64 = 1.0;
    let mut amp = 1.0;
    for i in 0..octaves {
        let weight = match fractal {
            // `detmath`, not the platform's `powf`: the same weight bits everywhere.
            FractalKind::Ridged | FractalKind::Hybrid => crate::detmath::pow(scale, -musgrave.h),
            _ => amp,
        };
        // The spec validation keeps period·λ^i below 2^32.
        let period = period.map(|p| (f64::from(p) * scale) as u32);
        table.push(Octave { scale, offset: octave_offset(seed, i), weight, period });
        scale *= lacunarity;
        amp *= persistence;
    }
    table
}

/// How the octave samples are combined: a small state machine the point path and the bulk
/// path both drive, octave by octave.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Combiner {
    fractal: FractalKind,
    musgrave: Musgrave,
    /// Output divisor (see the module docs).
    norm: f64,
    /// `Σ w_i`.
    sum_w: f64,
}

/// The running state of a [`Combiner`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Acc {
    r: f64,
    s: f64,
    weight: f64,
}

impl Combiner {
    /// A combiner for `octaves` with basic-noise bound `m = max |n|`.
    pub(crate) fn new(fractal: FractalKind, musgrave: Musgrave, octaves: &[Octave], m: f64) -> Self {
        let sum_w: f64 = octaves.iter().map(|o| o.weight).sum();
        let off = musgrave.offset;
        let norm = match fractal {
            FractalKind::None => 1.0,
            FractalKind::Fbm | FractalKind::Billow => sum_w,
            FractalKind::Ridged => (off * off).max((m - off) * (m - off)) * sum_w,
            FractalKind::Hybrid => (m + off) * sum_w,
        };
        Self { fractal, musgrave, norm, sum_w }
    }

    /// Adds octave `i` (weight `w`) with basic-noise sample `n`.
    #[inline]
    pub(crate) fn add(&self, acc: &mut Acc, i: usize, w: f64, n: f64) {
        let Musgrave { offset, gain, .. } = self.musgrave;
        match self.fractal {
            FractalKind::None | FractalKind::Fbm => acc.r += w * n,
            FractalKind::Billow => acc.r += w * (2.0 * n.abs() - 1.0),
            FractalKind::Ridged => {
                let base = (offset - n.abs()) * (offset - n.abs());
                if i == 0 {
                    acc.s = base;
                    acc.r = base * w;
                } else {
                    let weight = (acc.s * gain).clamp(0.0, 1.0);
                    acc.s = base * weight;
                    acc.r += acc.s * w;
                }
            }
            FractalKind::Hybrid => {
                let signal = (n + offset) * w;
                if i == 0 {
                    acc.r = signal;
                    acc.weight = signal;
                } else {
                    let weight = acc.weight.min(1.0);
                    acc.r += weight * signal;
                    acc.weight = weight * signal;
                }
            }
        }
    }

    /// The normalised output.
    #[inline]
    pub(crate) fn finish(&self, acc: &Acc) -> f64 {
        acc.r / self.norm
    }

    /// The output range for a basic noise with range `(lo, hi)`.
    pub(crate) fn range(&self, octaves: &[Octave], lo: f64, hi: f64) -> (f64, f64) {
        let m = lo.abs().max(hi.abs());
        match self.fractal {
            FractalKind::None | FractalKind::Fbm => (lo, hi),
            FractalKind::Billow => {
                // |n| ∈ [min |n|, M]
                let min_abs = if lo <= 0.0 && hi >= 0.0 { 0.0 } else { lo.abs().min(hi.abs()) };
                (2.0 * min_abs - 1.0, 2.0 * m - 1.0)
            }
            FractalKind::Ridged => {
                // Each (offset − |n|)² ≤ S(M), weights ≤ 1.
                let off = self.musgrave.offset;
                (0.0, (off * off).max((m - off) * (m - off)) * self.sum_w / self.norm)
            }
            FractalKind::Hybrid => {
                let off = self.musgrave.offset;
                let sig = |w: f64| ((lo + off) * w, (hi + off) * w);
                let (mut r, mut weight) = (sig(octaves[0].weight), sig(octaves[0].weight));
                for o in &octaves[1..] {
                    let wt = (weight.0.min(1.0), weight.1.min(1.0));
                    let s = sig(o.weight);
                    let prod = interval_mul(wt, s);
                    r = (r.0 + prod.0, r.1 + prod.1);
                    weight = prod;
                }
                (r.0 / self.norm, r.1 / self.norm)
            }
        }
    }
}

/// Product of intervals `a·b`.
fn interval_mul(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let c = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
    (c.iter().copied().fold(f64::INFINITY, f64::min), c.iter().copied().fold(f64::NEG_INFINITY, f64::max))
}
