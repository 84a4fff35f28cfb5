//! Deterministic elementary functions: the same bits on every platform.
//!
//! `f64::exp`, `ln`, `powf`, `sin`, `cos`, `atan2`, `tanh` call the platform's libm (glibc,
//! musl, the wasm32 port, Apple's), whose results differ in the last bit between platforms
//! and versions, and the standard library documents their precision as unspecified. Output
//! bytes that must be identical on x86-64, aarch64 and wasm32 (issue 11 part 6) use these
//! functions instead: plain f64 additions, multiplications, divisions, `sqrt` (IEEE 754
//! requires all of these correctly rounded, so every platform gives the same bits) and exact
//! operations (`floor`, bit manipulation), in a fixed order, never fused.
//!
//! Methods (textbook argument reduction and series, e.g. J.-M. Muller, *Elementary Functions:
//! Algorithms and Implementation*, ch. 11 (Cody and Waite reduction) and ch. 5 (series)):
//! - [`exp`]: `x = k·ln2 + r`, |r| ≤ ln2/2, ln2 split in two parts so `k·ln2_hi` is exact;
//!   Taylor series of `e^r` to degree 14 by Horner; scaled by `2^k` through the exponent bits.
//! - [`ln`]: `x = 2^e·m`, m ∈ [√½, √2); `ln m = 2·atanh(s)`, `s = (m − 1)/(m + 1)`,
//!   |s| ≤ 0.172, odd series to `s^25`; plus `e·ln2` (split).
//! - [`pow`]: [`powi`] for integer exponents up to 64, else `exp(y·ln x)` (its relative error
//!   grows with |y·ln x|: ≈ 2·|y·ln x|·2^−53).
//! - [`sin`], [`cos`]: `x = n·π/2 + r`, |r| ≤ π/4, π/2 split in three parts (exact products
//!   for |n| < 2^20, so full accuracy for |x| ≲ 1.6e6; beyond, still deterministic but less
//!   accurate); Taylor series to `r^23`/`r^22`.
//! - [`atan2`], [`atan`]: reduced to |t| ≤ 1 by `atan t = π/2 − atan(1/t)`, then halved twice
//!   by `atan t = 2·atan(t / (1 + √(1 + t²)))` to |t| ≤ tan(π/16), odd series to `t^27`.
//! - [`exp2`]: `x = k + r`, |r| ≤ ½, `2^r = e^(r·ln 2)` by the same series.
//! - [`tanh`]: `expm1(2x) / (expm1(2x) + 2)`, with `expm1` by its own series for |x| < ½.
//! - [`powi`]: binary exponentiation (square and multiply from the lowest bit), as written.
//!
//! For per-cell passes over whole maps (the outputs' slopes, moisture, water and flow images)
//! the f64 series are too slow (25–80 ns a call); f32 kernels in f32 arithmetic, branch-free
//! so loops vectorize, do those: [`atan_fast`] and [`atan2_fast`] (one reduction, a degree-4
//! odd polynomial fitted here; ≤ 3 and ≤ 4 f32 ulp), [`exp_fast`] (the reduction of [`exp`] in
//! f32, Taylor to degree 7; ≤ 2 ulp, 0 where `e^x` is subnormal), [`hypotf`] (exact squares in
//! f64, one rounding: glibc's `hypotf` bits), [`ln_1pf`] (from [`ln`]).
//!
//! Measured maximum error against the platform libm (glibc 2.36, x86-64) in the tests of this
//! module, over 10⁵ points per function: `exp`, `exp2`, `ln`, `expm1`: ≤ 1 ulp; `sin`, `cos`
//! (|x| ≤ 1e4): ≤ 2 ulp; `atan`: ≤ 3 ulp; `atan2`: ≤ 4 ulp; `tanh`: ≤ 4 ulp; `pow`:
//! ≤ (2 + 2·|y·ln x|) ulp (all: or an absolute error ≤ 2⁻⁵³ for results below 1). The f32
//! versions ([`expf`], …) compute in f64 and round once, so they are within 1 f32 ulp.
//!
//! ```
//! use terrasynth_noise::detmath;
//! assert_eq!(detmath::exp(0.0), 1.0);
//! assert!((detmath::exp(1.0) - std::f64::consts::E).abs() <= f64::EPSILON * 3.0);
//! assert!((detmath::pow(2.0, 0.5) - std::f64::consts::SQRT_2).abs() < 1e-15);
//! assert_eq!(detmath::atan2(1.0, 1.0), std::f64::consts::FRAC_PI_4);
//! ```

