//! Gradient noises: classic Perlin with random angles (`perlin-angle`), the tutorial's
//! table-driven classic Perlin (`perlin-table`, seed 002) and improved Perlin (Perlin 2002).

use crate::hash::{cell, hash2, wrap};
use crate::rng::SplitMix64;

/// The published permutation of 0..=255 used by Ken Perlin's reference implementation
/// (ImprovedNoise, 2002) and printed in the tutorial (seed 002, "Table de permutation").
pub const REFERENCE_PERMUTATION: [u8; 256] = [
    151, 160, 137, 91, 90, 15, 131, 13, 201, 95, 96, 53, 194, 233, 7, 225, 140, 36, 103, 30, 69, 142, 8, 99,
    37, 240, 21, 10, 23, 190, 6, 148, 247, 120, 234, 75, 0, 26, 197, 62, 94, 252, 219, 203, 117, 35, 11, 32,
    57, 177, 33, 88, 237, 149, 56, 87, 174, 20, 125, 136, 171, 168, 68, 175, 74, 165, 71, 134, 139, 48, 27,
    166, 77, 146, 158, 231, 83, 111, 229, 122, 60, 211, 133, 230, 220, 105, 92, 41, 55, 46, 245, 40, 244,
    102, 143, 54, 65, 25, 63, 161, 1, 216, 80, 73, 209, 76, 132, 187, 208, 89, 18, 169, 200, 196, 135, 130,
    116, 188, 159, 86, 164, 100, 109, 198, 173, 186, 3, 64, 52, 217, 226, 250, 124, 123, 5, 202, 38, 147,
    118, 126, 255, 82, 85, 212, 207, 206, 59, 227, 47, 16, 58, 17, 182, 189, 28, 42, 223, 183, 170, 213, 119,
    248, 152, 2, 44, 154, 163, 70, 221, 153, 101, 155, 167, 43, 172, 9, 129, 22, 39, 253, 19, 98, 108, 110,
    79, 113, 224, 232, 178, 185, 112, 104, 218, 246, 97, 228, 251, 34, 242, 193, 238, 210, 144, 12, 191, 179,
    162, 241, 81, 51, 145, 235, 249, 14, 239, 107, 49, 192, 214, 31, 181, 199, 106, 157, 184, 84, 204, 176,
    115, 121, 50, 45, 127, 4, 150, 254, 138, 236, 205, 93, 222, 114, 67, 29, 24, 72, 243, 141, 128, 195, 78,
    66, 215, 61, 156, 180,
];

/// Number of quantised angles of `perlin-angle` gradients.
pub(crate) const ANGLE_COUNT: usize = 256;

/// The permutation doubled to 512 entries (`perm[i] = p[i & 255]`), so that `perm[a + b]`
/// needs no masking for `a, b ≤ 255`. `None` seed → the reference permutation; a number →
/// the reference permutation shuffled (Fisher–Yates) by [`SplitMix64`] seeded with it.
pub(crate) fn doubled_permutation(seed: Option<u64>) -> Box<[u8; 512]> {
    let mut p = REFERENCE_PERMUTATION;
    if let Some(s) = seed {
        SplitMix64::new(s).shuffle(&mut p);
    }
    let mut out = Box::new([0u8; 512]);
    for (i, v) in out.iter_mut().enumerate() {
        *v = p[i & 255];
    }
    out
}

/// `(cos θ, sin θ)` for `θ = 2π·k/n` (n a multiple of 4), computed with basic IEEE operations
/// only (Taylor series to degree 27 on the first quadrant, then quadrant symmetry), so the
/// gradient tables are bit-identical on every platform, whatever its libm.
pub(crate) fn portable_cos_sin(k: usize, n: usize) -> [f64; 2] {
    let quarter = n / 4;
    let (quadrant, r) = ((k % n) / quarter, (k % n) % quarter);
    let t = std::f64::consts::TAU * r as f64 / n as f64; // in [0, π/2)
    let t2 = t * t;
    // Horner from the highest term: cos = Σ (−1)^i t^(2i)/(2i)!, sin = t·Σ (−1)^i t^(2i)/(2i+1)!.
    let (mut c, mut s) = (0.0, 0.0);
    for i in (0..14).rev() {
        c = 1.0 - c * t2 / (((2 * i + 1) * (2 * i + 2)) as f64);
        s = 1.0 - s * t2 / (((2 * i + 2) * (2 * i + 3)) as f64);
    }
    let (c, s) = (c, s * t);
    match quadrant {
        0 => [c, s],
        1 => [-s, c],
        2 => [-c, -s],
        _ => [s, -c],
    }
}

