//! `opensimplex2`: simplex-lattice gradient noise in the manner of OpenSimplex2 (KdotJPG,
//! algorithms.md §7b). Our own implementation: the lattices, kernels and radii follow
//! OpenSimplex2 (fast); the hash, gradient sets and normalisers are ours, so values differ from
//! KdotJPG's code.
//!
//! 2D: skew `s = (x + y)·F2` with `F2 = (√3 − 1)/2`, cell `(⌊x+s⌋, ⌊y+s⌋)`, unskew with
//! `G2 = (3 − √3)/6`; every corner of the skewed cell within the kernel radius contributes
//! `(0.5 − |d|²)⁴ · (g·d)`, `g` one of 16 unit gradients at angles `(k + ½)·22.5°`, picked by
//! [`gradient_index`] from the lattice hash (16 rather than OpenSimplex2's 24 directions: the
//! index is then 4 bits of the hash, which the bulk kernel looks up with one `vpermps` per
//! component and a sign flip instead of a multiply-shift and a quadrant rotation).
//!
//! 3D: the input is first reflected by `r = ⅔(x + y + z)`, `(x, y, z) → (r − x, r − y, r − z)`
//! (an orthogonal map that turns the lattice so no axis is aligned with a lattice row), then a
//! body-centred cubic lattice (integer points and integer + ½ points) is used; every lattice
//! point with `|d|² < 0.6` contributes `(0.6 − |d|²)⁴ · (g·d)`, `g` one of the 12 normalised
//! cube-edge directions.
//!
//! Both are scaled by the inverse of a bound of `Σ (r² − |d|²)⁴·|d|` over the whole cell, so the
//! output is within [−1, 1].

use crate::hash::{cell, hash2_simplex, hash3, to_index};

/// Number of 2D gradient directions.
pub(crate) const GRADIENT_COUNT_2D: usize = 16;

/// `F2 = (√3 − 1)/2`: the 2D skew factor.
pub(crate) const F2: f64 = 0.366_025_403_784_438_6;
/// `G2 = (3 − √3)/6`: the 2D unskew factor.
pub(crate) const G2: f64 = 0.211_324_865_405_187_13;
/// Squared kernel radius in 2D.
pub(crate) const RADIUS2_2D: f64 = 0.5;
/// Squared kernel radius in 3D.
pub(crate) const RADIUS2_3D: f64 = 0.6;
/// 1 / max over space of `Σ (0.5 − |d|²)⁴·|d|` (found by dense search: 0.010080205, plus a 0.1 % margin).
pub(crate) const NORM_2D: f64 = 99.105_226_431_506_01;
/// 1 / max over space of `Σ (0.6 − |d|²)⁴·|d|` (found by dense search: 0.025074163, plus a 0.5 % margin).
pub(crate) const NORM_3D: f64 = 39.683_273_799_483_98;
/// Seed mask separating the second cubic grid of the 3D lattice from the first.
pub(crate) const SECOND_GRID_SEED: u32 = 0x5BD1_E995;

/// The 16 2D gradients: unit vectors at angles `(k + ½)·22.5°`; entries `0..8` span the upper
/// half-plane and entry `k + 8` is exactly `−g_k`.
pub(crate) fn gradients_2d() -> [[f64; 2]; GRADIENT_COUNT_2D] {
    let mut g = [[0.0; 2]; GRADIENT_COUNT_2D];
    for k in 0..GRADIENT_COUNT_2D / 2 {
        let [c, s] = crate::perlin::portable_cos_sin(2 * k + 1, 2 * GRADIENT_COUNT_2D);
        g[k] = [c, s];
        g[k + GRADIENT_COUNT_2D / 2] = [-c, -s];
    }
    g
}

/// The 2D gradient index of lattice hash `h`: `(h & 7) + 8·(h >> 31)`, i.e. the low 3 bits pick
/// one of the 8 upper-half-plane directions and the top bit negates it (bits of
/// `hash2_simplex`, tested uniform and independent between neighbours).
#[inline]
pub(crate) const fn gradient_index(h: u32) -> usize {
    ((h & 7) | ((h >> 31) << 3)) as usize
}

/// The 12 3D gradients: cube-edge directions `(±1, ±1, 0)` etc., normalised.
pub(crate) fn gradients_3d() -> [[f64; 3]; 12] {
    let r = std::f64::consts::FRAC_1_SQRT_2;
    [
        [r, r, 0.0],
        [-r, r, 0.0],
        [r, -r, 0.0],
        [-r, -r, 0.0],
        [r, 0.0, r],
        [-r, 0.0, r],
        [r, 0.0, -r],
        [-r, 0.0, -r],
        [0.0, r, r],
        [0.0, -r, r],
        [0.0, r, -r],
        [0.0, -r, -r],
    ]
}