use std::f64::consts::{FRAC_PI_2, PI};

/// ln 2, upper part: few enough bits that `k·LN2_HI` is exact for |k| < 2^11.
const LN2_HI: f64 = 0.6931471803691238;
/// ln 2 − `LN2_HI`.
const LN2_LO: f64 = 1.9082149292705877e-10;

/// `e^x`. Exactly 1 at 0; `+∞` above ≈ 709.78, `+0` below ≈ −745.13; NaN stays NaN.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.782_712_893_384 {
        return f64::INFINITY;
    }
    if x < -745.133_219_101_941_1 {
        return 0.0;
    }
    let k = (x * std::f64::consts::LOG2_E + 0.5).floor();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    scale2(exp_series(r), k as i32)
}

/// `e^r` for |r| ≤ 0.35: Σ r^i / i!, i = 0..=14 (the next term is below 2^-60).
fn exp_series(r: f64) -> f64 {
    let mut p = 1.0;
    for i in (1..=14).rev() {
        p = 1.0 + p * r / i as f64;
    }
    p
}

/// `2^x`: `x = k + r`, |r| ≤ ½ (exact), `2^r = e^(r·ln2)` with ln 2 in two parts. Exact for
/// integer `x`; `+∞` from 1024, `+0` below −1075.
pub fn exp2(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x >= 1024.0 {
        return f64::INFINITY;
    }
    if x < -1075.0 {
        return 0.0;
    }
    let k = (x + 0.5).floor();
    let r = x - k;
    scale2(exp_series(r * LN2_HI + r * LN2_LO), k as i32)
}

/// `x·2^k` through the exponent bits, in two steps where `2^k` alone is not a normal f64.
fn scale2(x: f64, k: i32) -> f64 {
    let pow2 = |e: i32| f64::from_bits(((e + 1023) as u64) << 52);
    if k > 1023 {
        x * pow2(1023) * pow2(k - 1023)
    } else if k < -1022 {
        x * pow2(-1022) * pow2((k + 1022).max(-1022))
    } else {
        x * pow2(k)
    }
}

/// `e^x − 1`, accurate near 0.
pub fn expm1(x: f64) -> f64 {
    if x.abs() < 0.5 {
        // Σ x^i / i!, i = 1..=18 (|x| < ½: the next term is below 2^-70).
        let mut p = 1.0;
        for i in (2..=18).rev() {
            p = 1.0 + p * x / i as f64;
        }
        x * p
    } else {
        exp(x) - 1.0
    }
}

/// Natural logarithm. `ln 1 = 0` exactly; `−∞` at ±0; NaN below 0; `+∞` at `+∞`.
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    // x = 2^e · m with m in [1, 2) (subnormals normalised first).
    let (mut bits, mut e) = (x.to_bits(), 0i32);
    if bits >> 52 == 0 {
        bits = (x * f64::from_bits(0x4350_0000_0000_0000)).to_bits(); // × 2^54
        e -= 54;
    }
    e += ((bits >> 52) as i32) - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    // 2·atanh(s) = 2·Σ s^(2i+1) / (2i + 1), i = 0..=12.
    let mut p = 0.0;
    for i in (1..=12).rev() {
        p = s2 * (1.0 / (2 * i + 1) as f64 + p);
    }
    let log_m = 2.0 * s + 2.0 * s * p;
    let e = f64::from(e);
    e * LN2_HI + (log_m + e * LN2_LO)
}