/// The unit gradients of `perlin-angle`: `(cos α, sin α)` with `α = 2π·k/256`.
pub(crate) fn angle_gradients() -> Box<[[f64; 2]; ANGLE_COUNT]> {
    let mut g = Box::new([[0.0; 2]; ANGLE_COUNT]);
    for (k, v) in g.iter_mut().enumerate() {
        *v = portable_cos_sin(k, ANGLE_COUNT);
    }
    g
}

/// The cubic smoothstep `3t² − 2t³` of the classic noises (seeds 000, 002, 004), written in
/// the tutorial's operation order so that results match it bit for bit.
#[inline]
pub(crate) fn smoothstep(t: f64) -> f64 {
    3.0 * t * t - 2.0 * t * t * t
}

/// Perlin's quintic fade `6t⁵ − 15t⁴ + 10t³` in the reference operation order.
#[inline]
fn fade(t: f64) -> f64 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

#[inline]
fn lerp(t: f64, a: f64, b: f64) -> f64 {
    a + t * (b - a)
}

/// The tutorial's gradient table (seed 002): 4 diagonals of length 1, then the 4 axes.
fn tutorial_gradients() -> [[f64; 2]; 8] {
    // The tutorial computes `1.0/sqrt(2)` (not the nearest double to √½, which is 1 ulp up).
    let unit = 1.0 / 2f64.sqrt();
    [
        [unit, unit],
        [-unit, unit],
        [unit, -unit],
        [-unit, -unit],
        [1.0, 0.0],
        [-1.0, 0.0],
        [0.0, 1.0],
        [0.0, -1.0],
    ]
}

/// `perlin-table`: the tutorial's `Get2DPerlinNoiseValue` (seed 002) at lattice point
/// `(x, y)` (the `res` division is already applied by the caller), in f64.
///
/// Steps: `x0 = ⌊x⌋`, `ii = x0 & 255`, `jj = y0 & 255`; corner gradient indices
/// `perm[ii + perm[jj]] % 8`, `perm[ii+1 + perm[jj]] % 8`, `perm[ii + perm[jj+1]] % 8`,
/// `perm[ii+1 + perm[jj+1]] % 8`; dot products `s, t, u, v` with the offsets to corners
/// (x0,y0), (x0+1,y0), (x0,y0+1), (x0+1,y0+1); `Li1 = s + Cx(t−s)`, `Li2 = u + Cx(v−u)`,
/// result `Li1 + Cy(Li2 − Li1)` with `C = 3t² − 2t³`.
///
/// Difference from the tutorial: `⌊x⌋` instead of C's truncation `(int)x`, so negative
/// coordinates continue the lattice instead of mirroring cell 0 (identical for x, y ≥ 0).
/// With `period = Some(P)`, lattice indices are wrapped modulo P before masking.
pub(crate) fn perlin_table2(perm: &[u8; 512], x: f64, y: f64, period: Option<u32>) -> f64 {
    let g = tutorial_gradients();
    let xf = x.floor();
    let yf = y.floor();
    let (xi, yi) = (cell(xf), cell(yf));
    let ii = (wrap(xi, period) & 255) as usize;
    let jj = (wrap(yi, period) & 255) as usize;
    let ii1 = (wrap(xi + 1, period) & 255) as usize;
    let jj1 = (wrap(yi + 1, period) & 255) as usize;
    let p = |i: usize| usize::from(perm[i]);
    let gi0 = p(ii + p(jj)) % 8;
    let gi1 = p(ii1 + p(jj)) % 8;
    let gi2 = p(ii + p(jj1)) % 8;
    let gi3 = p(ii1 + p(jj1)) % 8;

    let (tx0, ty0) = (x - xf, y - yf);
    let (tx1, ty1) = (x - (xf + 1.0), y - (yf + 1.0));
    let s = g[gi0][0] * tx0 + g[gi0][1] * ty0;
    let t = g[gi1][0] * tx1 + g[gi1][1] * ty0;
    let u = g[gi2][0] * tx0 + g[gi2][1] * ty1;
    let v = g[gi3][0] * tx1 + g[gi3][1] * ty1;

    let cx = smoothstep(tx0);
    let li1 = s + cx * (t - s);
    let li2 = u + cx * (v - u);
    let cy = smoothstep(ty0);
    li1 + cy * (li2 - li1)
}

