//! Lattice hashing shared by the hash-based kinds (white, value, perlin-angle, opensimplex2 3D,
//! worley): 32-bit, so the bulk path can evaluate it in SIMD lanes with `mullo_epi32`. The 2D
//! opensimplex2 kernels use the cheaper [`hash2_simplex`] (same lattice products, one multiply).
//!
//! `hash2(seed, i, j) = fmix32(seed ⊕ ((i mod 2^32)·PRIME_X + (j mod 2^32)·PRIME_Y))` (products
//! and sum wrapping mod 2^32), with `fmix32` the MurmurHash3 finaliser (Appleby 2011). The two
//! products are added, not xor-ed: with xor, odd multipliers make `(−i, −j)` collide with
//! `(i, j)` for odd i, j (a point symmetry about the origin); with the sum, no two points of a
//! 256×256 block collide. Lattice indices are `i64` (from
//! `floor` in f64) truncated to 32 bits, so the hash repeats every 2^32 cells.

/// Multiplier for the x lattice index (odd; the 32-bit golden ratio).
pub(crate) const PRIME_X: u32 = 0x9E37_79B1;
/// Multiplier for the y lattice index (odd).
pub(crate) const PRIME_Y: u32 = 0x85EB_CA77;
/// Multiplier for the z lattice index (odd).
pub(crate) const PRIME_Z: u32 = 0xC2B2_AE3D;

/// The MurmurHash3 32-bit finaliser: a bijection with full avalanche.
#[inline]
pub(crate) const fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^ (h >> 16)
}

/// Hash of lattice point `(i, j)` for `seed`.
#[inline]
pub(crate) const fn hash2(seed: u32, i: i64, j: i64) -> u32 {
    fmix32(seed ^ (i as u32).wrapping_mul(PRIME_X).wrapping_add((j as u32).wrapping_mul(PRIME_Y)))
}

/// Hash of lattice point `(i, j, k)` for `seed`.
#[inline]
pub(crate) const fn hash3(seed: u32, i: i64, j: i64, k: i64) -> u32 {
    fmix32(
        seed ^ (i as u32)
            .wrapping_mul(PRIME_X)
            .wrapping_add((j as u32).wrapping_mul(PRIME_Y))
            .wrapping_add((k as u32).wrapping_mul(PRIME_Z)),
    )
}

/// Multiplier of [`hash2_simplex`] (from Ellis's `lowbias32` hash search, its first round).
pub(crate) const SIMPLEX_MUL: u32 = 0x7FEB_352D;

/// Lattice hash of the 2D `opensimplex2` kernels, cheaper than [`hash2`] (one multiply instead
/// of two, and the seed added so that bulk code folds it into a per-row constant):
/// `v = seed + i·PRIME_X + j·PRIME_Y` (wrapping), `v ^= v >> 16`, `v ·= SIMPLEX_MUL`,
/// `h = v ^ (v >> 15)`. Only 4 of its bits are used (the gradient index: bits 0..3 and 31,
/// see `simplex::gradient_index`). Adding the seed makes seed `s` the seed-0 field moved by
/// `s·PRIME_X⁻¹ mod 2^32` cells along the lattice's first axis: a pseudo-random shift within
/// the hash's 2^32-cell period, so different seeds still give unrelated-looking maps.
#[inline]
pub(crate) const fn hash2_simplex(seed: u32, i: i64, j: i64) -> u32 {
    let mut v =
        seed.wrapping_add((i as u32).wrapping_mul(PRIME_X)).wrapping_add((j as u32).wrapping_mul(PRIME_Y));
    v ^= v >> 16;
    v = v.wrapping_mul(SIMPLEX_MUL);
    v ^ (v >> 15)
}

/// A hash mapped to a uniform value in [-1, 1): `h·2^-31 − 1`.
#[inline]
pub(crate) fn to_signed_unit(h: u32) -> f64 {
    f64::from(h) * (1.0 / 2_147_483_648.0) - 1.0
}

/// A hash mapped to an index in `0..n` (n ≤ 256) with a multiply-shift on the top 24 bits.
#[inline]
pub(crate) const fn to_index(h: u32, n: u32) -> usize {
    (((h >> 8) * n) >> 24) as usize
}