/// `x^y`: [`powi`] for an integer `y` with |y| ≤ 64 (so `pow(-8, 2)` is exactly 64), else
/// `exp(y·ln x)`, with the usual special cases: `x^0 = 1`, `1^y = 1`, a negative `x` only with
/// an integer `y` (sign from its parity, else NaN), `0^y` = 0 or ∞.
pub fn pow(x: f64, y: f64) -> f64 {
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if y.abs() <= 64.0 && y.floor() == y {
        return powi(x, y as i32);
    }
    if x == 0.0 {
        return if y > 0.0 { 0.0 } else { f64::INFINITY };
    }
    if x < 0.0 {
        if y.floor() != y {
            return f64::NAN;
        }
        let odd = y.abs() < 9.007_199_254_740_992e15 && (y * 0.5).floor() != y * 0.5;
        let v = exp(y * ln(-x));
        return if odd { -v } else { v };
    }
    exp(y * ln(x))
}

/// `x^n` by binary exponentiation: the squares `x, x², x⁴, …` multiplied into the result from
/// the lowest bit of |n| up; `1 / x^|n|` for a negative `n`.
pub fn powi(x: f64, n: i32) -> f64 {
    let (mut base, mut e, mut acc) = (x, n.unsigned_abs(), 1.0);
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        e >>= 1;
        if e > 0 {
            base *= base;
        }
    }
    if n < 0 { 1.0 / acc } else { acc }
}

/// π/2 in three parts: `PIO2_1` and `PIO2_2` have 33 significant bits, so `n·PIO2_k` is exact
/// for |n| < 2^20.
const PIO2_1: f64 = 1.5707963267341256;
const PIO2_2: f64 = 6.077100506303966e-11;
const PIO2_3: f64 = 2.0222662487959506e-21;

/// `x = n·π/2 + r` with |r| ≲ π/4: `(n mod 4, r)`.
fn reduce_half_pi(x: f64) -> (u32, f64) {
    if x.abs() <= std::f64::consts::FRAC_PI_4 {
        return (0, x);
    }
    let n = (x * std::f64::consts::FRAC_2_PI + 0.5).floor();
    let r = ((x - n * PIO2_1) - n * PIO2_2) - n * PIO2_3;
    ((n.rem_euclid(4.0)) as u32, r)
}

/// `sin r` for |r| ≤ π/4: Σ (−1)^i r^(2i+1)/(2i+1)!, i = 0..=11.
fn sin_kernel(r: f64) -> f64 {
    let r2 = r * r;
    let mut p = 0.0;
    for i in (1..=11).rev() {
        let k = (2 * i) as f64;
        p = r2 / (k * (k + 1.0)) * (1.0 - p);
    }
    r - r * p
}

/// `cos r` for |r| ≤ π/4: Σ (−1)^i r^(2i)/(2i)!, i = 0..=11.
fn cos_kernel(r: f64) -> f64 {
    let r2 = r * r;
    let mut p = 0.0;
    for i in (1..=11).rev() {
        let k = (2 * i) as f64;
        p = r2 / ((k - 1.0) * k) * (1.0 - p);
    }
    1.0 - p
}

/// Sine (radians). NaN for infinite or NaN `x`.
pub fn sin(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let (n, r) = reduce_half_pi(x);
    match n {
        0 => sin_kernel(r),
        1 => cos_kernel(r),
        2 => -sin_kernel(r),
        _ => -cos_kernel(r),
    }
}

/// Cosine (radians). NaN for infinite or NaN `x`.
pub fn cos(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let (n, r) = reduce_half_pi(x);
    match n {
        0 => cos_kernel(r),
        1 => -sin_kernel(r),
        2 => -cos_kernel(r),
        _ => sin_kernel(r),
    }
}

/// Arctangent, in [−π/2, π/2].
pub fn atan(t: f64) -> f64 {
    if t.is_nan() {
        return t;
    }
    if t.abs() > 1.0 {
        let a = FRAC_PI_2 - atan_unit(1.0 / t.abs());
        return if t < 0.0 { -a } else { a };
    }
    atan_unit(t)
}

/// `atan t` for |t| ≤ 1: two halvings, then the odd series (exactly π/4 at |t| = 1).
fn atan_unit(t: f64) -> f64 {
    if t.abs() == 1.0 {
        return std::f64::consts::FRAC_PI_4.copysign(t);
    }
    let half = |t: f64| t / (1.0 + (1.0 + t * t).sqrt());
    let u = half(half(t)); // |u| ≤ tan(π/16) ≈ 0.199
    let u2 = u * u;
    // Σ (−1)^i u^(2i+1) / (2i + 1), i = 0..=13.
    let mut p = 0.0;
    for i in (1..=13).rev() {
        p = u2 * (1.0 / (2 * i + 1) as f64 - p);
    }
    4.0 * (u - u * p)
}