/// Unnormalised 2D sum with gradient magnitude replaced by a callback (for the bound search).
#[inline]
fn sum2(x: f64, y: f64, mut corner: impl FnMut(i64, i64, f64, f64) -> f64) -> f64 {
    let s = (x + y) * F2;
    let (xs, ys) = (x + s, y + s);
    let (xf, yf) = (xs.floor(), ys.floor());
    let (i, j) = (cell(xf), cell(yf));
    let (fx, fy) = (xs - xf, ys - yf);
    let t = (fx + fy) * G2;
    let (x0, y0) = (fx - t, fy - t);
    let mut sum = 0.0;
    for (ci, cj) in [(0i64, 0i64), (1, 0), (0, 1), (1, 1)] {
        let back = (ci + cj) as f64 * G2;
        let dx = x0 - (ci as f64 - back);
        let dy = y0 - (cj as f64 - back);
        let a = RADIUS2_2D - dx * dx - dy * dy;
        if a > 0.0 {
            let a2 = a * a;
            sum += a2 * a2 * corner(i + ci, j + cj, dx, dy);
        }
    }
    sum
}

/// `opensimplex2` in 2D at `(x, y)`; range [−1, 1].
pub(crate) fn simplex2(grads: &[[f64; 2]; GRADIENT_COUNT_2D], seed: u32, x: f64, y: f64) -> f64 {
    NORM_2D
        * sum2(x, y, |i, j, dx, dy| {
            let g = grads[gradient_index(hash2_simplex(seed, i, j))];
            g[0] * dx + g[1] * dy
        })
}

/// Unnormalised 3D sum over both cubic grids of the BCC lattice, input already rotated.
#[inline]
fn sum3(xr: f64, yr: f64, zr: f64, mut corner: impl FnMut(usize, [i64; 3], [f64; 3]) -> f64) -> f64 {
    let mut sum = 0.0;
    for grid in 0..2 {
        let shift = 0.5 * grid as f64;
        let (x, y, z) = (xr - shift, yr - shift, zr - shift);
        let (xf, yf, zf) = (x.floor(), y.floor(), z.floor());
        let (i, j, k) = (cell(xf), cell(yf), cell(zf));
        let (fx, fy, fz) = (x - xf, y - yf, z - zf);
        for c in 0..8u8 {
            let (ci, cj, ck) = (i64::from(c & 1), i64::from((c >> 1) & 1), i64::from(c >> 2));
            let d = [fx - ci as f64, fy - cj as f64, fz - ck as f64];
            let a = RADIUS2_3D - d[0] * d[0] - d[1] * d[1] - d[2] * d[2];
            if a > 0.0 {
                let a2 = a * a;
                sum += a2 * a2 * corner(grid, [i + ci, j + cj, k + ck], d);
            }
        }
    }
    sum
}

/// The 3D input rotation: `r = ⅔(x + y + z)`, `(r − x, r − y, r − z)`.
#[inline]
pub(crate) fn rotate3(x: f64, y: f64, z: f64) -> [f64; 3] {
    let r = (x + y + z) * (2.0 / 3.0);
    [r - x, r - y, r - z]
}

/// `opensimplex2` in 3D at `(x, y, z)`; range [−1, 1].
pub(crate) fn simplex3(grads: &[[f64; 3]; 12], seed: u32, x: f64, y: f64, z: f64) -> f64 {
    let [xr, yr, zr] = rotate3(x, y, z);
    NORM_3D
        * sum3(xr, yr, zr, |grid, [i, j, k], d| {
            let s = if grid == 0 { seed } else { seed ^ SECOND_GRID_SEED };
            let g = grads[to_index(hash3(s, i, j, k), 12)];
            g[0] * d[0] + g[1] * d[1] + g[2] * d[2]
        })
}

/// Dense-search bound of the unnormalised 2D sum with `|g·d| ≤ |d|` (see the test `norms_bound_the_dense_search`).
#[cfg(test)]
pub(crate) fn bound2(steps: usize) -> f64 {
    let mut best: f64 = 0.0;
    for a in 0..steps {
        for b in 0..steps {
            let (x, y) = (2.0 * a as f64 / steps as f64, 2.0 * b as f64 / steps as f64);
            best = best.max(sum2(x, y, |_, _, dx, dy| (dx * dx + dy * dy).sqrt()));
        }
    }
    best
}