/// The 32-bit seed of the hash-based kinds for a 64-bit user seed.
pub(crate) const fn seed32(seed: u64) -> u32 {
    let m = crate::rng::derive_seed(seed, 0x6E6F_6973_6568_6173); // "noisehas"
    (m ^ (m >> 32)) as u32
}

/// Largest |lattice index|: beyond 2^52 an f64 has no fractional part left, and the clamp
/// keeps `index ± 3` from overflowing i64 for absurd coordinates (no panic on any input).
pub(crate) const MAX_CELL: f64 = 4_503_599_627_370_496.0; // 2^52

/// The lattice index of the already-floored coordinate `floored`, clamped to ±2^52 (NaN → 0).
#[inline]
pub(crate) fn cell(floored: f64) -> i64 {
    floored.clamp(-MAX_CELL, MAX_CELL) as i64
}

/// Lattice index `i` wrapped into `0..period` (when tileable).
#[inline]
pub(crate) fn wrap(i: i64, period: Option<u32>) -> i64 {
    match period {
        Some(p) => i.rem_euclid(i64::from(p)),
        None => i,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lattice_hashes_are_uniform_and_distinct() {
        // 256×256 lattice points: 16 buckets of the top bits each get 1/16 ± 5 %, neighbours
        // differ, and no two points collide (regression: xor-combined products made (−1, −1)
        // and (1, 1) collide).
        let mut buckets = [0u32; 16];
        let mut all = Vec::new();
        for i in -128..128 {
            for j in -128..128 {
                let h = hash2(12345, i, j);
                buckets[(h >> 28) as usize] += 1;
                all.push(h);
                assert_ne!(h, hash2(12345, i + 1, j));
                assert_ne!(h, hash2(12345, i, j + 1));
            }
        }
        for b in buckets {
            assert!((b as f64 - 4096.0).abs() < 0.05 * 4096.0, "{buckets:?}");
        }
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 65_536);
        assert_ne!(hash2(0, -1, -1), hash2(0, 1, 1));
        assert_ne!(hash3(0, -1, -1, -1), hash3(0, 1, 1, 1));
        assert_eq!(fmix32(0), 0, "the MurmurHash3 finaliser fixes 0");
    }

    #[test]
    fn simplex_hash_gradient_bits_are_uniform_and_vary_between_neighbours() {
        // The 4 bits the simplex kernel uses (0..3 and 31) over 256×256 lattice points: the 16
        // values are uniform (χ² with 15 degrees of freedom below 40, p ≈ 0.0005; the fmix32
        // hash gives 8..22 on these seeds), and between horizontal or vertical neighbours they
        // agree 1/16 of the time ± 10 % (no lattice-aligned structure).
        let bits = |h: u32| ((h & 7) | ((h >> 31) << 3)) as usize;
        for seed in [1, 99, 12_345] {
            let mut buckets = [0u32; 16];
            let (mut same_i, mut same_j) = (0u32, 0u32);
            for i in -128..128 {
                for j in -128..128 {
                    let b = bits(hash2_simplex(seed, i, j));
                    buckets[b] += 1;
                    same_i += u32::from(b == bits(hash2_simplex(seed, i + 1, j)));
                    same_j += u32::from(b == bits(hash2_simplex(seed, i, j + 1)));
                }
            }
            let chi2: f64 = buckets.iter().map(|&b| (f64::from(b) - 4096.0).powi(2) / 4096.0).sum();
            assert!(chi2 < 40.0, "seed {seed}: χ² = {chi2}, {buckets:?}");
            for same in [same_i, same_j] {
                assert!((f64::from(same) - 4096.0).abs() < 0.1 * 4096.0, "seed {seed}: {same}");
            }
        }
        assert_ne!(hash2_simplex(1, 0, 0), hash2_simplex(2, 0, 0));
    }

    #[test]
    fn index_and_unit_ranges() {
        assert_eq!(to_index(u32::MAX, 24), 23);
        assert_eq!(to_index(0, 24), 0);
        assert_eq!(to_signed_unit(0), -1.0);
        assert!(to_signed_unit(u32::MAX) < 1.0);
        assert_eq!(wrap(-1, Some(5)), 4);
        assert_eq!(wrap(-1, None), -1);
    }
}