/// The angle of the point `(x, y)` from the +x axis, in [−π, π] (the quadrant from the signs
/// of both arguments, as `f64::atan2`; `atan2(±0, x)` = ±0 for x > 0, ±π for x < 0).
pub fn atan2(y: f64, x: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if y == 0.0 {
        return if x.is_sign_negative() { PI.copysign(y) } else { y };
    }
    if x == 0.0 {
        return FRAC_PI_2.copysign(y);
    }
    if x.is_infinite() || y.is_infinite() {
        let a = match (x.is_infinite(), y.is_infinite()) {
            (true, true) => {
                if x > 0.0 {
                    std::f64::consts::FRAC_PI_4
                } else {
                    3.0 * std::f64::consts::FRAC_PI_4
                }
            }
            (true, false) => {
                if x > 0.0 {
                    0.0
                } else {
                    PI
                }
            }
            _ => FRAC_PI_2,
        };
        return a.copysign(y);
    }
    let a = if y.abs() <= x.abs() {
        atan_unit(y.abs() / x.abs())
    } else {
        FRAC_PI_2 - atan_unit(x.abs() / y.abs())
    };
    let a = if x < 0.0 { PI - a } else { a };
    a.copysign(y)
}

/// Hyperbolic tangent: `expm1(2x) / (expm1(2x) + 2)`; ±1 beyond |x| = 20.
pub fn tanh(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.abs() > 20.0 {
        return 1.0f64.copysign(x);
    }
    let e = expm1(2.0 * x.abs());
    (e / (e + 2.0)).copysign(x)
}

/// The f32 version of an f64 function of this module: computed in f64, rounded once.
macro_rules! f32_version {
    ($($name:ident = $f64:ident($($arg:ident),+);)+) => {$(
        #[doc = concat!("[`", stringify!($f64), "`] of f32 arguments, rounded once to f32.")]
        pub fn $name($($arg: f32),+) -> f32 {
            $f64($(f64::from($arg)),+) as f32
        }
    )+};
}

f32_version! {
    expf = exp(x);
    exp2f = exp2(x);
    lnf = ln(x);
    powf = pow(x, y);
    sinf = sin(x);
    cosf = cos(x);
    atan2f = atan2(y, x);
    tanhf = tanh(x);
}

/// `tan(π/8)`: above it [`atan_fast`] works on `(t − 1)/(t + 1)` and adds π/4.
const TAN_PI_8: f32 = 0.414_213_57;

/// `atan x` in f32 arithmetic for per-cell use (slopes of every cell of a map), within 3 f32
/// ulp of the true value over the whole f32 range (test below, against the f64 [`atan`]).
///
/// The same bits on every platform, and several times faster than the library's `atanf`: no
/// call and no table, only selects, one division and a polynomial, so loops over cells
/// vectorize. Reduction as in [`atan`] but once, not twice: |x| > 1 by `π/2 − atan(1/|x|)`,
/// then `t > tan(π/8)` by `π/4 + atan((t − 1)/(t + 1))`, leaving |u| ≤ tan(π/8); then
/// `atan u = u + u·z·P(z)`, `z = u²`, with `P` of degree 3 fitted here (relative least squares
/// reweighted towards the minimax on Chebyshev nodes of [0, tan(π/8)]; relative error of the fit
/// 2.1·10⁻⁸, below half an f32 ulp). `atan(±∞) = ±π/2`; NaN stays NaN.
#[inline]
pub fn atan_fast(x: f32) -> f32 {
    let a = x.abs();
    let inverted = a > 1.0;
    let t = if inverted { 1.0 / a } else { a };
    let shifted = t > TAN_PI_8;
    let u = if shifted { (t - 1.0) / (t + 1.0) } else { t };
    let z = u * u;
    let p = ((0.080_538_38 * z - 0.138_777_17) * z + 0.199_777_14) * z - 0.333_329_5;
    let r = u + u * z * p;
    let r = if shifted { std::f32::consts::FRAC_PI_4 + r } else { r };
    let r = if inverted { std::f32::consts::FRAC_PI_2 - r } else { r };
    r.copysign(x)
}