/// The gradient dot product of improved Perlin noise: one of the 12 cube-edge directions
/// (padded to 16) selected by the low 4 bits of `hash`, dotted with `(x, y, z)`.
#[inline]
fn grad3(hash: u8, x: f64, y: f64, z: f64) -> f64 {
    let h = hash & 15;
    let u = if h < 8 { x } else { y };
    let v = if h < 4 {
        y
    } else if h == 12 || h == 14 {
        x
    } else {
        z
    };
    (if h & 1 == 0 { u } else { -u }) + (if h & 2 == 0 { v } else { -v })
}

/// `perlin`: improved Perlin noise (Perlin 2002, "Improving Noise"; algorithms.md §7a).
///
/// Steps: lattice cell `⌊x⌋, ⌊y⌋, ⌊z⌋` masked to 0..255; corner hashes
/// `perm[perm[perm[X] + Y] + Z]`; gradients from `grad3`; trilinear interpolation with the
/// quintic fade `6t⁵ − 15t⁴ + 10t³`. With the reference permutation this equals Ken Perlin's
/// Java reference in f64 (same operation order). `period` wraps lattice indices modulo P.
pub(crate) fn improved3(perm: &[u8; 512], x: f64, y: f64, z: f64, period: Option<u32>) -> f64 {
    let (xf, yf, zf) = (x.floor(), y.floor(), z.floor());
    let (xi, yi, zi) = (cell(xf), cell(yf), cell(zf));
    let idx = |i: i64| (wrap(i, period) & 255) as usize;
    let (x0, x1, y0, y1, z0, z1) = (idx(xi), idx(xi + 1), idx(yi), idx(yi + 1), idx(zi), idx(zi + 1));
    let (x, y, z) = (x - xf, y - yf, z - zf);
    let (u, v, w) = (fade(x), fade(y), fade(z));
    let p = |i: usize| usize::from(perm[i]);
    let a = p(x0);
    let b = p(x1);
    let (aa, ab, ba, bb) = (p(a + y0), p(a + y1), p(b + y0), p(b + y1));
    let h = |c: usize, zz: usize| perm[c + zz];
    lerp(
        w,
        lerp(
            v,
            lerp(u, grad3(h(aa, z0), x, y, z), grad3(h(ba, z0), x - 1.0, y, z)),
            lerp(u, grad3(h(ab, z0), x, y - 1.0, z), grad3(h(bb, z0), x - 1.0, y - 1.0, z)),
        ),
        lerp(
            v,
            lerp(u, grad3(h(aa, z1), x, y, z - 1.0), grad3(h(ba, z1), x - 1.0, y, z - 1.0)),
            lerp(u, grad3(h(ab, z1), x, y - 1.0, z - 1.0), grad3(h(bb, z1), x - 1.0, y - 1.0, z - 1.0)),
        ),
    )
}

/// Number of gradient directions of 2D `perlin`.
pub(crate) const IMPROVED2_GRADIENT_COUNT: usize = 16;

// cos and sin of 11.25° and 33.75° (nearest doubles; within 1 ulp of `portable_cos_sin`).
const C1: f64 = 0.9807852804032304;
const S1: f64 = 0.19509032201612825;
const C3: f64 = 0.8314696123025452;
const S3: f64 = 0.5555702330196022;

