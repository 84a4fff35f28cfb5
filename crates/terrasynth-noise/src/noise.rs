//! [`Noise`]: a validated [`NoiseSpec`] with its tables precomputed; the point-evaluation
//! reference path.

use crate::fractal::{Acc, Combiner, Octave, octave_table};
use crate::hash::seed32;
use crate::perlin::{
    ANGLE_COUNT, angle_gradients, doubled_permutation, improved2, improved3, perlin_angle2, perlin_table2,
};
use crate::simplex::{gradients_2d, gradients_3d, simplex2, simplex3};
use crate::spec::{FractalKind, Musgrave, NoiseKind, NoiseSpec, Seed};
use crate::value::{value2, white2};
use crate::worley::{worley_range, worley2};
use crate::{NoiseError, NoiseFn};

/// Offset of the second warp component, close to Quilez's (5.2, 1.3) but exact in binary.
pub const WARP_DECORRELATION: [f64; 2] = [5.25, 1.375];

/// A ready-to-evaluate noise: build it with [`NoiseSpec::build`].
///
/// Evaluation of sample point `p = (x, y)`:
/// 1. lattice point `q = p·frequency + offset` (then `q / res` for `perlin-table`);
/// 2. if `warp = k > 0`: `w = (F(q·wf), F(q·wf + (5.25, 1.375)))` and `q ← q + k·w`, with `F`
///    the fractal below and `wf` the warp frequency (Quilez's domain warping, f(p + k·q(p)));
/// 3. the fractal `F(q)` over octaves `n_i = base(q·λ^i + o_i)` (see [`crate::fractal`]); with
///    `fractal = "none"`, `F(q) = base(q)`.
///
/// All arithmetic is f64; the lattice cell is `floor` in f64 converted to i64, so coordinates
/// up to |q| = 1e7 and beyond keep full precision.
#[derive(Clone, Debug)]
pub struct Noise {
    spec: NoiseSpec,
    seed: u64,
    hash_seed: u32,
    perm: Box<[u8; 512]>,
    angle_grads: Box<[[f64; 2]; ANGLE_COUNT]>,
    simplex_grads2: [[f64; 2]; crate::simplex::GRADIENT_COUNT_2D],
    simplex_grads3: [[f64; 3]; 12],
    musgrave: Musgrave,
    octaves: Vec<Octave>,
    combiner: Combiner,
    base_range: (f64, f64),
    range: (f64, f64),
    range3: (f64, f64),
    /// The bulk fill's column plans of the last lattice fill (see `bulk::PlanCache`).
    plans: crate::bulk::PlanCache,
}

impl NoiseSpec {
    /// Validates the spec (see [`NoiseSpec::validate`]) and precomputes the permutation,
    /// gradient and octave tables.
    pub fn build(&self) -> Result<Noise, NoiseError> {
        self.validate()?;
        let seed = self.seed.value();
        let perm_seed = match self.seed {
            Seed::Reference => None,
            Seed::Number(n) => Some(n),
        };
        let musgrave = self.musgrave();
        let octaves = octave_table(
            self.fractal,
            seed,
            self.octaves,
            self.lacunarity,
            self.persistence,
            musgrave,
            self.period,
        );
        let base_range = base_range(self);
        let m = base_range.0.abs().max(base_range.1.abs());
        let combiner = Combiner::new(self.fractal, musgrave, &octaves, m);
        let range = combiner.range(&octaves, base_range.0, base_range.1);
        let range3 = if self.kind == NoiseKind::Perlin {
            combiner.range(&octaves, -IMPROVED_BOUND_3D, IMPROVED_BOUND_3D)
        } else {
            range
        };
        Ok(Noise {
            spec: self.clone(),
            seed,
            hash_seed: seed32(seed),
            perm: doubled_permutation(perm_seed),
            angle_grads: angle_gradients(),
            simplex_grads2: gradients_2d(),
            simplex_grads3: gradients_3d(),
            musgrave,
            octaves,
            combiner,
            base_range,
            range,
            range3,
            plans: Default::default(),
        })
    }
}

/// The documented range of the basic noise of `spec`.
fn base_range(spec: &NoiseSpec) -> (f64, f64) {
    // Classic gradient noise with unit gradients: |n| ≤ √(N/4) = √½ in 2D.
    const CLASSIC: f64 = std::f64::consts::FRAC_1_SQRT_2;
    match spec.kind {
        NoiseKind::White | NoiseKind::Value | NoiseKind::OpenSimplex2 => (-1.0, 1.0),
        NoiseKind::PerlinAngle | NoiseKind::PerlinTable => (-CLASSIC, CLASSIC),
        NoiseKind::Perlin => (-IMPROVED_BOUND, IMPROVED_BOUND),
        NoiseKind::Worley => worley_range(spec.distance, spec.return_),
    }
}

/// Bound of |2D improved Perlin| (16 unit gradients; see `perlin::IMPROVED2_BOUND`).
pub(crate) const IMPROVED_BOUND: f64 = crate::perlin::IMPROVED2_BOUND;
/// Bound of |improved Perlin| in 3D: dense search of the same sum gives 1.036317; rounded up.
pub(crate) const IMPROVED_BOUND_3D: f64 = 1.037;

impl Noise {
    /// The bulk fill's plan cache.
    pub(crate) fn plan_cache(&self) -> &crate::bulk::PlanCache {
        &self.plans
    }

    /// The validated spec.
    pub fn spec(&self) -> &NoiseSpec {
        &self.spec
    }

    /// The documented output range `(min, max)`: every value of [`NoiseFn::get2`] and
    /// [`Noise::get3`] lies in it (a bound, not necessarily reached).
    pub fn range(&self) -> (f64, f64) {
        self.range
    }