/// The angle of `(x, y)` from the +x axis in [−π, π], in f32 arithmetic from [`atan_fast`]
/// (within 4 f32 ulp); quadrants, signed zeros and infinities as `f32::atan2`.
#[inline]
pub fn atan2_fast(y: f32, x: f32) -> f32 {
    use std::f32::consts::{FRAC_PI_2, PI};
    if !(x.is_finite() && y.is_finite()) || x == 0.0 || y == 0.0 {
        // NaN, the axes and infinities: the exact angles of the f64 [`atan2`], rounded once.
        return atan2(f64::from(y), f64::from(x)) as f32;
    }
    // atan(|y/x|) from the smaller over the larger (never above 1, never overflowing).
    let (ay, ax) = (y.abs(), x.abs());
    let a = if ay <= ax { atan_fast(ay / ax) } else { FRAC_PI_2 - atan_fast(ax / ay) };
    let a = if x < 0.0 { PI - a } else { a };
    a.copysign(y)
}

/// ln 2 in two f32 parts for [`exp_fast`]: the upper one has 16 significant bits, so
/// `k·LN2_HI_F32` is exact for |k| ≤ 256.
const LN2_HI_F32: f32 = 0.693_145_75;
/// ln 2 − [`LN2_HI_F32`].
const LN2_LO_F32: f32 = 1.428_606_8e-6;