/// Dense-search bound of the unnormalised 3D sum with `|g·d| ≤ |d|` (see the test `norms_bound_the_dense_search`).
#[cfg(test)]
pub(crate) fn bound3(steps: usize) -> f64 {
    let mut best: f64 = 0.0;
    for a in 0..steps {
        for b in 0..steps {
            for c in 0..steps {
                let p = [a, b, c].map(|v| v as f64 / steps as f64);
                best = best
                    .max(sum3(p[0], p[1], p[2], |_, _, d| (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()));
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::rng::SplitMix64;

    /// Every 2D lattice vertex within the kernel radius, found by brute force over ±3 cells.
    fn brute2(grads: &[[f64; 2]; GRADIENT_COUNT_2D], seed: u32, x: f64, y: f64) -> f64 {
        let s = (x + y) * F2;
        let (i, j) = ((x + s).floor() as i64, (y + s).floor() as i64);
        let mut sum = 0.0;
        for vi in i - 3..=i + 3 {
            for vj in j - 3..=j + 3 {
                let back = (vi + vj) as f64 * G2;
                let (dx, dy) = (x - (vi as f64 - back), y - (vj as f64 - back));
                let a = RADIUS2_2D - dx * dx - dy * dy;
                if a > 0.0 {
                    let g = grads[gradient_index(hash2_simplex(seed, vi, vj))];
                    let a2 = a * a;
                    sum += a2 * a2 * (g[0] * dx + g[1] * dy);
                }
            }
        }
        NORM_2D * sum
    }

    /// Every 3D BCC vertex within the kernel radius, by brute force over ±2 cells.
    fn brute3(grads: &[[f64; 3]; 12], seed: u32, x: f64, y: f64, z: f64) -> f64 {
        let r = rotate3(x, y, z);
        let mut sum = 0.0;
        for grid in 0..2 {
            let shift = 0.5 * grid as f64;
            let c = r.map(|v| (v - shift).floor() as i64);
            for i in c[0] - 2..=c[0] + 2 {
                for j in c[1] - 2..=c[1] + 2 {
                    for k in c[2] - 2..=c[2] + 2 {
                        let d = [r[0] - shift - i as f64, r[1] - shift - j as f64, r[2] - shift - k as f64];
                        let a = RADIUS2_3D - d[0] * d[0] - d[1] * d[1] - d[2] * d[2];
                        if a > 0.0 {
                            let s = if grid == 0 { seed } else { seed ^ SECOND_GRID_SEED };
                            let g = grads[to_index(hash3(s, i, j, k), 12)];
                            let a2 = a * a;
                            sum += a2 * a2 * (g[0] * d[0] + g[1] * d[1] + g[2] * d[2]);
                        }
                    }
                }
            }
        }
        NORM_3D * sum
    }

    #[test]
    fn the_cell_corners_are_all_the_contributing_vertices() {
        let (g2, g3) = (gradients_2d(), gradients_3d());
        let mut rng = SplitMix64::new(99);
        for _ in 0..3000 {
            let p = [0; 3].map(|_| rng.range_f64(-40.0, 40.0));
            let (a, b) = (simplex2(&g2, 17, p[0], p[1]), brute2(&g2, 17, p[0], p[1]));
            assert!((a - b).abs() < 1e-12, "2D at {p:?}: {a} vs {b}");
            let (a, b) = (simplex3(&g3, 17, p[0], p[1], p[2]), brute3(&g3, 17, p[0], p[1], p[2]));
            assert!((a - b).abs() < 1e-12, "3D at {p:?}: {a} vs {b}");
        }
    }

    #[test]
    fn simplex_is_continuous() {
        let (g2, g3) = (gradients_2d(), gradients_3d());
        let mut rng = SplitMix64::new(5);
        for _ in 0..3000 {
            let p = [0; 3].map(|_| rng.range_f64(-40.0, 40.0));
            let h = 1e-7;
            let d2 = simplex2(&g2, 3, p[0] + h, p[1] - h) - simplex2(&g2, 3, p[0], p[1]);
            let d3 = simplex3(&g3, 3, p[0] + h, p[1], p[2] - h) - simplex3(&g3, 3, p[0], p[1], p[2]);
            // Lipschitz constants are below 20 per lattice unit.
            assert!(d2.abs() < 20.0 * h && d3.abs() < 20.0 * h, "at {p:?}: {d2}, {d3}");
        }
    }

    /// The normalisations keep the dense-search maxima (2000² and 160³ points: 0.010080205
    /// and 0.025074163) inside [−1, 1] with their margins; a coarser search here comes close.
    #[test]
    fn norms_bound_the_dense_search() {
        let (b2, b3) = (bound2(400) * NORM_2D, bound3(48) * NORM_3D);
        assert!(b2 < 1.0 && b2 > 0.99, "2D: {b2}");
        assert!(b3 < 1.0 && b3 > 0.98, "3D: {b3}");
    }
}