    /// The documented output range of [`Noise::get3`] (wider than [`Noise::range`] only for
    /// `perlin`, whose 3D bound is 1.037 against 0.6954 in 2D).
    pub fn range3(&self) -> (f64, f64) {
        self.range3
    }

    /// The range of the basic noise before the fractal.
    pub fn base_range(&self) -> (f64, f64) {
        self.base_range
    }

    /// The numeric seed (`"reference"` → 0) used for hashing and per-octave offsets.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Musgrave's parameters with defaults filled in.
    pub fn musgrave(&self) -> Musgrave {
        self.musgrave
    }

    /// The octave table (one entry with scale 1 and offset 0 when `fractal = "none"`).
    pub fn octaves(&self) -> &[Octave] {
        &self.octaves
    }

    /// The 32-bit hash seed of the hash-based kinds.
    #[allow(dead_code)] // for the bulk path (src/bulk)
    pub(crate) fn hash_seed(&self) -> u32 {
        self.hash_seed
    }

    /// The doubled permutation of perlin-table and perlin.
    #[allow(dead_code)] // for the bulk path (src/bulk)
    pub(crate) fn permutation(&self) -> &[u8; 512] {
        &self.perm
    }

    /// The quantised-angle gradient table of perlin-angle.
    #[allow(dead_code)] // for the bulk path (src/bulk)
    pub(crate) fn angle_gradients(&self) -> &[[f64; 2]; ANGLE_COUNT] {
        &self.angle_grads
    }

    /// Step 1 of the evaluation: sample point → lattice point.
    #[inline]
    pub(crate) fn lattice2(&self, x: f64, y: f64) -> [f64; 2] {
        let s = &self.spec;
        let q = [x * s.frequency + s.offset[0], y * s.frequency + s.offset[1]];
        if s.kind == NoiseKind::PerlinTable { [q[0] / s.res, q[1] / s.res] } else { q }
    }

    /// The basic noise at lattice point `(x, y)` with period `period`.
    #[inline]
    pub(crate) fn base2(&self, x: f64, y: f64, period: Option<u32>) -> f64 {
        let s = &self.spec;
        match s.kind {
            NoiseKind::White => white2(self.hash_seed, x, y, period),
            NoiseKind::Value => value2(self.hash_seed, x, y, period),
            NoiseKind::PerlinAngle => perlin_angle2(&self.angle_grads, self.hash_seed, x, y, period),
            NoiseKind::PerlinTable => perlin_table2(&self.perm, x, y, period),
            NoiseKind::Perlin => improved2(&self.perm, x, y, period),
            NoiseKind::OpenSimplex2 => simplex2(&self.simplex_grads2, self.hash_seed, x, y),
            NoiseKind::Worley => worley2(self.hash_seed, x, y, s.jitter, s.distance, s.return_),
        }
    }

    /// Step 3: the fractal at lattice point `q`.
    #[inline]
    pub(crate) fn fractal2(&self, q: [f64; 2]) -> f64 {
        let mut acc = Acc::default();
        for (i, o) in self.octaves.iter().enumerate() {
            let n = self.base2(q[0] * o.scale + o.offset[0], q[1] * o.scale + o.offset[1], o.period);
            self.combiner.add(&mut acc, i, o.weight, n);
        }
        self.combiner.finish(&acc)
    }

    /// Step 2: the warped lattice point (identity when `warp = 0`).
    #[inline]
    pub(crate) fn warp2(&self, q: [f64; 2]) -> [f64; 2] {
        let k = self.spec.warp;
        if k == 0.0 {
            return q;
        }
        let wf = self.spec.warp_frequency;
        let p = [q[0] * wf, q[1] * wf];
        let wx = self.fractal2(p);
        let wy = self.fractal2([p[0] + WARP_DECORRELATION[0], p[1] + WARP_DECORRELATION[1]]);
        [q[0] + k * wx, q[1] + k * wy]
    }

    /// The value at 3D point `(x, y, z)`, within [`Noise::range3`]; lattice point `p·frequency + (offset, 0)`, fractal
    /// octaves use the z component of their offset. Available for `perlin` and `opensimplex2`
    /// without warp; other kinds give [`NoiseError::Unsupported`].
    pub fn get3(&self, x: f64, y: f64, z: f64) -> Result<f64, NoiseError> {
        let s = &self.spec;
        if !s.kind.has_3d() {
            return Err(NoiseError::Unsupported {
                what: format!("3D samples of kind {} (3D: perlin, opensimplex2)", s.kind.name()),
            });
        }
        if s.warp > 0.0 {
            return Err(NoiseError::Unsupported { what: "3D samples with warp > 0".into() });
        }
        let f = s.frequency;
        let q = [x * f + s.offset[0], y * f + s.offset[1], z * f];
        let mut acc = Acc::default();
        for (i, o) in self.octaves.iter().enumerate() {
            let p = [0, 1, 2].map(|a| q[a] * o.scale + o.offset[a]);
            let n = match s.kind {
                NoiseKind::Perlin => improved3(&self.perm, p[0], p[1], p[2], o.period),
                _ => simplex3(&self.simplex_grads3, self.hash_seed, p[0], p[1], p[2]),
            };
            self.combiner.add(&mut acc, i, o.weight, n);
        }
        Ok(self.combiner.finish(&acc))
    }

    /// Whether the fractal is `none` (a single octave at the lattice point).
    pub fn is_single_octave(&self) -> bool {
        self.spec.fractal == FractalKind::None
    }
}

impl NoiseFn for Noise {
    #[inline]
    fn get2(&self, x: f64, y: f64) -> f64 {
        let q = self.lattice2(x, y);
        let q = self.warp2(q);
        self.fractal2(q)
    }
}