/// The 16 unit gradients of 2D `perlin`: `(cos θ_k, sin θ_k)` with `θ_k = (k + ½)·22.5°`, so
/// the directions are uniform on the circle and none lies on an axis (or a diagonal).
pub(crate) const IMPROVED2_GRADIENTS: [[f64; 2]; IMPROVED2_GRADIENT_COUNT] = [
    [C1, S1],
    [C3, S3],
    [S3, C3],
    [S1, C1],
    [-S1, C1],
    [-S3, C3],
    [-C3, S3],
    [-C1, S1],
    [-C1, -S1],
    [-C3, -S3],
    [-S3, -C3],
    [-S1, -C1],
    [S1, -C1],
    [S3, -C3],
    [C3, -S3],
    [C1, -S1],
];

/// Bound of |2D `perlin`|: the maximum over the cell of `Σ_c w_c·max_g |g·d_c|` (the value
/// when every corner gets its best gradient with a common sign; `w_c` the fade weights, `d_c`
/// the offsets to the corners). A dense search (400² grid, then refined; see the test
/// `improved2_bound_by_dense_search`) gives 0.695353 near `(½, 0.4725)` and its mirror
/// images (the cell centre gives `√½·cos 11.25° = 0.693520`); rounded up.
pub(crate) const IMPROVED2_BOUND: f64 = 0.6954;

/// The gradient index of lattice point `(x, y)` of 2D `perlin` (indices already wrapped and
/// masked to 0..=255): the low 4 bits of `perm[perm[x] + y]`.
#[inline]
pub(crate) fn improved2_index(perm: &[u8; 512], x: usize, y: usize) -> usize {
    usize::from(perm[usize::from(perm[x]) + y] & 15)
}

/// `perlin` in 2D: improved Perlin noise (Perlin 2002) with its own 2D gradient set.
///
/// Steps: lattice cell `⌊x⌋, ⌊y⌋` (wrapped modulo `period`, then masked to 0..255); corner
/// gradient `IMPROVED2_GRADIENTS[perm[perm[X] + Y] & 15]`, one of 16 unit vectors at
/// `(k + ½)·22.5°` (SPEC §2: "gradients uniform on the circle"); dot products with the offsets
/// to the 4 corners; bilinear interpolation with the quintic fade `6t⁵ − 15t⁴ + 10t³`.
///
/// Not the z = 0 slice of [`improved3`]: in that slice 9 of the 16 cube-edge gradients become
/// axis-aligned, `(±1, 0)` or `(0, ±1)`, so the noise is exactly 0 along every lattice edge
/// whose two end gradients are both perpendicular to it, and ridged fractals turn those
/// zeros into straight creases. With no axis-aligned gradient, no edge is identically zero.
/// Range `[−0.6954, 0.6954]` ([`IMPROVED2_BOUND`]).
pub(crate) fn improved2(perm: &[u8; 512], x: f64, y: f64, period: Option<u32>) -> f64 {
    let (xf, yf) = (x.floor(), y.floor());
    let (xi, yi) = (cell(xf), cell(yf));
    let idx = |i: i64| (wrap(i, period) & 255) as usize;
    let (x0, x1, y0, y1) = (idx(xi), idx(xi + 1), idx(yi), idx(yi + 1));
    let (x, y) = (x - xf, y - yf);
    let (u, v) = (fade(x), fade(y));
    let g = |i: usize, j: usize, dx: f64, dy: f64| {
        let [gx, gy] = IMPROVED2_GRADIENTS[improved2_index(perm, i, j)];
        gx * dx + gy * dy
    };
    lerp(
        v,
        lerp(u, g(x0, y0, x, y), g(x1, y0, x - 1.0, y)),
        lerp(u, g(x0, y1, x, y - 1.0), g(x1, y1, x - 1.0, y - 1.0)),
    )
}