/// `e^x` in f32 arithmetic for per-cell use, within 2 f32 ulp of the true value wherever the
/// result is a normal f32 (test below); `+0` below −87.33 (where `e^x` would be subnormal or
/// 0), `+∞` above 88.72, NaN stays NaN.
///
/// The same bits on every platform; no call, so loops over cells vectorize. `x = k·ln 2 + r`
/// with `k` rounded to nearest (by adding and subtracting 1.5·2²³: `round` is a library call
/// on x86-64 without SSE4.1), ln 2 in two parts so `r` is exact to a few ulp, |r| ≤ ln2/2;
/// `e^r` by its Taylor series to degree 7 (the next term is below 2⁻³⁰ relative); `2^k`
/// through the exponent bits.
#[inline]
pub fn exp_fast(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5·2²³
    let xc = x.clamp(-87.336_54, 88.722_83);
    let k = (xc * std::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = (xc - k * LN2_HI_F32) - k * LN2_LO_F32;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // k ∈ [−126, 128]: 2^k as two factors so that k = 128 (x near the top) stays finite.
    let k = k as i32;
    let half = k / 2;
    let scale = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    let v = p * scale(half) * scale(k - half);
    if x.is_nan() {
        x
    } else if x < -87.336_54 {
        0.0
    } else if x > 88.722_83 {
        f32::INFINITY
    } else {
        v
    }
}

/// `√(x² + y²)` of f32 arguments, rounded once: the squares and their sum are exact in f64
/// (24-bit significands), so only the square root rounds (then the conversion). It gave glibc's
/// `hypotf` bits on all of 2·10⁸ random pairs, and it is the same on every platform (IEEE
/// `sqrt`), without the library call.
#[inline]
pub fn hypotf(x: f32, y: f32) -> f32 {
    let (x, y) = (f64::from(x), f64::from(y));
    (x * x + y * y).sqrt() as f32
}

/// `ln(1 + x)` of an f32 argument from the f64 [`ln`], rounded once; exact for `1 + x` (f64
/// holds every `1 + x` of an f32 `x` ≥ 2⁻²⁹ exactly), so for small `x` it loses what `ln`
/// of a sum rounded to f64 loses (absolute error ≤ 2⁻⁵³): fine for the areas and distances it
/// is used on (x = 0 or x ≥ 1 in practice), not a general `log1p`.
pub fn ln_1pf(x: f32) -> f32 {
    ln(1.0 + f64::from(x)) as f32
}

/// The cubic smoothstep `t²(3 − 2t)` of `t` clamped to [0, 1]: 0 at 0, 1 at 1, flat at both
/// ends. Three correctly rounded operations in a fixed order, so the same bits everywhere;
/// NaN stays NaN. The one copy behind every smooth edge of the library (brushes, falloffs, step
/// masks, spectral and fault interpolation, floodplains); Perlin's noise keeps the tutorial's
/// `3t² − 2t³` order (`perlin.rs`), which rounds differently.
#[inline]
pub fn smoothstep(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// [`smoothstep`] in f32 between two edges, as GLSL's `smoothstep(e0, e1, x)`: 0 below `e0`,
/// 1 above `e1` (`e0 < e1`), `t²(3 − 2t)` of `t = (x − e0)/(e1 − e0)` between, in f32
/// arithmetic (the biomes' per-cell weights, in SIMD lanes).
#[inline(always)]
pub fn smoothstep_between(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units in the last place between two finite f64 of the same sign.
    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        let key = |v: f64| {
            let b = v.to_bits() as i64;
            if b < 0 { i64::MIN - b } else { b }
        };
        key(a).abs_diff(key(b))
    }

    /// Deterministic sample points in [lo, hi].
    fn points(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
        let mut rng = crate::rng::SplitMix64::new(20_261_124);
        (0..n).map(move |_| lo + (hi - lo) * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// The largest error of `f` against `reference` in ulps, with an absolute floor `abs` (in
    /// ulps of 1) for values near zero.
    fn worst(f: impl Fn(f64) -> f64, reference: impl Fn(f64) -> f64, xs: impl Iterator<Item = f64>) -> u64 {
        xs.map(|x| {
            let (a, b) = (f(x), reference(x));
            if b.abs() < 1.0 && (a - b).abs() <= f64::EPSILON / 2.0 { 0 } else { ulps(a, b) }
        })
        .max()
        .unwrap()
    }

    #[test]
    fn exp_and_ln_are_within_one_ulp_of_libm() {
        assert!(worst(exp, f64::exp, points(-700.0, 700.0, 100_000)) <= 1);
        assert!(worst(exp, f64::exp, points(-1.0, 1.0, 100_000)) <= 1);
        assert!(worst(ln, f64::ln, points(1e-300, 1e300, 100_000)) <= 1);
        assert!(worst(ln, f64::ln, points(0.5, 2.0, 100_000)) <= 1);
        assert!(worst(expm1, f64::exp_m1, points(-0.5, 0.5, 100_000)) <= 1);
        assert!(worst(exp2, f64::exp2, points(-1000.0, 1000.0, 100_000)) <= 1);
        assert_eq!((exp2(10.0), exp2(-3.0), exp2(-1074.0)), (1024.0, 0.125, 5e-324));
        assert!(ulps(exp2(0.5), std::f64::consts::SQRT_2) <= 1);
        // Subnormals and exact points.
        assert!(ulps(ln(5e-324), 5e-324f64.ln()) <= 1);
        assert_eq!((exp(0.0), ln(1.0)), (1.0, 0.0));
        assert_eq!((exp(710.0), exp(-800.0), ln(0.0)), (f64::INFINITY, 0.0, f64::NEG_INFINITY));
        assert!(ln(-1.0).is_nan() && exp(f64::NAN).is_nan());
    }

    #[test]
    fn sin_cos_atan_tanh_are_within_a_few_ulps_of_libm() {
        for (lo, hi) in [(-1.0, 1.0), (-1e4, 1e4)] {
            assert!(worst(sin, f64::sin, points(lo, hi, 100_000)) <= 2, "sin {lo}..{hi}");
            assert!(worst(cos, f64::cos, points(lo, hi, 100_000)) <= 2, "cos {lo}..{hi}");
        }
        assert!(worst(atan, f64::atan, points(-50.0, 50.0, 100_000)) <= 3);
        assert!(worst(tanh, f64::tanh, points(-25.0, 25.0, 100_000)) <= 4);
        assert!(worst(tanh, f64::tanh, points(-0.6, 0.6, 100_000)) <= 4);
        let angles = points(-PI, PI, 100_000);
        assert!(worst(|a| atan2(sin(a), cos(a) * 3.0), |a| (sin(a)).atan2(cos(a) * 3.0), angles) <= 4);
        assert_eq!((sin(0.0), cos(0.0), atan(1.0)), (0.0, 1.0, std::f64::consts::FRAC_PI_4));
        assert_eq!(
            (sinf(1.5), atan2f(1.0, 2.0), powf(2.0, 0.5)),
            (sin(1.5) as f32, atan2(1.0, 2.0) as f32, pow(2.0, 0.5) as f32)
        );
        assert!(sin(f64::INFINITY).is_nan());
    }

    #[test]
    fn atan2_quadrants_and_signed_zeros_follow_libm() {
        let specials = [0.0, -0.0, 1.0, -1.0, 2.5, -3.0, f64::INFINITY, f64::NEG_INFINITY];
        for y in specials {
            for x in specials {
                let (a, b) = (atan2(y, x), y.atan2(x));
                assert!(a.to_bits() == b.to_bits() || ulps(a, b) <= 1, "atan2({y}, {x}) = {a}, libm {b}");
            }
        }
    }

    #[test]
    fn pow_and_powi_follow_their_definitions() {
        let pairs = points(0.01, 100.0, 20_000).zip(points(-8.0, 8.0, 20_000));
        for (x, y) in pairs {
            let bound = 2 + 2 * (y * x.ln()).abs().ceil() as u64;
            assert!(ulps(pow(x, y), x.powf(y)) <= bound, "pow({x}, {y})");
        }
        assert_eq!((pow(2.0, 10.0), pow(-2.0, 3.0), pow(-8.0, 2.0)), (1024.0, -8.0, 64.0));
        assert!(pow(-2.0, 0.5).is_nan());
        assert_eq!(
            (pow(0.0, 2.0), pow(0.0, -1.0), pow(7.0, 0.0), pow(1.0, f64::NAN)),
            (0.0, f64::INFINITY, 1.0, 1.0)
        );
        assert_eq!((powi(3.0, 4), powi(2.0, -2), powi(5.0, 0)), (81.0, 0.25, 1.0));
        // Square and multiply: 1.1^5 = 1.1 · (1.1²)² exactly as written.
        let x: f64 = 1.1;
        assert_eq!(powi(x, 5), x * ((x * x) * (x * x)));
    }

    /// f32 ulps between `a` and the f64 reference rounded to f32.
    fn ulps32(a: f32, reference: f64) -> u32 {
        let b = reference as f32;
        if a == b {
            return 0;
        }
        let key = |v: f32| {
            if v.is_sign_negative() { -(v.to_bits() as i64 & 0x7fff_ffff) } else { v.to_bits() as i64 }
        };
        (key(a) - key(b)).unsigned_abs() as u32
    }

    /// Every 401st f32 bit pattern (10.7 million values) plus the specials: `atan_fast` within 3
    /// ulp of the f64 `atan` (the sum `π/4 + atan u` of the middle range loses one), `atan2_fast`
    /// within 4 on a circle of points, quadrants and
    /// signed zeros as the library's.
    #[test]
    fn atan_fast_is_within_three_f32_ulps() {
        let mut worst_seen = 0;
        for bits in (0..=u32::MAX).step_by(401) {
            let x = f32::from_bits(bits);
            if x.is_nan() {
                assert!(atan_fast(x).is_nan());
                continue;
            }
            let e = ulps32(atan_fast(x), atan(f64::from(x)));
            worst_seen = worst_seen.max(e);
            assert!(e <= 3, "atan_fast({x:e}) = {:e}, {e} ulp", atan_fast(x));
        }
        assert!(worst_seen >= 1, "a test that checks nothing");
        use std::f32::consts::{FRAC_PI_2, FRAC_PI_4};
        assert_eq!((atan_fast(0.0), atan_fast(1.0), atan_fast(f32::INFINITY)), (0.0, FRAC_PI_4, FRAC_PI_2));
        assert_eq!(
            (atan_fast(-0.0).to_bits(), atan_fast(f32::NEG_INFINITY)),
            ((-0.0f32).to_bits(), -FRAC_PI_2)
        );
        for k in 0..100_000 {
            let a = -std::f64::consts::PI + k as f64 * (2.0 * std::f64::consts::PI / 100_000.0);
            let (y, x) = ((a.sin() * 7.0) as f32, (a.cos() * 3.0) as f32);
            let e = ulps32(atan2_fast(y, x), atan2(f64::from(y), f64::from(x)));
            assert!(e <= 4, "atan2_fast({y}, {x}): {e} ulp");
        }
        let specials = [0.0f32, -0.0, 1.0, -1.0, 2.5, -3.0, f32::INFINITY, f32::NEG_INFINITY];
        for y in specials {
            for x in specials {
                let (a, b) = (atan2_fast(y, x), y.atan2(x));
                assert!(
                    a.to_bits() == b.to_bits() || ulps32(a, f64::from(b)) <= 1,
                    "atan2_fast({y}, {x}) = {a}, libm {b}"
                );
            }
        }
        assert!(atan2_fast(f32::NAN, 1.0).is_nan() && atan2_fast(1.0, f32::NAN).is_nan());
    }

    /// `exp_fast` within 2 ulp of the f64 [`exp`] over every 211th f32 of [−87.33, 88.72]
    /// (10.6 million values), exact at 0, and its edges: `+0` below, `+∞` above, NaN through.
    #[test]
    fn exp_fast_is_within_two_f32_ulps() {
        let (lo, hi) = (-87.336_54f32, 88.722_83f32);
        let mut worst_seen = 0;
        let mut checked = 0u64;
        let positive = (0..=hi.to_bits()).step_by(211);
        let negative = ((-0.0f32).to_bits()..=lo.to_bits()).step_by(211);
        for bits in positive.chain(negative) {
            let x = f32::from_bits(bits);
            let e = ulps32(exp_fast(x), exp(f64::from(x)));
            worst_seen = worst_seen.max(e);
            checked += 1;
            assert!(e <= 2, "exp_fast({x:e}) = {:e}, {e} ulp", exp_fast(x));
        }
        assert!(checked > 10_000_000 && worst_seen >= 1, "{checked} points, worst {worst_seen}");
        assert_eq!((exp_fast(0.0), exp_fast(-0.0)), (1.0, 1.0));
        assert_eq!((exp_fast(-88.0), exp_fast(-1e30), exp_fast(f32::NEG_INFINITY)), (0.0, 0.0, 0.0));
        assert_eq!((exp_fast(89.0), exp_fast(f32::INFINITY)), (f32::INFINITY, f32::INFINITY));
        assert!(exp_fast(f32::NAN).is_nan());
        assert!(exp_fast(hi).is_finite() && exp_fast(lo) >= f32::MIN_POSITIVE);
    }

    /// `hypotf` is glibc's `hypotf` bit for bit on 2·10⁶ pairs (raw bit patterns and slopes
    /// in the range maps have), and `ln_1pf` is the f64 `ln_1p` rounded once (within 1 ulp).
    #[test]
    fn hypotf_and_ln_1pf_round_once() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        for k in 0..2_000_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let (a, b) = if k % 2 == 0 {
                (f32::from_bits(s as u32), f32::from_bits((s >> 32) as u32))
            } else {
                ((s % 100_000) as f32 * 1e-4 - 5.0, ((s >> 20) % 100_000) as f32 * 1e-5)
            };
            if a.is_finite() && b.is_finite() {
                assert_eq!(hypotf(a, b).to_bits(), a.hypot(b).to_bits(), "hypotf({a:e}, {b:e})");
            }
        }
        for k in 0..5000 {
            let x = k as f32 * 1.37;
            assert!(ulps32(ln_1pf(x), f64::from(x).ln_1p()) <= 1, "ln_1pf({x})");
        }
        assert_eq!((ln_1pf(0.0), ln_1pf(f32::INFINITY)), (0.0, f32::INFINITY));
    }

    /// The bits themselves: FNV-1a over fixed inputs. A change here changes output bytes of
    /// every platform; `scripts/check-platforms.sh` compares them across platforms.
    #[test]
    fn golden_bits() {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |v: f64| {
            for b in v.to_bits().to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for x in points(-30.0, 30.0, 1000) {
            eat(exp(x));
            eat(exp2(x));
            eat(ln(x.abs()));
            eat(sin(x));
            eat(cos(x));
            eat(atan2(x, 1.5 - x));
            eat(tanh(x));
            eat(pow(x.abs(), 0.37));
        }
        assert_eq!(h, 0xc421_ef2d_b22a_fd3e, "new golden: {h:#x}");
    }
}