/// `perlin-angle`: classic gradient noise (Perlin 1985; seeds 000 and 004 §5) with one unit
/// gradient `(cos α, sin α)` per lattice point, `α = 2π·k/256` and `k` the top 8 bits of
/// `hash2(seed, i, j)`; dot products with the offsets to the 4 corners, interpolated along x
/// then y with the smoothstep `3t² − 2t³`. Range [−√½, √½] (reached when the 4 gradients point
/// at the cell centre).
pub(crate) fn perlin_angle2(
    grads: &[[f64; 2]; ANGLE_COUNT],
    seed: u32,
    x: f64,
    y: f64,
    period: Option<u32>,
) -> f64 {
    let (xf, yf) = (x.floor(), y.floor());
    let (xi, yi) = (cell(xf), cell(yf));
    let (x0, x1, y0, y1) = (wrap(xi, period), wrap(xi + 1, period), wrap(yi, period), wrap(yi + 1, period));
    let (tx, ty) = (x - xf, y - yf);
    let g = |i: i64, j: i64| grads[(hash2(seed, i, j) >> 24) as usize];
    let dot = |gr: [f64; 2], dx: f64, dy: f64| gr[0] * dx + gr[1] * dy;
    let s = dot(g(x0, y0), tx, ty);
    let t = dot(g(x1, y0), tx - 1.0, ty);
    let u = dot(g(x0, y1), tx, ty - 1.0);
    let v = dot(g(x1, y1), tx - 1.0, ty - 1.0);
    let cx = smoothstep(tx);
    let li1 = s + cx * (t - s);
    let li2 = u + cx * (v - u);
    li1 + smoothstep(ty) * (li2 - li1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_cos_sin_matches_libm_closely() {
        for n in [24 * 2, 256] {
            for k in 0..n {
                let a = std::f64::consts::TAU * k as f64 / n as f64;
                let [c, s] = portable_cos_sin(k, n);
                assert!((c - a.cos()).abs() < 2e-15 && (s - a.sin()).abs() < 2e-15, "{k}/{n}");
            }
        }
        assert_eq!(portable_cos_sin(0, 256), [1.0, 0.0]);
        assert_eq!(portable_cos_sin(64, 256), [-0.0, 1.0]);
    }

    #[test]
    fn improved2_gradients_are_16_unit_directions_off_the_axes() {
        for (k, g) in IMPROVED2_GRADIENTS.iter().enumerate() {
            let want = portable_cos_sin(2 * k + 1, 2 * IMPROVED2_GRADIENT_COUNT);
            assert!(
                (g[0] - want[0]).abs() < 3e-16 && (g[1] - want[1]).abs() < 3e-16,
                "{k}: {g:?} vs {want:?}"
            );
            assert!((g[0].hypot(g[1]) - 1.0).abs() < 1e-15);
            assert!(g[0].abs() > 0.19 && g[1].abs() > 0.19, "{k}: near an axis");
        }
    }

    /// The 2D bound: `Σ_c w_c·max_g |g·d_c|` over a dense grid of the cell stays under
    /// `IMPROVED2_BOUND` and comes within 1e-4 of it.
    #[test]
    fn improved2_bound_by_dense_search() {
        let bound = |x: f64, y: f64| {
            let mut tot = 0.0;
            for (cx, cy) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
                let wt = |t: f64, c: f64| if c == 1.0 { fade(t) } else { 1.0 - fade(t) };
                let (dx, dy) = (x - cx, y - cy);
                let m = IMPROVED2_GRADIENTS.iter().map(|g| (g[0] * dx + g[1] * dy).abs());
                tot += wt(x, cx) * wt(y, cy) * m.fold(0.0, f64::max);
            }
            tot
        };
        let n = 400;
        let mut best: f64 = 0.0;
        for a in 0..=n {
            for b in 0..=n {
                best = best.max(bound(a as f64 / n as f64, b as f64 / n as f64));
            }
        }
        assert!(best <= IMPROVED2_BOUND && best > IMPROVED2_BOUND - 1e-4, "{best}");
        let centre = bound(0.5, 0.5);
        assert!((centre - 0.5f64.sqrt() * C1).abs() < 1e-12, "{centre}");
    }
}
